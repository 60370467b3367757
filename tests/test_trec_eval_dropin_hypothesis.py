"""`trec-bridge trec_eval` against the real binary on random inputs and random option sets (slow tier).

Random qrels (grades -1..3, queries judged or not) and runs (ties, scores
equal only as float32, queries without judgments, short rankings) with a
random set of -q -c -n -l -M -J and a random list of -m options drawn from
the names whose families are registered (random cutoff lists): the drop-in's
standard output must be the binary's byte for byte, and where the binary
refuses (no judged query: exit 7) the drop-in must refuse too.  Inputs on
which trec_eval 9's own answer is undefined are not drawn: a judged query
whose judgments are all negative (form_res_rels.c reads uninitialised
memory) and -l below 0.
"""
from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.examples_budget import DIFFERENTIAL_EXAMPLES
from tests.integration.dropin_support import drop_in, supported_names
from trec_bridge.measures.trec_names import registered

DOCS = [f"d{i}" for i in range(8)]
QUERIES = ["1", "2", "10", "q3"]


@st.composite
def qrels(draw):
    lines = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        grades = [draw(st.integers(-1, 3)) for _ in docs]
        if max(grades) < 0:
            grades[0] = 0  # all-negative judgments: trec_eval's behaviour is undefined
        lines += [f"{q} 0 {d} {g}\n" for d, g in zip(docs, grades)]
    return "".join(lines)


SCORES = st.sampled_from([1.0, 0.5, 0.5, 2.0, 0.1, -3.0, 16777216.0, 16777217.0, 0.30000001, 0.3])


@st.composite
def runs(draw):
    lines = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        lines += [f"{q} Q0 {d} {r} {draw(SCORES)!r} tag{draw(st.integers(0, 1))}\n" for r, d in enumerate(docs)]
    return "".join(lines)


@st.composite
def measure_options(draw):
    names = draw(st.lists(st.sampled_from(sorted(supported_names())), min_size=1, max_size=5, unique=True))
    out = []
    for name in names:
        if _takes_integer_cutoffs(name) and draw(st.booleans()):
            cutoffs = draw(st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
            name += "." + ",".join(map(str, cutoffs))
        out += ["-m", name]
    return out


def _takes_integer_cutoffs(name: str) -> bool:
    """A name whose parameters are integer cutoffs (P, recall, ndcg_cut, ...): its default measures show it."""
    named = registered().get(name)
    if named is None:
        return False
    first = named.to_measures(None)[0]
    return type(first.cutoff) is int and (named.spell(first) or (None,))[0] == str(first.cutoff)


@st.composite
def flags(draw):
    out = [f for f in ("-q", "-c", "-n", "-J") if draw(st.booleans())]
    if draw(st.booleans()):
        out.append(f"-l{draw(st.integers(0, 3))}")
    if draw(st.booleans()):
        out += ["-M", str(draw(st.integers(1, 6)))]
    return out


@settings(max_examples=DIFFERENTIAL_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(qrels_text=qrels(), run_text=runs(), options=flags(), measures=measure_options())
def test_random_options_match_the_binary(tmp_path, trec_eval_binary, qrels_text, run_text, options, measures):
    (tmp_path / "qrels").write_text(qrels_text)
    (tmp_path / "run").write_text(run_text)
    argv = options + measures + [str(tmp_path / "qrels"), str(tmp_path / "run")]
    theirs = subprocess.run([trec_eval_binary, *argv], capture_output=True, text=True, timeout=60)
    code, out, err = drop_in(argv)
    if theirs.returncode != 0:
        assert (code, out) == (1, ""), (theirs.returncode, theirs.stderr, err)
        return
    assert code == 0, err
    # Where trec_eval prints nan (its own 0/0, e.g. 11pt_avg with -J on a query left without judged relevant
    # documents) its answer is undefined; the drop-in prints the defined value there (docs/trec_eval.md) and
    # every other line byte for byte.
    ours, binary = out.splitlines(keepends=True), theirs.stdout.splitlines(keepends=True)
    assert len(ours) == len(binary)
    for mine, expected in zip(ours, binary):
        if expected.rstrip("\n").endswith("nan"):
            assert mine.rsplit("\t", 1)[0] == expected.rsplit("\t", 1)[0]
            float(mine.rsplit("\t", 1)[1])
        else:
            assert mine == expected

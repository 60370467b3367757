"""trec_eval's second group of families against the real binary and pytrec_eval, on generated hard cases.

Each example writes a qrels and a run (ties in score, queries with no relevant
document, negative grades, rankings shorter than the judgments, judged queries
the run lacks, run queries the qrels lack), runs ``trec_eval -q [-c] [-lN]``
with one ``-m`` per family, and checks that ``--policy trec_eval`` /
``trec_eval_c`` reproduce every printed line (per query and ``all``) to the
printed 4 decimals, and that pytrec_eval (same C code, full doubles) agrees
with ``--policy pytrec_eval`` to 1e-9.  300 examples per family group.
"""
from __future__ import annotations

import math
import re
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from converters.detect import load_dataset_any
from converters.trec_run import read_trec_run
from trec_bridge.measures import parse_measures
from trec_bridge.policy import get_policy
from trec_bridge.references.base import trec_eval_name
from trec_bridge.references.pytrec_eval_ref import PytrecEval
from trec_bridge.references.trec_eval import TrecEval, parse_output
from trec_bridge.scorer import score

PRINTED = 0.5e-4 + 1e-12  # trec_eval prints %6.4f
EXAMPLES = 300
DOCS = [f"d{i}" for i in range(8)]
SCORES = [1.0, 2.0, 2.5, 3.0]  # few values: ties everywhere


@st.composite
def cases(draw):
    """(qrels lines, run lines, -c, -l level): every query has a judgment >= 0 (trec_eval's C code needs one)."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    qrels, run = [], []
    for q in queries:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        grades = draw(st.lists(st.sampled_from([-1, 0, 0, 1, 1, 2, 3]), min_size=len(judged), max_size=len(judged)))
        if all(g < 0 for g in grades):
            grades[0] = 0
        qrels += [f"{q} 0 {d} {g}" for d, g in zip(judged, grades)]
        if draw(st.booleans()) or q == queries[0]:  # some judged queries have no ranking (-c counts them)
            ranked = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
            run += [f"{q} Q0 {d} {i} {draw(st.sampled_from(SCORES))} r" for i, d in enumerate(ranked, 1)]
    if draw(st.booleans()):  # a run query the qrels never mention: ignored by trec_eval
        run.append("qx Q0 d1 1 1.0 r")
    return qrels, run, draw(st.booleans()), draw(st.sampled_from([1, 1, 2]))


def check(tmp_path, binary: str, case, measures_text: str) -> None:
    qrels_lines, run_lines, complete, level = case
    qpath, rpath = tmp_path / "qrels", tmp_path / "run"
    qpath.write_text("\n".join(qrels_lines) + "\n")
    rpath.write_text("\n".join(run_lines) + "\n")
    measures = list(parse_measures(measures_text))
    args = [binary, "-q"] + (["-c"] if complete else []) + [f"-l{level}"]
    for m in measures:
        base, param, _ = trec_eval_name(m)
        args += ["-m", base + (f".{param}" if param else "")]
    printed = parse_output(subprocess.run(args + [str(qpath), str(rpath)], capture_output=True, text=True,
                                          check=True).stdout)
    dataset, run = load_dataset_any(qpath, None, level), read_trec_run(rpath)
    refused = {m: TrecEval().refusal(m, level, dataset.qrels) for m in measures}
    refused = {m: reason for m, reason in refused.items() if reason}
    for m, reason in refused.items():  # only where trec_eval's own answer is undefined: it prints nan
        per_query, summary = printed[trec_eval_name(m)[2]]
        query = re.search(r"query '([^']*)'", reason)[1]
        if query in per_query:  # a query the run lacks counts 0 (-c) or not at all: no nan where it is missing
            assert any(math.isnan(v) for v in [*per_query.values(), summary]), (m, reason)
    measures = [m for m in measures if m not in refused]
    ours = score(dataset, run, measures, get_policy("trec_eval_c" if complete else "trec_eval"))
    rows = {r.query_id: r for r in ours.queries}
    for m in measures:
        per_query, summary = printed[trec_eval_name(m)[2]]
        assert set(per_query) == {q for q, r in rows.items() if r.status == "ranked"}, m
        for q, value in per_query.items():
            assert abs(rows[q].values[str(m)] - value) <= PRINTED, (str(m), q, rows[q].values[str(m)], value)
        assert abs(ours.means[str(m)].value - summary) <= PRINTED, (str(m), ours.means[str(m)].value, summary)
    if not complete:  # what pytrec_eval can take: no gain map, no comma in a parameter (it splits at commas)
        fits = [m for m in measures if PytrecEval().refusal(m, level, dataset.qrels) is None]
        assert fits == [m for m in measures if m.gains is None and "," not in str(trec_eval_name(m)[1])]
        check_pytrec_eval(dataset, run, fits)


def check_pytrec_eval(dataset, run, measures) -> None:
    tool = PytrecEval()
    theirs = tool.evaluate(dataset.qrels, run, measures, rel=dataset.threshold)
    ours = score(dataset, run, measures, get_policy("pytrec_eval"))
    rows = {r.query_id: r for r in ours.queries}
    for m in measures:
        key = str(m)
        assert key not in theirs.unsupported, theirs.unsupported
        for q, value in theirs.per_query[key].items():
            assert abs(rows[q].values[key] - value) <= 1e-9, (key, q, rows[q].values[key], value)
        assert abs(ours.means[key].value - theirs.aggregate[key]) <= 1e-9, (key, ours.means[key].value)


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(case=cases(), beta=st.sampled_from(["", "(beta=0.5)", "(beta=2)", "(beta=0.25)", "(beta=1)"]))
def test_set_measures_reproduce_trec_eval(tmp_path, trec_eval_binary, case, beta):
    check(tmp_path, trec_eval_binary, case, f"SetP SetRelP SetR SetAP SetF{beta}")


# gain maps trec_eval 9.0.4 can hold: values 1 or more apart (it sorts gains by (int)(g1 - g2)), negatives allowed
GAIN_VALUES = [-1.0, 0.0, 1.0, 2.0, 3.0, 4.5, 9.0]


@st.composite
def gain_maps(draw):
    grades = draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=1, max_size=3, unique=True))
    values = draw(st.lists(st.sampled_from(GAIN_VALUES), min_size=len(grades), max_size=len(grades)))
    gains = dict(zip(grades, values))
    in_play = sorted({**{g: float(g) for g in range(4)}, **gains}.values())
    if any(0 < b - a < 1 for a, b in zip(in_play, in_play[1:])):
        return ""
    return "(gains={" + ",".join(f"{g}:{v:g}" for g, v in sorted(gains.items())) + "})"


@SETTINGS
@given(case=cases(), gains=st.one_of(st.just(""), gain_maps()))
def test_gain_families_reproduce_trec_eval(tmp_path, trec_eval_binary, case, gains):
    check(tmp_path, trec_eval_binary, case, f"binG G{gains} nDCG_rel{gains} RnDCG{gains}")


COEFFICIENTS = ["1", "-1", "0", "2", "0.5", "-0.25", "3"]


@SETTINGS
@given(case=cases(), coefficients=st.one_of(st.just(None), st.lists(st.sampled_from(COEFFICIENTS), min_size=3,
                                                                      max_size=3)))
def test_utility_reproduces_trec_eval(tmp_path, trec_eval_binary, case, coefficients):
    given_ = "" if coefficients is None else "(" + ",".join(f"{n}={v}" for n, v in zip("abc", coefficients)) + ")"
    check(tmp_path, trec_eval_binary, case, f"Utility{given_}")


@SETTINGS
@given(case=cases())
def test_infap_reproduces_trec_eval(tmp_path, trec_eval_binary, case):
    """The threshold is the case's -l (1 or 2); negative grades (pooled, not judged) are among the judgments."""
    check(tmp_path, trec_eval_binary, case, "infAP")

"""trec_eval's own test suite (v9.0.4 quicktest): our trec_eval policies reproduce its expected outputs.

Every expected-output file of shared/data/trec_eval_test/v9.0.4 is listed in
``FILES`` with the command the Makefile runs (see that folder's README).  For
each file whose inputs and flags we support, the qrels and run are read with
our TREC readers, scored with ``--policy trec_eval`` (``trec_eval_c`` for
``-c``, dataset threshold = ``-l``), and every printed value of a measure we
support is compared, per query and on the ``all`` line, to the printed 4
decimals (|ours - printed| <= 5e-5).  results.trunc has 5 lines with words
after the 6th field, which trec_eval ignores and our strict reader rejects
(E_TREC_COLUMNS, asserted); the test scores a copy cut to 6 fields.  The other files are skipped with the
reason; the other measures of a compared file are listed in ``UNSUPPORTED``.

Compared: every printed name some family declares (``Family.tool_names["trec_eval"]``,
read through measures/trec_names.py, as the drop-in reads it): map -> AP,
map_cut_k -> AP@k, P_k -> P@k, ndcg_1=3,2=9,4=4.5 -> nDCG(gains={1:3,2:9,4:4.5}),
set_F -> SetF, ...; a printed name no family declares must be in ``UNSUPPORTED``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from converters.detect import load_dataset_any
from converters.trec_run import read_trec_run
from trec_bridge.errors import InvalidInput
from trec_bridge.measures.base import FAMILIES, Measure
from trec_bridge.measures.trec_names import trec_eval_form
from trec_bridge.policy import get_policy
from trec_bridge.scorer import score

PRINTED = 0.5e-4 + 1e-12  # trec_eval prints %6.4f


@dataclass(frozen=True)
class Command:
    output: str
    argv: str  # the Makefile's command line, for the report
    qrels: str | None = None
    run: str | None = None
    per_query: bool = False  # -q
    complete: bool = False  # -c
    level: int = 1  # -l
    skip: str | None = None  # why we cannot reproduce this file
    extra_columns: bool = False  # the run has lines with more than 6 fields (trec_eval ignores the rest)
    depth: int | None = None  # -M: the policy's depth cap (a ranking option)


FILES = [
    Command("out.test", "trec_eval qrels.test results.test", "qrels.test", "results.test"),
    Command("out.test.a", "trec_eval -m all_trec qrels.test results.test", "qrels.test", "results.test"),
    Command("out.test.aq", "trec_eval -m all_trec -q qrels.test results.test", "qrels.test", "results.test",
            per_query=True),
    Command("out.test.aqc", "trec_eval -m all_trec -q -c qrels.test results.trunc", "qrels.test", "results.trunc",
            per_query=True, complete=True, extra_columns=True),
    Command("out.test.aqcM", "trec_eval -m all_trec -q -c -M100 qrels.test results.trunc", "qrels.test",
            "results.trunc", per_query=True, complete=True, extra_columns=True, depth=100),
    Command("out.test.aql", "trec_eval -m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
            "qrels.rel_level", "results.test", per_query=True, level=2),
    Command("out.test.prefs", "trec_eval -m all_prefs -q -R prefs prefs.test prefs.results.test",
            skip="-R prefs: preference judgments, a rel_info format we do not read, and only preference measures"),
    Command("out.test.qrels_prefs", "trec_eval -m all_prefs -q -R qrels_prefs qrels.test results.test",
            skip="-m all_prefs: preference measures only, none of which we compute"),
    Command("out.test.qrels_jg", "trec_eval -m qrels_jg -q -R qrels_jg qrels.123 results.test",
            skip="-R qrels_jg: judgment-group qrels (column 2 is a group), a format we do not read"),
    Command("out.test.meas_params",
            "trec_eval -q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
            "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
            "qrels.test results.test", "qrels.test", "results.test", per_query=True),
    Command("out.test.aqZ", "trec_eval -q -m all_trec -Z zscores_file qrels.test results.test",
            skip="-Z: z-scores are the drop-in's, not score's (tests/integration/test_trec_eval_dropin_suite.py "
                 "prints this file byte for byte)"),
]

# trec_eval names of the compared files that we do not compute, with the reason
UNSUPPORTED = {
    "runid": "a label", "relstring": "a label",
}
# printed names whose parameters in one file are not the ones our measure computes
NOT_OURS_IN = {
    "out.test.meas_params": {"11pt_avg_.25,.5,.75": "-m 11pt_avg..25,.5,.75 averages 3 levels; AvgIPrec is the 11 of "
                                                    "trec_eval's default"},
}
# trec_eval prints these in the summary only, never per query
SUMMARY_ONLY = {"num_q", "gm_map", "gm_bpref"}


def our_measure(name: str) -> Measure | None:
    """Our measure for a trec_eval printed name, found through the families' own trec_eval declarations.

    ``P_10`` is the ``-m P.10`` of the family declaring ``P``, ``set_F_0.5``
    the ``-m set_F.0.5`` of the one declaring ``set_F``: the measure whose
    spelling prints exactly ``name``, or None when no family prints it.
    """
    for family in FAMILIES.values():
        forms = trec_eval_form(family)
        for form in [] if isinstance(forms, str) else forms:
            if name == form.name:
                text = None
            elif name.startswith(form.name + "_"):
                text = name[len(form.name) + 1:]
            else:
                continue
            try:
                candidates = form.to_measures(text)
            except (ValueError, InvalidInput):  # ndcg_cut_10 is not a gain map of ndcg
                continue
            for m in candidates:
                spelled = form.spell(m)
                if spelled is not None and spelled[1] == name:
                    return m
    return None


def unsupported_reason(name: str) -> str:
    base = re.sub(r"_[0-9.,=\-]+$", "", name)
    return UNSUPPORTED.get(name) or UNSUPPORTED.get(base) or "not mapped"


def parse_expected(path: Path) -> dict[str, dict[str, str]]:
    """name -> {query or 'all': printed value}; the last 'all' row of a name is the summary."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        out.setdefault(name, {})[qid] = value
    return out


def six_columns(src: Path, dst: Path) -> Path:
    """The run as trec_eval reads it: fields after the 6th dropped (our reader rejects them, E_TREC_COLUMNS)."""
    dst.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in src.read_text().splitlines() if line.strip()))
    return dst


def compare(folder: Path, cmd: Command, tmp: Path) -> tuple[int, dict[str, list[str]], set[str]]:
    """Score as ``cmd`` says and compare every supported printed value; return (#values, mismatches, skipped names)."""
    expected = parse_expected(folder / cmd.output)
    not_ours = NOT_OURS_IN.get(cmd.output, {})
    wanted = {name: None if name in not_ours else our_measure(name) for name in expected}
    measures = list(dict.fromkeys(m for m in wanted.values() if m is not None))
    dataset = load_dataset_any(folder / cmd.qrels, None, cmd.level)
    run_path = folder / cmd.run
    if cmd.extra_columns:
        with pytest.raises(InvalidInput) as err:
            read_trec_run(run_path)
        assert err.value.code == "E_TREC_COLUMNS"
        run_path = six_columns(run_path, tmp / cmd.run)
    run = read_trec_run(run_path)
    policy = get_policy("trec_eval_c" if cmd.complete else "trec_eval").with_axis(depth=cmd.depth)
    result = score(dataset, run, measures, policy)
    ours = {q.query_id: q for q in result.queries}
    compared, bad = 0, {}
    for name, values in expected.items():
        m = wanted[name]
        if m is None:
            continue
        key = str(m)
        for qid, printed in values.items():
            value = result.means[key].value if qid == "all" else ours[qid].values[key]
            compared += 1
            if value is None or abs(value - float(printed)) > PRINTED:
                bad.setdefault(name, []).append(f"{qid}: printed {printed}, ours {value!r}")
        if cmd.per_query:
            # trec_eval prints every query it evaluated; -c adds missing queries to the mean but prints none of them
            printed_queries = set(values) - {"all"}
            evaluated = set() if name in SUMMARY_ONLY else {q for q, r in ours.items() if r.status == "ranked"}
            assert printed_queries == evaluated, name
    return compared, bad, {n for n, m in wanted.items() if m is None}


COMPARED = [c for c in FILES if c.skip is None]


@pytest.mark.parametrize("cmd", FILES, ids=[c.output for c in FILES])
def test_trec_eval_expected_output(shared_data, tmp_path, cmd):
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    if cmd.skip:
        pytest.skip(f"{cmd.output} ({cmd.argv}): {cmd.skip}")
    compared, bad, skipped = compare(folder, cmd, tmp_path)
    assert not bad, bad
    assert compared > 0
    assert all(unsupported_reason(n) != "not mapped" or n in NOT_OURS_IN.get(cmd.output, {}) for n in skipped), \
        sorted(skipped)


def test_every_expected_output_is_listed(shared_data):
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    assert sorted(p.name for p in folder.glob("out.test*")) == sorted(c.output for c in FILES)


def test_coverage_of_the_compared_files(shared_data):
    """What is compared: the supported families appear in the compared files, per query and in 'all'."""
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    families, values = set(), 0
    for cmd in COMPARED:
        expected = parse_expected(folder / cmd.output)
        for name, rows in expected.items():
            m = our_measure(name)
            if m is not None:
                families.add(m.family + ("@k" if m.cutoff else "") + ("(gains)" if m.gains else ""))
                values += len(rows)
    assert families >= {"AP", "AP@k", "P@k", "R@k", "RR", "nDCG", "nDCG@k", "Success@k", "nDCG(gains)",
                        "SetP", "SetRelP", "SetR", "SetAP", "SetF", "binG", "G", "nDCG_rel", "RnDCG", "Utility", "infAP",
                        "NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet", "Rprec", "Bpref", "GMAP",
                        "GMBpref", "IPrec@k", "AvgIPrec", "RprecMult@k", "RelativeP@k"}
    assert values >= 500

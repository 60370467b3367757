"""Issue 21 §2: a run scored in parts elsewhere and merged (trec_bridge/part_scores.py) is the run scored here.

No cluster in this file: the pieces a cluster's workers would read (run_pieces.pieces_of) are scored one by
one in this process and merged, and the report must be byte-identical to `score`'s, errors included (the
same code, message and line).  tests/test_dask.py does the same on a distributed.LocalCluster.
Before this change there was no way to score a part of a run alone and merge it (part_scores.py, the
query_ranges cut and the scorer's measure_kernel / finished_values seam did not exist).
"""
from __future__ import annotations

import numpy as np
import pytest

import converters.trec_run_parts as trp
from trec_bridge import references  # noqa: F401  (the tools' policies)
from trec_bridge.evaluation import score_file_in_parts
from trec_bridge.measures import parse_measures
from trec_bridge.measures.base import FAMILIES
from trec_bridge.model import QueryNotContiguous
from trec_bridge.part_scores import PartJob, job_for, merge
from trec_bridge.policy import get_policy
from trec_bridge.report import build_report, report_json
from trec_bridge.run_pieces import pieces_of, score_piece
from trec_bridge.scorer import measure_kernel, orderings_for, policy_ranking, prepare_for
from trec_bridge.ranking import query_index

from .conftest import run_cli

MEASURES = "nDCG@10 RR@10 R@100 P@10 AP Bpref NumRet NumRelRet G nDCG_rel RnDCG Success@5 infAP ERR@10 RBP"
# one spelling per family that parses without further parameters, for the locality check
FAMILY_EXAMPLES = {"INSQ": "INSQ(max_rel=3)", "INST": "INST(max_rel=3)", "SDCG": "SDCG(min_rel=1,max_rel=3)@5",
                   **{f"NERR{n}": f"NERR{n}(max_rel=3)" for n in (8, 9, 10, 11)}}


def _workload(tmp_path, seed: int = 7, queries: int = 30, depth: int = 40):
    """Graded qrels for queries 0..queries+2 (the last three never ranked: missing; q0 judged 0 only: no relevant
    document) and a run over queries 0..queries-1 plus an unjudged one, ties included."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(queries + 3):
        for d in rng.choice(80, size=25, replace=False):
            qrels.append(f"q{q} 0 d{d} {0 if q == 0 else int(rng.integers(0, 4))}")
    for q in list(range(queries)) + ["x"]:
        for r, d in enumerate(rng.choice(120, size=depth, replace=False)):
            run.append(f"q{q} Q0 d{d} {r + 1} {float(rng.integers(0, 15)) / 4} t")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.trec").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.trec"


def _dataset(path):
    from converters.detect import load_dataset_any

    return load_dataset_any(path)


def _merged_report(dataset, run, measures, policy, inputs=None):
    job = job_for(dataset, measures, policy, order=policy.run_order)
    cut = pieces_of(str(run))
    assert cut is not None and len(cut.pieces) > 3, "the run must be cut into several pieces"
    parts = [score_piece(job, p) for p in cut.pieces]
    return report_json(build_report(merge(job, parts, empty_file=cut.empty_is_error), inputs))


@pytest.mark.parametrize("policy", ["strict", "trec_eval", "trec_eval_c", "ir_measures", "pytrec_eval"])
def test_merged_pieces_report_the_bytes_score_reports(tmp_path, monkeypatch, policy):
    monkeypatch.setattr(trp, "PART_BYTES", 4000)
    qrels, run = _workload(tmp_path)
    pol = get_policy(policy)
    dataset = _dataset(qrels)
    measures = parse_measures([t for t in MEASURES.split() if _prints(t, pol, dataset)])
    assert len(measures) >= 6
    alone = score_file_in_parts(dataset, str(run), measures, pol, order=pol.run_order)
    assert report_json(build_report(alone)) == _merged_report(dataset, run, measures, pol)


def test_missing_queries_and_unjudged_ones_come_out_as_score_says(tmp_path, monkeypatch):
    monkeypatch.setattr(trp, "PART_BYTES", 4000)
    qrels, run = _workload(tmp_path)
    code, out, err = run_cli("score", qrels, run, "P@10 AP", "--json", tmp_path / "alone.json")
    assert code == 2, err  # q30, q31 and q32 are missing
    from trec_bridge.evaluation import input_fingerprints

    inputs = input_fingerprints({"dataset": str(qrels), "run": str(run)}, hashed=True)
    report = _merged_report(_dataset(qrels), run, parse_measures("P@10 AP"), get_policy("strict"), inputs)
    assert report == (tmp_path / "alone.json").read_text()
    assert '"missing_queries": [\n    "q30",\n    "q31",\n    "q32"\n  ]' in report and '"unjudged_queries": [\n    "qx"' in report


def _nan_score(lines: list[str], at: int) -> None:
    lines[at + 3] = "q17 Q0 d1 1 nan t"


def _five_columns(lines: list[str], at: int) -> None:
    lines[at + 3] = "q17 Q0 d1 1"


def _document_twice(lines: list[str], at: int) -> None:
    lines[at + 1] = lines[at].replace(" 1 ", " 2 ", 1)


@pytest.mark.parametrize("spoil, code, line", [(_nan_score, "E_RUN_SCORE", 4), (_five_columns, "E_TREC_COLUMNS", 4),
                                               (_document_twice, "E_RUN_DUPLICATE_DOC", None)])
def test_an_error_in_a_late_piece_is_the_error_score_gives(tmp_path, monkeypatch, spoil, code, line):
    """The same code, message and line (counted over the whole file) as `score`, from a piece in the middle."""
    monkeypatch.setattr(trp, "PART_BYTES", 4000)
    qrels, run = _workload(tmp_path)
    lines = run.read_text().splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("q17 "))
    spoil(lines, at)
    run.write_text("\n".join(lines) + "\n")
    status, _, err = run_cli("score", qrels, run, "AP")
    assert status == 1 and f"[{code}]" in err and (line is None or f"run.trec:{at + line}" in err)
    with pytest.raises(Exception) as raised:
        _merged_report(_dataset(qrels), run, parse_measures("AP"), get_policy("strict"))
    assert f"trec-bridge: error: {raised.value.render()}\n" == err


def test_a_query_split_across_pieces_is_not_merged(tmp_path, monkeypatch):
    """score reads such a run whole; the merge says so (QueryNotContiguous) instead of merging two halves."""
    monkeypatch.setattr(trp, "PART_BYTES", 4000)
    qrels, run = _workload(tmp_path)
    run.write_text(run.read_text() + "q3 Q0 d999 99 -5 t\n")
    with pytest.raises(QueryNotContiguous):
        _merged_report(_dataset(qrels), run, parse_measures("AP"), get_policy("strict"))


def test_a_blank_run_is_the_empty_file_error(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "blank.trec").write_text("\n\n")
    job = job_for(_dataset(tmp_path / "qrels.txt"), parse_measures("AP"), get_policy("strict"))
    cut = pieces_of(str(tmp_path / "blank.trec"))
    with pytest.raises(Exception) as raised:
        merge(job, [score_piece(job, p) for p in cut.pieces], empty_file=cut.empty_is_error)
    assert raised.value.code == "E_FILE_EMPTY"
    assert run_cli("score", tmp_path / "qrels.txt", tmp_path / "blank.trec", "AP")[2].endswith(
        raised.value.render() + "\n")


def _family_measures() -> list[str]:
    out = []
    for name in FAMILIES:
        given = FAMILY_EXAMPLES.get(name)
        for text in (given, f"{given}@5" if given else None, name, f"{name}@10", f"{name}@0.5"):
            try:
                if text:
                    parse_measures(text)
                    out.append(text)
                    break
            except Exception:
                continue
        else:
            raise AssertionError(f"no example spelling for the family {name}")
    return out


@pytest.mark.parametrize("policy", ["strict", "trec_eval"])
def test_every_query_local_family_gives_the_same_bits_whatever_queries_share_its_ranking(tmp_path, policy):
    """Family.query_local: the kernel over every query and over two halves give the same per-query bits (values,
    exact terms, where defined).  A family flagged query_local=False is merged from its rows, never by value."""
    from converters.trec_run import read_trec_run

    qrels, run = _workload(tmp_path, seed=11, queries=14, depth=30)
    pol = get_policy(policy)
    whole_run = read_trec_run(run, order=pol.run_order)
    texts = [t for t in _family_measures() if _scores(t, pol, _dataset(qrels), whole_run)]
    assert len(texts) >= (35 if policy == "strict" else 20), texts  # a family needing other qrels is left out
    measures = parse_measures(texts)
    prepared = prepare_for(_dataset(qrels), whole_run, measures, pol)
    ids = [f"q{i}" for i in range(17)]

    def kernels(subset):
        index = query_index(subset)
        rankings = {o: policy_ranking(prepared, o, index, pol) for o in orderings_for(measures, pol)}
        return {str(m): measure_kernel(m, rankings, pol, 1, subset) for m in measures}

    whole, halves = kernels(ids), [kernels(ids[0::2]), kernels(ids[1::2])]
    checked = 0
    for m in measures:
        if not FAMILIES[m.family].query_local:
            continue
        values, defined = whole[str(m)]
        for start, half in enumerate(halves):
            part_values, part_defined = half[str(m)]
            assert part_values.value.tobytes() == values.value[start::2].tobytes(), m
            assert (part_defined == defined[start::2]).all(), m
            for k in range(len(part_values.value)):
                assert part_values.fraction(k) == values.fraction(start + 2 * k), (m, k)
        checked += 1
    assert checked >= len(measures) - 3


def _scores(text: str, policy, dataset, run) -> bool:
    """Whether ``policy`` scores the measure on these qrels and this run (some families need other qrels)."""
    from trec_bridge.errors import TrecBridgeError
    from trec_bridge.scorer import score

    try:
        score(dataset, run, parse_measures(text), policy)
        return True
    except TrecBridgeError:
        return False


def _prints(text: str, policy, dataset) -> bool:
    """Whether ``policy`` scores the measure on ``dataset`` (a tool's policy refuses what the tool does not print)."""
    from trec_bridge.errors import TrecBridgeError
    from trec_bridge.scorer import refuse_unreproducible

    try:
        refuse_unreproducible(dataset, parse_measures(text), policy)
        return True
    except TrecBridgeError:
        return False


def test_a_job_travels_without_its_judgments(tmp_path):
    """What is sent to each worker is the dataset, measures and policy; the joined judgments are rebuilt there."""
    import pickle

    qrels, _ = _workload(tmp_path)
    job = PartJob(_dataset(qrels), parse_measures("AP"), get_policy("strict"))
    job.judgments()
    again = pickle.loads(pickle.dumps(job))
    assert again._judgments is None and again.judgments().base_set == job.judgments().base_set

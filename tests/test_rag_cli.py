"""The acceptance options of `score`, `stages` usage errors, repeats and first relevant ranks."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from converters.detect import load_dataset_any, load_run_any
from trec_bridge.cli.main import main
from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.rag.breakdown import UNTAGGED, by_tag
from trec_bridge.rag.repeats import combine
from trec_bridge.rag.triage import first_relevant_ranks
from trec_bridge.scorer import prepare, score

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "golden" / "rag" / "kb"
S2 = ROOT / "golden" / "S2"
S1 = ROOT / "golden" / "S1"


def run(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_plain_score_is_unchanged(capsys, tmp_path):
    code, out, _ = run(capsys, "score", str(KB / "dataset.json"), str(KB / "run_1.json"), "R@3", "--json", str(tmp_path / "r.json"))
    assert code == 0
    assert "acceptance" not in out and "tier" not in out
    assert "rag" not in json.loads((tmp_path / "r.json").read_text())


def test_gate_text_output(capsys):
    code, out, _ = run(capsys, "score", str(KB / "dataset.json"), str(KB / "run_fail.json"), "R@3 P@3", "--gate",
                       str(KB / "thresholds_kb.toml"))
    assert code == 4
    assert "measures added for the acceptance method: R@5 R@10 RR@20 nDCG(gain=exp)@5 nDCG(gain=exp)@10" in out
    assert any(line.split()[:3] == ["R@10", "0.6000", "fail"] for line in out.splitlines())
    assert any(line.split()[:3] == ["R@3", "0.6000", "good"] for line in out.splitlines())
    assert "warning: 1 run of the system scored, the acceptance method expects 3" in out
    assert "gate: FAIL - R@10 is below pass (0.6000 < 0.70)" in out
    assert "triage: 3 queries with R@10 < 0.30" in out
    assert "by tag" in out


def test_discount_is_said_in_the_output(capsys, tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text("domain_discount = 0.05\nmin_queries = 10\n")
    code, out, _ = run(capsys, "score", str(KB / "dataset.json"), str(KB / "run_1.json"), "rag", "--gate", str(toml))
    assert code == 0
    assert "domain discount applied: every level lowered by 5% (level x 0.95)" in out


@pytest.mark.parametrize("extra,code_name", [
    (["--gate", "--policy", "trec_eval"], "E_USAGE"),
    (["--gate", str(KB / "thresholds_kb.toml"), "--thresholds", str(KB / "thresholds_bad.toml")], "E_USAGE"),
    (["--rag", "--triage-recall-below", "abc"], "E_USAGE"),
    (["--rag", "--triage-ndcg-below", "1.5"], "E_USAGE"),
    (["--rag", "--triage-k", "0"], "E_CUTOFF"),
    (["--gate", "--min-queries", "0"], "E_USAGE"),
    (["--gate", "--repeat", str(KB / "run_unknown_doc.json")], "E_RUN_UNKNOWN_DOC"),
    (["--gate", "--repeat", str(KB / "absent.json")], "E_FILE_NOT_FOUND"),
])
def test_invalid_acceptance_options_exit_1_and_write_nothing(capsys, tmp_path, extra, code_name):
    out = tmp_path / "r.json"
    html = tmp_path / "r.html"
    code, _, err = run(capsys, "score", str(KB / "dataset.json"), str(KB / "run_1.json"), "rag", *extra,
                       "--json", str(out), "--html", str(html))
    assert code == 1
    assert f"[{code_name}]" in err
    assert not out.exists() and not html.exists()


def test_identical_repeat_file_is_flagged(capsys, tmp_path):
    copy = tmp_path / "copy.json"
    shutil.copy(KB / "run_1.json", copy)
    code, out, _ = run(capsys, "score", str(KB / "dataset.json"), str(KB / "run_1.json"), "rag", "--rag",
                       "--repeat", str(copy), "--json", str(tmp_path / "r.json"))
    assert code == 0
    assert "byte-identical to the main run" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["rag"]["repeats"]["changed_queries"] == []
    assert report["fingerprints"]["inputs"]["repeat_2"]["path"] == str(copy)


def test_repeats_must_share_the_protocol():
    ds = load_dataset_any(KB / "dataset.json")
    run_ = load_run_any(KB / "run_1.json")
    a = score(ds, run_, parse_measures("R@3"))
    b = score(ds, run_, parse_measures("R@5"))
    with pytest.raises(InvalidInput) as exc:
        combine([a, b], ["a", "b"])
    assert exc.value.code == "E_REPEAT_PROTOCOL"


def test_first_relevant_rank_after_the_chunk_collapse():
    ds = load_dataset_any(S2.parent / "S1" / "dataset.json")
    from converters.chunk_map import load_chunk_map

    cmap = load_chunk_map(S2 / "chunk_map.json")
    run_ = load_run_any(S2 / "run_chunks.json", chunks=True)
    # q2 [d3a, d3b, d4a] -> [d3, d4]: d3 at 1; q3 [d1a, d1b, d5a] -> [d1, d5]: d5 at 2 (its chunk was 3rd)
    assert first_relevant_ranks(prepare(ds, run_, split="test", chunk_map=cmap)) == {"q2": 1, "q3": 2}


def test_first_relevant_rank_respects_the_threshold():
    ds = load_dataset_any(ROOT / "golden" / "S4" / "dataset.json")
    run_ = load_run_any(ROOT / "golden" / "S4" / "run.json")
    ranks = first_relevant_ranks(prepare(ds, run_))
    strict = first_relevant_ranks(prepare(ds, run_), threshold=3)
    assert list(ranks.values()) == [2] and list(strict.values()) == [3]  # run [d, b, a]: b=2 at 2, a=3 at 3


def test_untagged_queries_form_their_own_group(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    trec_run = tmp_path / "run.txt"
    trec_run.write_text("1 Q0 a 1 2.0 r\n2 Q0 c 1 2.0 r\n")
    code, out, _ = run(capsys, "score", str(qrels), str(trec_run), "R@3", "--rag", "--json", str(tmp_path / "r.json"))
    assert code == 0
    bd = json.loads((tmp_path / "r.json").read_text())["rag"]["breakdown"]
    assert [(b["tag"], b["queries"], b["eligible"], b["means"]["R@3"]["exact"]) for b in bd] == [(UNTAGGED, 2, 2, "1/2")]
    assert "by tag" not in out


def test_breakdown_by_tag_covers_every_query():
    ds = load_dataset_any(KB / "dataset.json")
    c = combine([score(ds, load_run_any(KB / "run_1.json"), parse_measures("R@3"))], ["run_1"])
    rows = {r.tag: r for r in by_tag(c)}
    assert rows["single-answer"].eligible + rows["multi-answer"].eligible + rows["no-answer"].queries == 11


@pytest.mark.parametrize("args,code_name", [
    (["--stage", "a=x.json", "--stage", "a=y.json"], "E_USAGE"),
    (["--stage", "novalue", "--stage", "b=y.json"], "E_USAGE"),
    (["--stage", "a=x.json", "--stage", "b=y.json", "--k", "0"], "E_CUTOFF"),
])
def test_stages_usage_errors(capsys, args, code_name):
    code, _, err = run(capsys, "stages", str(KB / "dataset.json"), *args)
    assert code == 1 and f"[{code_name}]" in err


def test_stages_text(capsys):
    code, out, _ = run(capsys, "stages", str(KB / "dataset.json"), "--stage", f"vector={KB / 'stage_vector.json'}",
                       "--stage", f"rerank={KB / 'run_1.json'}", "--k", "3")
    assert code == 0
    assert "vector -> rerank: lost 2 (2 queries), gained 3 (3 queries), R@3 delta +0.1000" in out
    assert "k07\tvector -> rerank: b07" in out and "k09\tvector -> rerank: a09" in out

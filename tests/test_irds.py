"""ir_datasets import (issue 5): real DL 2019 data through ir_datasets' own code, offline.

IR_DATASETS_HOME is read when ir_datasets is first imported, so the tests
that use ir_datasets' cache run the CLI in a subprocess with their own home;
the in-process tests (a dataset made with ``ir_datasets.create_dataset``) get a
temporary home too, so nothing is written under ~/.ir_datasets.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from converters.json_dataset import load_dataset
from trec_bridge.errors import InvalidInput, UsageError

from .conftest import REPO

DL19 = "msmarco-passage/trec-dl-2019/judged"
QRELS = "qrels/anserini-tools/qrels.dl19-passage.txt"
TOPICS = "topics/anserini-tools/topics.dl19-passage.txt"
QRELS_MD5 = "2f4be390198da108f6845c822e5ada14"  # ir_datasets 0.6.3 etc/downloads.json, trec-dl-2019/qrels


def cli(*args: str, home: Path, extra_env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, IR_DATASETS_HOME=str(home), IR_DATASETS_TMP=str(home / "_tmp"))
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", *args], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120, cwd=cwd)


OFFICIAL_RUN = "runs/trec-dl-2019-passage-official/input.bm25base_p.gz"  # answers all 200 topics


def place_dl19(home: Path, data: Path, *, via_downloads: bool = False) -> None:
    """The files ir_datasets reads for DL19 passage (research/irds_offline.py, PLACEMENTS).

    ir_datasets' own queries file holds all 200 DL 2019 topics; the shared data
    has the texts of the 43 judged ones only, so the other 157 topic IDs are
    taken from an official run (which answers all 200) with a placeholder text.
    """
    base = home / "msmarco-passage" / "trec-dl-2019"
    base.mkdir(parents=True)
    if via_downloads:  # ir_datasets copies it into its cache itself, checking the md5
        (home / "downloads").mkdir()
        shutil.copyfile(data / QRELS, home / "downloads" / QRELS_MD5)
    else:
        shutil.copyfile(data / QRELS, base / "qrels")
    (base / "queries.tsv").write_text(dl19_all_topics(data), encoding="utf-8")


def dl19_all_topics(data: Path) -> str:
    judged = dict(line.split("\t", 1) for line in (data / TOPICS).read_text(encoding="utf-8").splitlines())
    with gzip.open(data / OFFICIAL_RUN, "rt") as f:
        topics = list(dict.fromkeys(line.split(None, 1)[0] for line in f))
    assert len(topics) == 200 and set(judged) <= set(topics)
    return "".join(f"{q}\t{judged.get(q, '(text not in the shared data)')}\n" for q in topics)


# --------------------------------------------------------------------------- real data, real ir_datasets


@pytest.mark.parametrize("via_downloads", [False, True], ids=["cache-path", "downloads-md5"])
def test_dl19_judged_offline(shared_data, tmp_path, via_downloads):
    home = tmp_path / "irds"
    place_dl19(home, shared_data, via_downloads=via_downloads)
    out = tmp_path / "dl19.json"
    p = cli("import", "irds", DL19, "-o", str(out), home=home,
            extra_env={"IR_DATASETS_SMALL_FILE_SIZE": "0"} if via_downloads else None)
    assert p.returncode == 0, p.stderr
    ds = load_dataset(out)
    assert ds.dataset_id == DL19
    assert len(ds.queries) == 43 and ds.qrels.frame.height == 9260
    assert len(set(ds.qrels.query_ids())) == 43
    texts = {q.query_id: q.text for q in ds.queries}
    assert texts["156493"] == "do goldfish grow" and texts["1110199"] == "what is wifi vs bluetooth"
    grade = {(q, d): g for q, _, d, g in ds.qrels.frame.iter_rows()}
    assert grade[("19335", "1017759")] == 0  # first line of NIST's file
    assert grade[("19335", "3175481")] == 3
    assert grade[("104861", "1424216")] == 2
    assert grade[("1133167", "977421")] == 0  # last line
    assert set(ds.qrels.frame.get_column("iteration").to_list()) == {"Q0"} and ds.trec_iteration == "Q0"
    assert ds.grades == (0, 1, 2, 3) and ds.threshold == 1
    assert set(ds.grade_definitions) == {0, 1, 2, 3} and ds.grade_definitions[3].startswith("Perfectly relevant")
    assert ds.official_measures == ("nDCG@10", "RR(rel=2)", "AP(rel=2)")
    assert ds.corpus is None and ds.completeness == "pooled"
    meta = ds.metadata["ir_datasets"]
    files = {f["path"]: f for f in meta["files"]}
    qrels_file = files["msmarco-passage/trec-dl-2019/qrels"]
    assert qrels_file["sha256"] == hashlib.sha256((shared_data / QRELS).read_bytes()).hexdigest()
    assert qrels_file["md5_matches"] is True and qrels_file["root"] == "IR_DATASETS_HOME"
    assert files["msmarco-passage/trec-dl-2019/queries.tsv"]["used_for"] == ["queries", "unjudged_queries"]
    assert meta["counts"] == {"queries": 43, "qrels": 9260, "unjudged_queries": 157}
    assert meta["documented_counts"] == {"queries": 43, "qrels": 9260}
    assert meta["unjudged_queries_from"] == {"dataset_id": "msmarco-passage/trec-dl-2019", "queries": 200}
    assert len(ds.unjudged_queries) == 157 and ds.unjudged_queries[:2] == ("11096", "20455")  # parent's order
    assert "warnings" not in meta
    # exported for trec_eval, the judgments are NIST's file byte for byte
    back = tmp_path / "dl19.qrels"
    from trec_bridge.cli.main import main

    assert main(["export", "dataset", str(out), "--to", "trec-qrels", "-o", str(back)]) == 0
    assert back.read_bytes() == (shared_data / QRELS).read_bytes()


def readme_benchmark_commands() -> list[list[str]]:
    """The README's "three commands" section, command by command, as written (``# and: X`` is a command too)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## From a public benchmark"):]
    section = section[:section.index("\n## ")]
    commands = []
    for line in section.splitlines():
        if not line.startswith("    "):
            continue
        command, _, comment = line.strip().partition("   # ")
        commands.append(shlex.split(command))
        if comment.startswith("and: "):
            commands.append(["trec-bridge", *shlex.split(comment[len("and: "):])])
    return commands


def table_means(stdout: str) -> dict[str, float]:
    """The measure table ``score`` prints: measure -> mean."""
    rows = stdout.split("\n\n")[0].splitlines()[1:]
    return {row.split()[0]: float(row.split()[1]) for row in rows}


def trec_eval_all(binary: str, *args: str) -> dict[str, float]:
    out = subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout
    return {m: float(v) for m, q, v in (line.split() for line in out.splitlines()) if q == "all"}


def test_readme_benchmark_commands_as_written_on_an_official_dl19_run(shared_data, tmp_path):
    """README: an ir_datasets ID and an official TREC DL 2019 run (all 200 topics answered, 43 judged) -> a strict
    report, NIST's figures under --policy trec_eval (equal to the real trec_eval's) and a TREC export."""
    from trec_bridge.references.trec_eval import find_binary

    home = tmp_path / "irds"
    place_dl19(home, shared_data)
    run = shared_data / OFFICIAL_RUN
    commands = readme_benchmark_commands()
    assert commands[0] == ["export", "IR_DATASETS_HOME=~/.ir_datasets"]
    assert [c[:2] for c in commands[1:]] == [["trec-bridge", "import"], ["trec-bridge", "score"], ["trec-bridge", "export"],
                                             ["trec-bridge", "export"], ["trec-bridge", "score"]]
    outputs = []
    for command in commands[1:]:
        args = [str(run) if a == "run.trec" else a for a in command[1:]]
        p = cli(*args, home=home, cwd=tmp_path)
        assert p.returncode == 0, (command, p.stderr)
        outputs.append(p)
    imported, strict, _, _, nist_way = outputs
    assert "157 more queries of 'msmarco-passage/trec-dl-2019' were never judged" in imported.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["unjudged_queries"]) == 157 and report["totals"]["unjudged"] == 157
    assert report["query_set"]["size"] == 43 and report["missing_queries"] == []
    assert "unjudged run queries (157, declared unjudged by the dataset, excluded)" in strict.stdout

    # NIST's published figures: ndcg_cut_10 of the "trec_eval" summary (-l1), recip_rank and map of "passages-eval" (-l2)
    nist = {(r["summary"], r["measure"]): float(r["value"])
            for r in csv.DictReader((run.parent / "nist_summary.tsv").open(), delimiter="\t") if r["run_id"] == "bm25base_p"}
    shown = table_means(nist_way.stdout)
    assert shown == {"nDCG@10": nist[("trec_eval", "ndcg_cut_10")], "RR(rel=2)": nist[("passages-eval", "recip_rank")],
                     "AP(rel=2)": nist[("passages-eval", "map")]} == {"nDCG@10": 0.5058, "RR(rel=2)": 0.7036, "AP(rel=2)": 0.3013}
    binary = find_binary()
    if binary is None:
        pytest.skip("trec_eval binary not installed (trec-bridge tools install-trec-eval)")
    plain = tmp_path / "input.bm25base_p"
    plain.write_bytes(gzip.decompress(run.read_bytes()))
    qrels = tmp_path / "dl19.qrels"  # written by the README's "and: export dataset" command
    assert qrels.read_bytes() == (shared_data / QRELS).read_bytes()
    l1 = trec_eval_all(binary, "-m", "ndcg_cut.10", str(qrels), str(plain))
    l2 = trec_eval_all(binary, "-l2", "-m", "recip_rank", "-m", "map", str(qrels), str(plain))
    assert shown == {"nDCG@10": l1["ndcg_cut_10"], "RR(rel=2)": l2["recip_rank"], "AP(rel=2)": l2["map"]}
    # the strict figures beside them: the binary measures agree with trec_eval here (every judged topic answered)
    means = report["means"]
    assert round(means["RR(rel=2)"]["value"], 4) == l2["recip_rank"] and round(means["AP(rel=2)"]["value"], 4) == l2["map"]
    assert means["nDCG@10"]["eligible"] == 43
    # the TREC export: every tool reads the same rankings
    from converters.trec_run import read_trec_run

    original, back = read_trec_run(run), read_trec_run(tmp_path / "run.export.trec")
    assert back.frame.select("query_id", "doc_id", "rank").equals(original.frame.select("query_id", "doc_id", "rank"))
    assert trec_eval_all(binary, "-m", "ndcg_cut.10", str(qrels), str(tmp_path / "run.export.trec")) == l1


def doc_transcripts(text: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines of an indented block and the output lines quoted under each (trailing blanks dropped)."""
    out: list[tuple[str, list[str]]] = []
    current = None
    for line in text.splitlines():
        if line.startswith("    $ "):
            current = (line[6:], [])
            out.append(current)
        elif current is not None and (line.startswith("    ") or not line.strip()):
            current[1].append(line[4:])
        else:
            current = None
    return [(cmd, "\n".join(lines).rstrip("\n").split("\n") if "".join(lines).strip() else []) for cmd, lines in out]


def replay_workflow(shared_data: Path, tmp_path: Path, page: str):
    """Run the page's ``$ command`` steps in order, as the page's reader would, in a fresh /tmp/wf; yield each
    (command, what it printed, what the page quotes) with the page's paths /tmp/wf and /work/shared/data mapped."""
    wf = tmp_path / "wf"
    (wf / "empty").mkdir(parents=True)
    (wf / "msmarco-test2019-queries.tsv.gz").write_bytes(gzip.compress(dl19_all_topics(shared_data).encode()))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "trec-bridge").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trec_bridge.cli.main "$@"\n')
    (bin_dir / "trec-bridge").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", SHARED=str(shared_data),
               RUN=str(shared_data / OFFICIAL_RUN), IR_DATASETS_HOME=str(wf / "irds"), IR_DATASETS_TMP=str(tmp_path / "t"))
    env.pop("TREC_BRIDGE_PROGRESS", None)

    def local(text: str) -> str:
        return text.replace("/tmp/wf", str(wf)).replace("/work/shared/data", str(shared_data))

    setup = page[page.index("The commands ran in an empty folder with:"):]
    setup = "\n".join(line.strip() for line in setup[:setup.index("\n\n", setup.index("\n\n") + 2)].splitlines()
                      if re.match(r"^    (export )?[A-Z_]+=", line))
    for command, quoted in doc_transcripts(page):
        p = subprocess.run(["bash", "-c", local(f"set -a\n{setup}\nset +a\n{command}")], cwd=wf, env=env, capture_output=True, text=True, timeout=300)
        printed = (p.stdout + p.stderr).rstrip("\n").split("\n") if (p.stdout + p.stderr).strip() else []
        if quoted and quoted[-1].startswith("exit "):
            printed.append(f"exit {p.returncode}")
        else:
            assert p.returncode == 0, (command, p.stderr)
        yield command, printed, [local(line) for line in quoted]
        if re.fullmatch(r'[A-Z_]+=("[^"]*"|\S+)', command):  # a variable the page's later steps use
            setup += "\n" + command
    files = json.loads("{" + page[page.index('"files": ['):page.index("]\n```", page.index('"files": ['))] + "]}")["files"]
    assert files == load_dataset(wf / "dl19.json").metadata["ir_datasets"]["files"]


def test_workflow_dl2019_replays_as_printed(shared_data, tmp_path, trec_eval_binary):
    """docs/workflow-dl2019.md, every section: each command, run in order, prints what the page quotes (error
    codes, messages, tables, the cross-check, trec_eval on the export, exit codes)."""
    page = (REPO / "docs" / "workflow-dl2019.md").read_text(encoding="utf-8")
    steps = list(replay_workflow(shared_data, tmp_path, page))
    assert len(steps) >= 20 and any("[E_IRDS_FILE_MISSING]" in "\n".join(quoted) for _, _, quoted in steps)
    assert any(command.startswith("trec-bridge crosscheck") for command, _, _ in steps)
    for command, printed, quoted in steps:
        assert printed == quoted, command


FAKE_DL19_QRELS = "19335 Q0 d1 3\n19335 Q0 d2 0\n47923 Q0 d3 1\n"
FAKE_DL19_QUERIES = "19335\tanthropological definition\n11096\tan unjudged topic\n47923\tbreast cancer\n20455\tanother\n"


def test_judged_subset_declares_the_topics_its_parent_leaves_unjudged(tmp_path):
    """``…/trec-dl-2019/judged`` keeps the judged topics of ``…/trec-dl-2019``; the others become unjudged_queries,
    so a run answering every topic is scored (its unjudged topics listed) and a query outside both is refused."""
    home = tmp_path / "irds"
    base = home / "msmarco-passage" / "trec-dl-2019"
    base.mkdir(parents=True)
    (base / "qrels").write_text(FAKE_DL19_QRELS)
    (base / "queries.tsv").write_text(FAKE_DL19_QUERIES)
    out = tmp_path / "dl19.json"
    p = cli("import", "irds", DL19, "-o", str(out), home=home)
    assert p.returncode == 0, p.stderr
    ds = load_dataset(out)
    assert ds.query_ids() == ["19335", "47923"] and ds.unjudged_queries == ("11096", "20455")
    meta = ds.metadata["ir_datasets"]
    assert meta["unjudged_queries_from"] == {"dataset_id": "msmarco-passage/trec-dl-2019", "queries": 4}
    assert meta["counts"]["unjudged_queries"] == 2
    assert {f["path"]: f["used_for"] for f in meta["files"]}["msmarco-passage/trec-dl-2019/queries.tsv"] == \
        ["queries", "unjudged_queries"]
    assert "2 more queries of 'msmarco-passage/trec-dl-2019' were never judged" in p.stderr
    run = tmp_path / "all-topics.run"
    run.write_text("".join(f"{q} Q0 d{i} 1 {10 - i} r\n" for i, q in enumerate(["11096", "19335", "20455", "47923"])))
    scored = cli("score", str(out), str(run), "P@1", home=home)
    assert scored.returncode == 0, scored.stderr
    assert "unjudged run queries (2, declared unjudged by the dataset, excluded): 11096, 20455" in scored.stdout
    run.write_text(run.read_text() + "1037798 Q0 d1 1 1 r\n")  # a DL 2020 topic: another benchmark's run
    refused = cli("score", str(out), str(run), "P@1", home=home)
    assert refused.returncode == 1 and "E_RUN_UNKNOWN_QUERY" in refused.stderr and "'1037798'" in refused.stderr
    # the parent itself has no parent with its judgments: its unjudged topics are queries of its set (null)
    whole = cli("import", "irds", "msmarco-passage/trec-dl-2019", "-o", str(tmp_path / "all.json"), home=home)
    assert whole.returncode == 0, whole.stderr
    assert load_dataset(tmp_path / "all.json").unjudged_queries == ()


def test_missing_file_fails_fast_with_the_expected_path(tmp_path):
    home = tmp_path / "empty-home"
    home.mkdir()
    out = tmp_path / "dl19.json"
    # an unroutable proxy: were anything downloaded, it would hang until ir_datasets' 15 s timeout
    start = time.monotonic()
    p = cli("import", "irds", DL19, "-o", str(out), home=home,
            extra_env={"HTTPS_PROXY": "http://10.255.255.1:9", "HTTP_PROXY": "http://10.255.255.1:9",
                       "IR_DATASETS_DL_TRIES": "5"})
    elapsed = time.monotonic() - start
    assert p.returncode == 1
    assert elapsed < 10, elapsed  # a download attempt would wait for the 15 s timeout, times 5 tries
    assert "Traceback" not in p.stderr and p.stdout == ""
    expected = str(home / "msmarco-passage" / "trec-dl-2019" / "qrels")
    assert "E_FILE_NOT_FOUND" in p.stderr or "E_IRDS_FILE_MISSING" in p.stderr
    assert DL19 in p.stderr and f"expects it at {expected}" in p.stderr
    assert "https://trec.nist.gov/data/deep/2019qrels-pass.txt" in p.stderr and "--download" in p.stderr
    assert "Download failed" not in p.stderr  # ir_datasets never tried a mirror
    assert not out.exists() and not list(tmp_path.glob(".dl19.json.*"))
    assert not Path(expected).exists()


def test_missing_extracted_file_names_the_file_to_place(tmp_path):
    """The queries of DL19 are a gunzipped copy of a download: the message names the copy's path."""
    home = tmp_path / "irds"
    base = home / "msmarco-passage" / "trec-dl-2019"
    base.mkdir(parents=True)
    (base / "qrels").write_text("19335 Q0 1017759 0\n")
    p = cli("import", "irds", "msmarco-passage/trec-dl-2019", "-o", str(tmp_path / "x.json"), home=home)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"expects it at {base / 'queries.tsv'}" in p.stderr
    assert "msmarco-test2019-queries.tsv.gz" in p.stderr


def test_a_wrong_local_copy_is_rejected_by_its_md5(tmp_path):
    home = tmp_path / "irds"
    (home / "downloads").mkdir(parents=True)
    (home / "downloads" / QRELS_MD5).write_text("19335 Q0 not-the-real-file 3\n")
    p = cli("import", "irds", DL19, "-o", str(tmp_path / "x.json"), home=home,
            extra_env={"IR_DATASETS_SMALL_FILE_SIZE": "0"})
    assert p.returncode == 1 and "Traceback" not in p.stderr and "Download failed" not in p.stderr
    assert "HashVerificationError" in p.stderr and QRELS_MD5 in p.stderr
    assert str(home / "msmarco-passage" / "trec-dl-2019" / "qrels") in p.stderr
    assert not (home / "msmarco-passage" / "trec-dl-2019" / "qrels").exists()


def test_unknown_dataset_suggests_ids(tmp_path):
    p = cli("import", "irds", "msmarco-pasage/trec-dl-2019/judged", "-o", str(tmp_path / "x.json"), home=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "unknown ir_datasets dataset ID 'msmarco-pasage/trec-dl-2019/judged'" in p.stderr
    assert "did you mean 'msmarco-passage/trec-dl-2019/judged'" in p.stderr


# --------------------------------------------------------------------------- a locally created dataset, in process


@pytest.fixture(scope="module")
def irds(tmp_path_factory):
    """ir_datasets imported with a temporary IR_DATASETS_HOME (unless something imported it before)."""
    if "ir_datasets" not in sys.modules:
        os.environ["IR_DATASETS_HOME"] = str(tmp_path_factory.mktemp("irds-home"))
    from converters.irds import load_ir_datasets

    return load_ir_datasets()


def register(irds, tmp_path: Path, qrels: str, queries: str | None = None, docs: str | None = None) -> str:
    paths = {}
    for name, text in (("qrels_trec", qrels), ("queries_tsv", queries), ("docs_tsv", docs)):
        if text is not None:
            paths[name] = tmp_path / name
            paths[name].write_text(text, encoding="utf-8")
    name = f"trec-bridge-test/{uuid.uuid4().hex[:8]}"
    irds.registry.register(name, irds.create_dataset(**{k: str(v) for k, v in paths.items()}))
    return name


QRELS_TEXT = "q1 0 d1 2\nq1 0 d2 0\nq1 Q0 d3 -1\nq2 0 d2 1\n"
QUERIES_TEXT = "q1\tcapital of france\nq2\twho wrote hamlet\nq3\tan unjudged query\n"


def test_local_dataset(irds, tmp_path):
    from converters.irds import import_irds
    from converters.json_dataset import dump_dataset

    docs = "d1\tParis\nd2\tLondon\nd3\tspam\nd4\tother\n"
    name = register(irds, tmp_path, QRELS_TEXT, QUERIES_TEXT, docs)
    seen = []
    ds = import_irds(name, list_docs=True, progress=lambda stage, n, done: seen.append((stage, n, done)))
    assert [(q.query_id, q.text) for q in ds.queries] == [("q1", "capital of france"), ("q2", "who wrote hamlet"),
                                                         ("q3", "an unjudged query")]
    assert list(ds.qrels.frame.iter_rows()) == [("q1", "0", "d1", 2), ("q1", "0", "d2", 0), ("q1", "Q0", "d3", -1),
                                                ("q2", "0", "d2", 1)]
    assert ds.grades == (-1, 0, 1, 2) and ds.threshold == 1 and ds.grade_definitions == {}
    assert ds.corpus == ("d1", "d2", "d3", "d4") and ds.official_measures == ()
    assert ds.dataset_id == name and ds.trec_iteration == "0"
    assert ("qrels", 4, True) in seen and ("queries", 3, True) in seen and ("documents", 4, True) in seen
    meta = ds.metadata["ir_datasets"]
    by_path = {f["path"]: f for f in meta["files"]}
    assert by_path[str(tmp_path / "qrels_trec")]["sha256"] == hashlib.sha256(QRELS_TEXT.encode()).hexdigest()
    assert "root" not in by_path[str(tmp_path / "qrels_trec")]  # outside IR_DATASETS_HOME: absolute path
    assert meta["query_fields"] == ["query_id", "text"] and meta["query_text_field"] == "text"
    out = tmp_path / "local.json"
    dump_dataset(ds, out)
    again = load_dataset(out)
    assert again.qrels.frame.equals(ds.qrels.frame) and again.queries == ds.queries and again.corpus == ds.corpus
    with pytest.raises(UsageError, match="more than the 3 --list-docs lists|more than 3"):
        import_irds(name, list_docs=True, max_docs=3, progress=False)


def register_judged_subset(irds, parent: str) -> str:
    """``parent + "/judged"`` built as ir_datasets builds its own: the parent's queries that have a qrel."""
    from ir_datasets.datasets.base import Dataset, FilteredQueries
    from ir_datasets.util import Lazy

    ds = irds.load(parent)
    judged = Lazy(lambda: {q.query_id for q in ds.qrels_iter()})
    irds.registry.register(f"{parent}/judged", Dataset(FilteredQueries(ds.queries_handler(), judged), ds))
    return f"{parent}/judged"


def test_unjudged_queries_come_only_from_a_parent_with_the_same_judgments(irds, tmp_path):
    from converters.irds import import_irds

    for sub in "abc":
        (tmp_path / sub).mkdir()
    parent = register(irds, tmp_path / "a", QRELS_TEXT, QUERIES_TEXT + "q4\tanother unjudged query\n")
    ds = import_irds(register_judged_subset(irds, parent), progress=False)
    assert ds.query_ids() == ["q1", "q2"] and ds.unjudged_queries == ("q3", "q4")
    assert ds.metadata["ir_datasets"]["unjudged_queries_from"] == {"dataset_id": parent, "queries": 4}

    # a subset with judgments of its own (dev/small under dev): the parent's other queries are not unjudged
    other = register(irds, tmp_path / "b", QRELS_TEXT, QUERIES_TEXT)
    (tmp_path / "b" / "small").mkdir()
    small = register(irds, tmp_path / "b" / "small", "q1 0 d1 1\n", "q1\tcapital of france\n")
    irds.registry.register(f"{other}/small", irds.load(small))
    ds = import_irds(f"{other}/small", progress=False)
    assert ds.unjudged_queries == () and "unjudged_queries_from" not in ds.metadata["ir_datasets"]

    # the parent's queries cannot be read: imported without them, and a warning says what that means
    gone = register(irds, tmp_path / "c", QRELS_TEXT, QUERIES_TEXT)
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvQueries
    from ir_datasets.util import LocalDownload

    (tmp_path / "c" / "judged.tsv").write_text("q1\tcapital of france\nq2\twho wrote hamlet\n")
    irds.registry.register(f"{gone}/judged", Dataset(TsvQueries(LocalDownload(tmp_path / "c" / "judged.tsv")),
                                                     irds.load(gone)))
    (tmp_path / "c" / "queries_tsv").unlink()
    ds = import_irds(f"{gone}/judged", progress=False)
    assert ds.query_ids() == ["q1", "q2"] and ds.unjudged_queries == ()
    assert any(f"the queries of {gone!r} (the parent with the same judgments) could not be read" in w
               and "a run answering its other queries is refused" in w for w in ds.metadata["ir_datasets"]["warnings"])


def test_no_progress_line_off_a_terminal(irds, tmp_path, capsys, monkeypatch):
    from converters.irds import import_irds

    monkeypatch.delenv("TREC_BRIDGE_PROGRESS", raising=False)
    import_irds(register(irds, tmp_path, QRELS_TEXT, QUERIES_TEXT))  # progress=None: the terminal line
    assert capsys.readouterr().err == ""
    with pytest.raises(UsageError, match="progress must be"):
        import_irds("whatever", progress="yes")


def test_local_dataset_refusals(irds, tmp_path):
    from converters.irds import import_irds

    (tmp_path / "a").mkdir()
    outside = register(irds, tmp_path / "a", "q9 0 d1 1\n", "q1\tonly query\n")
    with pytest.raises(InvalidInput) as exc:
        import_irds(outside, progress=False)
    assert exc.value.code == "E_DATASET_UNKNOWN_QUERY" and exc.value.where.query == "q9"

    (tmp_path / "b").mkdir()
    twice = register(irds, tmp_path / "b", "q1 0 d1 1\nq1 0 d1 2\n", "q1\tx\n")
    with pytest.raises(InvalidInput) as exc:
        import_irds(twice, progress=False)
    assert exc.value.code == "E_QRELS_DUPLICATE"

    (tmp_path / "c").mkdir()
    gone = register(irds, tmp_path / "c", "q1 0 d1 1\n", "q1\tx\n")
    (tmp_path / "c" / "qrels_trec").unlink()
    with pytest.raises(InvalidInput) as exc:
        import_irds(gone, progress=False)
    assert exc.value.code in ("E_FILE_NOT_FOUND", "E_IRDS_FILE_MISSING")
    assert str(tmp_path / "c" / "qrels_trec") in exc.value.message

    (tmp_path / "d").mkdir()
    no_queries = register(irds, tmp_path / "d", "q1 0 d1 1\n")
    with pytest.raises(UsageError, match="has no queries"):
        import_irds(no_queries, progress=False)


def test_guard_is_removed_after_import(irds, tmp_path):
    """The download layer is patched only while an import runs, and restored even after an error."""
    from ir_datasets.util import download, fileio

    from converters.irds import import_irds

    hooks = [(download.Download, "path"), (download.Download, "stream"), (download.LocalDownload, "path"),
             (fileio.Cache, "verify"), (fileio.Cache, "stream"), (fileio.Cache, "path"), (fileio.RelativePath, "path"),
             (download.RequestsDownload, "stream"), (download.RequestsDownload, "__iter__"),
             (download.GoogleDriveDownload, "stream"), (download.GoogleCloudBucketStream, "stream")]
    before = [cls.__dict__[name] for cls, name in hooks]
    tries = os.environ.get("IR_DATASETS_DL_TRIES")
    import_irds(register(irds, tmp_path, QRELS_TEXT, QUERIES_TEXT), progress=False)
    (tmp_path / "e").mkdir()
    broken = register(irds, tmp_path / "e", "q1 0 d1 1\n", "q1\tx\n")
    (tmp_path / "e" / "queries_tsv").unlink()
    with pytest.raises(InvalidInput):
        import_irds(broken, progress=False)
    assert [cls.__dict__[name] for cls, name in hooks] == before
    assert os.environ.get("IR_DATASETS_DL_TRIES") == tries


def test_home_cannot_change_after_import(irds, tmp_path):
    from converters.irds import load_ir_datasets

    with pytest.raises(UsageError, match="already imported"):
        load_ir_datasets(tmp_path / "another-home")

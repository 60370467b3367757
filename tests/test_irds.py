"""ir_datasets import (issue 5): real DL 2019 data through ir_datasets' own code, offline.

IR_DATASETS_HOME is read when ir_datasets is first imported, so the tests
that use ir_datasets' cache run the CLI in a subprocess with their own home;
the in-process tests (a dataset made with ``ir_datasets.create_dataset``) get a
temporary home too, so nothing is written under ~/.ir_datasets.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from converters.json_dataset import load_dataset
from trec_bridge.errors import InvalidInput, UsageError

DL19 = "msmarco-passage/trec-dl-2019/judged"
QRELS = "qrels/anserini-tools/qrels.dl19-passage.txt"
TOPICS = "topics/anserini-tools/topics.dl19-passage.txt"
QRELS_MD5 = "2f4be390198da108f6845c822e5ada14"  # ir_datasets 0.6.3 etc/downloads.json, trec-dl-2019/qrels


def cli(*args: str, home: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, IR_DATASETS_HOME=str(home), IR_DATASETS_TMP=str(home / "_tmp"))
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", *args], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)


def place_dl19(home: Path, data: Path, *, via_downloads: bool = False) -> None:
    """The files ir_datasets reads for DL19 passage (research/irds_offline.py, PLACEMENTS)."""
    base = home / "msmarco-passage" / "trec-dl-2019"
    base.mkdir(parents=True)
    if via_downloads:  # ir_datasets copies it into its cache itself, checking the md5
        (home / "downloads").mkdir()
        shutil.copyfile(data / QRELS, home / "downloads" / QRELS_MD5)
    else:
        shutil.copyfile(data / QRELS, base / "qrels")
    shutil.copyfile(data / TOPICS, base / "queries.tsv")


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
    assert files["msmarco-passage/trec-dl-2019/queries.tsv"]["used_for"] == ["queries"]
    assert meta["counts"] == meta["documented_counts"] == {"queries": 43, "qrels": 9260}
    assert "warnings" not in meta
    # exported for trec_eval, the judgments are NIST's file byte for byte
    back = tmp_path / "dl19.qrels"
    from trec_bridge.cli.main import main

    assert main(["export", "dataset", str(out), "--to", "trec-qrels", "-o", str(back)]) == 0
    assert back.read_bytes() == (shared_data / QRELS).read_bytes()


def test_readme_three_commands_on_real_dl19_files(shared_data, tmp_path):
    """README: an ir_datasets ID and a TREC run -> a strict report and a TREC export, in three commands."""
    home = tmp_path / "irds"
    place_dl19(home, shared_data)
    dataset, report, export = tmp_path / "dl19.json", tmp_path / "report.json", tmp_path / "run.export.trec"
    run = shared_data / "runs" / "sigir25-annotation" / "tirex_rankgpt4o_msmarco-passage-trec-dl-2019-judged.run"
    assert cli("import", "irds", DL19, "-o", str(dataset), home=home).returncode == 0
    scored = cli("score", str(dataset), str(run), "nDCG@10 RR(rel=2) AP(rel=2)", "--json", str(report), home=home)
    assert scored.returncode == 0, scored.stderr
    import json

    means = json.loads(report.read_text())["means"]
    assert means["AP(rel=2)"]["eligible"] == 43 and means["nDCG@10"]["value"] is not None
    exported = cli("export", "run", str(run), "--to", "trec", "-o", str(export), home=home)
    assert exported.returncode == 0, exported.stderr
    from converters.trec_run import read_trec_run

    original, back = read_trec_run(run), read_trec_run(export)
    assert back.frame.select("query_id", "doc_id", "rank").equals(original.frame.select("query_id", "doc_id", "rank"))


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

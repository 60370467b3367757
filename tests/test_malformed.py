"""Hostile and broken input (issue 8): every class of tests/malformed/catalogue.toml through the real CLI.

Each rejected class must give its own error code on stderr, a message naming
the file / line / query (the case's ``where``), exit 1, no traceback and no
output file; each accepted class must score with the right numbers.  Every
case runs in-process through ``trec_bridge.cli.main.main``; the ones marked
``subprocess`` also through ``python -m trec_bridge.cli.main`` to show that no
traceback reaches a real terminal.  docs/errors.md must be what
``trec_bridge.error_doc`` generates, and every registered code must be
exercised by some test or be declared not yet reachable.
"""
from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from trec_bridge import error_doc
from trec_bridge.cli.main import main
from trec_bridge.errors import ERROR_CODES, InvalidInput

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
MALFORMED = TESTS / "malformed"
CATALOGUE = error_doc.load_catalogue(MALFORMED / "catalogue.toml")
CASES = CATALOGUE["case"]
IN_PROCESS = [c for c in CASES if not c.get("subprocess_only")]
SUBPROCESS = [c for c in CASES if c.get("subprocess") or c.get("subprocess_only")]


def _materialise(case: dict, tmp: Path) -> tuple[list[str], dict[str, str], set[Path]]:
    """The case's argv and env with files in place; also the input paths it created in ``tmp``."""
    inputs: set[Path] = set()
    file = None
    recipe = case.get("recipe")
    if recipe:
        if recipe.get("special") == "unreadable":
            file = recipe["name"]
        else:
            path = tmp / recipe["name"]
            file = str(path)
            if recipe.get("directory"):
                path.mkdir()
                inputs.add(path)
            elif recipe.get("fifo"):
                os.mkfifo(path)
                inputs.add(path)
            elif not recipe.get("missing"):
                if "gzip_of" in recipe:
                    data = gzip.compress((MALFORMED / recipe["gzip_of"]).read_bytes(), mtime=0)
                else:
                    data = codecs.escape_decode(recipe["content"])[0]
                    data += codecs.escape_decode(recipe.get("repeat", ""))[0] * recipe.get("times", 0)
                    data += codecs.escape_decode(recipe.get("then", ""))[0]
                if "truncate" in recipe:
                    data = data[: recipe["truncate"]]
                path.write_bytes(data)
                if "mode" in recipe:
                    path.chmod(recipe["mode"])
                inputs.add(path)

    def resolve(token: str) -> str:
        if token == "$file":
            return file
        if "$tmp" in token:
            return token.replace("$tmp", str(tmp))
        if ("/" in token or "." in token) and (MALFORMED / token).exists():
            return str(MALFORMED / token)
        return token

    argv = [resolve(t) for t in case["argv"]]
    env = {k: v.replace("$tmp", str(tmp)) for k, v in case.get("env", {}).items()}
    return argv, env, inputs


def _run_in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse errors
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def _leftovers(tmp: Path, inputs: set[Path]) -> list[str]:
    """Files the command left in ``tmp`` (scratch/ is for tools like ir_datasets' cache)."""
    found = []
    for path in sorted(tmp.rglob("*")):
        rel = path.relative_to(tmp)
        if rel.parts[0] == "scratch" or path in inputs or any(p in inputs for p in path.parents):
            continue
        if path.is_file() or (path.is_dir() and not any(path.iterdir())):
            found.append(str(rel))
    return found


def _check(case: dict, rc: int, out: str, err: str, tmp: Path, inputs: set[Path]) -> None:
    assert "Traceback" not in err, err
    if case.get("accepted"):
        assert rc == case.get("exit", 0), err
        report = json.loads((tmp / "report.json").read_text())
        for measure, exact in case.get("means", {}).items():
            got = report["means"][measure]
            assert got["exact"] == exact, (measure, got)
        return
    assert rc == 1, (rc, err)
    code = case["code"]
    lines = err.strip().splitlines()
    last = lines[-1] if lines else ""
    assert last.startswith(f"trec-bridge: error: [{code}]"), err
    # one line; only argparse's usage block may come before it (no warnings, no notes)
    assert all(ln.startswith(("usage:", " ")) for ln in lines[:-1]), err
    for part in case.get("where", []):
        assert part in last, f"{part!r} not in {last!r}"
    assert not _leftovers(tmp, inputs), f"output left behind: {_leftovers(tmp, inputs)}"


@pytest.mark.parametrize("case", IN_PROCESS, ids=[c["id"] for c in IN_PROCESS])
def test_catalogue_case(case, tmp_path, monkeypatch):
    argv, env, inputs = _materialise(case, tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    rc, out, err = _run_in_process(argv)
    _check(case, rc, out, err, tmp_path, inputs)


# A case also run in process has its real-interpreter twin in the slow tier (an interpreter start each).
@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"], marks=[] if c.get("subprocess_only") else [pytest.mark.slow])
                                  for c in SUBPROCESS])
def test_catalogue_case_subprocess(case, tmp_path):
    """A real interpreter and terminal streams: still one line, no traceback, exit 1."""
    argv, env, inputs = _materialise(case, tmp_path)
    full_env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", *argv], capture_output=True, text=True,
                       env=full_env, cwd=tmp_path, timeout=120)
    _check(case, p.returncode, p.stdout, p.stderr, tmp_path, inputs)


def test_catalogue_is_well_formed():
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case id"
    rejected = [c for c in CASES if not c.get("accepted")]
    assert len(rejected) >= 40
    for c in CASES:
        assert {"id", "input", "problem", "example", "argv"} <= set(c), c["id"]
        assert c.get("accepted") or c.get("code") in ERROR_CODES, c["id"]
        assert c.get("accepted") or c.get("where"), f"{c['id']}: say where the message points"
    # every data file of tests/malformed/ is used by some case (no dead fixtures)
    used = {t for c in CASES for t in c["argv"]} | {c.get("recipe", {}).get("gzip_of") for c in CASES}
    data = {p.relative_to(MALFORMED).as_posix() for p in MALFORMED.rglob("*")
            if p.is_file() and p.name != "catalogue.toml" and not p.name.endswith(".manifest.json")}
    assert data <= used, f"unused files: {sorted(data - used)}"


def test_errors_doc_is_up_to_date():
    """docs/errors.md is generated; regenerate with `python -m trec_bridge.error_doc`."""
    assert error_doc.main(["--check"]) == 0, "docs/errors.md is stale: run python -m trec_bridge.error_doc"


def test_every_code_is_tested_or_declared_unreachable():
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in TESTS.rglob("*")
                     if p.is_file() and p.suffix in (".py", ".toml"))
    untested = [c for c in ERROR_CODES if c not in text and c not in error_doc.NOT_YET_REACHABLE]
    assert not untested, f"codes neither exercised by a test nor declared not yet reachable: {untested}"
    stale = [c for c in error_doc.NOT_YET_REACHABLE if c in text or c not in ERROR_CODES]
    assert not stale, f"declared not yet reachable but tested (or unregistered): {stale}"
    documented = set(CATALOGUE.get("examples", {})) | {c["code"] for c in CASES if not c.get("accepted")}
    missing = [c for c in ERROR_CODES if c not in documented and c not in error_doc.NOT_YET_REACHABLE]
    assert not missing, f"codes without an example in docs/errors.md: {missing}"


def test_duplicate_query_record_from_the_api():
    """E_RUN_DUPLICATE_QUERY: no reader can produce it (JSON keys, grouped TREC lines); a Run built in code can."""
    from converters.detect import load_dataset_any
    from trec_bridge.measures import parse_measures
    from trec_bridge.model import RUN_SCHEMA, Run
    from trec_bridge.scorer import score

    dataset = load_dataset_any(MALFORMED / "valid" / "dataset.json")
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0], "rank": [1]}, schema=RUN_SCHEMA)
    run = Run(frame=frame, queries=("q1", "q1"), source="api")
    with pytest.raises(InvalidInput) as exc:
        score(dataset, run, parse_measures("P@1"))
    assert exc.value.code == "E_RUN_DUPLICATE_QUERY"
    assert exc.value.where.query == "q1"

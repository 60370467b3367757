"""Issue 20: outputs people and pipelines read — the version, numbers that read well, summary formats,
per-query files.  Small inputs from tests/malformed/valid and golden/rag/kb; every command runs in-process."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from trec_bridge import __version__
from trec_bridge.cli.main import main

REPO = Path(__file__).resolve().parent.parent
VALID = REPO / "tests" / "malformed" / "valid"
KB = REPO / "golden" / "rag" / "kb"


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def read_json(path: Path) -> dict:
    from converters.strict_json import parse_json

    return parse_json(path.read_bytes(), str(path))


def test_version_option_prints_the_package_version():
    code, out, err = run_cli("--version")
    assert code == 0, err
    assert out.strip() == f"trec-bridge {__version__}"


def test_every_json_report_names_the_version(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run_cli("score", KB / "dataset.json", KB / "run_1.json", "R@10 RR@20", "--json", a)[0] == 0
    assert run_cli("score", KB / "dataset.json", KB / "run_b.json", "R@10 RR@20", "--json", b)[0] == 0
    cmp, st = tmp_path / "cmp.json", tmp_path / "st.json"
    assert run_cli("compare", a, b, "--json", cmp, "--resamples", "100")[0] == 0
    assert run_cli("stages", KB / "dataset.json", "--stage", f"v={KB / 'stage_vector.json'}",
                   "--stage", f"m={KB / 'stage_merged.json'}", "--json", st)[0] in (0, 2)
    for path in (a, b, cmp, st):
        assert read_json(path)["tool"] == {"name": "trec-bridge", "version": __version__}, path

"""One strict JSON reader for every JSON input (issue 14, item 9).

A sidecar manifest was read with ``json.loads(bytes)``, which guesses UTF-16
and UTF-32 and skips a UTF-8 byte-order mark, so a manifest that every other
JSON input would refuse was applied.  Now every JSON file goes through
``converters.strict_json`` (``read_json_file`` / ``parse_json``); the source
scan below keeps it so.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from converters.trec_run import read_trec_run
from trec_bridge.errors import InvalidInput

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
MALFORMED = TESTS / "malformed"


@pytest.fixture
def run_with_sidecar(tmp_path):
    from converters.json_run import load_run
    from converters.trec_run import write_trec_run

    out = tmp_path / "run.trec"
    write_trec_run(load_run(MALFORMED / "valid" / "run.json"), out, sidecar=True)
    side = Path(str(out) + ".manifest.json")
    assert side.is_file()
    return out, side


def test_a_valid_sidecar_is_applied(run_with_sidecar):
    out, _side = run_with_sidecar
    assert read_trec_run(out).run_id == "base"  # the run ID lives in the manifest only


@pytest.mark.parametrize("encoding, code", [
    ("utf-8-sig", "E_BOM"), ("utf-16", "E_NUL_BYTE"), ("utf-16-le", "E_NUL_BYTE"), ("utf-16-be", "E_NUL_BYTE"),
    ("utf-32", "E_NUL_BYTE"),
])
def test_a_sidecar_is_read_as_strictly_as_any_json(run_with_sidecar, encoding, code):
    out, side = run_with_sidecar
    side.write_bytes(side.read_text(encoding="utf-8").encode(encoding))
    with pytest.raises(InvalidInput) as exc:
        read_trec_run(out)
    assert exc.value.code == "E_SIDECAR" and f"[{code}]" in exc.value.message


@pytest.mark.parametrize("edit, code", [
    (lambda t: t.replace('"version": 1', '"version": 1, "version": 1'), "E_JSON_DUPLICATE_KEY"),
    (lambda t: t.replace('"version": 1', '"version": NaN'), "E_JSON_NUMBER"),
    (lambda t: t.replace('"version": 1', '"version": 1, "x": "\\ud800"'), "E_ENCODING"),
])
def test_a_sidecar_gets_every_strict_check(run_with_sidecar, edit, code):
    out, side = run_with_sidecar
    side.write_text(edit(side.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(InvalidInput) as exc:
        read_trec_run(out)
    assert exc.value.code == "E_SIDECAR"
    assert f"[{code}]" in exc.value.message, exc.value.message


def test_committed_malformed_sidecars_are_refused(tmp_path):
    for name in ("sidecar_bom.txt", "sidecar_utf16.txt"):
        for f in (name, name + ".manifest.json"):
            shutil.copy(MALFORMED / f, tmp_path / f)
        with pytest.raises(InvalidInput) as exc:
            read_trec_run(tmp_path / name)
        assert exc.value.code == "E_SIDECAR"


_JSON_READ = re.compile(r"\b(?:json|orjson|ujson|simplejson|msgspec\.json)\.loads?\s*\(|from\s+(?:json|orjson)\s+import\s+[^\n]*\bloads?\b")
ALLOWED = {"converters/strict_json.py"}  # the strict reader itself (and the package's own schema files)


def test_every_json_input_goes_through_the_strict_reader():
    """No module parses JSON itself: a new json.load(s) on an input would skip the BOM/UTF-16/duplicate-key checks."""
    offenders = []
    for package in ("trec_bridge", "converters"):
        for path in (REPO / package).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel in ALLOWED:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if _JSON_READ.search(code):
                    offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "parse JSON inputs with converters.strict_json.read_json_file:\n" + "\n".join(offenders)

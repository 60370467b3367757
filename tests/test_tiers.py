"""The slow tier names tests that exist: a renamed slow test must not fall silently into the fast tier."""
from __future__ import annotations

import re
from pathlib import Path

from .conftest import MUTATION_FILES, SLOW_FILES, SLOW_TESTS

TESTS = Path(__file__).resolve().parent


def _files(name: str) -> list[Path]:
    return [p for p in TESTS.rglob(name) if "__pycache__" not in p.parts]


def test_every_slow_file_exists():
    assert [name for name in sorted(SLOW_FILES | MUTATION_FILES) if not _files(name)] == []


def test_every_slow_test_exists():
    missing = []
    for entry in sorted(SLOW_TESTS):
        name, function = entry.split("::")
        if not any(re.search(rf"^def {re.escape(function)}\(", p.read_text(), re.MULTILINE) for p in _files(name)):
            missing.append(entry)
    assert missing == []

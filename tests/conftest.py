"""Shared test settings.

Real public data (trec_eval's test suite, TREC runs and qrels) is never copied
into the project; tests reach it through one setting, TREC_BRIDGE_SHARED_DATA
(default ../shared/data next to the checkout), and skip with the reason when it
is absent.  Core tests never depend on it.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("TREC_BRIDGE_SHARED_DATA", REPO.parent / "shared" / "data"))


# Files whose tests take most of the suite's time (hypothesis against the real
# tools, the mutation check, every shared run, rlimit subprocesses).  They are
# marked ``slow`` here, in one place, so that ``pytest -m "not slow"`` is the
# quick loop while CI still runs everything.
SLOW_FILES = frozenset({
    "test_mutants.py",
    "test_walk_cache.py",
    "test_crosscheck_hypothesis.py",
    "test_real_runs.py",
    "test_memory.py",
    "test_trec_eval_suite.py",
    "test_dl_official_runs.py",
    "test_fuzz.py",
})
# The mutation check, its own CI step (.ci/run): ``-m "not mutation"`` then ``-m mutation``.
MUTATION_FILES = frozenset({"test_mutants.py"})


def pytest_collection_modifyitems(config, items):
    """Mark by what a test needs: ``slow`` and ``mutation`` by file, ``needs_shared_data`` by
    fixture, ``needs_trec_eval`` by the skip condition that guards the binary."""
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
        if item.path.name in MUTATION_FILES:
            item.add_marker(pytest.mark.mutation)
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_shared_data)
        if any("trec_eval" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.needs_trec_eval)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set TREC_BRIDGE_SHARED_DATA)")
    return SHARED_DATA


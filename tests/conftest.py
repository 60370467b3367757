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


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set TREC_BRIDGE_SHARED_DATA)")
    return SHARED_DATA


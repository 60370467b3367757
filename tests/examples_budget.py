"""How many generated cases each differential property draws (tests/test_*_hypothesis.py, tests/test_walk.py).

Each case runs a reference tool and walks the cross-check's axes, about a second of CPU on CI's machine, so
this count sets most of CI's time: 60 cases per property keep the whole suite well under CI's 15 minutes
(300 took 17 of its minutes in all). The named hard cases (``@example``) run on top, whatever the count.
``TREC_BRIDGE_EXAMPLES=300`` (or more) runs the deeper search; the cases are derandomized, so a count draws
the same cases on every run.
"""
from __future__ import annotations

import os

DIFFERENTIAL_EXAMPLES = int(os.environ.get("TREC_BRIDGE_EXAMPLES", "60"))

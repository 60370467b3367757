"""Compile ranx's numba functions once, before the tests (CI runs this in the background while apt works).

ranx caches what numba compiles (``cache=True``) next to its sources, so the
first process to call a metric pays ~1 CPU-minute and every later one loads
the cache in seconds.  Without this the first test of each xdist worker pays
it, twice over.  The calls go through the same path the tests take: the
cross-check's ranx child on the bundled example, and ``ranx.Run`` sorting.
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import trec_bridge as tb

EXAMPLES = Path(tb.__file__).resolve().parent / "examples"
MEASURES = "P@5 R@5 RR AP nDCG@5 nDCG(gain=exp)@5 Success@3 RR@3 AP@5"


def main() -> int:
    start = time.perf_counter()
    tb.crosscheck(EXAMPLES / "dataset.json", EXAMPLES / "run.json", MEASURES, against="ranx")
    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.Run({"q": {"d1": 1.0, "d2": 1.0}})
    print(f"ranx warmed in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

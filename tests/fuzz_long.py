"""Long fuzzing run of every reader (not collected by pytest; tests/test_fuzz.py is the bounded CI version).

    python tests/fuzz_long.py --examples 20000                 # hypothesis, every target and strategy
    python tests/fuzz_long.py --examples 20000 --target trec_run
    python tests/fuzz_long.py --engine atheris --examples 200000 --target json_run   # needs `pip install atheris`

The targets and strategies are test_fuzz's: random bytes, byte-level
mutations of valid files, JSON-level mutations and the measure grammar.  The
only acceptable outcomes are a parsed value (that meets the reader's
invariants) or a TrecBridgeError; anything else is a finding.

hypothesis: ``--examples`` per (target, strategy), random seed (``--seed``
to repeat), failures are shrunk to a minimal input and printed.  atheris:
coverage-guided (libFuzzer) over the instrumented ``converters`` and
``trec_bridge`` packages, seeded with test_fuzz's seeds, ``--examples``
runs per target, one process per target; a crash input is saved as
``crash-*`` in the working folder.

At the end it prints, per target and strategy, how many inputs ran, how many
were accepted, the error codes seen and the findings; docs/fuzzing.md
records a run.
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _hypothesis(targets: list[str], examples: int, seed: int | None) -> int:
    from hypothesis import HealthCheck, given, seed as hseed, settings

    import test_fuzz
    from trec_bridge.errors import TrecBridgeError

    findings = 0
    for target in targets:
        for kind, strategy in test_fuzz.strategies_for(target).items():
            stats: collections.Counter = collections.Counter()
            start = time.perf_counter()

            @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
            @given(strategy)
            def fuzz(data):
                stats["inputs"] += 1
                try:
                    test_fuzz.TARGETS[target](data)
                    stats["accepted"] += 1
                except TrecBridgeError as exc:
                    stats[exc.code] += 1

            if seed is not None:
                fuzz = hseed(seed)(fuzz)
            try:
                fuzz()
                result = "ok"
            except Exception:  # noqa: BLE001 - a finding: report and go on with the next strategy
                findings += 1
                result = "FINDING"
                traceback.print_exc()
            codes = ", ".join(f"{c} {n}" for c, n in stats.most_common() if c not in ("inputs", "accepted"))
            print(f"{target:13} {kind:13} {result:7} inputs={stats['inputs']:>7} accepted={stats['accepted']:>6} "
                  f"({time.perf_counter() - start:6.1f} s)  {codes}", flush=True)
    return findings


def _atheris_one(target: str, examples: int) -> int:
    import atheris

    with atheris.instrument_imports(include=["converters", "trec_bridge"]):
        import test_fuzz
        from trec_bridge.errors import TrecBridgeError
        import converters.chunk_map, converters.detect, converters.json_dataset, converters.json_run  # noqa: F401,E401
        import converters.ranx_json, converters.sidecar, converters.trec_qrels, converters.trec_run  # noqa: F401,E401
        import trec_bridge.measures.parse  # noqa: F401

    corpus = Path(os.environ.get("FUZZ_CORPUS", "fuzz-corpus")) / target
    corpus.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(test_fuzz.SEEDS[target]):
        (corpus / f"seed-{i}").write_bytes(seed)
    stats: collections.Counter = collections.Counter()

    def report():
        codes = ", ".join(f"{c} {n}" for c, n in stats.most_common() if c not in ("inputs", "accepted"))
        print(f"{target:13} atheris       inputs={stats['inputs']:>7} accepted={stats['accepted']:>6}  {codes}",
              flush=True)

    def one(data: bytes) -> None:
        stats["inputs"] += 1
        try:
            test_fuzz.TARGETS[target](data)
            stats["accepted"] += 1
        except TrecBridgeError as exc:
            stats[exc.code] += 1
        except BaseException:
            report()  # libFuzzer ends the process on a finding without running atexit
            raise
        if stats["inputs"] % 10000 == 0 or stats["inputs"] == examples:
            report()
    atheris.Setup([sys.argv[0], f"-runs={examples}", "-max_len=4096", "-print_final_stats=1", str(corpus)], one)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    import test_fuzz

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20000, help="inputs per target and strategy (default 20000)")
    parser.add_argument("--target", action="append", choices=sorted(test_fuzz.TARGETS),
                        help="fuzz only this target (repeatable; default: all)")
    parser.add_argument("--engine", choices=["hypothesis", "atheris"], default="hypothesis")
    parser.add_argument("--seed", type=int, help="hypothesis: random seed, to repeat a run")
    args = parser.parse_args(argv)
    targets = args.target or list(test_fuzz.TARGETS)
    if args.engine == "hypothesis":
        findings = _hypothesis(targets, args.examples, args.seed)
        print(f"{findings} finding(s)")
        return 1 if findings else 0
    if len(targets) == 1:
        return _atheris_one(targets[0], args.examples)
    failed = 0
    for target in targets:  # libFuzzer exits the process when done: one process per target
        rc = subprocess.call([sys.executable, __file__, "--engine", "atheris", "--examples", str(args.examples),
                              "--target", target])
        failed += rc != 0
    print(f"{failed} target(s) with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

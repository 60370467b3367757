"""Where a streamed command's two threads spend their wall time: the part reader's worker and the caller.

    python bench/thread_timeline.py score W1.qrels W1.run.json "nDCG@10 AP"

Runs the CLI command in this process with ``one_ahead`` (converters/trec_run_parts.py) replaced by a copy
that times each step: how long the worker took to make each part (wall, and CPU of the worker's own
thread: polars' and numpy's own threads are not in it) and how long the caller waited for it.  A caller
that waits most of the command for its worker means the reader is the critical path and the other core
idles (issue 22, round 3, bench/README.md).  Printed on stderr.
"""
from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

import converters.trec_run_parts as trp

T0 = time.perf_counter()
LOG: list[tuple[str, float, float, float]] = []


def one_ahead(items):
    """trec_run_parts.one_ahead, each step timed."""
    def step():
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return next(items, trp._END)
        finally:
            LOG.append(("work", start - T0, time.perf_counter() - T0, time.thread_time() - cpu))

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(step)
        while True:
            start = time.perf_counter()
            item = pending.result()
            LOG.append(("wait", start - T0, time.perf_counter() - T0, 0.0))
            if item is trp._END:
                return
            pending = pool.submit(step)
            yield item


def main(argv: list[str]) -> None:
    import converters.json_run_dump as dump
    import converters.json_run_lines as lines
    import converters.json_run_stream as stream
    import converters.trec_run_write_parts as write_parts
    for module in (trp, stream, lines, dump, write_parts):
        module.one_ahead = one_ahead
    from trec_bridge.cli.main import main as cli
    try:
        cli(argv)
    except SystemExit:
        pass
    total = time.perf_counter() - T0
    work = [(b, e, c) for kind, b, e, c in LOG if kind == "work"]
    waited = sum(e - b for kind, b, e, _ in LOG if kind == "wait")
    print(f"total {total:.2f} s; workers busy {sum(e - b for b, e, _ in work):.2f} s (their own threads' CPU "
          f"{sum(c for _, _, c in work):.2f} s); callers waited {waited:.2f} s; process CPU {time.process_time():.2f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])

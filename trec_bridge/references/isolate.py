"""Reference tools run where their crash cannot take trec-bridge down.

pytrec_eval (and ir_measures' pytrec_eval provider) is trec_eval's C code
loaded into our process: a segfault there (a grade of 2^63-1, an all-negative
query, a bug we do not know yet) would kill the cross-check, and a huge
allocation would take our memory with it.  So the tool call runs in a forked
child (``Isolated``): the parent prepares every input first (polars must not be
used after fork: its thread pool is gone in the child and it deadlocks), the
child only calls the tool and sends the pickled result back through a pipe.
The trec_eval binary is already a child; both run under an address-space
limit (``memory_limit`` / ``limit_memory``).

A child that dies by a signal, exceeds the limit or the timeout is reported as
``ReferenceFailed`` (E_REFERENCE_FAILED) with the reason: never an unexplained
difference, never a crash of ours.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import time
import warnings
from typing import Callable

try:
    import resource
except ImportError:  # not POSIX: no limit, and PythonReference.start stays in-process (no fork either)
    resource = None

from ..errors import ReferenceFailed
from .result import Collected, ReferenceResult

MIB = 1 << 20
BASE_LIMIT = 1024 * MIB  # address space any tool may take beyond its inputs
PER_INPUT_BYTE = 8  # trec_eval 9.0.4 peaks at ~2.2x the bytes of its files (W1: 565 MiB for 254 MB); 8x leaves room

# What a program prints when an allocation fails (trec_eval: the measure's setup returns UNDEF).
OUT_OF_MEMORY_WORDS = ("Can't calculate measure", "MemoryError", "Cannot allocate memory", "out of memory",
                       "std::bad_alloc", "malloc")


def failed(message: str) -> ReferenceFailed:
    return ReferenceFailed("E_REFERENCE_FAILED", message)


def memory_limit(input_bytes: int) -> int:
    """The address-space limit for a tool reading ``input_bytes`` of input: BASE_LIMIT + 8 bytes per input byte."""
    return BASE_LIMIT + PER_INPUT_BYTE * max(0, int(input_bytes))


def limit_memory(limit: int) -> None:
    """RLIMIT_AS for the calling process (a child: ``preexec_fn`` or right after fork); failing mallocs, not the OOM killer."""
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def address_space() -> int:
    """This process's current virtual size (a forked child inherits it: its limit is this plus its budget)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def death_reason(signum: int) -> str:
    """Why a child killed by ``signum`` died, in words."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if signum == signal.SIGKILL:
        return f"it was killed ({name}: out of memory, or killed by the system)"
    if signum == signal.SIGSEGV:
        return f"it crashed ({name}: segmentation fault, an invalid memory access in its C code)"
    if signum == signal.SIGABRT:
        return f"it aborted ({name}: often a failed allocation, out of memory)"
    return f"it was killed by {name}"


def looks_out_of_memory(message: str) -> bool:
    return any(w in message for w in OUT_OF_MEMORY_WORDS)


class Isolated(Collected):
    """``task()`` running in a forked child from construction on; ``result()`` returns what it returned or raised."""

    def __init__(self, task: Callable[[], ReferenceResult], tool: str, *, timeout: float | None, budget: int):
        self._tool, self._timeout, self._budget = tool, timeout, budget
        self._started = time.monotonic()
        current = address_space()
        limit = current + budget if current else None  # without /proc we cannot size it: no limit
        read_end, write_end = os.pipe()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads; the child uses none
                pid = os.fork()
        except OSError as exc:  # EAGAIN, ENOMEM: the tool never ran
            os.close(read_end)
            os.close(write_end)
            raise failed(f"{tool} failed: cannot start its process ({exc})") from None
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _child(task, write_end, limit)
        os.close(write_end)
        self._pid: int | None = pid
        self._fd: int | None = read_end

    def _collect(self) -> ReferenceResult:
        data = self._read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if os.WIFSIGNALED(status):
            raise failed(f"{self._tool} failed: {death_reason(os.WTERMSIG(status))}; it ran in a child process "
                         f"under a memory limit of {self._budget // MIB} MiB more than trec-bridge's own")
        try:
            kind, value = pickle.loads(data)
        except Exception:  # noqa: BLE001 - a child that died before writing everything
            raise failed(f"{self._tool} failed: its process ended (exit {os.waitstatus_to_exitcode(status)}) "
                         "without a result") from None
        if kind == "error":
            if isinstance(value, MemoryError):
                raise failed(f"{self._tool} failed: out of memory (limit {self._budget // MIB} MiB beyond "
                             "trec-bridge's own)")
            raise value
        return value

    def _read(self) -> bytes:
        chunks = []
        while True:
            wait = None
            if self._timeout is not None:
                wait = self._timeout - (time.monotonic() - self._started)
                if wait <= 0 or not select.select([self._fd], [], [], wait)[0]:
                    raise failed(f"{self._tool} failed: it did not finish within {self._timeout} s")
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def cancel(self) -> None:
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self._pid, 0)
            self._pid = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _child(task: Callable[[], ReferenceResult], write_end: int, limit: int | None) -> None:
    """Run ``task`` and write ("ok", result) or ("error", exception) pickled; leave by os._exit only."""
    code = 0
    try:
        faulthandler.disable()  # a crash is reported by the parent, not dumped by the child
        try:
            if limit is not None:
                limit_memory(limit)
            payload = ("ok", task())
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            payload = ("error", exc)
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an unpicklable error still becomes a message
            data = pickle.dumps(("error", RuntimeError(f"{type(payload[1]).__name__}: {payload[1]} ({exc})")))
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)

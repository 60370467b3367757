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
import functools
import os
import pickle
import select
import signal
import struct
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
            raise self._died(os.WTERMSIG(status))
        return _outcome(data, self._tool, self._budget,
                        f"its process ended (exit {os.waitstatus_to_exitcode(status)}) without a result")

    def _died(self, signum: int) -> ReferenceFailed:
        return failed(f"{self._tool} failed: {death_reason(signum)}; it ran in a child process "
                      f"under a memory limit of {self._budget // MIB} MiB more than trec-bridge's own")

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


def _outcome(data: bytes, tool: str, budget: int, ended: str) -> ReferenceResult:
    """What a child sent: its result, or its error raised here (a MemoryError as ReferenceFailed)."""
    try:
        kind, value = pickle.loads(data)
    except Exception:  # noqa: BLE001 - a child that died before writing everything
        raise failed(f"{tool} failed: {ended}") from None
    if kind == "error":
        if isinstance(value, MemoryError):
            raise failed(f"{tool} failed: out of memory (limit {budget // MIB} MiB beyond trec-bridge's own)")
        raise value
    return value


def _run_task(task: Callable[[], ReferenceResult]) -> bytes:
    """("ok", result) or ("error", exception) of ``task()``, pickled (an unpicklable error still becomes a message)."""
    try:
        payload = ("ok", task())
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        payload = ("error", exc)
    try:
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001
        return pickle.dumps(("error", RuntimeError(f"{type(payload[1]).__name__}: {payload[1]} ({exc})")))


def _pickled(value) -> bytes | None:
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - lambdas, closures, open handles
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _child(task: Callable[[], ReferenceResult], write_end: int, limit: int | None) -> None:
    """Run ``task`` under ``limit`` and write what ``_run_task`` makes of it; leave by os._exit only."""
    code = 0
    try:
        faulthandler.disable()  # a crash is reported by the parent, not dumped by the child
        _write_all(write_end, _run_task(functools.partial(_limited, task, limit)))
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def _limited(task: Callable[[], ReferenceResult], limit: int | None) -> ReferenceResult:
    if limit is not None:
        limit_memory(limit)
    return task()


# ---------------------------------------------------------------- a resident child

class Resident(Collected):
    """A task run by ``tool``'s resident child: one long-lived child per tool, for tools whose start-up is the cost.

    ranx imports numba and compiles its kernels on first use (~10 s a
    process): a fresh child per cross-check pays that every time, which made
    the divergence document take minutes.  The first task forks a child as
    ``Isolated`` does; that child then stays and runs the later tasks of the
    same tool, sent to it pickled, so what numba compiled is kept.  Each task
    still runs under its own address-space budget (a soft limit, lifted after
    it); a crash, a kill or a timeout ends the child, is reported like
    ``Isolated``'s, and the next task starts a new one.  A task that cannot be
    pickled, or arrives while the child is busy, gets an ``Isolated`` child of
    its own.  The child ends when this process closes its pipe (at exit).
    """

    _workers: dict[str, "_Worker"] = {}

    def __init__(self, task: Callable[[], ReferenceResult], tool: str, *, timeout: float | None, budget: int):
        self._tool, self._timeout, self._budget = tool, timeout, budget
        self._started = time.monotonic()
        worker = self._workers.get(tool)
        if worker is not None and worker.owner != os.getpid():  # a forked copy of another process's table
            self._workers.clear()
            worker = None
        if worker is not None:
            message = None if worker.busy else _pickled((task, budget))
            if message is None:  # busy, or a closure that cannot travel: a child of its own
                self._fallback = Isolated(task, tool, timeout=timeout, budget=budget)
                return
            try:
                worker.send(message)
                self._worker = worker
                return
            except OSError:  # the child is gone: start another
                self._workers.pop(tool, None)
                worker.stop()
        self._worker = _Worker.fork(task, tool, budget, list(self._workers.values()))
        self._workers[tool] = self._worker

    _fallback: "Isolated | None" = None

    def _collect(self) -> ReferenceResult:
        if self._fallback is not None:
            return self._fallback.result()
        worker, self._worker = self._worker, None
        wait = None if self._timeout is None else self._timeout - (time.monotonic() - self._started)
        data, why = worker.receive(wait)
        if data is None:
            self._workers.pop(self._tool, None)
            signum = worker.stop(grace=0.0 if why == "timeout" else 5.0)  # its pipe closed: it is ending
            if why == "timeout":
                raise failed(f"{self._tool} failed: it did not finish within {self._timeout} s")
            if signum:
                raise failed(f"{self._tool} failed: {death_reason(signum)}; it ran in a resident child process "
                             f"under a memory limit of {self._budget // MIB} MiB more than trec-bridge's own")
            raise failed(f"{self._tool} failed: its process ended without a result")
        return _outcome(data, self._tool, self._budget, "its process sent a result it could not read")

    def cancel(self) -> None:
        if self._fallback is not None:
            self._fallback.cancel()
        elif self._worker is not None:  # cancelled before its result was read: the child is mid-task
            self._workers.pop(self._tool, None)
            self._worker.stop()
            self._worker = None

    @classmethod
    def stop_all(cls) -> None:
        """End every resident child (tests; at exit the closed pipes end them anyway)."""
        for worker in cls._workers.values():
            worker.stop()
        cls._workers.clear()


HEADER = struct.Struct("<Q")  # the length of a pickled message


class _Worker:
    """The parent's side of a resident child: two pipes, one message each way at a time."""

    def __init__(self, pid: int, tasks: int, results: int):
        self.pid, self.tasks, self.results = pid, tasks, results
        self.owner = os.getpid()
        self.busy = True

    @classmethod
    def fork(cls, task: Callable[[], ReferenceResult], tool: str, budget: int, others: list["_Worker"]) -> "_Worker":
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads; the child uses none
                pid = os.fork()
        except OSError as exc:
            for fd in (task_read, task_write, result_read, result_write):
                os.close(fd)
            raise failed(f"{tool} failed: cannot start its process ({exc})") from None
        if pid == 0:  # never returns
            os.close(task_write)
            os.close(result_read)
            for other in others:  # their pipes are the parent's business: holding them would keep them open
                for fd in (other.tasks, other.results):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            _serve(task, budget, task_read, result_write)
        os.close(task_read)
        os.close(result_write)
        return cls(pid, task_write, result_read)

    def send(self, message: bytes) -> None:
        _write_all(self.tasks, HEADER.pack(len(message)) + message)
        self.busy = True

    def receive(self, wait: float | None) -> tuple[bytes | None, str]:
        """One result, or (None, "timeout" / "ended")."""
        deadline = None if wait is None else time.monotonic() + wait
        head = self._read(HEADER.size, deadline)
        if isinstance(head, str):
            return None, head
        data = self._read(HEADER.unpack(head)[0], deadline)
        if isinstance(data, str):
            return None, data
        self.busy = False
        return data, ""

    def _read(self, size: int, deadline: float | None) -> bytes | str:
        chunks, left = [], size
        while left:
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0 or not select.select([self.results], [], [], wait)[0]:
                    return "timeout"
            chunk = os.read(self.results, min(left, 1 << 20))
            if not chunk:
                return "ended"
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def stop(self, grace: float = 0.0) -> int:
        """Reap the child, killing it if it has not ended within ``grace`` seconds; the signal that ended it
        (0 when it exited by itself or was killed here)."""
        for fd in (self.tasks, self.results):
            try:
                os.close(fd)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        try:
            while True:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.005)
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass
        return 0


def _serve(task: Callable[[], ReferenceResult], budget: int, tasks: int, results: int) -> None:
    """The resident child: run ``task``, then each task the parent sends, until its pipe closes; os._exit only."""
    code = 0
    try:
        faulthandler.disable()
        while True:
            data = _budgeted(task, budget)
            _write_all(results, HEADER.pack(len(data)) + data)
            head = _read_exactly(tasks, HEADER.size)
            if head is None:
                break
            message = _read_exactly(tasks, HEADER.unpack(head)[0])
            if message is None:
                break
            task, budget = pickle.loads(message)
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def _budgeted(task: Callable[[], ReferenceResult], budget: int) -> bytes:
    """``_run_task`` under a soft address-space limit of this process's size plus ``budget``, lifted after."""
    if resource is None:
        return _run_task(task)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    current = address_space()
    if current:
        limit = current + budget
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        return _run_task(task)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

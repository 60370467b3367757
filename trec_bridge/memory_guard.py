"""Refuse an input file that would not fit in memory, before loading it.

polars and numpy allocate outside Python: when an allocation fails there, a
Rust allocation failure aborts the whole process (SIGABRT), and under a
container limit the kernel's OOM killer sends SIGKILL.  Neither can be caught,
so a file too large for the memory the tool may use must be refused *before*
it is read: ``check_input`` estimates the memory the command will need for a
file from its size and kind, compares it with the tightest limit in force and
raises ``E_TOO_LARGE`` naming the file, its size, the estimate and the limit.

The estimate is ``fixed + ratio x size`` (size uncompressed).  A gzip file's
trailer is not trusted for that size (it holds the size mod 2**32 of the last
member only, and may lie): its content is counted as it is decompressed, and
``Guard.check`` refuses it as soon as what has come out would not fit.  The
ratios are the peak resident memory of a whole ``score``
command per byte of the file, measured with polars 2.1 / numpy 2.4 (see
docs/errors.md "Memory"), rounded up:

* TREC run (6 columns)   5.2-8.5 x  ->  10
* TREC qrels (4 columns) 10-30 x   ->  16 (scoring joins every judgment)
* JSON dataset or run    15.6-17 x ->  20 (Python objects per entry)
* anything else          (chunk map 12.7 x, query file 6.9 x: Python lists) -> 16

The limits, tightest first: ``TREC_BRIDGE_MEMORY_LIMIT`` (a size such as
``512M`` or ``2G``, against the resident memory in use: a user's own cap, and
the way tests make a small input "too large"), RLIMIT_AS (compared with the address space in use,
VmSize, plus what polars' thread pool reserves when it starts: glibc arenas
of 64 MiB and thread stacks), RLIMIT_DATA (VmData), the cgroup's memory.max
(v2) or memory.limit_in_bytes (v1) minus its working set, and otherwise
MemAvailable.  Until polars is imported, each limit also counts what its
import will take (``POLARS_IMPORT``): the full path checks its first file
before its readers load polars.  Only Linux's /proc and /sys are read, once
per file: a few small reads, no allocation proportional to the file.

Per-query state (``check_queries``) is checked by the scorer as queries
arrive: ``PER_QUERY + PER_VALUE x measures`` bytes per query.
tests/test_memory_bound.py holds the peak to these estimates on adversarial
shapes.

``TREC_BRIDGE_MEMORY_GUARD=off`` turns the check off (for measurements).
"""
from __future__ import annotations

import os
import re
import resource
import sys
from dataclasses import dataclass, replace

from .errors import InvalidInput, UsageError

MiB = 1 << 20
FIXED = 64 * MiB  # imports, report building, interpreter slack
RATIOS = {"trec_run": 10, "trec_qrels": 16, "json": 20, "other": 16}
KIND_NAMES = {"trec_run": "TREC run", "trec_qrels": "TREC qrels", "json": "JSON", "other": "text"}
ARENA = 64 * MiB  # glibc's per-thread malloc arena reservation on 64-bit
STACK = 8 * MiB
_UNLIMITED = 1 << 62
_state = {"checks": 0}  # polars' pool reserve is counted for the first file of a process only


@dataclass(frozen=True)
class Limit:
    """A memory limit the process runs under and what is already counted against it."""

    name: str  # "RLIMIT_AS (ulimit -v)", ...
    limit: int  # bytes
    used: int  # bytes already counted against it
    reserve: int = 0  # bytes the tool will take whatever the file (thread pool)
    imports: int = 0  # bytes polars' import will take, not yet in ``used`` (``_import_reserve``)

    @property
    def headroom(self) -> int:
        return self.limit - self.used - self.reserve - self.imports


PER_QUERY = 2 * 1024  # bytes per query of the state kept for every query until the report (see check_queries)
PER_VALUE = 768  # bytes per (query, measure): the value, its exact fraction and its cell in a JSON report


def per_query(measures: int) -> int:
    return PER_QUERY + PER_VALUE * measures


def check_queries(count: int, measures: int, source: str | None) -> None:
    """Raise E_TOO_LARGE when ``count`` queries' per-query state would not fit.

    A file's ratio bounds what its bytes cost, but some state is kept per
    query for the whole command (query lists, orderings, results, the
    report), whatever the bytes: 200,000 one-line queries cost several
    times their file's estimate.  The scorer calls this as queries arrive.
    Measured on one-document queries (polars 2.1, Python 3.11): about 1.7 KB
    per query plus 0.1 KB per measure, and 0.7 KB more per measure when a
    JSON report is written; rounded up.
    """
    if os.environ.get("TREC_BRIDGE_MEMORY_GUARD", "").lower() in ("off", "0", "no"):
        return
    need = per_query(measures) * count
    for lim in limits(first_file=False):
        if need > lim.headroom:
            raise InvalidInput("E_TOO_LARGE", f"{count:,} queries need about {_mib(need)} of memory for their "
                               f"per-query results ({PER_QUERY:,} bytes each and {PER_VALUE:,} per measure), but the limit {lim.name} is "
                               f"{_mib(lim.limit)}: {_mib(lim.used)} is in use{_imports_text(lim)}, {_mib(max(lim.headroom, 0))} is left. "
                               "Raise the limit, use a machine with more memory, or score the queries in parts",
                               file=source)


# What the full command holds beyond the small-input path of score (cli/quick.py) when it checks a file: polars
# and its readers imported (measured here: VmSize +380 MiB, VmData +50 MiB, VmRSS +35 MiB), rounded up.
FULL_PATH_MARGIN = 512 * MiB


def close_to_a_limit(need: int) -> bool:
    """Whether ``need`` bytes more and ``FULL_PATH_MARGIN`` would pass a limit in force: where the full command
    could refuse what this lighter process lets through, the small-input path leaves the inputs to it.  (The
    margin holds polars' import: its reserve in ``limits`` is not counted twice.)"""
    return any(need + FULL_PATH_MARGIN > lim.headroom + lim.imports for lim in limits(first_file=True))


def check_input(name: str, size: int, head: bytes) -> None:
    """Raise E_TOO_LARGE when a file of ``size`` bytes (uncompressed) starting with ``head`` cannot fit."""
    Guard(name, head).check(size)


class Guard:
    """The check of one input file, repeated as its known size grows (gzip content, a pipe or a device)."""

    def __init__(self, name: str, head: bytes, *, streamed: bool = False):
        self.name, self.kind, self.streamed = name, sniff(head), streamed
        self._first: bool | None = None

    def check(self, size: int, held: int = 0) -> None:
        """Raise E_TOO_LARGE when ``size`` bytes (uncompressed) of this file cannot fit.

        ``held``: bytes of it already in memory, hence already in the usage read from /proc.
        """
        if os.environ.get("TREC_BRIDGE_MEMORY_GUARD", "").lower() in ("off", "0", "no"):
            return
        if self._first is None:
            self._first = _state["checks"] == 0
            _state["checks"] += 1
        need = estimate(size, self.kind)
        for lim in limits(first_file=self._first):
            if need - held > lim.headroom:
                raise InvalidInput("E_TOO_LARGE", _message(size, self.kind, need, lim, self.streamed),
                                   file=self.name)


def sniff(head: bytes) -> str:
    """The kind of file from its first bytes: JSON, TREC run (6 fields), TREC qrels (4 fields), other."""
    text = head.lstrip(b" \t\r\n")
    if text[:1] in (b"{", b"["):
        return "json"
    fields = len(text.split(b"\n", 1)[0].split())
    return {6: "trec_run", 4: "trec_qrels"}.get(fields, "other")


def estimate(size: int, kind: str) -> int:
    return FIXED + RATIOS[kind] * size


def limits(first_file: bool = True) -> list[Limit]:
    """Every memory limit in force, each with what is already used against it."""
    out: list[Limit] = []
    status = _proc_status()
    imports = _import_reserve()
    own = os.environ.get(LIMIT_ENV, "").strip()
    if own:
        out.append(Limit(LIMIT_ENV, parse_size(own), status.get("VmRSS", 0), imports=imports["VmRSS"]))
    reserve_as, reserve_data = _pool_reserve() if first_file else (0, 0)
    for res, label, field, reserve in ((resource.RLIMIT_AS, "RLIMIT_AS (ulimit -v)", "VmSize", reserve_as),
                                       (resource.RLIMIT_DATA, "RLIMIT_DATA (ulimit -d)", "VmData", reserve_data)):
        soft, _hard = resource.getrlimit(res)
        if soft != resource.RLIM_INFINITY and 0 <= soft < _UNLIMITED:
            out.append(Limit(label, soft, status.get(field, 0), reserve, imports[field]))
    cgroup = _cgroup_limit()
    if cgroup is not None:
        out.append(replace(cgroup, imports=imports["VmRSS"]))
    avail = _meminfo_available()  # in a container this is the host's: the cgroup limit above is the real one
    if avail is not None:
        out.append(Limit("MemAvailable (free memory)", avail, 0, imports=imports["VmRSS"]))
    return out


# What importing polars adds to each measure of the process (measured with polars 2.1, Python 3.11: VmSize
# +376 MiB, VmData +47 MiB, VmRSS +32 MiB), rounded up; its thread pool's start is ``_pool_reserve``'s.
POLARS_IMPORT = {"VmSize": 384 * MiB, "VmData": 64 * MiB, "VmRSS": 40 * MiB}


def _import_reserve() -> dict[str, int]:
    """``POLARS_IMPORT`` while polars is not loaded yet, else nothing: the full path checks its first file before
    its readers import polars, and a file that fits only without polars' address space must be refused there
    (under a tight ``ulimit -v`` the import itself would fail) rather than let through."""
    if "polars" in sys.modules:
        return {field: 0 for field in POLARS_IMPORT}
    return dict(POLARS_IMPORT)


LIMIT_ENV = "TREC_BRIDGE_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 1 << 10, "M": MiB, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``TREC_BRIDGE_MEMORY_LIMIT``'s value: bytes, or a number with K, M, G or T (powers of 1024; "MiB", "MB" too)."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    value = float(match.group(1)) * _UNITS[match.group(2).upper()] if match else 0
    if not 1 <= value < 1 << 60:
        raise UsageError("E_USAGE", f"{LIMIT_ENV}={text[:40]!r} is not a memory size (such as 512M or 2G)")
    return int(value)


def _message(size: int, kind: str, need: int, lim: Limit, streamed: bool = False) -> str:
    reserve = f", {_mib(lim.reserve)} will be reserved by the thread pool" if lim.reserve else ""
    reserve += _imports_text(lim)
    left = max(lim.headroom, 0)
    sized = f"at least {_mib(size)}: refused after decompressing that much" if streamed else _mib(size)
    text = (f"this {KIND_NAMES[kind]} file ({sized}) needs about {_mib(need)} of memory to load and score "
            f"({RATIOS[kind]} x its size + {_mib(FIXED)}), but the limit {lim.name} is {_mib(lim.limit)}: "
            f"{_mib(lim.used)} is in use{reserve}, {_mib(left)} is left. Raise the limit, use a machine with more "
            "memory, or split the file into smaller parts (by query)")
    if lim.reserve:
        text += "; POLARS_MAX_THREADS=1 MALLOC_ARENA_MAX=2 make the thread pool reserve less address space"
    return text


def _imports_text(lim: Limit) -> str:
    return f", {_mib(lim.imports)} will be taken by importing polars" if lim.imports else ""


def _mib(n: int) -> str:
    return f"{n / MiB:,.0f} MiB" if n >= MiB else f"{n:,} bytes"


def _proc_status() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                key, _, value = line.partition(b":")
                if key in (b"VmSize", b"VmData", b"VmRSS"):
                    out[key.decode()] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return out


def _pool_reserve() -> tuple[int, int]:
    """Address space (and data) polars' thread pool takes when it starts: per thread a stack and a malloc arena.

    Measured with polars 2.1 on 2 cores: a pool of n threads starts about
    3n + 3 threads; glibc gives each a 64 MiB arena up to 8 x cores arenas
    (MALLOC_ARENA_MAX overrides).  Counted before the first file of a process
    is read, i.e. before any parsing started the pool.
    """
    cores = os.cpu_count() or 1
    try:
        pool = int(os.environ.get("POLARS_MAX_THREADS", "") or 0) or len(os.sched_getaffinity(0))
    except (ValueError, AttributeError, OSError):
        pool = cores
    threads = 3 * pool + 3
    try:
        max_arenas = int(os.environ.get("MALLOC_ARENA_MAX", "") or 0) or 8 * cores
    except ValueError:
        max_arenas = 8 * cores
    arenas = max(0, min(threads, max_arenas - 1))
    return arenas * ARENA + threads * STACK, threads * STACK


def _read_text(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _read_int(path: str) -> int | None:
    try:
        text = _read_text(path).strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value < _UNLIMITED else None


def _inactive_file(stat: str, key: str) -> int:
    try:
        for line in _read_text(stat).splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_limit() -> Limit | None:
    """The cgroup's memory limit and working set (usage minus reclaimable file cache), v2 then v1.  (Paths joined
    by os.path: every file check runs this, and score on small files imports no pathlib, cli/quick.py.)"""
    root = "/sys/fs/cgroup"
    rel = ""
    try:
        for line in _read_text("/proc/self/cgroup").splitlines():
            if line.startswith("0::"):
                rel = line[3:].lstrip("/")
    except OSError:
        pass
    join = os.path.join
    for folder in ([join(root, rel)] if rel else []) + [root]:
        limit = _read_int(join(folder, "memory.max"))
        if limit is not None:
            used = (_read_int(join(folder, "memory.current")) or 0) - _inactive_file(join(folder, "memory.stat"),
                                                                                      "inactive_file")
            return Limit("cgroup memory.max", limit, max(used, 0))
    v1 = join(root, "memory")
    limit = _read_int(join(v1, "memory.limit_in_bytes"))
    if limit is not None:
        used = (_read_int(join(v1, "memory.usage_in_bytes")) or 0) - _inactive_file(join(v1, "memory.stat"),
                                                                                  "total_inactive_file")
        return Limit("cgroup memory.limit_in_bytes", limit, max(used, 0))
    return None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None

"""Reading inputs and writing outputs safely.

Every reader goes through ``read_input_bytes`` so that a missing file, a
directory, a truncated gzip or an unreadable file gives the same error codes
everywhere.  Writing lives in ``trec_bridge.outputs`` (``atomic_write`` here hands on to
it at each call, for the callers that import it from this module).
pathlib, outputs and the progress line are imported where used: ``score`` on small plain files reads its
inputs without them (cli/quick.py).
"""
from __future__ import annotations

import os
import stat
import zlib
from typing import TYPE_CHECKING

from . import memory_guard
from .errors import InvalidInput

if TYPE_CHECKING:  # hashlib (OpenSSL's set-up), gzip and threading are imported where used: start-up stays light
    import threading
    from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
_HEAD = 4096  # bytes read first, to tell the kind of file before loading it
_BLOCK = 1 << 24  # pipes and devices are read in blocks of 16 MiB, gzip content comes out in such blocks
_GZ_READ = 1 << 20  # compressed bytes read at a time


def atomic_write(path, content, **options) -> None:
    """``outputs.atomic_write``, looked up at each call: a module that imported this name once keeps writing
    through whatever ``outputs.atomic_write`` is (a test's spy ends with the test)."""
    from . import outputs

    outputs.atomic_write(path, content, **options)


def _gunzip_head(head: bytes) -> bytes:
    """The first uncompressed bytes of a gzip file (for sniffing only; corrupt data gives b"")."""
    try:
        return zlib.decompressobj(wbits=31).decompress(head, _HEAD)
    except zlib.error:
        return b""


def read_input_bytes(path: str | os.PathLike) -> bytes:
    """The file's content, gunzipped when it starts with the gzip magic.

    Before reading a regular file, ``memory_guard.check_input`` refuses one
    that would not fit in the memory the process may use (E_TOO_LARGE); the
    content of a gzip file, a pipe or a device is checked as it comes.
    """
    from pathlib import Path

    from .progress import progress

    p = Path(path)
    name = str(path)
    if p.is_dir():
        raise InvalidInput("E_FILE_IS_DIRECTORY", "is a directory, expected a file", file=name)
    if not p.exists():
        raise InvalidInput("E_FILE_NOT_FOUND", "no such file", file=name)
    if stat.S_ISFIFO(p.stat().st_mode) or stat.S_ISSOCK(p.stat().st_mode):
        raise InvalidInput("E_FILE_UNREADABLE", "is a pipe: an input is read more than once (its first bytes tell "
                           "its format), and a pipe would lose those bytes. Write it to a file first (gzip files are "
                           "read directly, no need for <(zcat ...))", file=name)
    try:
        with open(p, "rb") as fh:
            head = fh.read(_HEAD)
            info = os.fstat(fh.fileno())
            if head[:2] == GZIP_MAGIC:
                return _gunzip_guarded(fh, head, p, info)
            if stat.S_ISREG(info.st_mode):
                memory_guard.check_input(name, info.st_size, head)
                fh.seek(0)
                with progress(f"reading {name}"):
                    raw = fh.read()
                if len(raw) >= _BACKGROUND_DIGEST:
                    _digest_in_background(p, info, raw)
            else:  # a pipe or a device has no size: check as it grows (/dev/zero must not eat the memory)
                guard = memory_guard.Guard(name, head)
                blocks, total = [head], len(head)
                while block := fh.read(_BLOCK):
                    blocks.append(block)
                    total += len(block)
                    guard.check(total, held=total - len(block))
                raw = b"".join(blocks)
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=name) from None
    return raw


def _gunzip_guarded(fh, head: bytes, path: Path, info: os.stat_result) -> bytes:
    """The decompressed content of every gzip member, counted as it comes out and refused at the memory limit.

    The ISIZE trailer is not trusted: it is the last member's size only (an
    earlier member may hide gigabytes), modulo 2**32, and a file may lie.  So
    the guard checks the bytes actually produced, block by block, and no
    block is larger than ``_BLOCK``.
    """
    name = str(path)
    import hashlib

    from .progress import progress

    guard = memory_guard.Guard(name, _gunzip_head(head), streamed=True)
    digest = hashlib.sha256(head)
    blocks: list[bytes] = []
    total = 0
    inflate, started = zlib.decompressobj(wbits=31), False  # one per member
    data = head
    with progress(f"reading {name}"):
        while True:
            if not data:
                data = fh.read(_GZ_READ)
                if not data:
                    break
                digest.update(data)
            try:
                out = inflate.decompress(data, _BLOCK)
            except zlib.error as exc:
                raise InvalidInput("E_GZIP_CORRUPT", f"gzip data is truncated or corrupt ({exc})", file=name) from None
            started = True
            if out:
                blocks.append(out)
                total += len(out)
                guard.check(total, held=total - len(out))
            if inflate.eof:  # the member ended: the bytes after it begin the next member
                data = inflate.unused_data
                inflate, started = zlib.decompressobj(wbits=31), False
            else:
                data = inflate.unconsumed_tail
    if started:
        raise InvalidInput("E_GZIP_CORRUPT", "gzip data is truncated or corrupt (the last member ends early)",
                           file=name)
    if stat.S_ISREG(info.st_mode):
        remember_digest(path, info, digest.hexdigest())
    return b"".join(blocks)


def head_bytes(path: str | os.PathLike, n: int = 4096) -> bytes:
    """The first ``n`` bytes of the (possibly gzipped) content, b"" when unreadable: for sniffing a format.

    The reader that follows reports a missing, unreadable or corrupt file with its proper code.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(n)
        if head[:2] == GZIP_MAGIC:
            import gzip

            with gzip.open(path, "rb") as fh:
                head = fh.read(n)
    except (OSError, EOFError, zlib.error):
        return b""
    return head


# SHA-256 of the files read so far, computed in a thread while the caller parses
# (hashlib releases the GIL): the report's fingerprint then costs no second read
# and names exactly the bytes that were scored.  Keyed by (path, size, mtime).
_DIGESTS: dict[tuple, tuple[threading.Thread | None, list[str]]] = {}
_BACKGROUND_DIGEST = 1 << 20  # smaller files are hashed on demand: a thread would cost more


def _file_key(path: str | os.PathLike, info: os.stat_result) -> tuple:
    return (os.path.realpath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _digest_in_background(path: Path, info: os.stat_result, data: bytes) -> None:
    import hashlib
    import threading

    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(hashlib.sha256(data).hexdigest()), daemon=True)
    worker.start()
    _DIGESTS[_file_key(path, info)] = (worker, out)


def remember_digest(path: str | os.PathLike, info: os.stat_result, hexdigest: str) -> None:
    """Record the SHA-256 a reader computed while reading ``path`` (as it was when ``info`` was taken)."""
    _DIGESTS[_file_key(path, info)] = (None, [hexdigest])


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 of the file's bytes as stored (before any gunzip); of a folder (a partitioned Parquet input), of its
    files' relative paths and SHA-256s, in name order; of an fsspec URL, the same of what it names (urls.py)."""
    from .urls import is_url

    if is_url(path):
        from .urls import sha256_url

        return sha256_url(str(path))
    import hashlib

    if os.path.isdir(path):
        from pathlib import Path

        h = hashlib.sha256()
        for p in sorted(q for q in Path(path).rglob("*") if q.is_file()):
            h.update(f"{p.relative_to(path).as_posix()}\t{sha256_file(p)}\n".encode())
        return h.hexdigest()
    known = _DIGESTS.get(_file_key(path, os.stat(path)))
    if known is not None:
        if known[0] is not None:
            known[0].join()
        if known[1]:
            return known[1][0]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()

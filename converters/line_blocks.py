"""A file read in blocks of whole lines, into one buffer reused from block to block.

The streaming JSON readers (json_run_stream.py, json_run_lines.py) split
these blocks into lines themselves; a line longer than a block makes its block
longer, so no line is ever cut.  Plain files and gzip streams alike.

A block's buffer holds its lines until the next block is asked for, which
reads into the same buffer: the readers copy what they keep (columns, the
head and tail bytes) before asking.  A fresh 16 MB buffer a block was zeroed
and faulted in page by page every time (issue 22: 13% of JSON -> TREC's page
faults, and their system time).
"""
from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from trec_bridge.errors import InvalidInput
from trec_bridge.files import GZIP_MAGIC, read_input_bytes

BLOCK_BYTES = 16 << 20  # the TREC reader's part size (converters/trec_run_parts.py)


@dataclass
class Block:
    buf: bytearray  # ``buf[:end]`` holds whole lines (the file's last one may lack its line end); past ``end``: stale bytes
    end: int
    last: bool  # the file ends with this block


@contextmanager
def opened(path):
    """The file open for reading in binary (gzip allowed); a missing file, a folder or a pipe gets the readers'
    own error."""
    p = Path(path)
    if not p.is_file():
        read_input_bytes(path)  # raises the right error
    try:
        with open(p, "rb") as raw:
            gz = raw.read(2) == GZIP_MAGIC
        fh = gzip.open(p, "rb") if gz else open(p, "rb")
    except OSError as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    with fh:
        yield fh


def line_blocks(fh, block_bytes: int = BLOCK_BYTES) -> Iterator[Block]:
    """Blocks of about ``block_bytes`` of whole lines, in file order, each valid until the next is asked for."""
    carry = b""
    size = max(block_bytes, 1)
    buf = bytearray()
    while True:
        need = len(carry) + size
        if len(buf) < need:  # the first block, or a line longer than any before: a larger buffer
            buf = bytearray(need + size // 4)  # room for the carried part line, so the next block fits too
        buf[:len(carry)] = carry
        total = len(carry) + _fill(fh, memoryview(buf)[len(carry):need])
        if total < need:  # the end of the file
            if total:
                yield Block(buf, total, True)
            return
        end = buf.rfind(b"\n", 0, total) + 1
        if end == 0:  # one line longer than the block: read on with a larger one
            carry, size = bytes(memoryview(buf)[:total]), size * 2
            continue
        carry, size = bytes(memoryview(buf)[end:total]), max(block_bytes, 1)
        yield Block(buf, end, False)


def _fill(fh, view: memoryview) -> int:
    """Read into ``view`` until it is full or the file ends; the bytes read."""
    got = 0
    try:
        while got < len(view):
            n = fh.readinto(view[got:])
            if not n:
                break
            got += n
    except (OSError, EOFError) as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot read: {exc}", file=getattr(fh, "name", None)) from None
    return got

"""A large output handed to the disk while it is written, so that its final fsync finds little left to do.

``outputs`` fsyncs every file before renaming it into place.  A converted W1
run (300 MB, written part by part) was kept dirty in the page cache until
then, and the fsync and ext4's flush at the rename over the old file waited
alone at the end of the command (0.16 + 0.10 s on an idle machine, more under
load), every thread idle.  Here the writer calls ``after_part`` once a part is
written; every ``STEP`` bytes the file is flushed to the kernel and the
write-back of that range is started (Linux ``sync_file_range`` with
``SYNC_FILE_RANGE_WRITE``: it starts the writing, it does not wait for it,
nor make it durable: the fsync still does that).  Where the call does not
exist, or fails, nothing changes.
"""
from __future__ import annotations

STEP = 32 << 20
_SYNC_FILE_RANGE_WRITE = 2
_call = None  # the libc function once looked up; False where there is none


class Writeback:
    """Start the write-back of ``fh`` (a binary file) every ``STEP`` bytes written."""

    def __init__(self, fh) -> None:
        self._fh, self._started = fh, 0

    def after_part(self) -> None:
        """The bytes written since the last start, handed on once they reach ``STEP``."""
        at = self._fh.tell()
        if at - self._started < STEP:
            return
        self._fh.flush()
        call = _sync_file_range()
        if call and call(self._fh.fileno(), self._started, at - self._started, _SYNC_FILE_RANGE_WRITE) == 0:
            self._started = at


def _sync_file_range():
    """libc's ``sync_file_range`` (fd, offset, bytes, flags) -> int, or False where there is none."""
    global _call
    if _call is None:
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).sync_file_range
            function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
            function.restype = ctypes.c_int
            _call = function
        except (OSError, AttributeError):
            _call = False
    return _call

"""A progress line on stderr for slow loads: only on a terminal, only after a couple of seconds.

Issue 7 asks for a progress indication "on stderr, only on a terminal, when a
load takes more than a couple of seconds". Wrap the slow step::

    from trec_bridge.progress import progress

    with progress(f"reading {path}"):
        frame = read_run(path)

* stderr is not a terminal (a pipe, a file, CI, a test's capture): nothing is
  started and nothing is written; the cost is one ``isatty()`` call.
* on a terminal, a daemon thread waits ``delay`` seconds (default 2). If the
  step is done by then, nothing was written. Otherwise it rewrites one line,
  ``reading run.trec … 3s`` (plus ``detail`` when the caller sets it, e.g.
  bytes read), every ``interval`` seconds, and the line is erased when the
  step ends, normally or by an exception, so the command's own output starts
  on a clean line.
* ``TREC_BRIDGE_PROGRESS=0`` turns it off; ``=1`` forces it on even when
  stderr is not a terminal (for debugging a pipeline).

Steps nest: a step inside another (a file read while a report is compared)
draws no second line that would fight the first; it shows as the outer
line's detail while it lasts (``reading report.json``), so one line is on
the terminal at a time.

The helper never raises because of its stream: a write error (closed stream,
broken pipe) silently stops the line.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

from .messages import printable

ENV_VAR = "TREC_BRIDGE_PROGRESS"
_shown: list["progress"] = []  # the lines being drawn, outermost first (nested steps become its detail)
DEFAULT_DELAY = 2.0
DEFAULT_INTERVAL = 0.5


def _enabled(stream: TextIO) -> bool:
    setting = os.environ.get(ENV_VAR, "").strip().lower()
    if setting in ("0", "no", "off", "false"):
        return False
    if setting in ("1", "yes", "on", "true"):
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def format_elapsed(seconds: float) -> str:
    """``7s``, ``1m05s``, ``2h03m``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class progress:  # noqa: N801 - used like a function: ``with progress("reading x"):``
    """Context manager: an elapsed-time line on stderr for a step that turns out to be slow.

    ``stream`` defaults to ``sys.stderr`` as it is when the block is entered.
    Set ``p.detail`` inside the block (``with progress(...) as p``) to append
    a short text, e.g. ``p.detail = "1.2 GB"``; it is read by the thread.
    """

    def __init__(self, label: str, *, delay: float | None = None, interval: float = DEFAULT_INTERVAL,
                 stream: TextIO | None = None):
        self.label = label
        self.delay = DEFAULT_DELAY if delay is None else delay  # read at call time (tests shorten it)
        self.interval = interval
        self.detail = ""
        self._stream_arg = stream
        self._stream: TextIO | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._width = 0  # characters of the line currently shown (0: nothing shown)
        self.shown = False  # whether the line was ever written (for tests and callers)
        self._outer: progress | None = None  # the step this one is nested in (its detail meanwhile)
        self._outer_detail = ""

    def __enter__(self) -> "progress":
        stream = self._stream_arg if self._stream_arg is not None else sys.stderr
        if stream is None or not _enabled(stream):
            return self
        if _shown:  # inside another step: become its detail, not a second line
            self._outer = _shown[-1]
            self._outer_detail = self._outer.detail
            self._outer.detail = self.label
            return self
        _shown.append(self)
        self._stream = stream
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="trec-bridge-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> bool:
        if self._outer is not None:
            self._outer.detail = self._outer_detail
            self._outer = None
        if self in _shown:
            _shown.remove(self)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._clear()
        return False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._start if self._start else 0.0

    def _line(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return printable(f"{self.label} … {format_elapsed(self.elapsed)}{detail}")  # the label may hold a file name

    def _write(self, text: str) -> bool:
        try:
            self._stream.write(text)
            self._stream.flush()
            return True
        except (OSError, ValueError):  # broken pipe, closed stream: give up quietly
            return False

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return  # done before the delay: nothing is ever written
        while True:
            line = self._line()
            pad = " " * max(0, self._width - len(line))  # cover a longer previous line
            if not self._write("\r" + line + pad):
                self._width = 0
                return
            self._width = len(line)
            self.shown = True
            if self._stop.wait(self.interval):
                return

    def _clear(self) -> None:
        """Erase the line (spaces, no terminal escape codes) and put the cursor back at column 0."""
        if self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

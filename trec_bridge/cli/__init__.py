"""Command-line interface: one module per command, registered in main.COMMANDS.

Start-up guard: when this process *is* the command line (the ``trec-bridge``
script or ``python -m trec_bridge.cli.main``), Ctrl-C or SIGTERM during the
imports that precede ``main.entry`` ends the process with one line and exit
130 / 143 instead of a KeyboardInterrupt traceback from deep inside an
import.  Nothing has been read or written yet, so there is nothing to clean
up; ``entry`` then installs the handlers that unwind and remove temporary
files.  Importing the package as a library changes no signal handler.
"""
from __future__ import annotations

import os as _os
import signal as _signal
import sys as _sys


def _is_cli_process() -> bool:
    argv = getattr(_sys, "orig_argv", None) or []
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1] == "trec_bridge.cli.main":
        return True
    return bool(_sys.argv) and _os.path.basename(_sys.argv[0]) == "trec-bridge"


def _quit_during_start_up(signum, frame):
    name = "interrupted" if signum == _signal.SIGINT else "terminated (SIGTERM)"
    _os.write(2, f"trec-bridge: {name} while starting; nothing was read or written\n".encode())
    _os._exit(128 + signum)


if _is_cli_process():
    for _sig in (_signal.SIGINT, _signal.SIGTERM):
        if _signal.getsignal(_sig) is not _signal.SIG_IGN:  # a shell's background job ignores SIGINT: keep that
            _signal.signal(_sig, _quit_during_start_up)


def say_notes(notes: list[str]) -> None:
    """What the tool did with the user's input that they should hear of (a dropped repeat), on stderr."""
    from ..messages import note

    for text in notes:
        note(f"note: {text}")

"""Entry point: parse arguments, run one command, turn errors into exit codes.

This is the only place where exceptions become messages: a TrecBridgeError
prints its code and location on stderr and exits with its exit code; no
traceback reaches the user for anything the tool can foresee.
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
from functools import cache
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import EXIT_INVALID, TrecBridgeError
from ..messages import message_text

if TYPE_CHECKING:  # argparse is imported when the parser is built (score on small files needs none: quick.py)
    import argparse

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM

# command name -> module in this package exposing add_parser(subparsers), which sets args.handler(args) -> int
COMMANDS = {
    "score": "score",
    "score-many": "score_many",
    "convert": "convert",
    "crosscheck": "crosscheck",
    "tools": "tools",
    "import": "import_cmd",
    "export": "export",
    "stages": "stages",
    "compare": "compare",
    "docs": "docs",
    "trec_eval": "trec_eval_cmd",
    "explain": "explain",
}


@cache
def _parser_class() -> type:
    """The parser's class, made when a parser is built (argparse is not imported before)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse exits with 2 on bad arguments; our exit 2 means 'incomplete run', so use 1."""

        def error(self, message: str):
            self.print_usage(sys.stderr)
            sys.stderr.write(f"trec-bridge: error: [E_USAGE] {message_text(message)}\n")
            sys.exit(EXIT_INVALID)

    return _Parser


def build_parser() -> argparse.ArgumentParser:
    _Parser = _parser_class()
    parser = _Parser(
        prog="trec-bridge",
        description="Trustworthy IR evaluation: a strict scorer, TREC/JSON converters and a "
        "cross-check against trec_eval, pytrec_eval and ir_measures.",
        epilog="Exit codes: 0 complete, 1 invalid input, 2 incomplete run (report still written), "
        "3 unexplained difference in a cross-check, 4 acceptance gate failed, 5 figures that explain "
        "cannot reproduce, 6 compare --single-variable: not a one-variable comparison.",
    )
    parser.add_argument("--version", action="version", version=f"trec-bridge {__version__}",
                        help="print trec-bridge's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module_name in COMMANDS.values():
        importlib.import_module(f".{module_name}", __package__).add_parser(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that it cleans up exactly like Ctrl-C."""


def _terminate(signum, frame):
    raise Terminated()


def install_signal_handlers() -> None:
    """Ctrl-C and SIGTERM unwind (temporary files removed); a file-size limit is an error, not a kill.

    Without SIGXFSZ ignored, writing past ``ulimit -f`` kills the process
    (and may dump core) instead of giving EFBIG, which becomes E_OUTPUT.
    """
    for signum, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, _terminate)):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # a shell's background job ignores SIGINT: keep that
            signal.signal(signum, handler)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    try:
        from .quick import attempt

        answered = attempt(sys.argv[1:] if argv is None else list(argv))  # small plain inputs, without polars
        if answered is not None:
            return answered
        from ..outputs import session  # (pathlib and the output machinery: the quick path writes no file)

        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra:  # a command may answer unknown arguments its own way (trec_eval: trec_eval's usage text)
            getattr(args, "unknown_arguments", lambda extra: None)(extra)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        declare = getattr(args, "io", None)
        with session(declare(args) if declare else None):
            return int(args.handler(args) or 0)
    except TrecBridgeError as exc:
        sys.stderr.write(f"trec-bridge: error: {exc.render()}\n")
        return exc.exit_code
    except MemoryError:  # an allocation failed in Python or numpy despite memory_guard's estimate
        sys.stderr.write("trec-bridge: error: [E_TOO_LARGE] ran out of memory; the inputs need more memory than "
                         "this process may use (raise the limit or use a machine with more memory)\n")
        return EXIT_INVALID
    except KeyboardInterrupt as exc:
        return _interrupted(exc)


def _interrupted(exc: KeyboardInterrupt) -> int:
    """One line and 130 (Ctrl-C) or 143 (SIGTERM); the outputs' temporary files are already removed."""
    terminated = isinstance(exc, Terminated)
    sys.stderr.write(f"trec-bridge: {'terminated (SIGTERM)' if terminated else 'interrupted'}; "
                     "no output was written\n")
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def entry() -> None:
    """The console script: ``main()``, then exit without the interpreter's teardown.

    Tearing down the interpreter frees every polars and numpy object one by one
    for nothing: outputs are already written (atomically, and closed), worker
    threads joined, and the standard streams are flushed here.  ``main()``
    itself, which the tests call, returns normally.  (Measured: bench/README.md.)
    """
    # numpy's OpenBLAS starts a busy-waiting thread per core when imported; nothing here does linear
    # algebra, so those threads only take CPU from the parser.  Set before numpy is imported; a user's
    # own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        install_signal_handlers()
        code = main()
    except KeyboardInterrupt as exc:  # between the start-up guard and main's own handler
        code = _interrupted(exc)
    for signum in (signal.SIGINT, signal.SIGTERM):  # done: a late signal must not turn into a traceback now
        signal.signal(signum, signal.SIG_IGN)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
        pass
    os._exit(code)


if __name__ == "__main__":
    entry()

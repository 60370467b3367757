"""Running `trec-bridge trec_eval` and the real binary on the same arguments, and choosing what can be compared.

The drop-in prints only the ``-m`` names whose measure families are
registered (measures/trec_names.registered) plus the labels it makes itself
(runid, relstring).  ``restricted`` rewrites a trec_eval command line to those
names (nicknames and the default ``official`` set expanded), so that every
command can be compared on what exists; ``missing_names`` says which names
have no family (the full comparisons assert there are none).
"""
from __future__ import annotations

import contextlib
import io
import subprocess

from trec_bridge.cli.main import main
from trec_bridge.measures.trec_names import registered
from trec_bridge.trec_eval_output import LABELS, NICKNAMES, selected_names


def drop_in(argv: list[str]) -> tuple[int, str, str]:
    """``trec-bridge trec_eval ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["trec_eval", *argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def binary_output(binary: str, argv: list[str], cwd=None) -> str:
    proc = subprocess.run([binary, *argv], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def split_m(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the -m values, the other arguments), whether written ``-m X`` or ``-mX``."""
    measures, rest, it = [], [], iter(argv)
    for token in it:
        if token == "-m":
            measures.append(next(it))
        elif token.startswith("-m"):
            measures.append(token[2:])
        else:
            rest.append(token)
    return measures, rest


def supported_names() -> set[str]:
    return set(registered()) | set(LABELS)


def missing_names(argv: list[str]) -> list[str]:
    """The names ``argv`` selects that no registered family declares yet (empty: the drop-in prints them all)."""
    measures, _ = split_m(argv)
    return [n for n in selected_names(measures) if n not in supported_names()]


def restricted(argv: list[str]) -> list[str] | None:
    """``argv`` with its -m options cut to the registered names (None when none is left)."""
    measures, rest = split_m(argv)
    kept = []
    for arg in measures or ["official"]:
        name = arg.partition(".")[0]
        if name in NICKNAMES:
            kept += [n for n in NICKNAMES[name] if n in supported_names()]
        elif name in supported_names():
            kept.append(arg)
    if not [k for k in kept if k.partition(".")[0] not in LABELS]:
        return None
    return [a for k in kept for a in ("-m", k)] + rest

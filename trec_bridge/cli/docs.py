"""`trec-bridge docs divergences [--check] [-o FILE]`: generate docs/divergences.md from the axis registry.

Without ``-o`` the document goes to stdout.  ``--check`` writes nothing: it
regenerates the document (running the reference tools on the built-in cases)
and exits 1 when FILE (default docs/divergences.md) differs from it, printing
a unified diff on stderr, so CI fails on a stale checked-in file.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from ..errors import EXIT_INVALID, EXIT_OK
from ..messages import note

DEFAULT_PATH = "docs/divergences.md"


def add_parser(sub) -> None:
    p = sub.add_parser("docs", help="generate documentation that is computed, not written (docs/divergences.md)",
                       description="Generate documentation from the code and live runs of the reference tools.")
    docs = p.add_subparsers(dest="docs_command", metavar="DOCUMENT")
    docs.required = True
    d = docs.add_parser(
        "divergences", help="the divergence axes, each policy's value, and live runs of the tools on tiny cases",
        description="Write docs/divergences.md: the axis x policy table (trec_bridge/axes.py, policy.py) and one "
        "tiny case per axis run live through the cross-check against every available reference tool. "
        "Exit codes: 0 written (or up to date with --check); 1 --check found the file stale or missing.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("-o", "--output", metavar="FILE", help=f"write here (default: stdout; with --check: {DEFAULT_PATH})")
    d.add_argument("--check", action="store_true", help="exit 1 if FILE differs from a fresh generation; write nothing")
    d.set_defaults(handler=run, io=io)


def io(args):
    """-o is an output, except with --check, where it is the file compared (an input)."""
    from ..outputs import Declared

    return Declared(inputs=[args.output]) if args.check else Declared(outputs=[args.output])


def run(args) -> int:
    from ..divergence_doc import generate
    from ..outputs import atomic_write

    text = generate()
    if args.check:
        path = Path(args.output or DEFAULT_PATH)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            sys.stdout.write(f"{path} is up to date\n")
            return EXIT_OK
        if current is None:
            note(f"{path} does not exist; run `trec-bridge docs divergences -o {path}`")
        else:
            diff = difflib.unified_diff(current.splitlines(keepends=True), text.splitlines(keepends=True),
                                        fromfile=f"{path} (checked in)", tofile=f"{path} (generated)")
            sys.stderr.writelines(diff)
            note(f"{path} is stale; run `trec-bridge docs divergences -o {path}`")
        return EXIT_INVALID
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK

"""``trec-bridge tools``: install the real trec_eval and show which reference tools are usable.

The cross-check is only as good as the tools it can reach, so installing the
binary and listing what is available are one command away.
"""
from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("tools", help="install or list the reference tools (trec_eval, pytrec_eval, ir_measures)",
                                   description="Install the real trec_eval binary or list the reference tools.")
    sub = parser.add_subparsers(dest="tools_command", metavar="TOOLS_COMMAND")
    sub.required = True

    install = sub.add_parser(
        "install-trec-eval", help="install trec_eval 9.0.4 from the pyserini sdist on PyPI",
        description="Download the pyserini 1.6.0 sdist with pip (about 165 MB, nothing installed), take "
        "trec_eval 9.0.4 (linux x86_64) out of the Anserini jar it ships, check that it runs and "
        "place it in DEST/trec_eval. The sdist and the binary must match their pinned sha256 "
        "(exit 1, E_INSTALL_CHECKSUM otherwise); nothing unverified is run or installed.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    # the default is resolved when the command runs: building the parser must not import the installer
    install.add_argument("--dest", default=None,
                         help="folder for the binary (default: $XDG_DATA_HOME/trec-bridge/bin, "
                         "or ~/.local/share/trec-bridge/bin)")
    install.add_argument("--sdist", default=None, metavar="FILE",
                         help="use an already downloaded pyserini .tar.gz instead of running pip download")
    install.add_argument("--allow-unverified", action="store_true",
                         help="install even when the sdist or the binary does not match the pinned sha256 "
                         "(for your own build only: the binary is then run unchecked; a warning is printed)")
    install.set_defaults(handler=_install, io=_install_io)

    which = sub.add_parser("which", help="list the reference tools that are available, with versions",
                           description="List the reference tools the cross-check can use, with versions.")
    which.add_argument("--json", action="store_true", help="print JSON instead of a table")
    which.set_defaults(handler=_which, io=_no_files)


def _install_io(args):
    from ..outputs import Declared
    from ..tools.install_trec_eval import BINARY_NAME, default_dest

    return Declared(inputs=[args.sdist], folders=[(args.dest or str(default_dest()), [BINARY_NAME])])


def _no_files(args):
    from ..outputs import Declared

    return Declared()


def _install(args) -> int:
    from ..tools.install_trec_eval import default_dest, install

    done = install(args.dest or str(default_dest()), sdist=args.sdist, allow_unverified=args.allow_unverified)
    print(f"installed trec_eval {done.version} at {done.path}")
    print(f"sha256 {done.sha256}")
    print(f"from {done.jar}")
    return 0


def _which(args) -> int:
    from ..references import all_references
    from ..references.trec_eval import TrecEval

    rows = []
    for ref in all_references():
        row = {"tool": ref.name, "available": False, "version": None, "detail": None}
        try:
            row["version"] = ref.version()
            row["available"] = True
            if isinstance(ref, TrecEval):
                row["detail"] = ref.binary()
        except Exception as exc:  # noqa: BLE001 - report, never crash, while listing
            row["detail"] = getattr(exc, "message", str(exc))
        rows.append(row)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            state = row["version"] if row["available"] else "not available"
            print(f"{row['tool']:<12} {state:<14} {row['detail'] or ''}".rstrip())
    return 0

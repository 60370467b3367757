"""`trec-bridge crosscheck DATASET RUN "MEASURES"`: strict vs trec_eval / pytrec_eval / ir_measures."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_UNEXPLAINED
from ..messages import note
from .inputs import add_input_arguments, load_inputs
from .report_options import add_report_options, json_report_text, write_pages
from .system_options import add_system_arguments, given_system, system_for



class _RegisteredTools:
    """The registered reference tools' names, looked up when used (importing the adapters is not free)."""

    def __iter__(self):
        from ..references import names

        return iter(names())

    def __contains__(self, name) -> bool:
        return name in list(self)


TOOLS = _RegisteredTools()

HELP = """Run the reference tools on the same inputs, show that our emulation of each
reproduces it, and explain every strict-vs-reference difference by policy axis.

Exit codes: 0 every difference explained; 1 invalid input or a requested tool
missing; 2 the run is incomplete under the strict policy (all differences
explained); 3 an unexplained difference (a minimal reproducer is written)."""


def add_parser(sub) -> None:
    p = sub.add_parser("crosscheck", help="compare strict numbers with trec_eval, pytrec_eval and ir_measures",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_arguments(p)
    p.add_argument("measures", help='measures in ir_measures syntax, e.g. "nDCG@10 RR@10 R@100 AP"')
    p.add_argument("--against", help="comma-separated reference tools (default: trec_eval, pytrec_eval and "
                   "ir_measures; ranx only when named, see `trec-bridge tools which`)")
    p.add_argument("--explain-policy", metavar="POLICIES",
                   help="also walk strict to these policies no tool can be run for (the leaderboard scripts: msmarco, "
                        "beir), comma-separated, and split each difference over the axes; --against none runs no tool")
    p.add_argument("--complete", action="store_true", help="run trec_eval with -c (every judged query in the mean)")
    add_report_options(p, per_query=False)
    add_system_arguments(p)
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report: protocol, per-tool table with "
                   "each difference's axes, per-query differences (docs/reports.md)")
    p.add_argument("--png-dir", metavar="DIR", help="also write the report's charts as PNG files here")
    p.add_argument("--repro-dir", metavar="DIR", default="trec-bridge-repro",
                   help="where a minimal reproducer goes on an unexplained difference (default: %(default)s)")
    p.add_argument("--per-query", action="store_true", help="print every per-query difference")
    p.set_defaults(handler=run, io=io)


def _against(args) -> str:
    from ..references import default_names

    return ",".join(default_names()) if args.against is None else args.against


def io(args):
    """Every file crosscheck reads and writes, the reproducer of each tool included."""
    from ..crosscheck import REPRO_FILES
    from ..outputs import Declared

    tools = [t.strip() for t in _against(args).split(",") if t.strip() in TOOLS]
    return Declared(inputs=[args.dataset, args.run, args.queries, args.chunk_map, args.system_file],
                    outputs=[args.json, args.html],
                    folders=[(str(Path(args.repro_dir) / t), REPRO_FILES) for t in tools]
                    + [(args.png_dir, ["distributions.png", "latency.png"])])


def run(args) -> int:
    from ..crosscheck import crosscheck, tools_asked, write_reproducer
    from ..errors import UsageError
    from ..policy_explain import policies_asked
    from ..crosscheck_report import SUMMARY_HEADERS, full_report, render_text, summary_rows
    from ..evaluation import input_fingerprints
    from ..outputs import atomic_write
    from ..measures import parse_measures
    from ..progress import progress
    from . import say_notes

    against = tools_asked(args.against)
    explain = policies_asked(args.explain_policy)
    if not against and not explain:
        raise UsageError("E_USAGE", "--against none runs no tool: name a policy to explain with --explain-policy")
    measures = parse_measures(args.measures)
    given = given_system(args)
    loaded = load_inputs(args)
    with progress("cross-check") as shown:
        result = crosscheck(loaded.dataset, loaded.run, measures, against, split=loaded.split,
                            chunk_map=loaded.chunk_map, complete=args.complete,
                            step=lambda text: setattr(shown, "detail", text), explain=explain,
                            rank_run=_rank_reading(loaded, explain, args))
    meta = loaded.run.metadata  # the run's own test conditions and timing travel with the strict figures
    report = full_report(result, input_fingerprints(loaded.roles(), hashed=bool(args.json or args.html)),
                         system_for(given, meta), meta.get("timing"))
    if args.json:
        atomic_write(args.json, json_report_text(report, args, allow_nan=True))
    if args.html or args.png_dir:
        write_pages(report, args.html, args.png_dir, "crosscheck")
    if args.format == "table":
        sys.stdout.write(render_text(result, args.per_query))
    elif args.format == "json":
        sys.stdout.write(json_report_text(report, args, allow_nan=True))
    else:
        from ..tables import render

        sys.stdout.write(render(SUMMARY_HEADERS, summary_rows(result), args.format))
    say_notes(measures.notes)
    folder = write_reproducer(result, args.repro_dir)
    if folder is not None:
        note(f"{len(result.unexplained)} unexplained difference(s); minimal reproducer in {folder}/")
        return EXIT_UNEXPLAINED
    return EXIT_OK if result.strict.complete else EXIT_INCOMPLETE


def _rank_reading(loaded, explain: list, args):
    """The run read by its rank column, when a policy to explain reads TREC runs so (MS MARCO's script) and the
    run was read by score because --order did not say otherwise."""
    from ..policy_explain import needs_rank_reading

    return loaded.load_run_other_order() if args.order is None and needs_rank_reading(loaded.run, explain) else None

"""``trec-bridge stages``: recall at each stage of one pipeline and the relevant documents lost between stages."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_INCOMPLETE, EXIT_OK, UsageError
from ..integers import int_option
from ..messages import quote
from .inputs import add_input_arguments, load_inputs

HELP = """Stage-wise evaluation of one retrieval pipeline on one query set.

Give the runs taken at each stage, in pipeline order, as --stage NAME=RUN
(e.g. --stage vector=raw.json --stage merged=merged.json --stage rerank=final.json).
Each stage is scored by the strict scorer with R@K; between consecutive stages
the tool lists, per query, the relevant documents present in the earlier
stage's top K and absent from the later stage's top K (lost), and the reverse
(gained).

Exit codes: 0 every stage complete; 1 invalid input (nothing written);
2 a stage run is incomplete (missing or failed queries; the report is still
written)."""


def add_parser(sub) -> None:
    p = sub.add_parser("stages", help="recall per pipeline stage and relevant documents lost between stages",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_arguments(p, run=False)
    p.add_argument("--stage", action="append", default=[], metavar="NAME=RUN", required=True,
                   help="a stage's name and run file, in pipeline order; give at least two")
    p.add_argument("--k", type=int_option("--k", 1, code="E_CUTOFF"), default=10, metavar="K", help="cutoff: recall and losses within the top K (default 10)")
    p.add_argument("--json", metavar="OUT", help="write the stage report as JSON")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with the stage-loss chart")
    p.add_argument("--png-dir", metavar="DIR", help="also write the chart as PNG here")
    p.set_defaults(handler=run, io=io)


def io(args):
    """Every file stages reads and writes (checked before anything is read: trec_bridge.outputs)."""
    from ..outputs import Declared

    runs = [s.partition("=")[2] for s in args.stage]
    return Declared(inputs=[args.dataset, args.queries, args.chunk_map, *runs], outputs=[args.json, args.html],
                    folders=[(args.png_dir, ["stages.png"])])


def parse_stage(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path:
        raise UsageError("E_USAGE", f"--stage takes NAME=RUN, got {quote(text)}")
    return name.strip(), path


def run(args) -> int:
    from ..outputs import atomic_write
    from ..progress import progress
    from ..report import report_json
    from ..rag.stages import StageInput, analyse_stages, render_text

    if args.k < 1:
        raise UsageError("E_CUTOFF", f"--k must be a positive integer, got {args.k}")
    specs = [parse_stage(s) for s in args.stage]
    if len(specs) < 2:
        raise UsageError("E_USAGE", "give at least two --stage NAME=RUN, in pipeline order")
    names = [n for n, _ in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError("E_USAGE", f"stage name(s) given twice: {', '.join(dupes)}")
    loaded = load_inputs(args, read_run=False)
    stages = [StageInput(n, path, loaded.load_run(path)) for n, path in specs]
    with progress(f"scoring {len(stages)} stages and the documents lost between them"):
        st = analyse_stages(loaded.dataset, stages, args.k, split=loaded.split, chunk_map=loaded.chunk_map)
    if args.json:
        atomic_write(args.json, report_json(st.data))
    _write_charts(st, args.html, args.png_dir)
    sys.stdout.write(render_text(st))
    return EXIT_OK if st.complete else EXIT_INCOMPLETE


def _write_charts(st, html_path: str | None, png_dir: str | None) -> None:
    """The stage-loss chart as PNG and/or in a self-contained HTML page."""
    if not (html_path or png_dir):
        return
    from ..outputs import atomic_write
    from ..rag import html, plots
    from ..rag.cli_support import write_pngs

    d = st.data
    charts = {"stages.png": plots.stage_chart(
        st.names, [s["recall"]["value"] for s in d["stages"]],
        [t["lost"] for t in d["transitions"]], [t["gained"] for t in d["transitions"]], st.k)}
    if png_dir:
        write_pngs(png_dir, charts)
    if html_path:
        atomic_write(html_path, html.stages_page(d, charts))

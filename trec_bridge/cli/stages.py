"""``trec-bridge stages``: recall at each stage of one pipeline and the relevant documents lost between stages."""
from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_INCOMPLETE, EXIT_OK, UsageError
from ..integers import INT64_MIN, int_option
from ..messages import quote

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
    p.add_argument("dataset", help="JSON dataset or TREC qrels file")
    p.add_argument("--stage", action="append", default=[], metavar="NAME=RUN", required=True,
                   help="a stage's name and run file, in pipeline order; give at least two")
    p.add_argument("--k", type=int_option("--k", 1, code="E_CUTOFF"), default=10, metavar="K", help="cutoff: recall and losses within the top K (default 10)")
    p.add_argument("--split", help="evaluate only the dataset's queries of this split")
    p.add_argument("--queries", metavar="FILE", help="with TREC qrels: the query set, one query ID per line")
    p.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N", help="relevance threshold (default: the dataset's)")
    p.add_argument("--order", choices=["score", "rank"], default="score", help="TREC runs: order by score or rank column")
    p.add_argument("--chunk-map", metavar="FILE", help="collapse every stage's chunk ranking to documents with this map")
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
    from converters.detect import load_dataset_any, load_run_any

    from ..outputs import atomic_write
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
    dataset = load_dataset_any(args.dataset, args.queries, args.rel)
    chunk_map = None
    if args.chunk_map:
        from converters.chunk_map import load_chunk_map

        chunk_map = load_chunk_map(args.chunk_map)
    stages = [StageInput(n, path, load_run_any(path, order=args.order, chunks=bool(args.chunk_map)))
              for n, path in specs]
    st = analyse_stages(dataset, stages, args.k, split=args.split, chunk_map=chunk_map)
    if args.json:
        atomic_write(args.json, report_json(st.data))
    if args.html or args.png_dir:
        from ..rag import html, plots
        from ..rag.cli_support import write_pngs

        d = st.data
        charts = {"stages.png": plots.stage_chart(
            st.names, [s["recall"]["value"] for s in d["stages"]],
            [t["lost"] for t in d["transitions"]], [t["gained"] for t in d["transitions"]], st.k)}
        if args.png_dir:
            write_pngs(args.png_dir, charts)
        if args.html:
            atomic_write(args.html, html.stages_page(d, charts))
    sys.stdout.write(render_text(st))
    return EXIT_OK if st.complete else EXIT_INCOMPLETE

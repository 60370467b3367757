"""`trec-bridge explain QRELS RUN THEIRS [MEASURES]`: which conventions reproduce someone else's figures."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import EXIT_OK, EXIT_UNREPRODUCED
from .inputs import add_input_arguments, load_inputs

HELP = """Search the policy axes and the named measure variants (docs/explain.md) for the
conventions under which trec-bridge reproduces THEIRS: trec_eval output (with or without
-q), ir_measures output, a TSV of query/measure/value, a JSON mapping {measure: {query:
value}}, or summary figures such as "nDCG@10=0.612 MRR@10=0.41".  The run is searched in
score order (both tie orders, float32 and float64 scores) and in its rank column.

Exit codes: 0 every measure reproduced; 1 invalid input; 5 a measure that no combination
reproduces (the closest is shown, with the queries that still differ)."""


def add_parser(sub) -> None:
    p = sub.add_parser("explain", help="find the conventions that reproduce someone else's figures",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_arguments(p)
    p.add_argument("theirs", help='their figures: a file (trec_eval, ir_measures, TSV, JSON) or summary figures '
                   'such as "nDCG@10=0.612 MRR@10=0.41"')
    p.add_argument("measures", nargs="?", help="only these of their measures (default: every one we compute)")
    p.add_argument("--json", metavar="OUT", help="write the explanation as JSON here")
    p.set_defaults(handler=run, io=io)


def io(args):
    from ..outputs import Declared

    theirs = args.theirs if os.path.exists(args.theirs) else None
    return Declared(inputs=[args.dataset, args.run, args.queries, args.chunk_map, theirs], outputs=[args.json])


def run(args) -> int:
    from converters.theirs import read_theirs

    from ..explain_search import explain
    from ..explain_report import explanation_json, render_text
    from ..measures import parse_measures
    from ..outputs import atomic_write

    measures = parse_measures(args.measures) if args.measures else None
    loaded = load_inputs(args)
    theirs = read_theirs(args.theirs)
    by_rank = loaded.load_run_other_order() if loaded.run.order_source == "score" else None
    result = explain(loaded.dataset.select_split(loaded.split) if loaded.split else loaded.dataset, loaded.run,
                     theirs, measures, run_by_rank=by_rank)
    if args.json:
        from ..json_text import dumps

        atomic_write(args.json, dumps(explanation_json(result), ensure_ascii=True, allow_nan=True) + "\n")
    sys.stdout.write(render_text(result))
    return EXIT_OK if result.explained else EXIT_UNREPRODUCED

"""``trec-bridge import irds|ranx-run|ranx-qrels``: other tools' data -> the project's JSON formats."""
from __future__ import annotations

import argparse

from ..errors import UsageError
from ..integers import INT64_MIN, int_option
from ..messages import note
from ..messages import quote
from ..progress import progress

IRDS_HELP = """Build a trec-bridge JSON dataset from an ir_datasets ID (queries + qrels).

Reads ir_datasets' cached files under IR_DATASETS_HOME (default ~/.ir_datasets)
through ir_datasets itself. Nothing is downloaded unless --download: when a
file is missing, the command stops at once (exit 1) naming the file and the
path where ir_datasets expects it, so it can be placed there by hand.

The dataset gets: the queries (ID and text), every judgment with its grade and
iteration, the grade scale (grades seen + ir_datasets' qrels_defs, which become
the grade definitions), threshold 1 (or --rel), the official measures ir_datasets
documents, an open corpus (--list-docs lists the document IDs of a small
corpus), pooled completeness, and in its metadata the SHA-256 of every file
ir_datasets read (with an md5 check where ir_datasets knows the expected md5).
A subset such as .../judged also gets, as unjudged_queries, the queries of its
parent with the same judgments that nobody judged (the 157 unjudged DL 2019
topics): a run answering them has them listed as unjudged, not refused.

examples:
  trec-bridge import irds msmarco-passage/trec-dl-2019/judged -o dl19.json
  IR_DATASETS_HOME=/data/irds trec-bridge import irds cranfield --list-docs -o cranfield.json"""

RANX_RUN_HELP = """Read a run in ranx's JSON layout ({"q1": {"d3": 0.3, ...}}) into a trec-bridge JSON run.

Each query is ordered like trec_eval orders a TREC run (score descending, equal
scores by document ID descending); ties that had to be broken are reported. A
ranx run names no dataset and no run, so --dataset-id is required and
--run-id is the run's name (default: the file name without extension).

example:
  trec-bridge import ranx-run run.json -o bm25.json --dataset-id msmarco-passage/trec-dl-2019/judged"""

RANX_QRELS_HELP = """Read qrels in ranx's JSON layout ({"q1": {"d1": 1, ...}}) into a trec-bridge JSON dataset.

The dataset's queries are the judged queries, its corpus is open, its
judgments pooled and its grade scale the grades seen (threshold 1 or --rel).

example:
  trec-bridge import ranx-qrels qrels.json -o dataset.json --dataset-id my-collection"""


def add_parser(sub) -> None:
    parser = sub.add_parser("import", help="import an ir_datasets benchmark or ranx JSON files",
                            description="Import data from other tools into the trec-bridge JSON formats.",
                            epilog="See 'trec-bridge import irds -h', 'import ranx-run -h', 'import ranx-qrels -h'.")
    kinds = parser.add_subparsers(dest="import_kind", metavar="SOURCE")
    kinds.required = True

    p = kinds.add_parser("irds", help="a dataset from an ir_datasets ID (offline by default)", description=IRDS_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset_id", metavar="DATASET_ID", help="ir_datasets ID, e.g. msmarco-passage/trec-dl-2019/judged")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="JSON dataset to write (atomically)")
    p.add_argument("--list-docs", action="store_true", help="list the corpus' document IDs (small corpora only)")
    p.add_argument("--max-docs", type=int_option("--max-docs", 1), default=None, metavar="N",
                   help="--list-docs refuses a corpus above N documents (default 100000)")
    p.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N", help="relevance threshold of the dataset (default 1)")
    p.add_argument("--home", metavar="DIR", help="IR_DATASETS_HOME to use (default: the environment's, else ~/.ir_datasets)")
    p.add_argument("--download", action="store_true",
                   help="let ir_datasets download missing files (default: never; fail naming the file)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr (shown on a terminal)")
    p.set_defaults(handler=_irds, io=_irds_io)

    r = kinds.add_parser("ranx-run", help="a run in ranx's JSON layout", description=RANX_RUN_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("input", metavar="RUN", help="ranx JSON run ({query: {doc: score}}), plain or .gz")
    r.add_argument("-o", "--output", required=True, metavar="OUT", help="trec-bridge JSON run to write")
    r.add_argument("--dataset-id", required=True, metavar="ID", help="the dataset the run was made for")
    r.add_argument("--dataset-version", metavar="V", help="the dataset version (optional)")
    r.add_argument("--run-id", metavar="ID", help="the run's name (default: the file name without extension)")
    r.set_defaults(handler=_ranx_run, io=_file_io)

    q = kinds.add_parser("ranx-qrels", help="qrels in ranx's JSON layout", description=RANX_QRELS_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("input", metavar="QRELS", help="ranx JSON qrels ({query: {doc: grade}}), plain or .gz")
    q.add_argument("-o", "--output", required=True, metavar="OUT", help="trec-bridge JSON dataset to write")
    q.add_argument("--dataset-id", required=True, metavar="ID", help="the dataset's ID")
    q.add_argument("--dataset-version", metavar="V", help="the dataset version (optional)")
    q.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N", help="relevance threshold (default 1)")
    q.set_defaults(handler=_ranx_qrels, io=_file_io)


def _irds_io(args):
    """OUT, and --home: ir_datasets' cache folder, which it writes into (so it must be a folder)."""
    from ..outputs import Declared

    return Declared(outputs=[args.output], folders=[(args.home, [])])


def _file_io(args):
    from ..outputs import Declared

    return Declared(inputs=[args.input], outputs=[args.output])




def _irds(args) -> int:
    from converters.irds import DEFAULT_MAX_DOCS, SOURCE_KEY, import_irds
    from converters.json_dataset import dump_dataset

    if args.max_docs is not None and not args.list_docs:
        raise UsageError("E_USAGE", "--max-docs applies with --list-docs")
    dataset = import_irds(args.dataset_id, list_docs=args.list_docs, progress=False if args.no_progress else None,
                          max_docs=args.max_docs or DEFAULT_MAX_DOCS, threshold=args.rel,
                          allow_download=args.download, home=args.home)
    with progress(f"writing {args.output}"):
        dump_dataset(dataset, args.output)
    meta = dataset.metadata.get(SOURCE_KEY, {})
    for w in meta.get("warnings", []):
        note(f"warning: {w}")
    extra = f", {len(dataset.corpus)} documents" if dataset.corpus is not None else ""
    note(f"wrote {args.output}: {len(dataset.queries)} queries, {dataset.qrels.frame.height} judgments{extra}; "
          f"grades {list(dataset.grades or [])}, threshold {dataset.threshold}"
          + (f"; official measures {' '.join(dataset.official_measures)}" if dataset.official_measures else ""))
    unjudged = len(set(dataset.query_ids()) - set(dataset.qrels.query_ids()))
    if unjudged:
        note(f"{unjudged} queries have no judgment: the strict scorer keeps them in the query set and scores them "
              "null (no relevant document)")
    if dataset.unjudged_queries:
        parent = meta.get("unjudged_queries_from", {}).get("dataset_id")
        note(f"{len(dataset.unjudged_queries)} more queries of {quote(str(parent))} were never judged: declared unjudged (a run "
              "that answers them has them listed as unjudged and excluded, as with TREC qrels)")
    dropped = [f for f in meta.get("query_fields", []) if f not in ("query_id", meta.get("query_text_field"))]
    if dropped:
        note(f"query fields not kept (the dataset format has one text per query): {', '.join(dropped)}")
    return 0


def _ranx_run(args) -> int:
    from pathlib import Path

    from converters.json_run_dump import dump_run
    from converters.ranx_json import read_ranx_run

    run_id = args.run_id or _stem(Path(args.input).name)
    with progress(f"reading {args.input}"):
        run = read_ranx_run(args.input, run_id=run_id, dataset_id=args.dataset_id,
                            dataset_version=args.dataset_version)
    tied = sum(o.ties_broken for o in run.order or ())
    if tied:
        note(f"{tied} documents have a score equal to another's in the same query; ordered by document ID "
              "descending (trec_eval's rule)")
    with progress(f"writing {args.output}"):
        dump_run(run, args.output)
    note(f"wrote {args.output}: run {quote(run_id)}, {len(run.queries)} queries, {run.frame.height} documents")
    return 0


def _stem(name: str) -> str:
    for suffix in (".gz", ".json"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return "".join("_" if c.isspace() else c for c in name) or "run"


def _ranx_qrels(args) -> int:
    from converters.json_dataset import dump_dataset
    from converters.ranx_json import read_ranx_dataset

    with progress(f"reading {args.input}"):
        dataset = read_ranx_dataset(args.input, dataset_id=args.dataset_id, dataset_version=args.dataset_version,
                                    threshold=args.rel)
    with progress(f"writing {args.output}"):
        dump_dataset(dataset, args.output)
    note(f"wrote {args.output}: {len(dataset.queries)} queries, {dataset.qrels.frame.height} judgments, "
          f"grades {list(dataset.grades)}")
    return 0

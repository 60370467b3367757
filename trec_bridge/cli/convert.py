"""``trec-bridge convert run|qrels IN OUT``: between the JSON formats and TREC files.

The direction comes from the file names: ``.json`` is the project's JSON
format, anything else (``.run``, ``.txt``, ``.gz``, ...) is a TREC file.
What a conversion had to decide (tie order, rank column ignored, synthetic
scores, what TREC cannot hold) is said on stderr, never silently.
"""
from __future__ import annotations

import argparse

from ..errors import UsageError
from ..messages import note
from ..messages import quote

RUN_HELP = """Convert a run between trec-bridge JSON and a TREC run file.

IN and OUT: a name ending in .json is a JSON run; anything else is a TREC run
('qid Q0 docno rank score tag' lines, plain or .gz).

TREC -> JSON: the order of each query is trec_eval's (score descending, equal
scores by document ID descending) unless --order rank (then, and only then,
ranks must be non-negative integers). If numeric ranks disagree with that
order, the number of such queries is reported. With a sidecar, its order.

JSON -> TREC: ranks are written 1..n in the run's order. A run read from a
TREC file by score (TREC -> JSON -> TREC, or TREC -> TREC) gets back its own
scores, line for line the same doubles, so every tool reads the new file
exactly as it read the original. Any other query keeps its scores when they
order it by themselves for every tool (strictly decreasing even as 32-bit
floats, which trec_eval 9 reads); otherwise (edited lists, missing scores,
ties or float32-equal scores) it gets scores n, n-1, ..., 1, so that trec_eval,
pytrec_eval, ir_measures and ranx all read the JSON order, and convert lists
those queries and why. --scores chooses: auto (the default, as just said),
keep (write every query's own scores; each tool reads them its own way) or
order (scores n..1 wherever the own ones would not make every tool read the
JSON order). A sidecar OUT.manifest.json keeps what TREC cannot: empty and
failed queries, run and dataset IDs, metadata, the JSON order and the scores
replaced by n..1. It is read back automatically, for the strict reading and
for converting back to JSON; trec_eval and the emulations of the tools
(--policy, crosscheck) read the file's own scores.

A JSON run names the dataset it was made for and a TREC file does not, so
TREC -> JSON needs --dataset-id (unless the sidecar names it).

examples:
  trec-bridge convert run bm25.json bm25.run        # writes bm25.run + bm25.run.manifest.json
  trec-bridge convert run input.bm25.gz bm25.json --dataset-id msmarco-passage/trec-dl-2019
  trec-bridge convert run input.bm25.gz bm25.json --dataset-id dl19 --order rank"""

QRELS_HELP = """Convert judgments between a trec-bridge JSON dataset and a TREC qrels file.

IN and OUT: a name ending in .json is a JSON dataset; anything else is TREC
qrels ('qid iteration docno grade' lines, plain or .gz).

JSON -> TREC writes the dataset's judgments only (queries without judgments,
texts, grade scale and corpus have no place in qrels). TREC -> JSON makes a
dataset whose queries are the judged queries, with an open corpus, pooled
judgments and the grades seen as its grade scale.

examples:
  trec-bridge convert qrels qrels.dl19-passage.txt dl19.json --dataset-id dl19
  trec-bridge convert qrels dl19.json dl19.qrels"""


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "convert", help="convert runs or qrels between JSON and TREC files",
        description="Convert runs and judgments between the trec-bridge JSON formats and TREC files. "
        "The direction follows the file names: .json is JSON, anything else is TREC.",
        epilog="See 'trec-bridge convert run -h' and 'trec-bridge convert qrels -h'.")
    sub = parser.add_subparsers(dest="convert_kind", metavar="KIND")
    sub.required = True

    run_p = sub.add_parser("run", help="convert a run (JSON <-> TREC run file)", description=RUN_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    run_p.add_argument("input", metavar="IN", help="run to read (.json, or a TREC run, plain or .gz)")
    run_p.add_argument("output", metavar="OUT", help="file to write (.json, or a TREC run; .gz compresses)")
    run_p.add_argument("--order", choices=["score", "rank"], default=None,
                       help="reading a TREC run: 'score' = trec_eval's order (default), "
                       "'rank' = the file's rank column (equal ranks keep file order)")
    run_p.add_argument("--no-sidecar", action="store_true",
                       help="writing a TREC run: do not write OUT.manifest.json (empty queries, failures, IDs "
                       "and original scores are then lost)")
    run_p.add_argument("--scores", choices=["auto", "keep", "order"], default=None,
                       help="writing a TREC run: 'auto' (default) keeps the scores of a run read from a TREC file and "
                       "otherwise acts as 'order'; 'keep' writes every query's own scores (each tool reads them its "
                       "own way); 'order' writes n..1 wherever the own scores would not make every tool read the "
                       "run's order")
    run_p.add_argument("--ignore-sidecar", action="store_true",
                       help="reading a TREC run: ignore an IN.manifest.json next to it")
    _compression_option(run_p)
    _dataset_options(run_p, "the run was made for", sidecar=True)
    run_p.set_defaults(handler=_convert_run, io=_run_io)

    qrels_p = sub.add_parser("qrels", help="convert judgments (JSON dataset <-> TREC qrels)",
                             description=QRELS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    qrels_p.add_argument("input", metavar="IN", help="judgments to read (.json dataset, or TREC qrels)")
    qrels_p.add_argument("output", metavar="OUT", help="file to write (.json dataset, or TREC qrels)")
    _dataset_options(qrels_p, "of the judgments")
    qrels_p.add_argument("--subtopics", action="store_true",
                         help="TREC (or Parquet / Arrow) input: a diversity qrels ('qid subtopic docno grade'); a "
                              "JSON dataset then holds it as subtopic_judgments")
    _compression_option(qrels_p)
    qrels_p.set_defaults(handler=_convert_qrels, io=_qrels_io)


def _compression_option(parser) -> None:
    from converters.columnar import COMPRESSIONS

    parser.add_argument("--compression", metavar="CODEC", default=None,
                        help="writing Parquet: " + ", ".join(COMPRESSIONS["parquet"]) + " (default: "
                        f"{COMPRESSIONS['parquet'][0]}, the smallest; snappy and lz4 read faster); writing Arrow IPC: "
                        + ", ".join(COMPRESSIONS["ipc"]) + f" (default: {COMPRESSIONS['ipc'][0]})")


def _check_compression(args, kind_out: str | None) -> None:
    """E_USAGE for a --compression the output ``kind_out`` (None: not columnar) cannot take, before anything is
    read or written."""
    from converters.columnar import COMPRESSIONS

    if args.compression is None:
        return
    if kind_out is None:
        raise UsageError("E_USAGE", f"--compression applies to a Parquet or Arrow IPC output, not {args.output} "
                         "(a TREC file is compressed by naming it .gz)")
    if args.compression not in COMPRESSIONS[kind_out]:
        name = "Parquet" if kind_out == "parquet" else "Arrow IPC"
        raise UsageError("E_USAGE", f"--compression {args.compression}: {name} takes "
                         + ", ".join(COMPRESSIONS[kind_out]))


def _dataset_options(parser, what: str, sidecar: bool = False) -> None:
    parser.add_argument("--dataset-id", metavar="ID",
                        help=f"TREC -> JSON: the dataset ID {what} (TREC files do not name it; required"
                        + (" unless the sidecar does)" if sidecar else ")"))
    parser.add_argument("--dataset-version", metavar="V", help="TREC -> JSON: the dataset version (optional)")


def _run_io(args):
    """IN (and its sidecar) in, OUT (and OUT.manifest.json for a TREC run) out."""
    from ..outputs import SIDECAR_SUFFIX, Declared

    outputs = [args.output]
    if not is_json_name(args.output) and not args.no_sidecar and _columnar_name(args.output) is None:
        outputs.append(args.output + SIDECAR_SUFFIX)
    return Declared(inputs=[args.input], outputs=outputs)


def _qrels_io(args):
    from ..outputs import Declared

    return Declared(inputs=[args.input], outputs=[args.output])


def is_json_name(path: str) -> bool:
    """A JSON file by its name: ``.json``, or ``.jsonl`` (a run in JSON Lines, one query a line)."""
    return str(path).lower().endswith((".json", ".jsonl"))


def _columnar_name(path: str) -> str | None:
    """"parquet" or "ipc" when the name says Parquet or Arrow IPC (converters.detect, by the extension)."""
    from converters.detect import columnar_kind

    return columnar_kind(path)


def _convert_columnar_run(args) -> int:
    """A run to or from Parquet / Arrow IPC (ir_measures' columns; read in trec_eval's order: score, then doc ID)."""
    from converters import columnar
    from converters.detect import load_run_any

    kind_in, kind_out = _columnar_name(args.input), _columnar_name(args.output)
    if kind_in is None and not is_json_name(args.input):
        _not_json_content(args.input)
    run = load_run_any(args.input, order=args.order or "score")
    if kind_out is not None:
        if run.own_scores().null_count():
            raise UsageError("E_USAGE", f"{args.input} has documents without scores; a Parquet / Arrow run holds a "
                             "score for every document (convert to TREC first: it writes scores n..1)")
        columnar.write_columnar(columnar.run_frame(run), args.output, kind_out, args.compression)
        note(f"wrote {args.output}: {run.frame.height} rows")
        return 0
    from converters.trec_run import write_trec_run

    if is_json_name(args.output):
        from converters.json_run_dump import dump_run

        run.dataset_id, run.dataset_version = _dataset_ids(args, run.dataset_id, run.dataset_version, True)
        dump_run(run, args.output)
    else:
        write_trec_run(run, args.output, sidecar=not args.no_sidecar, scores=args.scores or "auto")
    note(f"wrote {args.output}: {run.frame.height} documents")
    return 0


def is_lines_name(path: str) -> bool:
    return str(path).lower().endswith(".jsonl")


def _not_json_content(path: str) -> None:
    """A TREC name on a JSON file would fail on line 1 with a puzzling message: say what is wrong."""
    from converters.detect import is_json

    if is_json(path):  # the one detector every command uses
        raise UsageError("E_USAGE", f"{path} holds JSON but its name does not end in .json, so it would be read "
                         "as a TREC file; rename it to *.json")




def _convert_run(args) -> int:
    from converters.trec_run import read_trec_run, write_trec_run

    _check_compression(args, _columnar_name(args.output))
    if _columnar_name(args.input) or _columnar_name(args.output):
        return _convert_columnar_run(args)
    src_json, dst_json = is_json_name(args.input), is_json_name(args.output)
    if args.order is not None and src_json:
        raise UsageError("E_USAGE", "--order applies only when reading a TREC run; a JSON run has its own order")
    if args.ignore_sidecar and src_json:
        raise UsageError("E_USAGE", "--ignore-sidecar applies only when reading a TREC run")
    if args.no_sidecar and dst_json:
        raise UsageError("E_USAGE", "--no-sidecar applies only when writing a TREC run")
    if args.scores is not None and dst_json:
        raise UsageError("E_USAGE", "--scores applies only when writing a TREC run; JSON keeps every score as it is")
    if src_json:
        _no_dataset_options(args)
        if not dst_json and _streamed_to_trec(args):
            return 0
        from converters.detect import is_run_lines
        from converters.json_run_fast import load_run
        from converters.json_run_lines import read_run_lines

        run = read_run_lines(args.input) if is_run_lines(args.input) else load_run(args.input)
    else:
        _not_json_content(args.input)
        if dst_json and _streamed_to_json(args):
            return 0
        run = read_trec_run(args.input, order=args.order or "score", use_sidecar=not args.ignore_sidecar)
        _report_order(run)
        run.dataset_id, run.dataset_version = _dataset_ids(args, run.dataset_id, run.dataset_version, dst_json)
    if dst_json:
        from converters.json_run_dump import dump_run
        from converters.json_run_lines import dump_run_lines

        (dump_run_lines if is_lines_name(args.output) else dump_run)(run, args.output)
        note(f"wrote {args.output}: {len(run.queries)} queries, {run.frame.height} documents")
        return 0
    info = write_trec_run(run, args.output, sidecar=not args.no_sidecar, scores=args.scores or "auto")
    _trec_notes(args, info, run.frame.height, run.order_source)
    return 0


def _streamed_to_trec(args) -> bool:
    """A JSON run written as TREC (and its sidecar) part by part, in bounded memory; False (nothing written)
    where the whole-run path decides: gzip, ranx's layout, an error."""
    from converters.detect import is_run_lines
    from converters.json_run_fast import read_run_parts_fast
    from converters.json_run_lines import read_run_lines_parts
    from converters.trec_run_write_parts import write_trec_run_parts

    parts = read_run_lines_parts(args.input) if is_run_lines(args.input) else read_run_parts_fast(args.input)
    done = None if parts is None else write_trec_run_parts(parts, args.output, scores=args.scores or "auto",
                                                           sidecar=not args.no_sidecar)
    if done is None:
        return False
    _trec_notes(args, done.info, done.lines, done.order_source)
    return True


def _trec_notes(args, info, lines: int, order_source: str) -> None:
    """What writing the TREC file did: its lines, and the queries whose scores were replaced or kept."""
    note(f"wrote {args.output}: {lines} lines" + (f" and {info.sidecar}" if info.sidecar else ""))
    for why, queries in _by_reason(info.synthetic_reasons).items():
        note(f"{_count(queries)} written with scores n..1 so that every tool reads the run's order ({why}): "
              f"{_some(queries)}" + ("; their own scores are kept in the sidecar" if info.sidecar
                                     else "; their own scores are NOT kept (no sidecar)")
              + "; --scores keep writes them instead")
    from_trec = order_source == "score" and (args.scores or "auto") == "auto"
    for why, queries in _by_reason(info.kept_as_tools_read).items():
        if from_trec:  # the scores of the TREC file the run was read from: the tools read them as they did there
            note(f"{_count(queries)} keep their tied (or float32-equal) scores, as in the TREC file the run was "
                  f"read from, so each tool breaks those ties its own way as it did there: {_some(queries)}; "
                  "--scores order writes n..1 instead, so that every tool reads the run's order")
        else:
            note(f"{_count(queries)} keep their own scores, which the tools may read in another order than the "
                  f"run's ({why}): {_some(queries)}; --scores order writes n..1 instead")
    if not info.sidecar and (info.empty_queries or info.failed_queries):
        note(f"without sidecar, {len(info.empty_queries)} empty and {len(info.failed_queries)} failed queries "
              "are not in the TREC file; they will read as missing")


def _by_reason(reasons: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for query, why in reasons.items():
        out.setdefault(why, []).append(query)
    return out


def _count(queries: list[str]) -> str:
    return f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'}"


def _some(queries: list[str], shown: int = 10) -> str:
    listed = ", ".join(repr(q) for q in queries[:shown])
    return listed + (f" and {len(queries) - shown} more" if len(queries) > shown else "")


def _streamed_to_json(args) -> bool:
    """A plain TREC run written as JSON (or JSON Lines) part by part, in bounded memory; False (nothing written)
    where it must be read whole: a sidecar, gzip, an error (the whole reader reports it), a doubted part."""
    from converters.json_run_dump import dump_run_parts
    from converters.trec_run_parts import can_read_in_parts, read_trec_run_parts

    if not can_read_in_parts(args.input):
        return False
    order = args.order or "score"
    done = dump_run_parts(read_trec_run_parts(args.input, order=order, fingerprint=False), args.output,
                          _dataset_ids(args, None, None, True), lines=is_lines_name(args.output))
    if done is None:
        return False
    _report_orders(done.orders, order)
    note(f"wrote {args.output}: {done.queries} queries, {done.documents} documents")
    return True


def _report_order(run) -> None:
    if run.order is None or run.order_source not in ("score", "rank"):
        return
    _report_orders(run.order, run.order_source)


def _report_orders(orders, order_source: str) -> None:
    """The notes on how the TREC file's lines were ordered (ties broken, a rank column that disagrees)."""
    tied = sum(o.ties_broken for o in orders)
    disagree = sum(o.rank_disagrees for o in orders)
    if tied and order_source == "score":
        note(f"{tied} documents have a score equal to another's in the same query; ordered by document ID "
              "descending (trec_eval's rule)")
    if disagree:
        used = "the score order (trec_eval's); use --order rank to follow the rank column" \
            if order_source == "score" else "the rank column, as asked"
        note(f"the rank column disagrees with the score order in {disagree} of {len(orders)} queries; "
              f"using {used}")


def _convert_qrels(args) -> int:
    from converters.trec_qrels import read_trec_qrels, write_trec_qrels
    from ..model import Dataset, Query

    _check_compression(args, _columnar_name(args.output))
    if _columnar_name(args.input) or _columnar_name(args.output):
        return _convert_columnar_qrels(args)
    src_json, dst_json = is_json_name(args.input), is_json_name(args.output)
    lines = next((p for p in (args.input, args.output) if is_lines_name(p)), None)
    if lines is not None:
        raise UsageError("E_USAGE", f"{lines}: JSON Lines (.jsonl) is a form of the run format; a dataset is "
                         "written as .json")
    if src_json:
        _no_dataset_options(args)
        if args.subtopics:
            raise UsageError("E_USAGE", "--subtopics declares TREC (or Parquet / Arrow) qrels a diversity qrels; a "
                             "JSON dataset declares its own (subtopic_judgments)")
        dataset = _json_dataset().load_dataset(args.input)
        qrels, iteration = dataset.qrels, dataset.trec_iteration
        unjudged = len(set(dataset.query_ids()) - set(qrels.query_ids()))
    else:
        _not_json_content(args.input)
        qrels, unjudged = read_trec_qrels(args.input, subtopics=args.subtopics), 0
        counts = qrels.frame.get_column("iteration").value_counts(sort=True)
        iteration = counts.row(0)[0]  # the most common one; JSON lists the others per judgment
        seen = tuple(sorted(qrels.frame.get_column("grade").unique().to_list()))
        dataset = Dataset(
            queries=tuple(Query(q) for q in qrels.query_ids()), qrels=qrels, corpus=None, query_source="qrels",
            # the grades seen; if none reaches the threshold (1), the JSON writer adds it to the scale
            grades=seen if seen[-1] >= 1 else None, completeness="pooled", trec_iteration=iteration,
            source=str(args.input))
        dataset.dataset_id, dataset.dataset_version = _dataset_ids(args, None, None, dst_json)
    if dst_json:
        _json_dataset().dump_dataset(dataset, args.output)
        note(f"wrote {args.output}: {len(dataset.queries)} queries, {qrels.frame.height} judgments")
        return 0
    write_trec_qrels(qrels, args.output, iteration=iteration)
    note(f"wrote {args.output}: {qrels.frame.height} judgments")
    if unjudged:
        note(f"{unjudged} queries of the dataset have no judgment and are not in the TREC qrels")
    return 0


def _no_dataset_options(args) -> None:
    if args.dataset_id is not None or args.dataset_version is not None:
        raise UsageError("E_USAGE", "--dataset-id/--dataset-version apply when reading a TREC file; "
                         "a JSON file names its dataset itself")


def _dataset_ids(args, known_id, known_version, to_json: bool) -> tuple:
    """The dataset ID/version: from the sidecar, else the options; JSON output needs an ID."""
    for flag, given, known in (("--dataset-id", args.dataset_id, known_id),
                               ("--dataset-version", args.dataset_version, known_version)):
        if given is not None and known is not None and given != known:
            raise UsageError("E_USAGE", f"{flag} {quote(given)} contradicts the sidecar manifest, which says {quote(known)}")
    dataset_id = known_id if known_id is not None else args.dataset_id
    version = known_version if known_version is not None else args.dataset_version
    if to_json and dataset_id is None:
        raise UsageError("E_USAGE", "a JSON file names the dataset it belongs to, and a TREC file does not: "
                         "pass --dataset-id ID (and --dataset-version V if the dataset has versions)")
    return dataset_id, version


def _json_dataset():
    try:
        from converters import json_dataset
    except ModuleNotFoundError as exc:  # pragma: no cover
        raise UsageError("E_USAGE", f"JSON datasets are not available in this build ({exc})") from None
    return json_dataset


def _convert_columnar_qrels(args) -> int:
    """Qrels to or from Parquet / Arrow IPC (query_id, doc_id, relevance, iteration)."""
    from converters import columnar
    from converters.detect import load_dataset_any

    kind_out = _columnar_name(args.output)
    if is_json_name(args.output):
        raise UsageError("E_USAGE", "Parquet / Arrow qrels convert to and from TREC qrels; for a JSON dataset "
                         "convert the TREC qrels")
    if _columnar_name(args.input) is None and not is_json_name(args.input):
        _not_json_content(args.input)
    qrels = load_dataset_any(args.input, subtopics=args.subtopics).qrels
    if kind_out is not None:
        columnar.write_columnar(columnar.qrels_frame(qrels), args.output, kind_out, args.compression)
    else:
        from converters.trec_qrels import write_trec_qrels

        write_trec_qrels(qrels, args.output)
    note(f"wrote {args.output}: {qrels.frame.height} judgments")
    return 0

"""`trec-bridge trec_eval [-q] [-c] [-n] [-l N] [-M N] [-J] [-Z FILE] [-m MEASURE]... QRELS RUN`: a drop-in for trec_eval 9.0.4.

Standard output is trec_eval's, byte for byte, for the options it shares
(trec_bridge/trec_eval_output.py); the numbers come from the same scorer
as ``score --policy trec_eval`` (``trec_eval_c`` with -c; -M and -J are the
policy's ranking options).  What the strict policy would have said about the
inputs (queries without judgments, tied scores, words after the sixth
field) goes to standard error only, so a pipeline that parses trec_eval's
output keeps working.  docs/trec_eval.md.
"""
from __future__ import annotations

import argparse
import sys
from contextlib import closing

from ..errors import EXIT_INVALID, UsageError
from ..integers import INT64_MIN, int_option

HELP = """A drop-in for trec_eval 9.0.4: the same standard output, byte for byte.

Options as trec_eval's: -q per-query lines, -c average over every judged query
(missing ones score 0), -n no summary, -l N relevance level, -M N keep each
ranking's top N, -J judged documents only, -Z FILE each value as a z-score
against FILE's 'qid measure mean stddev' lines, -m MEASURE (repeatable;
trec_eval names and parameters: -m map -m P.5,10 -m ndcg_cut.10, nicknames
official (the default) and all_trec). The numbers come from trec-bridge's
scorer under --policy trec_eval (trec_eval_c with -c). Notes on the inputs go
to standard error only. Options trec_eval has and this command does not (-D -N
-R -T -o -v) exit 1 with trec_eval's usage text. See docs/trec_eval.md."""

# trec_eval.c's usage text, printed (to stderr) before an option this command does not support
TREC_EVAL_USAGE = """Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_qrels' prints all qrels measures, '-m official' is default)
"""
# trec_eval's options this command does not take -> (destination, what it does in trec_eval)
UNSUPPORTED = {
    "-D": ("debug", "debug output"),
    "-N": ("num_docs", "the number of documents in the collection"),
    "-R": ("rel_format", "another judgments format"),
    "-T": ("results_format", "another results format"),
}
DEFAULT_FORMATS = {"rel_format": "qrels", "results_format": "trec_results"}  # -R qrels and -T trec_results: accepted


def add_parser(sub) -> None:
    p = sub.add_parser("trec_eval", help="a drop-in for trec_eval 9.0.4 (byte-identical standard output)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = _usage_error
    p.add_argument("qrels", help="TREC qrels file")
    p.add_argument("run", help="TREC run file")
    p.add_argument("-q", dest="per_query", action="store_true", help="per-query lines before the summary")
    p.add_argument("-c", dest="complete", action="store_true", help="average over every judged query")
    p.add_argument("-n", dest="no_summary", action="store_true", help="no summary lines")
    p.add_argument("-l", dest="level", type=int_option("-l", INT64_MIN), default=1, metavar="N",
                   help="relevance level (default 1)")
    p.add_argument("-M", dest="depth", type=int_option("-M", 1), metavar="N", help="use each ranking's top N only")
    p.add_argument("-J", dest="judged_only", action="store_true", help="judged documents only")
    p.add_argument("-Z", dest="zscores", metavar="FILE",
                   help="each value as a z-score against FILE's 'qid measure mean stddev' lines")
    p.add_argument("-m", dest="measures", action="append", default=[], metavar="MEASURE",
                   help="measure, with trec_eval's parameters (repeatable; default: official)")
    for option, (dest, _) in UNSUPPORTED.items():
        p.add_argument(option, dest=dest, default=None, help=argparse.SUPPRESS)
    p.add_argument("-o", dest="old_format", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-v", dest="version", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(handler=run, io=io, unknown_arguments=lambda extra: _usage_error(f"unknown option {extra[0]}"))


def _usage_error(message: str):
    """trec_eval's usage text and exit 1, as trec_eval answers an option it does not know, then our line."""
    sys.stderr.write(TREC_EVAL_USAGE)
    sys.stderr.write(f"trec-bridge: error: [E_USAGE] trec_eval: {message}\n")
    sys.exit(EXIT_INVALID)


def io(args):
    """The two files trec_eval reads; it writes none."""
    from ..outputs import Declared

    return Declared(inputs=[args.qrels, args.run] + ([args.zscores] if args.zscores is not None else []))


def refuse_unsupported(args) -> None:
    """An option trec_eval has and this command does not: trec_eval's usage text, then a line naming it."""
    given = [(o, what) for o, (dest, what) in UNSUPPORTED.items()
             if getattr(args, dest) is not None and getattr(args, dest) != DEFAULT_FORMATS.get(dest)]
    given += [("-o", "the old output format")] if args.old_format else []
    given += [("-v", "trec_eval's version")] if args.version else []
    if given:
        option, what = given[0]
        sys.stderr.write(TREC_EVAL_USAGE)
        raise UsageError("E_USAGE", f"trec-bridge trec_eval does not support option {option} ({what}); supported: "
                         "-q -c -n -l -M -J -Z -m")


def run(args) -> int:
    from ..measures.trec_names import registered  # noqa: F401  (the families are registered on import)
    from ..policy import TREC_EVAL, TREC_EVAL_C
    from ..scorer import evaluate
    from ..trec_eval_output import at_level, measures_of, printed_measures, render
    from ..trec_eval_zscores import read_zscores

    refuse_unsupported(args)
    printed = printed_measures(args.measures)
    zscores = read_zscores(args.zscores) if args.zscores is not None else None
    if args.level < 0:
        raise UsageError("E_POLICY_MEASURE", f"-l {args.level}: below 0, trec_eval counts retrieved documents that "
                         "are not judged as relevant (their value -1 passes the level); trec-bridge does not reproduce "
                         "that reading")
    if args.level < 1:
        printed = at_level(printed, args.level)
    measures = measures_of(printed)
    policy = (TREC_EVAL_C if args.complete else TREC_EVAL).with_axis(depth=args.depth, judged_only=args.judged_only,
                                                                      arithmetic="float")  # trec_eval's doubles
    # num_rel's -c summary is not NumRel's mean at another -l, so the trec_eval_c policy refuses NumRel there; the
    # drop-in prints that summary itself (trec_eval_output._judged_relevant) and reads the run for the others
    prepared, findings = _prepare(args, [m for m in measures if not own_summary(m, args)], policy)
    result = evaluate(prepared, measures, policy)
    if all(q.status == "missing" for q in result.queries):  # trec_eval exits 7 and prints nothing
        from ..errors import InvalidInput

        raise InvalidInput("E_QUERY_SET_EMPTY", "no query has both results and judgments (trec_eval: \"No queries "
                           "with both results and relevance info\")", file=args.run)
    tag = _run_tag(args.run) if any(p.name == "runid" for p in printed) and not args.no_summary else ""
    sys.stdout.write(render(printed, result, prepared, policy, tag, per_query=args.per_query,
                            summary=not args.no_summary, zscores=zscores, complete=args.complete))
    _say(findings + _findings(result, prepared))
    return 0


def own_summary(m, args) -> bool:
    """A measure whose ``all`` line the drop-in forms itself, not from the policy's mean: num_rel with -c at a
    level other than 1 (m_num_rel.c te_calc_avg_num_rel)."""
    from ..references.trec_eval import complete_num_rel_reason

    return args.complete and complete_num_rel_reason(m, args.level) is not None


def _prepare(args, measures, policy):
    """Read the qrels and the run as trec_eval does, part by part where the file allows (bounded memory)."""
    from converters.detect import is_json, load_dataset_any
    from converters.trec_run_parts import can_read_in_parts, read_trec_run_parts

    from ..errors import InvalidInput
    from ..model import QueryNotContiguous
    from ..scorer import prepare_for

    dataset = load_dataset_any(args.qrels, None, max(args.level, 1))  # below 1: the measures' rel (at_level)
    if not is_json(args.run) and can_read_in_parts(args.run):
        try:
            with closing(read_trec_run_parts(args.run, order="score", fingerprint=False)) as parts:
                return prepare_for(dataset, parts, measures, policy), []
        except QueryNotContiguous:
            pass
        except InvalidInput as exc:
            if exc.code != "E_TREC_COLUMNS":
                raise
    return _prepare_whole(dataset, args, measures, policy)


def _prepare_whole(dataset, args, measures, policy):
    from converters.detect import is_json, load_run_any
    from converters.trec_run import read_trec_run_as_trec_eval

    from ..scorer import prepare_for

    findings = []
    if is_json(args.run):
        run = load_run_any(args.run)
    else:
        run, cut = read_trec_run_as_trec_eval(args.run)
        if cut:
            findings.append(f"{cut} run line(s) have words after the sixth field; ignored, as trec_eval does")
    return prepare_for(dataset, run, measures, policy), findings


def _run_tag(path: str) -> str:
    from converters.trec_run import last_line_tag

    return last_line_tag(path)


def _findings(result, prepared) -> list[str]:
    """What the strict policy would have refused or reported, for standard error."""
    out = []
    unjudged = list(prepared.checks.outside)  # run queries outside the qrels' queries
    if unjudged:
        shown = ", ".join(unjudged[:5]) + (", ..." if len(unjudged) > 5 else "")
        out.append(f"{len(unjudged)} run quer(ies) without judgments, skipped as trec_eval does: {shown}")
    ties = (result.order or {}).get("queries_with_ties") or []
    if ties:
        out.append(f"{len(ties)} quer(ies) have tied scores, broken by document ID descending as trec_eval does "
                   "(scores read as float32 may tie more)")
    return out


def _say(findings: list[str]) -> None:
    from ..messages import note

    for text in findings:
        note(f"trec_eval: note: {text}")

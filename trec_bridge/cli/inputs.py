"""The inputs that ``score``, ``crosscheck`` and ``stages`` share: one set of arguments, one loader.

A dataset (JSON, or TREC qrels with an optional query file and relevance
threshold), the runs (read by score or by rank column), the split and a chunk
map.  Declaring them once keeps the three commands reading them the same way;
``Inputs.load_run`` reads a further run (a repeat, a stage) with exactly the
main run's settings.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..integers import INT64_MIN, int_option


def add_input_arguments(p, *, run: bool = True) -> None:
    """DATASET [RUN] and the options that say how to read them; a command adds its own after these."""
    p.add_argument("dataset", help="JSON dataset or TREC qrels file (plain or .gz)")
    if run:
        p.add_argument("run", help="JSON run or TREC run file (plain or .gz)")
    p.add_argument("--split", help="only the dataset's queries of this split")
    p.add_argument("--queries", metavar="FILE", help="with TREC qrels: the query set, one query ID per line")
    p.add_argument("--subtopics", action="store_true",
                   help="the qrels are a diversity qrels ('qid subtopic docno grade', ndeval's layout; Parquet: the "
                        "iteration column), for alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall")
    p.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N",
                   help="relevance threshold (trec_eval -l; default: the dataset's, or 1 for TREC qrels)")
    p.add_argument("--order", choices=["score", "rank"], default=None,
                   help="TREC runs: order by score (trec_eval's rule, the default) or by the rank column (the default "
                        "under a policy that reads it, e.g. --policy msmarco)")
    p.add_argument("--chunk-map", metavar="FILE", help="collapse chunk rankings to documents with this map")


@dataclass
class Inputs:
    """What ``load_inputs`` read, with the paths and settings it was read with."""

    dataset: object
    chunk_map: object | None
    run: object | None
    dataset_path: str
    run_path: str | None
    queries_path: str | None
    chunk_map_path: str | None
    split: str | None
    order: str

    def load_run(self, path: str):
        """Another run (a repeat, a stage) read exactly like the main one."""
        from converters.detect import load_run_any

        return load_run_any(path, order=self.order, chunks=self.chunk_map_path is not None)

    def load_run_other_order(self):
        """The main run read by its rank column when it was read by score, and the other way round."""
        from converters.detect import load_run_any

        return load_run_any(self.run_path, order="rank" if self.order == "score" else "score",
                            chunks=self.chunk_map_path is not None)

    def roles(self) -> dict[str, str]:
        """Each input file given, by its role in the report's fingerprints."""
        roles = {"dataset": self.dataset_path, "run": self.run_path, "queries": self.queries_path,
                 "chunk_map": self.chunk_map_path}
        return {role: path for role, path in roles.items() if path}


def run_order(args) -> str:
    """``--order``, else the order the chosen ``--policy`` reads TREC runs in (``Policy.run_order``), else score."""
    if getattr(args, "order", None):
        return args.order
    if getattr(args, "policy", None):
        from .. import references  # noqa: F401  (registers the tools' policies)
        from ..policy import get_policy

        return get_policy(args.policy).run_order
    return "score"


def load_inputs(args, *, read_run: bool = True) -> Inputs:
    """Read the dataset, then the run (unless ``read_run`` is false: the caller reads it its own way), then the chunk map.

    The order is the order in which a user hears of a bad input.
    """
    from converters.detect import load_dataset_any

    dataset = load_dataset_any(args.dataset, args.queries, args.rel, getattr(args, "subtopics", False))
    inputs = Inputs(dataset, None, None, args.dataset, getattr(args, "run", None), args.queries, args.chunk_map,
                    args.split, run_order(args))
    if read_run and inputs.run_path:
        inputs.run = inputs.load_run(inputs.run_path)
    if args.chunk_map:
        from converters.chunk_map import load_chunk_map

        inputs.chunk_map = load_chunk_map(args.chunk_map)
    return inputs

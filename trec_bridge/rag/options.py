"""Whether the score command's options ask for the RAG acceptance analysis.

Kept apart from ``cli_support`` (which imports the whole workflow) so that a
plain ``score`` does not pay for importing it.
"""
from __future__ import annotations

RAG_WORD = "rag"  # MEASURES = "rag" (any letter case, like measure names): exactly the acceptance measures


def names_rag_set(measures: str) -> bool:
    return measures.strip().casefold() == RAG_WORD


def acceptance_requested(args) -> bool:
    return bool(args.gate is not None or args.thresholds or args.rag or args.repeat or args.html or args.png_dir
                or args.min_queries is not None or args.triage_k is not None
                or args.triage_recall_below is not None or args.triage_ndcg_below is not None
                or names_rag_set(args.measures))

"""The score command's acceptance options, as one value, and whether they ask for the analysis.

Kept apart from ``cli_support`` (which imports the whole workflow) so that a
plain ``score`` does not pay for importing it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

RAG_WORD = "rag"  # MEASURES = "rag" (any letter case, like measure names): exactly the acceptance measures


def names_rag_set(measures: str) -> bool:
    return measures.strip().casefold() == RAG_WORD


@dataclass(frozen=True)
class AcceptanceOptions:
    """What the user asked of the acceptance workflow (docs/rag.md); ``gate`` is True, a file, or None."""

    measures: str
    policy: str = "strict"
    gate: bool | str | None = None
    thresholds: str | None = None
    rag: bool = False
    min_queries: int | None = None
    repeat: tuple[str, ...] = ()
    triage_k: int | None = None
    triage_recall_below: str | None = None
    triage_ndcg_below: str | None = None
    html: str | None = None
    png_dir: str | None = None

    @classmethod
    def from_args(cls, args) -> "AcceptanceOptions":
        values = {f.name: getattr(args, f.name) for f in fields(cls)}
        return cls(**{**values, "repeat": tuple(values["repeat"])})

    def requested(self) -> bool:
        """Only the RAG options choose the acceptance view; --html and --png-dir alone give the ordinary report."""
        return bool(self.gate is not None or self.thresholds or self.rag or self.repeat
                    or self.min_queries is not None or self.triage_k is not None
                    or self.triage_recall_below is not None or self.triage_ndcg_below is not None
                    or names_rag_set(self.measures))

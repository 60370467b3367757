"""Adapters that run outside evaluators (trec_eval, pytrec_eval, ir_measures) on our model.

Each adapter is independent of the others; ``get(name)`` and ``all_references()``
are the registry the cross-check and ``trec-bridge tools which`` use.
"""
from __future__ import annotations

from ..errors import UsageError
from .base import Options, Reference, ReferenceResult
from .ir_measures_ref import IrMeasures
from .pytrec_eval_ref import PytrecEval
from .trec_eval import TrecEval, find_binary
from ..messages import quote

REFERENCES: dict[str, type[Reference]] = {"trec_eval": TrecEval, "pytrec_eval": PytrecEval, "ir_measures": IrMeasures}


def get(name: str) -> Reference:
    """A fresh adapter by tool name."""
    if name not in REFERENCES:
        raise UsageError("E_USAGE", f"unknown reference tool {quote(name)}; known: {', '.join(REFERENCES)}")
    return REFERENCES[name]()


def all_references() -> list[Reference]:
    return [cls() for cls in REFERENCES.values()]


__all__ = ["REFERENCES", "IrMeasures", "Options", "PytrecEval", "Reference", "ReferenceResult", "TrecEval",
           "all_references", "find_binary", "get"]

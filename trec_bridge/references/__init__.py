"""Adapters that run outside evaluators (trec_eval, pytrec_eval, ir_measures, ranx) on our model.

Each adapter is independent of the others and registers itself (registry.py)
when imported; ``get(name)`` and ``all_references()`` are what the cross-check
and ``trec-bridge tools which`` use.  The import order below is the tools'
order everywhere (``crosscheck --against``'s default, the divergence document).
"""
from __future__ import annotations

from .base import Options, Reference, ReferenceResult
from .trec_eval import TrecEval, find_binary  # noqa: I001  (registration order)
from .pytrec_eval_ref import PytrecEval
from .ir_measures_ref import IrMeasures
from .ranx_ref import Ranx
from .registry import TOOLS, Tool, default_names, get, names, policy_for, register, unregister


def all_references() -> list[Reference]:
    return [get(name) for name in names()]


__all__ = ["IrMeasures", "Options", "PytrecEval", "Ranx", "Reference", "ReferenceResult", "TOOLS", "Tool", "TrecEval",
           "all_references", "default_names", "find_binary", "get", "names", "policy_for", "register", "unregister"]

"""trec-bridge: trustworthy, portable IR evaluation numbers.

The Python API (``trec_bridge.api``) is loaded on first use, so that
``import trec_bridge`` stays light (no polars, pandas, scipy, matplotlib or
ir_datasets until a function is called)::

    import trec_bridge as tb
    res = tb.score({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, "P@1")
"""
__version__ = "0.1.0"

__all__ = ["score", "Evaluator", "Result", "read_run", "read_qrels", "read_dataset", "write_run", "explain",
           "InvalidInput"]


def __getattr__(name: str):
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("trec_bridge.api"), name)
    raise AttributeError(f"module 'trec_bridge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

"""trec-bridge: trustworthy, portable IR evaluation numbers.

The Python API (``trec_bridge.api``) is loaded on first use, so that
``import trec_bridge`` stays light (no polars, pandas, scipy, matplotlib or
ir_datasets until a function is called)::

    import trec_bridge as tb
    res = tb.score({"q1": {"d1": 1}}, {"q1": {"d1": 0.5}}, "P@1")
"""
import sys
import types

__version__ = "0.1.0"

__all__ = ["score", "crosscheck", "explain", "Evaluator", "Result", "Crosscheck", "read_run", "read_qrels",
           "read_dataset", "write_run", "InvalidInput"]


class _Package(types.ModuleType):
    """``tb.crosscheck`` is the API's function, and ``trec_bridge.crosscheck`` is also the engine's module.

    Importing a submodule sets it as an attribute of its package, which
    would replace the function after the first cross-check; as a property of
    the package's class, the name always gives the function (the module stays
    importable: ``from trec_bridge.crosscheck import ...`` reads sys.modules).
    """

    @property
    def crosscheck(self):
        return __getattr__("crosscheck")

    @crosscheck.setter
    def crosscheck(self, module) -> None:
        pass  # the import system recording the submodule: it is in sys.modules already


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("trec_bridge.api"), name)
    raise AttributeError(f"module 'trec_bridge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

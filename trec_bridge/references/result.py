"""What a reference tool answers (``ReferenceResult``) and an answer under way (``Pending``).

A leaf of the references package: ``base`` (the adapters' common code) and
``isolate`` (the child process a Python tool runs in) both use these.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass
class ReferenceResult:
    """One tool's answer, keyed by our measure strings (``str(Measure)``)."""

    tool: str
    version: str
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)  # only the queries the tool reported
    aggregate: dict[str, float] = field(default_factory=dict)  # the tool's own mean / "all" row
    served_by: dict[str, str] = field(default_factory=dict)  # native name (trec_eval) or provider (ir_measures)
    native: dict[str, str] = field(default_factory=dict)  # the tool's own name for the measure
    command: list[str] = field(default_factory=list)  # what was run, one entry per invocation
    precision: int | None = None  # decimals the tool prints (trec_eval: 4); None: full double
    unsupported: dict[str, str] = field(default_factory=dict)  # left out, with the reason
    failed: dict[str, str] = field(default_factory=dict)  # the tool raised for these (its message)
    notes: list[str] = field(default_factory=list)


class Pending(ABC):
    """A reference evaluation under way (see ``Reference.start``)."""

    @abstractmethod
    def result(self) -> ReferenceResult:
        """Wait for the tool; return its result or raise its error (the same on every call)."""

    def cancel(self) -> None:
        """Stop the work and free what it holds; harmless once finished."""


class Collected(Pending):
    """A tool running in another process: ``_collect`` waits for it once; every ``result()`` gives the same."""

    _outcome: tuple | None = None

    @abstractmethod
    def _collect(self) -> ReferenceResult:
        """Wait for the process and read its result (raise its error)."""

    def result(self) -> ReferenceResult:
        if self._outcome is None:
            try:
                self._outcome = (self._collect(), None)
            except Exception as exc:  # noqa: BLE001 - kept, so every call of result() raises the same
                self._outcome = (None, exc)
            finally:
                self.cancel()
        value, error = self._outcome
        if error is not None:
            raise error
        return value


class Done(Pending):
    """An evaluation that finished (or failed) when it was started."""

    def __init__(self, value: ReferenceResult | None = None, error: Exception | None = None):
        self._value, self._error = value, error

    def result(self) -> ReferenceResult:
        if self._error is not None:
            raise self._error
        return self._value

"""The reference tools, one registration per adapter module: its name, its policies and its axis reasons.

Everything that lists tools asks here: the cross-check (``get``,
``policy_for``), ``crosscheck --against``, ``tools which``, the divergence
document and a policy that emulates a tool.  Registering a tool also makes
its policies known to ``--policy`` (``policy.POLICIES``) and its reasons to
the divergence axes (``axes.AXES``), so adding a tool is adding its module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..axes import AXES
from ..errors import UsageError
from ..messages import quote
from ..policy import POLICIES, Policy


@dataclass(frozen=True)
class Tool:
    """A reference tool as the registry knows it: its adapter, the policy that reproduces it, and why it does what
    it does on each axis."""

    name: str
    adapter: Callable  # () -> Reference
    policy: Policy  # the tool's defaults, which our emulation of it reproduces
    complete_policy: Policy | None = None  # with every judged query in the mean (trec_eval -c); None: same as policy
    # (axis field, value of the tool's policy) -> why the tool does that (docs/divergences.md, the axis walk)
    reasons: Mapping[tuple[str, object], str] = field(default_factory=dict)
    # run by `crosscheck` when --against is not given; False for an optional tool (ranx: an extra, and numba's
    # start-up costs seconds), which runs only when named
    by_default: bool = True

    def policies(self) -> list[Policy]:
        return [self.policy] + ([self.complete_policy] if self.complete_policy is not None else [])


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    """Make ``tool`` known everywhere (an adapter module calls this once, at import)."""
    TOOLS[tool.name] = tool
    for policy in tool.policies():
        POLICIES.setdefault(policy.name, policy)
    axes = {a.field: a for a in AXES}
    for (axis, value), text in tool.reasons.items():
        axes[axis].reasons.setdefault(value, text)
    return tool


def unregister(name: str) -> None:
    """Forget a tool registered from outside the package (a test's toy tool): its policies and reasons too."""
    tool = TOOLS.pop(name, None)
    if tool is None:
        return
    kept = {p.name for t in TOOLS.values() for p in t.policies()}
    for policy in tool.policies():
        if policy.name not in kept and POLICIES.get(policy.name) == policy:
            del POLICIES[policy.name]
    kept_reasons = {key for t in TOOLS.values() for key in t.reasons}
    axes = {a.field: a for a in AXES}
    for axis, value in tool.reasons:
        if (axis, value) not in kept_reasons:
            axes[axis].reasons.pop(value, None)


def names() -> list[str]:
    """Every registered tool, in registration order (``default_names``: the ones crosscheck runs unasked)."""
    return list(TOOLS)


def default_names() -> list[str]:
    """The tools `crosscheck` runs when --against is not given (``Tool.by_default``), in registration order."""
    return [name for name, tool in TOOLS.items() if tool.by_default]


def get(name: str):
    """A fresh adapter by tool name."""
    if name not in TOOLS:
        raise UsageError("E_USAGE", f"unknown reference tool {quote(name)}; known: {', '.join(TOOLS)}")
    return TOOLS[name].adapter()


def policy_for(name: str, complete: bool = False) -> Policy:
    """The policy our emulation of ``name`` uses (``complete``: every judged query in the mean, trec_eval -c)."""
    tool = TOOLS[name]
    return tool.complete_policy if complete and tool.complete_policy is not None else tool.policy

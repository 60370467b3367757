"""The single-variable rule: does a comparison of systems change one test condition only?

A version comparison is controlled when the systems' ``system`` objects
(report["system"]) differ in exactly one key, everything else identical
(policy §8; docs/rag.md, "Test conditions").  Each system after the first is
judged against the first, the baseline (the systems a comparison's delta
charts are drawn against).  Reports without a system object leave the
conditions unknown: said, never assumed equal.
"""
from __future__ import annotations

from .errors import InvalidInput, UncontrolledComparison
from .system_meta import describe_change, system_diff, system_fingerprint


def compare_conditions(reports: list[dict], labels: list[str]) -> dict:
    """``{"baseline", "pairs": [{a, b, known, differences, controlled}], "controlled", "verdict"}``.

    ``controlled`` is true when every system is known and differs from the
    baseline in at most one key, false when one differs in more, null when
    some conditions are unknown and none breaks the rule.
    """
    systems = [r.get("system") for r in reports]
    pairs = [_pair(systems[0], s, labels[0], lab) for s, lab in zip(systems[1:], labels[1:])]
    broken = [p for p in pairs if p["controlled"] is False]
    unknown = [lab for s, lab in zip(systems, labels) if s is None]
    controlled = False if broken else (None if unknown else True)
    return {"baseline": labels[0], "rule": "each system differs from the baseline in one system key at most",
            "fingerprints": {lab: (system_fingerprint(s) if s is not None else None) for s, lab in zip(systems, labels)},
            "pairs": pairs, "controlled": controlled, "verdict": _verdict(pairs, broken, unknown, len(labels))}


def _pair(a: dict | None, b: dict | None, label_a: str, label_b: str) -> dict:
    if a is None or b is None:
        return {"a": label_a, "b": label_b, "known": False, "differences": [], "controlled": None}
    diff = system_diff(a, b)
    return {"a": label_a, "b": label_b, "known": True, "differences": diff, "controlled": len(diff) <= 1}


def _verdict(pairs: list[dict], broken: list[dict], unknown: list[str], n: int) -> list[str]:
    """One line per finding, the rule's breaches first."""
    lines = [f"not a controlled one-variable comparison: {p['b']} differs from {p['a']} in {len(p['differences'])} "
             f"system keys ({', '.join(d['key'] for d in p['differences'])})" for p in broken]
    if unknown and len(unknown) == n:
        lines.append("conditions unknown: no report carries a system object, so nothing shows which variable changed")
    elif unknown:
        lines.append(f"conditions unknown for {', '.join(unknown)} (no system object in the report)")
    for p in pairs:
        if p["controlled"] and p["differences"]:
            lines.append(f"one variable: {p['b']} differs from {p['a']} only in {p['differences'][0]['key']}")
        elif p["controlled"]:
            lines.append(f"same conditions: {p['b']} and {p['a']} have equal system objects")
    return lines


def difference_lines(conditions: dict) -> list[str]:
    """Every differing key of every pair, as ``B vs A: key: old -> new`` lines."""
    return [f"{p['b']} vs {p['a']}: {describe_change(d)}" for p in conditions["pairs"] for d in p["differences"]]


def refuse_uncontrolled(conditions: dict, path: str | None = None) -> None:
    """``--single-variable``: a comparison that is not shown to change one key only is refused (exit 6)."""
    if conditions["controlled"] is True:
        return
    raise UncontrolledComparison("E_COMPARE_UNCONTROLLED", "; ".join(
        line for line in conditions["verdict"] if not line.startswith(("one variable", "same conditions")))
        + " (--single-variable)", file=path)


def check_repeats(systems: list[dict | None], labels: list[str], vary: list[str] | tuple = ()) -> None:
    """Repeats are runs of one fixed system: refuse one whose system object differs from the first run's in a
    key not marked expected to vary (``--vary seed`` covers ``seed`` and every ``seed.*`` key)."""
    for system, label in zip(systems[1:], labels[1:]):
        if systems[0] is None and system is None:
            continue
        diff = system_diff(systems[0] or {}, system or {})
        fixed = [d for d in diff if not any(d["key"] == v or d["key"].startswith(v + ".") for v in vary)]
        if fixed:
            raise InvalidInput("E_REPEAT_SYSTEM", f"repeat {label} is not a run of the same system as {labels[0]}: "
                               + "; ".join(describe_change(d) for d in fixed)
                               + ". Repeats differ only in keys expected to vary (--vary KEY, e.g. --vary seed)",
                               file=label)

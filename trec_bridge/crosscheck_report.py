"""The cross-check's JSON report and its terminal text, beside ``report.py`` (whose report it embeds)."""
from __future__ import annotations

from .report import tool_stamp


def full_report(result, inputs: dict | None = None, system: dict | None = None, timing: dict | None = None) -> dict:
    """The report ``crosscheck --json`` writes: ``crosscheck_report`` around the strict run's own report (with the
    run's system metadata and timing when it has them)."""
    from .report import build_report

    return crosscheck_report(result, build_report(result.strict, inputs, system, timing))


def crosscheck_report(result, strict_report: dict) -> dict:
    """The full cross-check report (formats.md): the strict report, each tool's numbers and the unexplained differences."""
    tools = {}
    for t in result.tools:
        entry = {"available": t.available, "policy": t.policy.name}
        if not t.available:
            entry["reason"] = t.unavailable_reason
        else:
            ref = t.reference
            entry.update({
                "version": t.version, "command": ref.command, "served_by": ref.served_by, "native": ref.native,
                "precision": ref.precision, "unsupported": ref.unsupported, "failed": ref.failed, "notes": ref.notes,
                "aggregates": t.aggregates, "per_query": t.rows,
                "unexplained": [u.to_json() for u in t.unexplained],
            })
        tools[t.tool] = entry
    out = {
        "format": "trec-bridge.crosscheck", "version": 1, "tool": tool_stamp(),
        "strict": strict_report,
        "references": tools,
        "outcome": "unexplained" if result.unexplained else "explained",
        "unexplained": [u.to_json() for u in result.unexplained],
    }
    if result.explanations:  # only when asked (--explain-policy), so every other report keeps its shape
        out["explanations"] = {e.policy.name: e.to_json() for e in result.explanations}
    return out


def _f(v, integer: bool = False) -> str:
    """A value as the terminal shows it: 4 decimals, a count (NumRet, ...) as the integer it is."""
    if integer and isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "null" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


def render_text(result, per_query: bool) -> str:
    out = []
    counts = {str(m) for m in result.strict.measures if m.integer}
    for t in result.tools:
        if not t.available:
            out.append(f"== {t.tool}: not available ({t.unavailable_reason})\n")
            continue
        ref = t.reference
        out.append(f"== {t.tool} {t.version} (emulated by policy {t.policy.name})")
        out.append(f"{'measure':<24} {'strict':>8} {'ref':>8} {'emulated':>8}  ok   strict - ref by axis")
        for name, agg in t.aggregates.items():
            n = name in counts
            parts = ", ".join(f"{p['axis']} {_f(p['delta'], n) if p['delta'] is not None else _f(p.get('from'), n) + '->' + _f(p.get('to'), n)}"
                              for p in agg["parts"]) or "-"
            served = ref.served_by.get(name, "")
            label = f"{name}" + (f" [{served}]" if served and t.tool == "ir_measures" else "")
            out.append(f"{label:<24} {_f(agg['strict'], n):>8} {_f(agg['reference'], n):>8} {_f(agg['emulation'], n):>8}  "
                       f"{'yes' if agg['agrees'] else 'NO '}  {parts}")
        for name, why in ref.unsupported.items():
            out.append(f"{name:<24} not compared: {why}")
        for name, why in ref.failed.items():
            out.append(f"{name:<24} {t.tool} failed: {why}")
        differing = [r for r in t.rows if "parts" in r]
        out.append(f"per query: {len(t.rows)} compared, {sum(not r['agrees'] for r in t.rows)} unexplained, "
                   f"{len(differing)} strict/reference differences, all attributed to axes" if not t.unexplained else
                   f"per query: {len(t.unexplained)} UNEXPLAINED")
        if per_query:
            for r in differing:
                parts = ", ".join(p["axis"] for p in r.get("parts", []))
                out.append(f"  {r['query_id']:<12} {r['measure']:<20} strict {_f(r['strict'])} ref {_f(r['reference'])}"
                           f" emu {_f(r['emulation'])}  {parts}")
        out.append("")
    for e in result.explanations:
        out += _explanation_text(e, counts, per_query)
    verdict = "every difference is explained" if not result.unexplained else f"{len(result.unexplained)} UNEXPLAINED"
    out.append(f"cross-check: {verdict}")
    return "\n".join(out) + "\n"


def _parts_text(parts: list[dict], integer: bool) -> str:
    return ", ".join(f"{p['axis']} {_f(p['delta'], integer) if p['delta'] is not None else _f(p.get('from'), integer) + '->' + _f(p.get('to'), integer)}"
                     for p in parts) or "-"


def _explanation_text(e, counts: set, per_query: bool) -> list[str]:
    """One policy no tool runs (a leaderboard script), walked from strict: its means and the parts by axis."""
    out = [f"== policy {e.policy.name} (no tool to run: strict walked to the policy; {e.policy.description})",
           f"{'measure':<24} {'strict':>8} {'policy':>8}  strict - policy by axis"]
    for name, agg in e.aggregates.items():
        n = name in counts
        out.append(f"{name:<24} {_f(agg['strict'], n):>8} {_f(agg['policy'], n):>8}  {_parts_text(agg['parts'], n)}")
    for name, why in e.not_computed.items():
        out.append(f"{name:<24} not computed: {why}")
    out += [f"note: {text}" for text in e.notes]
    if e.aggregates:
        out.append(f"per query: {len(e.rows)} strict/policy differences, all attributed to axes")
    if per_query:
        for r in e.rows:
            out.append(f"  {r['query_id']:<12} {r['measure']:<20} strict {_f(r['strict'])} policy {_f(r['policy'])}"
                       f"  {', '.join(p['axis'] for p in r['parts'])}")
    out.append("")
    return out


SUMMARY_HEADERS = ["tool", "measure", "strict", "reference", "emulated", "agrees", "strict - reference by axis"]


def summary_rows(result) -> list[list]:
    """One row per available tool x measure: the numbers and each difference's axes (for --format and HTML)."""
    rows = []
    for t in result.tools:
        if not t.available:
            continue
        for name, agg in t.aggregates.items():
            axes = ", ".join(p["axis"] for p in agg["parts"]) or "-"
            rows.append([t.tool, name, agg["strict"], agg["reference"], agg["emulation"],
                         "yes" if agg["agrees"] else "NO", axes])
    for e in result.explanations:  # no tool: the policy's own value stands where a reference's would
        for name, agg in e.aggregates.items():
            rows.append([f"policy {e.policy.name}", name, agg["strict"], agg["policy"], None, "-",
                         ", ".join(p["axis"] for p in agg["parts"]) or "-"])
    return rows

"""``check_metric``'s report as text: the convention per axis, then each departure with its smallest case."""
from __future__ import annotations

from .check import CONVENTIONS, MetricReport


def render(report: MetricReport) -> str:
    lines = [f"check_metric {report.measure}: {report.cases} cases"]
    if report.unreproduced is not None:
        c = report.unreproduced
        lines.append("  no single convention searched reproduces every case; the first case that rules out the rest:")
        lines += _case_lines(c)
        return "\n".join(lines) + "\n"
    lines.append("  convention per axis (every value listed reproduces all cases):")
    for axis, values in report.convention.items():
        kind = "convention" if axis in CONVENTIONS else "definition"
        lines.append(f"    {axis} = {' | '.join(values)}   ({kind})")
    if not report.departures:
        lines.append("  follows the standard definition on every axis")
    for d in report.departures:
        kind = "a convention the measure leaves open" if d.axis in CONVENTIONS else "a different measure"
        lines.append(f"  departure on {d.axis}: {' | '.join(d.theirs)} instead of {d.standard} ({kind}); smallest case:")
        lines += _case_lines(d.case)
    return "\n".join(lines) + "\n"


def _case_lines(case) -> list[str]:
    return [f"    qrels  {case.qrels}", f"    run    {case.run}", f"    theirs {case.theirs}"]

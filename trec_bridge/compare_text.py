"""The comparison of N systems as text: the winner table (terminal, Markdown, LaTeX, TSV, CSV) and the pairs.

The winner table is the one TREC papers print: a row per system, a column
per measure, each mean followed by the marks of the systems it beats
significantly (after the correction), the best mean in bold.  The legend
always names the test, the correction and alpha, so a table lifted into a
paper says what its marks mean.
"""
from __future__ import annotations

from .compare_systems import TEST_NAMES
from .numtext import p_text
from .tables import latex_escape, latex_table, markdown_escape, render


def legend(cmp: dict) -> str:
    c = cmp["correction"]
    pairs = len(cmp["pairs"])
    how = "no correction" if c["method"] == "none" else f"{c['description']} correction over {c['family']} tests " \
        f"({pairs} pair{'s' * (pairs != 1)} x {len(cmp['measures'])} measure{'s' * (len(cmp['measures']) != 1)})"
    return (f"marks: significantly better than the systems with those marks ({TEST_NAMES[c['test']]}, adjusted "
            f"p < {c['alpha']:g}; {how}); best mean in bold")


def _marks(cell: dict, mark_of: dict[str, str]) -> str:
    return "".join(mark_of[s] for s in cell["better_than"])


def winner_rows(cmp: dict) -> tuple[list[str], list[list[tuple[float | None, str, bool]]]]:
    """Headers and, per system, per measure: (mean, marks, best)."""
    mark_of = {s["label"]: s["mark"] for s in cmp["systems"]}
    rows = []
    for i, s in enumerate(cmp["systems"]):
        row = []
        for w in cmp["winners"]:
            cell = w["cells"][i]
            row.append((cell["mean"], _marks(cell, mark_of), s["label"] in w["best"]))
        rows.append(row)
    return ["system"] + cmp["measures"], rows


def winner_table(cmp: dict, fmt: str) -> str:
    headers, rows = winner_rows(cmp)
    systems = cmp["systems"]
    if fmt == "latex":
        cells = [[f"({latex_escape(s['mark'])}) {latex_escape(s['label'])}"]
                 + [_latex_cell(*c) for c in row] for s, row in zip(systems, rows)]
        return latex_table(headers, cells, caption=legend(cmp), raw_cells=True)
    if fmt == "markdown":
        out = ["| " + " | ".join(markdown_escape(h) for h in headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
        out += ["| " + " | ".join([f"({s['mark']}) {markdown_escape(s['label'])}"] + [_md_cell(*c) for c in row]) + " |"
                for s, row in zip(systems, rows)]
        return "\n".join(out) + "\n\n" + legend(cmp) + "\n"
    if fmt in ("tsv", "csv"):
        flat = ["system", "mark"] + [h for m in cmp["measures"] for h in (m, f"{m} better than")]
        return render(flat, [[s["label"], s["mark"]] + [v for mean, marks, _ in row for v in (mean, marks)]
                             for s, row in zip(systems, rows)], fmt)
    text = [[f"({s['mark']}) {s['label']}"] + [_text_cell(*c) for c in row] for s, row in zip(systems, rows)]
    return render(headers, text, "table") + legend(cmp).replace("in bold", "marked *") + "\n"


def _fmt(mean: float | None) -> str:
    return "null" if mean is None else f"{mean:.4f}"


def _text_cell(mean, marks: str, best: bool) -> str:
    return ("*" if best else "") + _fmt(mean) + (f" {marks}" if marks else "")


def _md_cell(mean, marks: str, best: bool) -> str:
    value = f"**{_fmt(mean)}**" if best else _fmt(mean)
    return value + (f"<sup>{marks}</sup>" if marks else "")


def _latex_cell(mean, marks: str, best: bool) -> str:
    value = f"\\textbf{{{_fmt(mean)}}}" if best else _fmt(mean)
    return value + (f"$^{{{latex_escape(marks)}}}$" if marks else "")


PAIR_HEADERS = ["A", "B", "measure", "n", "mean A", "mean B", "delta", "W/L/T", "t-test p", "Wilcoxon p",
                "perm. p", "adjusted p", "CI"]


def pair_rows(cmp: dict) -> list[list[str]]:
    """One row per pair x measure; 'adjusted p' is the chosen test's after the correction; * = exact permutation."""
    test = cmp["correction"]["test"]
    rows = []
    for pair in cmp["pairs"]:
        for m in pair["measures"]:
            bs = m["bootstrap"]
            rows.append([pair["a"], pair["b"], m["measure"], str(m["n"]), _fmt(m["mean_a"]), _fmt(m["mean_b"]),
                         "null" if m["mean_delta"] is None else f"{m['mean_delta']:+.4f}",
                         f"{m['wins']}/{m['losses']}/{m['ties']}", p_text(m["t_test"].get("pvalue")),
                         p_text(m["wilcoxon"].get("pvalue")),
                         p_text(m["permutation"].get("pvalue")) + ("*" if m["permutation"].get("exact") else ""),
                         p_text(m[test].get("pvalue_adjusted")),
                         f"[{bs['low']:+.4f}, {bs['high']:+.4f}]" if bs.get("low") is not None else "n/a"])
    return rows


def condition_lines(cmp: dict) -> list[str]:
    """The single-variable rule's verdict and every system key that differs (conditions.py)."""
    from .conditions import difference_lines

    cond = cmp.get("conditions")
    if not cond:
        return []
    return [f"conditions: {v}" for v in cond["verdict"]] + [f"  {d}" for d in difference_lines(cond)]


def render_text(cmp: dict) -> str:
    """The terminal report: systems, protocol, the winner table, every pair, notes."""
    lines = [f"({s['mark']}) {s['label']}: {s['path']} ({s['outcome']}, values {s['values_from']})"
             for s in cmp["systems"]]
    prints = {s["protocol_fingerprint"] for s in cmp["systems"]}
    lines.append(f"protocol fingerprints equal: {next(iter(prints))[:16]}..." if len(prints) == 1 else
                 "protocols equal except their measures (compared on the measures they share)")
    lines += condition_lines(cmp)
    c = cmp["correction"]
    lines += [f"correction: {c['description']}, over {c['family']} tests of each kind; marks from the "
              f"{TEST_NAMES[c['test']]} at alpha {c['alpha']:g}",
              f"delta = B - A; randomization and bootstrap with seed {cmp['seed']}, {cmp['resamples']} resamples", ""]
    lines.append(winner_table(cmp, "table"))
    rows = pair_rows(cmp)
    headers = PAIR_HEADERS[:-1] + [f"{cmp['confidence_level']:.0%} CI"]
    headers[-2] = f"adj. {c['test'].replace('_test', '').replace('permutation', 'perm.')} p"
    lines.append(render(headers, rows, "table"))
    if any(r[10].endswith("*") for r in rows):  # the footnote only when a row carries its mark
        lines.append("(* exact randomization test: every sign pattern enumerated)")
    for pair in cmp["pairs"]:
        for m in pair["measures"]:
            for key in ("t_test", "wilcoxon", "permutation", "bootstrap"):
                if m[key].get("note"):
                    lines.append(f"{pair['a']} vs {pair['b']} {m['measure']} {key}: {m[key]['note']}")
    lines += ["note: " + n for n in cmp["notes"]] + ["warning: " + w for w in cmp["warnings"]]
    return "\n".join(lines) + "\n"


def summary(cmp: dict, fmt: str) -> str:
    """``compare --format``: the winner table in that format (json: the whole comparison)."""
    if fmt == "json":
        from .report import report_json

        return report_json(cmp)
    if fmt == "table":
        return render_text(cmp)
    return winner_table(cmp, fmt)

"""Tables in the shapes pipelines and papers want: TSV, CSV, JSON, Markdown, LaTeX, and per-query files.

One renderer (``render``) turns headers and rows of cells into any summary
format, so ``score``, ``compare`` and ``crosscheck`` share it and stay generic
over measures: a measure is a row (or a column), never a special case.
Cells are text, numbers or None (null); text from the inputs (query IDs,
measure names, run labels) is escaped for the format (a ``|`` in Markdown,
``&`` or ``_`` in LaTeX) so that it is shown as written.

Per-query files (``write_per_query``): one row per query x measure with the
query's status, written TSV, CSV or Parquet by the file's extension, through
``outputs`` (atomic).
"""
from __future__ import annotations

import csv
import io
import os

from .errors import UsageError
from .numtext import readable_exact

FORMATS = ("table", "tsv", "csv", "json", "markdown", "latex")
PER_QUERY_KINDS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
PER_QUERY_COLUMNS = ["query_id", "measure", "status", "value", "exact", "relevant", "retrieved"]
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def cell_text(v, digits: int = 4) -> str:
    """A cell for a reader: floats to ``digits`` decimals, None as null."""
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def machine_text(v) -> str:
    """A cell for a program (TSV, CSV): a float in full (shortest round-trip), None as an empty field."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(c, c) for c in text)


def markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render(headers: list[str], rows: list[list], fmt: str, *, caption: str | None = None) -> str:
    """``rows`` in one of tsv, csv, markdown, latex or table (aligned text); floats in full for tsv/csv."""
    if fmt in ("tsv", "csv"):
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n",
                            quoting=csv.QUOTE_MINIMAL)
        writer.writerow(headers)
        writer.writerows([[machine_text(v) for v in r] for r in rows])
        return buf.getvalue()
    text = [[cell_text(v) for v in r] for r in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(markdown_escape(h) for h in headers) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
        out += ["| " + " | ".join(markdown_escape(c) for c in r) + " |" for r in text]
        return "\n".join(out) + "\n"
    if fmt == "latex":
        return latex_table(headers, text, caption=caption)
    return aligned(headers, text)


def aligned(headers: list[str], rows: list[list[str]]) -> str:
    """Plain text columns: the first left-aligned, the others right-aligned."""
    all_rows = [headers] + rows
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in all_rows) + "\n"


def latex_table(headers: list[str], rows: list[list[str]], *, caption: str | None = None,
                raw_cells: bool = False) -> str:
    """A booktabs tabular; ``raw_cells``: the cells hold LaTeX already (significance marks), headers are escaped."""
    cells = rows if raw_cells else [[latex_escape(c) for c in r] for r in rows]
    out = ["\\begin{table}[t]", "\\centering"]
    if caption:
        out.append(f"\\caption{{{latex_escape(caption)}}}")
    out += [f"\\begin{{tabular}}{{l{'r' * (len(headers) - 1)}}}", "\\toprule",
            " & ".join(latex_escape(h) for h in headers) + " \\\\", "\\midrule"]
    out += [" & ".join(r) + " \\\\" for r in cells]
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ score


def score_summary(report: dict, fmt: str) -> str:
    """The means of a score report (JSON dict) in ``fmt`` (not "table", which render_table gives with counts)."""
    if fmt == "json":
        from .report import report_json

        return report_json(report)
    means = report["means"]
    if fmt in ("tsv", "csv"):
        rows = [[name, m["value"], m["exact"], m["eligible"]] for name, m in means.items()]
    else:
        rows = [[name, m["value"], readable_exact(m["exact"], m["value"]), m["eligible"]] for name, m in means.items()]
    caption = f"{report['query_set']['size']} queries, policy {report['policy']['name']}" if fmt == "latex" else None
    return render(["measure", "mean", "exact", "eligible"], rows, fmt, caption=caption)


def per_query_kind(path: str) -> str:
    """tsv, csv or parquet by the file's extension; E_USAGE for any other."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in PER_QUERY_KINDS:
        raise UsageError("E_USAGE", f"--per-query {path}: the extension says the format; use .tsv, .csv or .parquet")
    return PER_QUERY_KINDS[ext]


def per_query_rows(report: dict) -> list[list]:
    """One row per query x measure (PER_QUERY_COLUMNS), in query-set order then the report's measure order."""
    rows = []
    for q in report["per_query"]:
        for name in report["measures"]:
            rows.append([q["query_id"], name, q["status"], q["values"].get(name), q["exact"].get(name),
                         q["relevant"], q["retrieved"]])
    return rows


def write_per_query(path: str, report: dict) -> None:
    """The per-query file, atomically (outputs.atomic_write), its format by extension."""
    from .outputs import atomic_write

    kind = per_query_kind(path)
    rows = per_query_rows(report)
    if kind == "parquet":
        atomic_write(path, lambda buf: _parquet(rows).write_parquet(buf))  # buf: the staged file outputs gives
    else:
        atomic_write(path, render(PER_QUERY_COLUMNS, rows, kind))


def _parquet(rows: list[list]):
    import polars as pl

    schema = {"query_id": pl.Utf8, "measure": pl.Utf8, "status": pl.Utf8, "value": pl.Float64, "exact": pl.Utf8,
              "relevant": pl.Int64, "retrieved": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


"""The output options every reporting command shares: --json, --json-floats, --format, --per-query.

Declared once so that score, compare and crosscheck spell and check them the
same way (docs/reports.md).
"""
from __future__ import annotations

from ..tables import FORMATS


def add_report_options(p, *, per_query: bool = True, formats: tuple[str, ...] = FORMATS) -> None:
    p.add_argument("--json", metavar="OUT", help="write the JSON report here (atomically)")
    p.add_argument("--json-floats", action="store_true",
                   help="JSON numbers as floats only: every exact fraction is null and the report says "
                        '"numbers": "float" (for consumers that cannot take long fraction strings)')
    p.add_argument("--format", choices=formats, default="table",
                   help="the summary on standard output: " + ", ".join(formats) + " (default table)")
    if per_query:
        p.add_argument("--per-query", metavar="FILE",
                       help="write one row per query x measure, with its status, to FILE: TSV (.tsv), CSV (.csv) "
                            "or Parquet (.parquet) by the extension; standard output is unchanged")


def check_report_options(args) -> None:
    """What can be refused before anything is read (an unknown --per-query extension)."""
    if getattr(args, "per_query", None):
        from ..tables import per_query_kind

        per_query_kind(args.per_query)


def json_report_text(report: dict, args, *, allow_nan: bool = False) -> str:
    """The report as JSON text (keys sorted, deterministic), floats only when --json-floats asks.

    ``allow_nan``: the cross-check report carries the reference tools' own
    numbers, which may be NaN; it has always been written as they are.
    """
    from ..json_text import dumps
    from ..numtext import floats_only

    data = floats_only(report) if args.json_floats else report
    return dumps(data, allow_nan=allow_nan) + "\n"


def write_pages(report: dict, html_path: str | None, png_dir: str | None, kind: str) -> None:
    """The HTML report of a score or cross-check (``kind``) and its charts as PNG, through outputs (atomic)."""
    from .. import html_report
    from ..outputs import atomic_write
    from ..rag.cli_support import write_pngs

    strict = report["strict"] if kind == "crosscheck" else report
    charts = html_report.score_charts(strict)
    if png_dir:
        write_pngs(png_dir, charts)
    if html_path:
        page = html_report.crosscheck_page if kind == "crosscheck" else html_report.score_page
        atomic_write(html_path, page(report, charts))

"""The building blocks of every HTML report: one self-contained page, readable from phone to desktop width.

Self-contained: inline CSS, charts as base64 PNG data URIs, and (only on
pages with an interactive table) one inline script for sorting and
searching; no external resource, so the file can be mailed or archived as
it is.  Every table has an ``id`` and a header row so that it can be read
back (the tests parse it with html.parser).

Nothing from the inputs is ever interpreted: every text (query IDs, paths,
measure names, run labels) goes through ``html.escape``, and the script
only reads cells' text and ``data-sort`` attributes and moves rows (it never
builds markup from text).  Wide tables scroll inside their own box, so the
page itself never scrolls sideways at 390 px.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from html import escape

from . import __version__

CSS = """
*, *::before, *::after { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 1em; color: #1f2328; max-width: 72em;
       line-height: 1.4; overflow-wrap: anywhere; }
h1 { font-size: 1.45em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left; overflow-wrap: normal; }
th { background: #f6f8fa; }
th.sortable { cursor: pointer; user-select: none; }
th.sortable::after { content: " \\2195"; color: #8c959f; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.null { color: #8c959f; font-style: italic; }
.status-missing, .status-failed { background: #ffebe9; } .status-empty { background: #fff8c5; }
.excellent { background: #dafbe1; } .good { background: #eaf5d3; } .pass { background: #fff8c5; }
.fail { background: #ffebe9; } .best { font-weight: bold; } .no { background: #ffebe9; }
.verdict { font-size: 1.15em; font-weight: bold; padding: 0.5em; border: 2px solid; display: inline-block; }
.verdict.pass { border-color: #1a7f37; } .verdict.ok { border-color: #1a7f37; background: #dafbe1; } .verdict.fail, .verdict.incomplete { border-color: #cf222e; }
.warning { color: #9a6700; } .note { color: #57606a; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; margin: 0.5em 0; }
code { background: #f6f8fa; padding: 0 0.2em; }
dl.facts { display: grid; grid-template-columns: minmax(6em, max-content) 1fr; gap: 0.2em 1em; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
input.search { width: 100%; max-width: 24em; padding: 0.3em; margin: 0.3em 0; font-size: 1em; }
sup { font-size: 0.75em; }
"""

SCRIPT = """
document.querySelectorAll("table.interactive").forEach(function (table) {
  var body = table.tBodies[0];
  var search = document.getElementById(table.id + "-search");
  if (search) {
    search.addEventListener("input", function () {
      var needle = search.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = needle !== "" && row.textContent.toLowerCase().indexOf(needle) < 0;
      });
    });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var key = function (row) {
        var cell = row.cells[col];
        var raw = cell.getAttribute("data-sort");
        var text = raw === null ? cell.textContent : raw;
        var n = parseFloat(text);
        return isNaN(n) || raw === null && cell.className.indexOf("num") < 0 ? text : n;
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


@dataclass(frozen=True)
class Cell:
    """A table cell with its own class (a status colour), sort key or markup made here (never input text)."""

    text: str
    cls: str | None = None
    sort: str | None = None
    markup: bool = False  # text is HTML built by this module from escaped parts


def cell_html(v) -> str:
    if isinstance(v, Cell):
        attrs = (f' class="{escape(v.cls)}"' if v.cls else "") + (f' data-sort="{escape(v.sort)}"' if v.sort is not None else "")
        return f"<td{attrs}>{v.text if v.markup else escape(v.text)}</td>"
    if v is None:
        return '<td class="null">null</td>'
    if isinstance(v, float):
        return f'<td class="num" data-sort="{v!r}">{v:.4f}</td>'
    if isinstance(v, int) and not isinstance(v, bool):
        return f'<td class="num">{v}</td>'
    return f"<td>{escape(str(v))}</td>"


class Page:
    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []
        self.scripted = False

    def h2(self, text: str, anchor: str | None = None) -> None:
        attr = f' id="{escape(anchor)}"' if anchor else ""
        self.parts.append(f"<h2{attr}>{escape(text)}</h2>")

    def h3(self, text: str) -> None:
        self.parts.append(f"<h3>{escape(text)}</h3>")

    def p(self, text: str, cls: str | None = None) -> None:
        attr = f' class="{escape(cls)}"' if cls else ""
        self.parts.append(f"<p{attr}>{escape(text)}</p>")

    def facts(self, items: list[tuple[str, str]], fact_id: str | None = None) -> None:
        """A definition list of short facts (the protocol block)."""
        attr = f' id="{escape(fact_id)}"' if fact_id else ""
        body = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
        self.parts.append(f'<dl class="facts"{attr}>{body}</dl>')

    def table(self, table_id: str, headers: list[str], rows: list[list], *, row_class: list[str | None] | None = None,
              caption: str | None = None, interactive: bool = False) -> None:
        """A table in its own scrolling box; ``interactive``: sortable by any column, with a search field."""
        out = []
        if interactive:
            self.scripted = True
            out.append(f'<input type="search" class="search" id="{escape(table_id)}-search" '
                       f'placeholder="search the rows" aria-label="search {escape(table_id)}">')
        cls = ' class="interactive"' if interactive else ""
        out.append(f'<div class="scroll"><table id="{escape(table_id)}"{cls}>')
        if caption:
            out.append(f"<caption>{escape(caption)}</caption>")
        out.append("<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead><tbody>")
        for i, row in enumerate(rows):
            rc = row_class[i] if row_class else None
            attr = f' class="{escape(rc)}"' if rc else ""
            out.append(f"<tr{attr}>" + "".join(cell_html(v) for v in row) + "</tr>")
        out.append("</tbody></table></div>")
        self.parts.append("".join(out))

    def image(self, png: bytes, alt: str) -> None:
        data = base64.b64encode(png).decode("ascii")
        self.parts.append(f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">')

    def section(self, section_id: str, builder) -> None:
        """A named, empty-by-default place another part fills (the "system" section of the protocol, issue 23)."""
        self.parts.append(f'<section id="{escape(section_id)}">')
        builder(self)
        self.parts.append("</section>")

    def render(self) -> str:
        body = "\n".join(self.parts)
        script = f"<script>{SCRIPT}</script>\n" if self.scripted else ""
        return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{escape(self.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
                f"<h1>{escape(self.title)}</h1>\n{body}\n"
                f'<p class="note">trec-bridge {escape(__version__)}</p>\n{script}</body>\n</html>\n')

"""Issue 20 §7: every HTML report rendered in a real browser (headless Chromium).

Each report is loaded in an iframe of exactly 390 px (a phone) and 1280 px (a desktop) — an iframe, because
headless Chromium will not make a window narrower than 500 px — from a harness page that then measures
it: horizontal overflow (the page's scroll width beyond its width), images that did not load, and it
clicks a sortable column and types in a search field so the page's own script runs.  Any console message
(an uncaught error, a resource that failed to load) fails the test.  A screenshot of each is written;
with TREC_BRIDGE_SCREENSHOTS=DIR they are kept there (docs/img/reports is made this way).

Without Chromium the tests skip and say why (`.ci/run` installs it).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from trec_bridge.cli.main import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "trec_bridge" / "examples"
KB = REPO / "golden" / "rag" / "kb"
WIDTHS = (390, 1280)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>body {{ margin: 0; }} iframe {{ border: 0; display: block; }}</style></head>
<body><iframe id="report" src="{src}" width="{width}" height="{height}"></iframe>
<script>
document.getElementById("report").addEventListener("load", function () {{
  var doc = this.contentDocument, win = this.contentWindow;
  var images = Array.prototype.map.call(doc.images, function (i) {{ return i.complete && i.naturalWidth > 0; }});
  var out = {{width: win.innerWidth, scroll: doc.documentElement.scrollWidth, images: images.length,
             missing: images.filter(function (ok) {{ return !ok; }}).length, sorted: null, filtered: null}};
  var th = doc.querySelector("table.interactive th");
  if (th) {{
    th.click(); th.click();
    var table = th.closest("table");
    var search = doc.getElementById(table.id + "-search");
    search.value = "\\u0000no-such-row";
    search.dispatchEvent(new win.Event("input"));
    out.filtered = Array.prototype.filter.call(table.tBodies[0].rows, function (r) {{ return !r.hidden; }}).length;
    out.sorted = th.getAttribute("aria-sort");
    search.value = ""; search.dispatchEvent(new win.Event("input"));
  }}
  var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}});
</script></body></html>
"""


def browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def chromium():
    path = browser()
    if path is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium; .ci/run installs it): the HTML reports are not "
                    "rendered in a browser here")
    return path


def run_cli(*argv) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main([str(a) for a in argv])


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Every kind of HTML report, from the bundled example and the RAG golden knowledge base."""
    out = tmp_path_factory.mktemp("pages")
    ds, run = EXAMPLES / "dataset.json", EXAMPLES / "run.json"
    measures = "nDCG@5 RR@10 R@3 P@3 AP"
    run_cli("score", ds, run, measures, "--html", out / "score.html")
    run_cli("crosscheck", ds, run, measures, "--against", "pytrec_eval,ir_measures", "--html", out / "crosscheck.html",
            "--repro-dir", out / "repro")
    run_cli("compare", "--dataset", KB / "dataset.json", KB / "run_1.json", KB / "run_b.json", KB / "run_2.json",
            "--measure", "R@5 RR@20 nDCG@10", "--resamples", "500", "--html", out / "compare.html")
    run_cli("score", KB / "dataset.json", KB / "run_1.json", "rag", "--gate", KB / "thresholds_kb.toml",
            "--html", out / "acceptance.html")
    run_cli("stages", KB / "dataset.json", "--stage", f"vector={KB / 'stage_vector.json'}",
            "--stage", f"merged={KB / 'stage_merged.json'}", "--stage", f"rerank={KB / 'run_1.json'}",
            "--html", out / "stages.html")
    dl19 = SHARED_DATA / "runs" / "trec-dl-2019-passage-official"
    if dl19.is_dir():  # the nine official DL19 passage runs, as in docs/reports.md
        run_cli("compare", "--dataset", SHARED_DATA / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt", "--rel", "2",
                *sorted(dl19.glob("input.*.gz")), "--measure", "nDCG@10 AP", "--resamples", "200",
                "--html", out / "compare-dl19.html")
    found = {p.stem: p for p in out.glob("*.html")}
    assert {"acceptance", "compare", "crosscheck", "score", "stages"} <= set(found)
    return found


def render(chromium: str, page: Path, width: int, shot: Path) -> tuple[dict, list[str]]:
    """The harness's measurements of ``page`` at ``width`` and every console message of the load."""
    harness = page.parent / f"harness-{page.stem}-{width}.html"
    harness.write_text(HARNESS.format(src=page.name, width=width, height=1800), encoding="utf-8")
    common = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
              "--hide-scrollbars", f"--window-size={max(width, 500)},1800", "--virtual-time-budget=5000"]
    done = subprocess.run(common + ["--enable-logging=stderr", "--v=0", "--dump-dom", harness.as_uri()],
                          capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match, f"the harness did not report: {done.stderr[-2000:]}"
    probe = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    still = page.parent / f"still-{page.stem}-{width}.html"  # the screenshot: the page as it opens, not re-sorted
    still.write_text((HARNESS.split("<script>")[0] + "</body></html>\n").format(src=page.name, width=width, height=1800),
                     encoding="utf-8")
    subprocess.run(common + [f"--screenshot={shot}", still.as_uri()], capture_output=True, timeout=120)
    return probe, console


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["score", "crosscheck", "compare", "acceptance", "stages", "compare-dl19"])
def test_report_renders_without_errors_or_overflow(chromium, pages, kind, width, tmp_path):
    if kind not in pages:
        pytest.skip(f"shared data not found at {SHARED_DATA}: no DL19 comparison page")
    shot = tmp_path / f"{kind}-{width}.png"
    probe, console = render(chromium, pages[kind], width, shot)
    assert console == [], f"console messages: {console}"
    assert probe["width"] == width
    assert probe["scroll"] <= probe["width"], f"the page scrolls sideways at {width} px: {probe}"
    assert probe["missing"] == 0 and probe["images"] >= 1, probe
    if kind.startswith(("score", "crosscheck", "compare")):
        assert probe["sorted"] == "descending" and probe["filtered"] == 0, probe  # the script ran
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("TREC_BRIDGE_SCREENSHOTS")
    if keep:
        shutil.copy(shot, Path(keep) / shot.name)

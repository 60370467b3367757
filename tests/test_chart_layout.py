"""Issue 20 §3: charts that read well — nothing clipped, query IDs on the axis where there is room,
systems named by label.  Each chart is rendered and matplotlib's tight bounding box of everything drawn
must lie inside the figure (before: delta_nDCG_10.png's title ran off both sides)."""
from __future__ import annotations

import pytest

from trec_bridge.rag import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
QUERIES = [f"{1000000 + 7919 * i}" for i in range(43)]  # DL19-like numeric IDs, 43 queries
LONG_LABEL = "a-rather-long-system-label-from-a-run-file-name_v2_final"


@pytest.fixture
def figures(monkeypatch):
    kept = []
    real = plots._png

    def keep(fig):
        kept.append(fig)
        return real(fig)

    monkeypatch.setattr(plots, "_png", keep)
    return kept


def assert_inside(fig) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    tight = fig.get_tightbbox(renderer)  # inches
    box = fig.bbox_inches
    eps = 0.02
    assert tight.x0 >= box.x0 - eps and tight.y0 >= box.y0 - eps, (tight, box)
    assert tight.x1 <= box.x1 + eps and tight.y1 <= box.y1 + eps, (tight, box)


def tick_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]


def test_delta_chart_is_not_clipped_and_names_queries(figures):
    deltas = [((i * 37) % 11 - 5) / 10 for i in range(len(QUERIES))]
    png = plots.delta_chart("nDCG@10", QUERIES, deltas, LONG_LABEL, LONG_LABEL + "-b")
    assert png[:8] == PNG_MAGIC
    fig = figures[-1]
    assert_inside(fig)
    assert sorted(tick_texts(fig)) == sorted(QUERIES)  # 43 queries: every ID on the axis
    title = fig.axes[0].get_title()
    assert LONG_LABEL in title.replace("\n", "") and "/" not in title


def test_delta_chart_with_many_queries_sorts_without_ids(figures):
    ids = [f"q{i}" for i in range(500)]
    plots.delta_chart("AP", ids, [(i % 7 - 3) / 10 for i in range(500)], "a", "b")
    fig = figures[-1]
    assert_inside(fig)
    assert not [t for t in tick_texts(fig) if t]


def test_distribution_chart_is_not_clipped(figures):
    names = ["nDCG@10", "AP", "R@1000", "RR", "nDCG(dcg=exp-log2,judged_only=true)@100", "P@5", "Judged@10"]
    plots.distribution_chart(names, {n: [(i % 13) / 12 * (10 if n == "P@5" else 1) for i in range(43)] for n in names})
    assert_inside(figures[-1])


def test_stage_chart_is_not_clipped(figures):
    plots.stage_chart(["vector-search-stage", "merged", "cross-encoder-rerank"], [0.61, 0.72, 0.7], [3, 4], [9, 1], 10)
    assert_inside(figures[-1])

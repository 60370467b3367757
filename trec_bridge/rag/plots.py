"""PNG charts (matplotlib, Agg backend, no display, no global pyplot state).

Each function returns the PNG bytes; the caller writes them (``--png-dir``)
and embeds them in the HTML page as data URIs.  matplotlib is imported only
here and only when a chart is asked for.

Labels, titles and ticks hold text from the inputs (query IDs, run paths,
stage names), and matplotlib reads ``$...$`` as math text (a query ID
``q$\\foo$`` crashed its parser) and, with ``text.usetex``, hands text to
LaTeX.  So every chart is drawn under ``@chart``, which turns both off (and
overrides a user's matplotlibrc): text is drawn as written, never interpreted.
"""
from __future__ import annotations

import functools
import io

TIER_COLOURS = {"excellent": "#1a7f37", "good": "#4c9a2a", "pass": "#bf8700", "fail": "#cf222e"}


# Every text of a chart is literal: no math text, no LaTeX, whatever the user's matplotlibrc says.
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False, "axes.formatter.use_mathtext": False}


def chart(draw):
    """Draw (and save) the chart under LITERAL_TEXT: texts read rcParams when created and when drawn."""
    @functools.wraps(draw)
    def literal(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(LITERAL_TEXT):
            return draw(*args, **kwargs)

    literal.literal_text = True
    return literal


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


@chart
def tier_chart(tiers) -> bytes:
    """One bar per gated measure (its mean), with the pass / good / excellent levels marked."""
    fig = _figure(7.5, 0.6 * len(tiers) + 1.6)
    ax = fig.add_subplot(1, 1, 1)
    names = [t.measure for t in tiers]
    ys = list(range(len(tiers)))[::-1]
    values = [t.value if t.value is not None else 0.0 for t in tiers]
    ax.barh(ys, values, color=[TIER_COLOURS[t.tier] for t in tiers], height=0.55)
    for y, t in zip(ys, tiers):
        for level, style in zip(t.levels.as_tuple(), ("-", "--", ":")):
            ax.plot([float(level)] * 2, [y - 0.38, y + 0.38], color="black", linestyle=style, linewidth=1.4)
        label = "no value" if t.value is None else f"{t.value:.3f} ({t.tier})"
        ax.text(1.01, y, label, va="center", fontsize=9)
    ax.set_yticks(ys, names)
    ax.set_xlim(0, 1.32)
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xlabel("mean (bars); levels: solid = excellent, dashed = good, dotted = pass")
    ax.set_title("Acceptance tiers")
    fig.tight_layout()
    return _png(fig)


MAX_IDS_ON_AXIS = 80  # query IDs are written under the bars up to this many queries (the figure widens)


def wrapped(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize`` (a title never runs off the figure)."""
    import textwrap

    chars = max(20, int(width_inches * 72 / (fontsize * 0.62)))
    return "\n".join(textwrap.wrap(text, chars, break_long_words=True, break_on_hyphens=False)) or text


@chart
def delta_chart(measure: str, query_ids: list[str], deltas: list[float], label_a: str, label_b: str) -> bytes:
    """Per-query delta B - A, sorted; wins above zero, losses below; query IDs under the bars where they fit.

    ``label_a`` / ``label_b`` are the systems' short labels (run IDs), never paths.
    """
    order = sorted(range(len(deltas)), key=lambda i: (deltas[i], i))
    d = [deltas[i] for i in order]
    with_ids = len(d) <= MAX_IDS_ON_AXIS
    width = min(20.0, max(8.0, 0.16 * len(d) + 1.5)) if with_ids else 8.0
    fig = _figure(width, 4.4 if with_ids else 3.8)
    ax = fig.add_subplot(1, 1, 1)
    colours = ["#1a7f37" if x > 0 else "#cf222e" if x < 0 else "#8c959f" for x in d]
    ax.bar(range(len(d)), d, color=colours, width=1.0 if len(d) > 60 else 0.8)
    ax.axhline(0, color="black", linewidth=0.8)
    if with_ids:
        ax.set_xticks(range(len(d)), [_short(query_ids[i]) for i in order], rotation=90, fontsize=7)
        ax.set_xlim(-0.6, len(d) - 0.4)
        ax.set_xlabel(f"query ({len(d)}, sorted by delta)", fontsize=8)
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{len(d)} queries, sorted by delta")
    wins, losses = sum(x > 0 for x in d), sum(x < 0 for x in d)
    ax.set_ylabel(f"{measure}: B - A")
    title = (f"{measure} per query, B = {label_b} vs A = {label_a}: {wins} wins, {losses} losses, "
             f"{len(d) - wins - losses} ties")
    ax.set_title(wrapped(title, width - 0.8, 9), fontsize=9)
    fig.tight_layout()
    return _png(fig)


def _short(text: str, limit: int = 18) -> str:
    """An axis label that fits: long IDs shortened with an ellipsis (the tables hold them whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


@chart
def distribution_chart(measures: list[str], values: dict[str, list[float]]) -> bytes:
    """One histogram per measure of its per-query values (nulls left out), small multiples, any value range."""
    cols = min(3, max(1, len(measures)))
    rows = -(-len(measures) // cols)
    fig = _figure(3.3 * cols + 0.4, 2.5 * rows + 0.5)
    for i, name in enumerate(measures):
        ax = fig.add_subplot(rows, cols, i + 1)
        vals = values.get(name) or []
        if vals:
            ax.hist(vals, bins=min(20, max(5, len(set(vals)))), color="#0969da", edgecolor="white")
        else:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(wrapped(f"{name} ({len(vals)} queries)", 3.0, 9), fontsize=9)
        ax.tick_params(labelsize=7)
        ax.set_ylabel("queries", fontsize=8)
    fig.tight_layout()
    return _png(fig)


@chart
def stage_chart(names: list[str], recalls: list[float | None], lost: list[int], gained: list[int], k: int) -> bytes:
    """Left: mean recall@k per stage; right: relevant documents lost and gained per transition."""
    fig = _figure(10, 3.8)
    ax1 = fig.add_subplot(1, 2, 1)
    vals = [r if r is not None else 0.0 for r in recalls]
    ax1.bar(range(len(names)), vals, color="#0969da")
    for i, v in enumerate(vals):
        ax1.text(i, v + 0.02, f"{v:.3f}", ha="center", fontsize=9)
    ax1.set_xticks(range(len(names)), names, rotation=20, fontsize=9)
    ax1.set_ylim(0, 1.12)
    ax1.set_ylabel(f"mean R@{k}")
    ax1.set_title(f"Recall@{k} per stage")
    ax2 = fig.add_subplot(1, 2, 2)
    labels = [f"{a} -> {b}" for a, b in zip(names, names[1:])]
    xs = range(len(labels))
    ax2.bar([x - 0.2 for x in xs], lost, width=0.4, color="#cf222e", label="lost")
    ax2.bar([x + 0.2 for x in xs], gained, width=0.4, color="#1a7f37", label="gained")
    for x, a, b in zip(xs, lost, gained):
        ax2.text(x - 0.2, a, str(a), ha="center", va="bottom", fontsize=9)
        ax2.text(x + 0.2, b, str(b), ha="center", va="bottom", fontsize=9)
    ax2.set_ylim(0, max(lost + gained + [1]) * 1.15)
    ax2.set_xticks(list(xs), labels, rotation=20, fontsize=9)
    from matplotlib.ticker import MaxNLocator

    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.set_ylabel(f"relevant documents (top {k})")
    ax2.set_title("Relevant documents lost / gained between stages")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


@chart
def latency_chart(timing: dict) -> bytes:
    """The slowest queries' latencies as bars, with the median, p95 and p99 of all timed queries as lines."""
    rows = timing["slowest"][::-1]
    fig = _figure(7.5, 0.45 * len(rows) + 1.8)
    ax = fig.add_subplot(1, 1, 1)
    ax.barh(range(len(rows)), [r["latency_ms"] for r in rows], color="#0969da")
    ax.set_yticks(range(len(rows)), [_short(r["query_id"]) for r in rows], fontsize=8)
    for name, style in (("median", ":"), ("p95", "--"), ("p99", "-.")):
        ax.axvline(timing[name], color="#cf222e", linestyle=style, label=f"{name} {timing[name]:g} ms")
    ax.set_xlabel("latency (ms)", fontsize=8)
    ax.set_title(f"slowest queries of {timing['timed']} timed (percentiles: nearest rank)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _png(fig)

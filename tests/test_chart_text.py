"""Text from the inputs is drawn as written on every chart, never interpreted by matplotlib.

Query IDs, run file names and stage names reach tick labels and titles.  With
math text on, ``q$\\foo$`` crashed ``compare --html`` and ``stages --html``
in matplotlib's math-text parser, and ``$x$`` would have been drawn as an
italic x.  Every chart-producing command runs here on hostile IDs; the drawn
figures are captured and their texts checked to be literal.
"""
from __future__ import annotations

import inspect

import pytest

from trec_bridge.cli.main import main
from trec_bridge.rag import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# one query ID per hostile shape: math delimiters and commands, sub/superscripts, %, braces, a lone $
QUERY_IDS = ["q$\\foo$", "q$x$", "q_1^2", "q%d{x}", "q{\\frac}", "q$", "q\\$\\", "q$_{a}^{b}$"]
RUN_A = "r$\\alpha$_{1}.txt"
RUN_B = "b_{x}^%$.txt"
STAGE_A, STAGE_B = "v$\\bar$", "m_{x}^%"


@pytest.fixture
def hostile(tmp_path):
    """TREC qrels and two runs whose query IDs and file names are all hostile; A and B differ on every query."""
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 rel{i} 1\n" for i, q in enumerate(QUERY_IDS)))
    (tmp_path / RUN_A).write_text("".join(f"{q} Q0 rel{i} 1 3 a\n{q} Q0 other 2 2 a\n" for i, q in enumerate(QUERY_IDS)))
    (tmp_path / RUN_B).write_text("".join(
        f"{q} Q0 other 1 3 b\n" if i % 2 else f"{q} Q0 rel{i} 1 3 b\n" for i, q in enumerate(QUERY_IDS)))
    return tmp_path


@pytest.fixture
def drawn(monkeypatch):
    """Every figure a chart function saves, kept for inspection after the command ran."""
    figures = []
    real_png = plots._png

    def keep(fig):
        png = real_png(fig)
        figures.append(fig)
        return png

    monkeypatch.setattr(plots, "_png", keep)
    return figures


def _texts(fig) -> list:
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_text()]


def _assert_literal(figures, expected: list[str]) -> None:
    assert figures, "no chart was drawn"
    texts = [t for fig in figures for t in _texts(fig)]
    for t in texts:
        assert t._parse_math is False and t.get_usetex() is False, t.get_text()
    shown = "\n".join(t.get_text() for t in texts)
    for s in expected:
        assert s in shown, f"{s!r} is not drawn as written"


def _score(folder, run: str, out: str) -> str:
    code = main(["score", str(folder / "qrels.txt"), str(folder / run), "P@1 RR", "--json", str(folder / out)])
    assert code == 0
    return str(folder / out)


def test_compare_html_draws_hostile_query_ids_and_run_names_literally(hostile, drawn, capsys):
    a, b = _score(hostile, RUN_A, "a.json"), _score(hostile, RUN_B, "b.json")
    code = main(["compare", a, b, "--html", str(hostile / "c.html"), "--png-dir", str(hostile / "png")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    assert (hostile / "png" / "delta_P_1.png").read_bytes()[:8] == PNG_MAGIC
    # charts name systems by their short label (the run file's name without extension), never by path
    _assert_literal(drawn, QUERY_IDS + [RUN_A.removesuffix(".txt"), RUN_B.removesuffix(".txt")])
    assert str(hostile) not in "\n".join(t.get_text() for fig in drawn for t in _texts(fig))


def test_stages_html_draws_hostile_stage_names_literally(hostile, drawn, capsys):
    code = main(["stages", str(hostile / "qrels.txt"), "--stage", f"{STAGE_A}={hostile / RUN_A}",
                 "--stage", f"{STAGE_B}={hostile / RUN_B}", "--k", "1",
                 "--html", str(hostile / "s.html"), "--png-dir", str(hostile / "png")])
    assert code == 0, capsys.readouterr().err
    assert (hostile / "png" / "stages.png").read_bytes()[:8] == PNG_MAGIC
    _assert_literal(drawn, [STAGE_A, STAGE_B])


def test_score_rag_html_on_hostile_inputs(hostile, drawn, capsys):
    code = main(["score", str(hostile / "qrels.txt"), str(hostile / RUN_A), "rag", "--min-queries", "1",
                 "--html", str(hostile / "r.html"), "--png-dir", str(hostile / "png")])
    assert code == 0, capsys.readouterr().err
    assert (hostile / "png" / "tiers.png").read_bytes()[:8] == PNG_MAGIC
    _assert_literal(drawn, ["Acceptance tiers"])


def test_a_users_matplotlibrc_cannot_turn_interpretation_back_on(monkeypatch):
    """usetex / parse_math set globally (a matplotlibrc) are overridden inside every chart."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "text.usetex", True)
    monkeypatch.setitem(matplotlib.rcParams, "text.parse_math", True)
    png = plots.delta_chart("P@1", ["q$\\foo$", "q_1^2"], [0.5, -0.5], "a$\\bar$", "b%{x}")
    assert png[:8] == PNG_MAGIC
    assert matplotlib.rcParams["text.usetex"] is True  # the user's setting is restored afterwards


def test_every_chart_function_draws_literal_text():
    """A new chart must be drawn under @chart too: every public function of plots returning PNG bytes."""
    charts = [f for name, f in inspect.getmembers(plots, inspect.isfunction)
              if name.endswith("_chart") and f.__module__ == plots.__name__]
    assert {f.__name__ for f in charts} >= {"tier_chart", "delta_chart", "stage_chart"}
    assert all(getattr(f, "literal_text", False) for f in charts), [f.__name__ for f in charts]

"""trec_bridge.progress: a line on stderr only on a terminal, only after the delay, erased at the end."""
from __future__ import annotations

import io
import sys
import threading
import time

import pytest

from trec_bridge.progress import ENV_VAR, format_elapsed, progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


def _progress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "trec-bridge-progress"]


def test_slow_step_on_a_tty_shows_elapsed_then_erases_the_line(monkeypatch):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)  # the default stream is sys.stderr at __enter__
    with progress("reading run.trec", delay=0.05, interval=0.02) as p:
        time.sleep(0.3)
        assert p.shown
    out = tty.getvalue()
    assert out.startswith("\rreading run.trec … 0s")
    assert out.count("\r") >= 3  # several updates, then the erase
    last_width = len(out.rsplit("\r", 3)[-3])  # the last progress line before the erase
    assert out.endswith("\r" + " " * last_width + "\r")  # erased with spaces, cursor at column 0
    assert not _progress_threads()


def test_fast_step_writes_nothing():
    tty = FakeTTY()
    with progress("reading qrels", delay=5.0, stream=tty) as p:
        pass
    assert tty.getvalue() == ""
    assert not p.shown
    assert not _progress_threads()


def test_not_a_tty_starts_no_thread_and_writes_nothing():
    pipe = io.StringIO()  # isatty() is False
    before = threading.active_count()
    with progress("reading run", delay=0.0, interval=0.01, stream=pipe) as p:
        assert threading.active_count() == before
        time.sleep(0.05)
    assert pipe.getvalue() == ""
    assert not p.shown


def test_env_var_forces_on_and_off(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setenv(ENV_VAR, "1")
    with progress("forced", delay=0.0, interval=0.01, stream=pipe):
        time.sleep(0.05)
    assert "forced … 0s" in pipe.getvalue()

    tty = FakeTTY()
    monkeypatch.setenv(ENV_VAR, "0")
    with progress("off", delay=0.0, interval=0.01, stream=tty):
        time.sleep(0.05)
    assert tty.getvalue() == ""


def test_detail_is_shown_and_a_shorter_line_covers_the_longer_one():
    tty = FakeTTY()
    with progress("load", delay=0.0, interval=0.02, stream=tty) as p:
        p.detail = "123456789 bytes"
        time.sleep(0.1)
        p.detail = ""
        time.sleep(0.1)
    out = tty.getvalue()
    assert "load … 0s (123456789 bytes)" in out
    long_line = "load … 0s (123456789 bytes)"
    # after the detail is cleared, the short line is padded to the long line's width
    assert "\rload … 0s" + " " * (len(long_line) - len("load … 0s")) in out


def test_exception_in_block_still_stops_and_erases():
    tty = FakeTTY()
    with pytest.raises(RuntimeError):
        with progress("failing", delay=0.0, interval=0.01, stream=tty):
            time.sleep(0.05)
            raise RuntimeError("boom")
    assert tty.getvalue().endswith("\r")
    assert not _progress_threads()


def test_a_closed_stream_does_not_raise():
    tty = FakeTTY()
    with progress("closed", delay=0.0, interval=0.01, stream=tty):
        tty.close()
        time.sleep(0.05)
    assert not _progress_threads()


@pytest.mark.parametrize("seconds,text", [(0.4, "0s"), (7.9, "7s"), (65, "1m05s"), (7380, "2h03m")])
def test_format_elapsed(seconds, text):
    assert format_elapsed(seconds) == text


def test_a_nested_step_is_the_outer_lines_detail_not_a_second_line():
    """Issue 20 §6: crosscheck/compare wrap whole steps that read files (which have their own line)."""
    tty = FakeTTY()
    with progress("comparing", delay=0.01, interval=0.01, stream=tty) as outer:
        with progress("reading a.json", delay=0.01, stream=tty) as inner:
            assert outer.detail == "reading a.json"
            time.sleep(0.15)
        assert outer.detail == ""
        time.sleep(0.05)
    assert not inner.shown and outer.shown
    assert "comparing … 0s (reading a.json)" in tty.getvalue()
    assert "\rreading a.json" not in tty.getvalue()
    assert not _progress_threads()


def test_compare_and_crosscheck_show_progress_on_a_terminal(monkeypatch, tmp_path):
    """Forced on (as on a terminal), the long steps of compare name what they do, on stderr only."""
    import contextlib
    from pathlib import Path

    from trec_bridge import progress as progress_module
    from trec_bridge.cli.main import main

    monkeypatch.setenv(ENV_VAR, "1")
    monkeypatch.setattr(progress_module, "DEFAULT_DELAY", 0.0)
    monkeypatch.setattr(progress_module, "DEFAULT_INTERVAL", 0.005)
    kb = Path(__file__).resolve().parent.parent / "golden" / "rag" / "kb"
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["compare", "--dataset", str(kb / "dataset.json"), str(kb / "run_1.json"), str(kb / "run_b.json"),
                     "--measure", "R@5", "--resamples", "2000"])
    assert code == 0
    assert "comparing" in err.getvalue() and "scoring" in err.getvalue()
    assert "comparing" not in out.getvalue()

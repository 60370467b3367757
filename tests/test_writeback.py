"""trec_bridge/writeback.py: a streamed output's write-back is started every STEP bytes, over exactly the bytes
written since the last start, and the file's bytes are the same whether the call exists, fails or not."""
from __future__ import annotations

import pytest

from trec_bridge import writeback


@pytest.mark.parametrize("answer", [0, -1, None])
def test_write_back_starts_every_step_over_the_new_bytes(tmp_path, monkeypatch, answer):
    """``answer``: what sync_file_range returns (0 done, -1 failed: the range is asked again next time);
    None: no such call on this system."""
    calls = []

    def record(fd, offset, length, flags):
        calls.append((offset, length, flags))
        return answer
    monkeypatch.setattr(writeback, "_call", record if answer is not None else False)
    monkeypatch.setattr(writeback, "STEP", 100)
    path = tmp_path / "out"
    with open(path, "wb") as fh:
        back = writeback.Writeback(fh)
        for size in (60, 30, 20, 150, 10, 99):
            fh.write(b"x" * size)
            back.after_part()
    assert path.read_bytes() == b"x" * 369
    if answer == 0:
        assert calls == [(0, 110, 2), (110, 150, 2), (260, 109, 2)]  # 60+30 < 100, +20; 150; 10 < 100, +99
    elif answer == -1:
        assert [c[0] for c in calls] == [0] * len(calls) and [c[1] for c in calls] == [110, 260, 270, 369]
    else:
        assert calls == []


def test_the_system_call_itself_leaves_the_bytes_alone(tmp_path, monkeypatch):
    """The real lookup (Linux: libc's sync_file_range; elsewhere none), ranges started as the file grows."""
    monkeypatch.setattr(writeback, "_call", None)
    monkeypatch.setattr(writeback, "STEP", 4096)
    path = tmp_path / "out"
    data = bytes(range(256)) * 100
    with open(path, "wb") as fh:
        back = writeback.Writeback(fh)
        for at in range(0, len(data), 3000):
            fh.write(data[at:at + 3000])
            back.after_part()
    assert path.read_bytes() == data

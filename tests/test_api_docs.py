"""docs/api.md's examples run: its ```python blocks, in order, in one namespace, from the repository root."""
from __future__ import annotations

import re

from .conftest import REPO

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_api_page_examples_run(monkeypatch, capsys):
    blocks = BLOCK.findall((REPO / "docs" / "api.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    for n, code in enumerate(blocks, 1):
        exec(compile(code, f"docs/api.md block {n}", "exec"), namespace)
    assert "outcome=complete" in capsys.readouterr().out


def test_readme_python_lines_run(monkeypatch, capsys):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("\nIn Python", 1)[1].split("\n\n", 2)[1]
    code = "\n".join(line[4:] for line in block.splitlines())
    assert code.startswith("import trec_bridge as tb")
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})
    assert "complete" in capsys.readouterr().out

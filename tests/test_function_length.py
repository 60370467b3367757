"""No product function reaches 70 lines: a long function is where a seam is missing (issue 15)."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT = 70


def long_functions(root: Path = REPO, limit: int = LIMIT) -> list[str]:
    found = []
    for package in ("trec_bridge", "converters"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length >= limit:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_product_function_reaches_the_limit():
    assert not long_functions(), "split these functions: " + "; ".join(long_functions())


def test_the_scan_finds_a_long_function(tmp_path):
    (tmp_path / "trec_bridge").mkdir()
    (tmp_path / "converters").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "trec_bridge" / "m.py").write_text(f"def long():\n{body}\n")
    assert long_functions(tmp_path) == [f"trec_bridge/m.py:1 long ({LIMIT + 1} lines)"]

"""docs/divergences.md is generated (trec_bridge/divergence_doc.py) and must match a fresh generation.

The document runs the reference tools live, so the staleness check needs
trec_eval (CI installs it with `trec-bridge tools install-trec-eval`); it is
skipped, with the reason, only when the binary is absent.  Regenerate with
`trec-bridge docs divergences -o docs/divergences.md`.
"""
from __future__ import annotations

import os

import pytest

from trec_bridge import divergence_doc
from trec_bridge.axes import AXES, reason
from trec_bridge.cli.main import main
from trec_bridge.policy import POLICIES, STRICT
from trec_bridge.references import find_binary, get

from .conftest import REPO

DOC = REPO / "docs" / "divergences.md"
needs_tools = pytest.mark.skipif(
    find_binary() is None or not all(get(t).available() for t in ("pytrec_eval", "ir_measures")),
    reason="the document runs trec_eval, pytrec_eval and ir_measures live; trec_eval binary not found "
           "(`trec-bridge tools install-trec-eval`)")


@pytest.fixture(scope="module")
def generated() -> str:
    return divergence_doc.generate()


@needs_tools
def test_checked_in_document_is_up_to_date(generated):
    assert DOC.is_file(), "docs/divergences.md is missing: run `trec-bridge docs divergences -o docs/divergences.md`"
    assert DOC.read_text(encoding="utf-8") == generated, \
        "docs/divergences.md is stale: run `trec-bridge docs divergences -o docs/divergences.md`"


@needs_tools
def test_generation_is_deterministic_and_path_free(generated):
    assert divergence_doc.generate() == generated
    for fragment in (str(REPO), os.path.expanduser("~"), "/tmp", "trec-bridge-te-"):
        assert fragment not in generated
    assert "**NO**" not in generated  # every live row: our emulation reproduces the tool


@needs_tools
def test_every_axis_has_a_live_case(generated):
    assert sorted(c.axis for c in divergence_doc.CASES) == sorted(a.field for a in AXES)
    for axis in AXES:
        assert f"### `{axis.field}`:" in generated
    # each case shows its own axis at work (or the strict rejection that stands for it)
    for case in divergence_doc.CASES:
        section = generated.split(f"### `{case.axis}`:")[1].split("\n### ")[0]
        if not divergence_doc.differing_policies(case.axis):  # gain, ndcg_gain_floor: every tool is strict there
            assert f"Every named policy takes strict's value on `{case.axis}`" in section, case.axis
            assert "**NO**" not in section and f"| {case.axis} " not in section, case.axis
            continue
        # gm_per_query changes per-query values only (the geometric mean is the same): its part shows per query
        shown = (f"| {case.axis} ", f" {case.axis} ", f"({case.axis} ", "strict: rejected")
        assert any(s in section for s in shown), case.axis


def test_strict_ndcg_agrees_with_every_tool_by_default(generated):
    """A plain nDCG is the tools' (linear gain, threshold ignored); exponential gain only by name.  ranx alone
    lets its -lN limit nDCG's gains (its policy's ndcg_gain_floor), and the walk says so."""
    assert not divergence_doc.differing_policies("gain")
    assert divergence_doc.differing_policies("ndcg_gain_floor") == ["ranx"]
    for axis in ("gain", "ndcg_gain_floor"):
        section = generated.split(f"### `{axis}`:")[1].split("\n### ")[0]
        rows = [line for line in section.splitlines() if line.startswith("| ") and "`nDCG@" in line]
        others = [line for line in rows if not line.startswith("| ranx ")]
        assert others and all(" | yes | — |" in line for line in others), (axis, rows)
        ranx_rows = [line for line in rows if line.startswith("| ranx ")]
        if axis == "ndcg_gain_floor" and ranx_rows:
            assert all(" | yes | ndcg_gain_floor " in line for line in ranx_rows), ranx_rows


def test_every_policy_value_has_a_reason():
    for policy in POLICIES.values():
        for axis in AXES:
            value = getattr(policy, axis.field)
            if value != getattr(STRICT, axis.field):
                assert not reason(axis, value).startswith(axis.title + ":"), (policy.name, axis.field, value)


def test_check_flag_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(divergence_doc, "generate", lambda: "# generated\n")
    target = tmp_path / "divergences.md"
    assert main(["docs", "divergences", "--check", "-o", str(target)]) == 1  # missing
    assert "does not exist" in capsys.readouterr().err
    assert main(["docs", "divergences", "-o", str(target)]) == 0
    assert target.read_text() == "# generated\n"
    assert main(["docs", "divergences", "--check", "-o", str(target)]) == 0
    target.write_text("# edited by hand\n")
    assert main(["docs", "divergences", "--check", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert "-# edited by hand" in err and "+# generated" in err and "is stale" in err
    assert target.read_text() == "# edited by hand\n"  # --check writes nothing
    assert main(["docs", "divergences"]) == 0
    assert capsys.readouterr().out == "# generated\n"

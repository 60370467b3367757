"""Each mutant still finds the rule it breaks (fast tier: a refactor that moves a rule learns it at once).

The mutants themselves run in their own CI step (test_mutants.py); here only
their patterns are checked against the code as it is now.
"""
from __future__ import annotations

import shutil

import pytest

from tests.mutation.mutants import MUTANTS, REPO, Mutant, locate


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_finds_its_rule_exactly_once_and_changes_it(mutant):
    site = locate(mutant)
    original = (REPO / site.file).read_text()[site.start:site.end]
    assert site.new != original
    compile((REPO / site.file).read_text()[:site.start] + site.new + (REPO / site.file).read_text()[site.end:],
            site.file, "exec")  # the mutated module is still Python: a kill is a behaviour change, not a crash


def test_a_rule_that_moved_away_fails_loudly_with_the_mutant_named(tmp_path):
    shutil.copytree(REPO / "trec_bridge" / "measures", tmp_path / "trec_bridge" / "measures")
    gone = Mutant("a rule nobody wrote", r"no_relevant\s*!=\s*'never'", "True", "tests/x.py::y", where=("trec_bridge",))
    with pytest.raises(AssertionError, match="a rule nobody wrote.*matches 0 places.*update the pattern"):
        locate(gone, tmp_path)
    twice = Mutant("an ambiguous rule", r"relevant_rows\(", "x(", "tests/x.py::y", where=("trec_bridge",))
    with pytest.raises(AssertionError, match="an ambiguous rule.*not exactly one"):
        locate(twice, tmp_path)

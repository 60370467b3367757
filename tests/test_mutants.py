"""Every targeted mutant of the scoring rules is killed by its named test, on an assertion.

The unmutated copy must pass the same tests first, so a kill means the mutant
changed behaviour, not that the copy was broken.  Marked ``mutation`` (and
``slow``) in conftest: CI runs it as its own step (.ci/run).
"""
from __future__ import annotations

import pytest

from tests.mutation.mutants import MUTANTS, run_mutant


def test_unmutated_copy_passes_every_named_test():
    outcome, out = run_mutant(None, tuple(sorted({m.test for m in MUTANTS})))
    assert outcome == "passed", f"a named test fails without a mutant:\n{out[-3000:]}"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_killed(mutant):
    outcome, out = run_mutant(mutant)
    assert outcome == "assertion", f"mutant {mutant.name!r} was not killed by {mutant.test} ({outcome}):\n{out[-3000:]}"

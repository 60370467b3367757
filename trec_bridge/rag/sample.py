"""The sample-size rule: fewer eligible queries than the minimum is not a verdict.

Eligible queries are those with at least one relevant document (the ones every
mean is taken over, policy §2).  Below the minimum (200 by default, policy §8)
the report says the result is not statistically meaningful, and the gate
cannot pass whatever the tiers say.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SampleCheck:
    eligible: int
    min_queries: int

    @property
    def meaningful(self) -> bool:
        return self.eligible >= self.min_queries

    def message(self) -> str:
        if self.meaningful:
            return f"{self.eligible} eligible queries (minimum {self.min_queries}): sample size sufficient"
        return (f"only {self.eligible} eligible queries (minimum {self.min_queries}): the result is NOT "
                f"statistically meaningful, and the gate cannot pass")

    def to_json(self) -> dict:
        return {"eligible": self.eligible, "min_queries": self.min_queries,
                "statistically_meaningful": self.meaningful, "message": self.message()}


def check_sample(eligible: int, min_queries: int) -> SampleCheck:
    return SampleCheck(eligible, min_queries)

"""The RAG retrieval acceptance workflow (policy §8), built on the strict scorer.

One module per job: ``tiers`` (thresholds file and tier of a value),
``sample`` (the minimum-query rule), ``repeats`` (several runs of one system
averaged, with their spread), ``breakdown`` (means per query tag), ``triage``
(queries to look at first, with their first relevant rank), ``stages``
(recall lost between pipeline stages), ``compare`` (paired statistics between
two reports), ``plots`` (PNG charts) and ``html`` (one self-contained page).
``acceptance`` ties them together for ``trec-bridge score --gate``, and
``cli_support`` maps the score command's options onto it.
"""

"""``score`` on small plain TREC files, answered without polars: a W2-sized run (43 queries x 1,000 documents) in
less time than pytrec_eval's process (bench/README.md, "Small inputs").

``main`` asks this first.  It answers only ``score QRELS RUN MEASURES``
with at most ``--policy P``, both files plain TREC text
(converters/trec_plain.py) of at most ``PLAIN_LIMIT`` bytes together, and
measures of the families ``plain_scorer`` covers.  Anything else, and any
doubt on the way (an error, an input the plain readers do not take, any
exception), hands the command back before anything is printed: the full
command then runs from the start, so its messages, notes and exit codes are
the only ones a user sees.  What this prints is what the full command prints
(``tests/test_small_inputs.py`` runs both on generated inputs and on the
malformed-input catalogue).  The arguments are recognised here rather than
by the command's argparse parser, whose set-up (every option's module) is a
tenth of this path's time: only the spellings argparse reads the same way
are taken (``--policy P`` or ``--policy=P`` once, three positional values
that do not start with ``-``).
"""
from __future__ import annotations

import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout

# Both files together, in bytes.  Below this the pure-Python read beats importing polars and its reader (measured:
# bench/README.md, "Small inputs"); the plain path's memory is a few times this.
PLAIN_LIMIT = 8 << 20
DEFAULT_POLICY = "strict"  # score's --policy default (cli/score.py; tests/test_small_inputs.py checks they agree)


def attempt(argv: list[str]) -> int | None:
    """The exit code of ``trec-bridge`` with these arguments when answered here, after printing its output; None
    when the full command must answer (nothing printed, nothing written)."""
    given = recognised(argv)
    if given is None:
        return None
    from .. import memory_guard

    checks = memory_guard._state["checks"]  # the full command must see its files as the process's first
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = _score(*given)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - any doubt: the full command answers, with its own messages
        code = None
    if code is None:
        memory_guard._state["checks"] = checks
        return None
    sys.stdout.write(out.getvalue())
    sys.stderr.write(err.getvalue())
    return code


def recognised(argv: list[str]) -> tuple[str, str, str, str] | None:
    """(dataset, run, measures, policy) of ``score DATASET RUN MEASURES [--policy P]``, or None for anything else."""
    if not argv or argv[0] != "score":
        return None
    positional, policy = [], None
    tokens = iter(argv[1:])
    for token in tokens:
        if token == "--policy" or token.startswith("--policy="):
            value = token.partition("=")[2] if "=" in token else next(tokens, None)
            if policy is not None or value is None or value.startswith("-"):
                return None
            policy = value
        elif token.startswith("-"):
            return None
        else:
            positional.append(token)
    if len(positional) != 3:
        return None
    return positional[0], positional[1], positional[2], DEFAULT_POLICY if policy is None else policy


def _score(dataset_path: str, run_path: str, measures_text: str, policy_name: str) -> int | None:
    """``cli.score.run`` when only --policy is given (so no report, RAG or system option is): the same steps, the
    plain readers and ``plain_scorer`` in the place of the readers and the scorer; None where those do not cover
    the inputs."""
    from converters.trec_plain import plain_dataset, read_plain_qrels, read_plain_run

    from ..errors import EXIT_INCOMPLETE, EXIT_OK
    from ..evaluation import label
    from ..measures import parse_measures
    from ..plain_scorer import score_plain
    from ..policy import POLICIES, get_policy
    from ..report import render_table
    from . import say_notes

    measures = parse_measures(measures_text)
    if policy_name not in POLICIES:  # registering never replaces a policy (registry.register): only a tool's own
        from .. import references  # noqa: F401  (a reference tool's module registers its policy: --policy ranx)
    policy = get_policy(policy_name)
    # without --order, score reads a TREC run in the policy's order (inputs.run_order): by the rank column: declined
    if policy.run_order != "score" or os.path.getsize(dataset_path) + os.path.getsize(run_path) > PLAIN_LIMIT:
        return None
    qrels = read_plain_qrels(dataset_path, PLAIN_LIMIT)
    run = None if qrels is None else read_plain_run(run_path, PLAIN_LIMIT)
    if run is None:
        return None
    dataset = plain_dataset(qrels)
    result = score_plain(dataset, run, measures, policy)
    if result is None:
        return None
    # cli.score._report without a report to write: the table, then the measures' notes
    label(result, dataset, measures.notes)
    sys.stdout.write(render_table(result, None, None))
    say_notes(measures.notes)
    return EXIT_OK if result.complete else EXIT_INCOMPLETE

"""The documentation names only what exists: error codes, commands and options.

Docs drift when code moves on (``E_FILE_NOT_FOUND`` quoted where the tool
says ``E_IRDS_FILE_MISSING``).  These checks read README.md and docs/*.md:
every ``E_…`` code is registered in ``ERROR_CODES``; every ``trec-bridge``
command written as code (an indented or fenced block, a ``$`` transcript,
an inline code span) names a real command, and each of its ``--options``
exists for that command.  What a command prints is checked where it can be
run (tests/test_irds.py replays the DL 2019 workflow page).
"""
from __future__ import annotations

import argparse
import functools
import re
import shlex

import pytest

from trec_bridge.cli.main import build_parser
from trec_bridge.errors import ERROR_CODES

from .conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_COMMAND = re.compile(r"^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*trec-bridge(?:\s+(.*))?$")
_SPAN = re.compile(r"`((?:[A-Z_][A-Z0-9_]*=\S*\s+)*trec-bridge\s[^`]*)`")


def _code_lines(text: str) -> list[tuple[int, str, bool]]:
    """(line number, text, whole line is code) for indented and fenced lines, plus inline code spans."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            out.append((n, line.strip(), True))
        out.extend((n, span, False) for span in _SPAN.findall(line))
    return out


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _words(rest: str) -> list[str]:
    try:
        words = shlex.split(rest, comments=True)
    except ValueError:  # a line continued with a backslash, an unclosed quote in prose
        words = rest.split()
    for i, w in enumerate(words):
        if w in {">", ">>", "|", "&&", "||", ";", "<"} or w.startswith("2>"):
            return words[:i]
    return words


def doc_commands() -> list[tuple[str, int, list[str], bool]]:
    found = []
    for doc in DOCS:
        for n, line, whole in _code_lines(doc.read_text(encoding="utf-8")):
            m = _COMMAND.match(line)
            if m and m.group(1):
                found.append((f"{doc.relative_to(REPO)}:{n}", n, _words(m.group(1)), whole))
    return found


def test_every_error_code_the_docs_quote_is_registered():
    unknown = [(doc.name, code) for doc in DOCS
               for code in sorted(set(re.findall(r"\bE_[A-Z0-9_]+\b", doc.read_text(encoding="utf-8"))))
               if code not in ERROR_CODES]
    assert unknown == []


def test_the_docs_show_trec_bridge_commands():
    commands = doc_commands()
    assert len(commands) > 50
    assert any(words[:2] == ["import", "irds"] for _, _, words, _ in commands)


@pytest.mark.parametrize("where, n, words, whole", doc_commands(), ids=[c[0] for c in doc_commands()])
def test_every_documented_command_and_option_exists(where, n, words, whole):
    commands = _subcommands(_parser())
    if not words or words[0] not in commands:
        assert not whole, f"{where}: 'trec-bridge {' '.join(words)}' names no command (commands: {', '.join(commands)})"
        return  # prose in a code span, e.g. `trec-bridge` alone
    sub, rest = commands[words[0]], words[1:]
    nested = _subcommands(sub)
    if nested and rest and not rest[0].startswith("-"):
        assert rest[0] in nested, f"{where}: 'trec-bridge {words[0]} {rest[0]}' is not a command"
        sub, rest = nested[rest[0]], rest[1:]
    known = set(sub._option_string_actions)
    options = [w.strip("[]").split("=", 1)[0] for w in rest if w.strip("[]").startswith("--")]
    missing = [o for o in options if o not in known]
    assert not missing, f"{where}: 'trec-bridge {' '.join(words)}' uses options that do not exist: {missing}"


# --------------------------------------------------------------------------- README: JSON -> TREC -> JSON


def readme_convert_commands() -> list[tuple[list[str], str]]:
    """The Quick tour's ``convert run`` lines: (arguments, the comment that says what comes back)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        command, _, comment = line.strip().partition("   # ")
        if command.startswith("trec-bridge convert run "):
            out.append((shlex.split(command)[1:], comment.strip()))
    return out


def _json_runs():
    from hypothesis import strategies as st

    ids = st.sampled_from(["q1", "q2", "007", "7", "é", "Q0", "a#b", "1e5"])
    docs = st.sampled_from(["d1", "d2", "d3", "doc-4", "#", "\U0001F600", "0"])
    score = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1.0, 1.00000001, 0.5, -0.0]))
    entry = st.one_of(st.builds(lambda d: {"doc_id": d}, docs), st.builds(lambda d, s: {"doc_id": d, "score": s}, docs, score))
    ranking = st.lists(entry, max_size=5, unique_by=lambda e: e["doc_id"])
    return st.builds(
        lambda rankings, failed, system, run_id: {
            "format": "trec-bridge.run", "version": 1, "dataset_id": "ds", "run_id": run_id, "system": system,
            "rankings": rankings,
            **({"failures": {q: {"reason": "timeout"} for q in failed if q not in rankings}} if failed else {})},
        st.dictionaries(ids, ranking, min_size=1, max_size=4), st.lists(ids, max_size=2, unique=True),
        st.dictionaries(st.sampled_from(["k1", "b", "model"]), st.one_of(st.integers(-2**63, 2**63 - 1), st.text(max_size=3))),
        st.sampled_from(["bm25", "run-1"]))


def test_readme_convert_claim_holds(tmp_path, monkeypatch):
    """``convert run run.json run.trec`` then ``convert run run.trec back.json``, as the README writes them:
    back.json is the same run, equal once parsed for any run.json, and byte for byte when trec-bridge wrote run.json."""
    import json

    from hypothesis import HealthCheck, given, settings

    from converters.json_run import dump_run, load_run
    from trec_bridge.cli.main import main

    (to_trec, to_trec_comment), (to_json, back_comment) = readme_convert_commands()
    assert to_trec[:3] == ["convert", "run", "run.json"] and to_json[:4] == ["convert", "run", "run.trec", "back.json"]
    assert "once parsed" in back_comment and "byte for byte" in back_comment and "written by trec-bridge" in back_comment
    monkeypatch.chdir(tmp_path)

    def round_trip(doc_bytes: bytes) -> bytes:
        for name in ("run.trec", "run.trec.manifest.json", "back.json"):
            (tmp_path / name).unlink(missing_ok=True)
        (tmp_path / "run.json").write_bytes(doc_bytes)
        assert main(to_trec) == 0 and main(to_json) == 0
        return (tmp_path / "back.json").read_bytes()

    hand_written = (REPO / "trec_bridge" / "examples" / "run.json").read_bytes()  # its own layout
    back = round_trip(hand_written)
    assert back != hand_written and json.loads(back) == json.loads(hand_written)
    assert round_trip(back) == back  # written by trec-bridge: byte for byte

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_json_runs())
    def any_run(doc):
        written = tmp_path / "written.json"
        dump_run(load_run(_write(tmp_path / "doc.json", doc)), written)
        assert round_trip(written.read_bytes()) == written.read_bytes()

    any_run()


def _write(path, doc) -> str:
    import json

    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)

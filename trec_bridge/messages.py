"""Text from the user's inputs, made safe to put in a message.

A file name, an ID or a measure string is the user's text: it may hold a
newline (a forged second message line), an ANSI escape (recolouring or
clearing the terminal), a carriage return (overwriting what was printed) or
120 KB of one value.  Every message on stderr passes through ``printable``
(errors in ``errors.TrecBridgeError.render``, notes through ``note``,
progress lines), and a value quoted in a message through ``quote``, so no
message is interpreted by the terminal and none is longer than a screenful.
"""
from __future__ import annotations

import re
import sys
from functools import cache
from typing import Any

# C0 controls and DEL, C1 controls, and the invisible characters that make two
# different texts look alike or reorder what is shown: zero-width space/joiners,
# word joiner, bidirectional embeddings/overrides/isolates, line/paragraph
# separators, the zero-width no-break space (BOM).
_UNPRINTABLE = "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]"


@cache
def _unprintable() -> re.Pattern:
    """``_UNPRINTABLE`` compiled when first needed (a few ms: its ranges reach past Latin-1), not at import."""
    return re.compile(_UNPRINTABLE)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

QUOTE_LIMIT = 80  # characters of a quoted value kept in a message
MESSAGE_LIMIT = 2000  # a whole message, as a last guard when a value was not quoted


def _escape(match: re.Match) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control and invisible character written as an escape (``\\n``, ``\\x1b``, ``\\u202e``)."""
    if text.isascii() and text.isprintable():  # no C0 control nor DEL, and nothing past ASCII: nothing to escape
        return text
    return _unprintable().sub(_escape, text)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A value for a message: a string quoted as ``'...'``, anything else as its ``repr``; escaped, and
    shortened past ``limit`` characters with its full length said."""
    if not isinstance(value, str):
        try:
            return shorten(printable(repr(value)), limit)
        except ValueError:  # an int beyond Python's 4,300-digit str() limit
            return "an integer of more than 4,300 digits"
    short = shorten(value, limit)
    tail = ""
    if short is not value:
        short, tail = value[:limit], short[limit:]
    return repr(printable(short)).replace("\\\\", "\\") + tail


def message_text(text: str) -> str:
    """A whole message: escaped and bounded in length."""
    return shorten(printable(text), MESSAGE_LIMIT)


def note(message: str) -> None:
    """A ``trec-bridge: ...`` line on stderr (what a command did, what it could not keep)."""
    sys.stderr.write(f"trec-bridge: {message_text(message)}\n")

"""Command-line interface: one module per command, registered in main.COMMANDS."""
from __future__ import annotations

import sys


def say_notes(notes: list[str]) -> None:
    """What the tool did with the user's input that they should hear of (a dropped repeat), on stderr."""
    for note in notes:
        sys.stderr.write(f"trec-bridge: note: {note}\n")

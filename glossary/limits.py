"""How much of one source line the parsers analyse, and the lint note for lines longer than that.

Rule text is always quoted in full. But searching a line for change stamps, cross-references and
aliases is pattern matching on text someone else wrote; every pattern is linear, and this cap bounds
the work on a single absurd line besides (a real paragraph is under 1,000 characters; the longest
shipped line is 599), so a hostile or corrupted file costs time in proportion to its size.
"""

from __future__ import annotations

from glossary.model import Anomaly

MAX_LINE_CHARS = 10_000


def analysed(text: str) -> str:
    """The part of a line that is searched for stamps, references and aliases."""
    return text[:MAX_LINE_CHARS]


def long_lines(text: str, file: str) -> list[Anomaly]:
    """One ``long-line`` anomaly per line over the cap (lint shows them; the text still loads)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            found.append(
                Anomaly(
                    file,
                    number,
                    "long-line",
                    f"line of {len(line):,} characters: quoted in full, but only its first {MAX_LINE_CHARS:,} "
                    "are read for change stamps, references and aliases",
                )
            )
    return found

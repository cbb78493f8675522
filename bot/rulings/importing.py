"""The bounds of ``/ruling import``: how big a file and how many rulings, checked as early as each can be.

A file is refused by its size before it is downloaded (Discord says the size with the attachment), and by
its count of ``##`` headings before the Markdown parser runs over it (a cheap scan of the lines), so a
file far over the bounds never costs more than that scan. The exact count of rulings is checked again on
the parsed document. Both bounds are settings (``RULINGS_IMPORT_MAX_BYTES``, ``RULINGS_IMPORT_MAX_RULINGS``)
and are stated in the command's description and in every refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A level-2 ATX heading at the start of a line ("## Title", "##Title"): what starts a ruling.
_H2 = re.compile(rb"^##(?!#)", re.MULTILINE)


def size_text(size: int) -> str:
    """Bytes as a judge reads them: ``512 KB``, ``1.5 MB``, ``900 bytes``."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f}".removesuffix(".0") + " MB"
    if size >= 1024:
        return f"{size / 1024:.1f}".removesuffix(".0") + " KB"
    return f"{size:,} bytes"


@dataclass(frozen=True)
class ImportLimits:
    """The largest file (bytes) and the most rulings one import takes."""

    max_bytes: int = 512 * 1024
    max_rulings: int = 5_000

    def describe(self) -> str:
        """``at most 512 KB and 5,000 rulings``: the bound as the command's help and its refusals say it."""
        return f"at most {size_text(self.max_bytes)} and {self.max_rulings:,} rulings"

    def size_problem(self, size: int) -> str | None:
        """Why a file of ``size`` bytes is refused, or None."""
        if size <= self.max_bytes:
            return None
        return (
            f"the file is {size_text(size)} ({size:,} bytes); an import takes {self.describe()} "
            "at once. Split it into smaller files."
        )

    def count_problem(self, count: int) -> str | None:
        """Why a file of ``count`` rulings is refused, or None."""
        if count <= self.max_rulings:
            return None
        return (
            f"the file holds {count:,} rulings; an import takes {self.describe()} at once. Split it into smaller files."
        )


def heading_count(data: bytes) -> int:
    """How many lines start a ruling (``## ``), counted without parsing. The parser finds as many, give or
    take headings underlined with ``---`` (not counted here) and ``##`` lines inside raw HTML blocks."""
    return sum(1 for _ in _H2.finditer(data))

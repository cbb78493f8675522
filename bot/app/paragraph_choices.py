"""The paragraphs a member may pick as the real answer to an ``/ask`` question ("Not the answer?").

What the answer quoted comes first (each result's paragraph, in result order), then the other paragraphs of
those results' entries, each entry's in document order: a wrong quote is most often the right entry at the
wrong paragraph ("max hand size" quoting the paragraph after the one that says it). Only the rule documents'
entries are offered: a server's own ruling is already its judges' word. Discord-free; the cog turns these into
a select menu (at most 25 options, one of them "None of these answers it").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.app.answer import Answer, Block, Group, Quote
from glossary.model import Entry
from index.build.asked import digest
from index.query.overlay import is_scoped

LIMIT = 24  # a select menu holds 25 options; one is "None of these answers it"


@dataclass(frozen=True)
class Choice:
    """Paragraph ``paragraph`` (0-based) of ``entry``; ``result`` is the number of the result that quoted it."""

    entry: Entry
    paragraph: int
    result: int | None = None

    @property
    def text(self) -> str:
        return self.entry.paragraphs[self.paragraph]

    @property
    def pick(self) -> tuple[str, int, str]:
        """(entry id, paragraph, digest of its text): what a report and a confirmation store."""
        return self.entry.id, self.paragraph, digest(self.text)


def _quotes(blocks: list[Block]) -> Iterator[Quote]:
    """The result quotes of an item (not the related texts quoted under them)."""
    for block in blocks:
        if isinstance(block, Quote) and block.role == "hit":
            yield block
        elif isinstance(block, Group):
            yield from _quotes(block.blocks)


def choices(answer: Answer, limit: int = LIMIT) -> list[Choice]:
    """The quoted paragraphs of ``answer``'s results, then their entries' other paragraphs (``limit`` at most)."""
    quoted: list[Choice] = []
    for number, item in enumerate(answer.items, start=1):
        for quote in _quotes(item.blocks):
            entry = quote.entry
            if not is_scoped(entry.id) and quote.paragraph is not None and 0 <= quote.paragraph < len(entry.paragraphs):
                quoted.append(Choice(entry, quote.paragraph, number))
    seen = {(c.entry.id, c.paragraph) for c in quoted}
    entries = {c.entry.id: c.entry for c in quoted}.values()  # in the order the results quote them
    rest = [Choice(e, p) for e in entries for p in range(len(e.paragraphs)) if (e.id, p) not in seen]
    return (quoted + rest)[:limit]


def find(answer: Answer, entry_id: str, paragraph: int, lookup: Callable[[str], Entry | None]) -> Choice | None:
    """The choice ``entry_id``/``paragraph`` names, if it is a paragraph of the rules loaded now."""
    entry = lookup(entry_id)
    if entry is None or is_scoped(entry.id) or not 0 <= paragraph < len(entry.paragraphs):
        return None
    result = next((c.result for c in choices(answer) if c.entry.id == entry_id and c.paragraph == paragraph), None)
    return Choice(entry, paragraph, result)

"""House rulings: a community's own judge calls, kept as Markdown files, parsed into ``ruling`` entries.

Format (one file may hold many rulings)::

    # Kotei 2026 head-judge rulings        <- optional H1: the document title

    ## Terrain played during a duel        <- each H2 is one ruling (its title)
    Date: 2026-11-01                       <- optional metadata lines, first block under the heading
    Judge: Jane Doe
    Event: Kotei 2026                      <- optional: the event it was made for
    Applies to: Terrain, Ranged Attack     <- entry names (or ids such as glossary:terrain)

    Body paragraphs, lists... kept exactly as written.

The Markdown is parsed with Python-Markdown's own block parser (its element tree), not with regular
expressions. A thin parser subclass records which span of the source each top-level element came from,
so every body block can be quoted verbatim and cited by line.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path

import markdown
from markdown.blockparser import BlockParser

from glossary.linking import unique_id
from glossary.model import (
    Anomaly,
    Change,
    ChangeKind,
    CrossRef,
    Entry,
    Location,
    ParsedDocument,
    SourceError,
    make_id,
)

KEY = "house"  # Entry.source of this kind (see glossary.kinds)
LABEL = "House rulings"
DEFAULT_DOCUMENT = LABEL
SUFFIXES = {".md", ".markdown"}  # house rulings are Markdown; every other source is a plain-text export
EXAMPLES_DIR = Path(__file__).resolve().parent / "house_examples"

# Metadata keys (case-insensitive) -> what they mean.
_DATE_KEYS: dict[str, ChangeKind] = {
    "date": "added",
    "added": "added",
    "updated": "updated",
    "changed": "changed",
    "clarified": "clarified",
}
_JUDGE_KEYS = {"judge", "judges", "ruled by"}
_APPLIES_KEYS = {"applies to", "see also"}
_EVENT_KEYS = {"event"}
# Every key the parser accepts, as the unknown-metadata message lists them.
_KNOWN_KEYS = ", ".join(
    key[0].upper() + key[1:]
    for key in [*_DATE_KEYS, *sorted(_JUDGE_KEYS), *sorted(_EVENT_KEYS), *sorted(_APPLIES_KEYS)]
)
# "glossary:terrain": an entry id, for names two entries share (the linker keeps it when it exists).
_ENTRY_ID = re.compile(r"^(?:glossary|obsidian-hand|house):[a-z0-9][a-z0-9-]*$")
_MAX_KEY_WORDS = 3  # "Applies to", "Ruled by": anything longer is prose, not a metadata line


@dataclass
class _Block:
    """One top-level Markdown element and the (trimmed) source span it was parsed from."""

    element: etree.Element
    start: int
    end: int


class _SpanParser(BlockParser):
    """Python-Markdown's block parser, additionally recording each top-level element's source span.

    Block processors only ever consume text from the front of the remaining blocks (re-inserting a
    suffix when they split a block), so the length of what remains tells where in the document the
    parser is. Elements a processor creates without a nested parse get the part of the consumed text
    that nested parses did not claim (e.g. the heading line of a block split around a heading).
    """

    def __init__(self, md: markdown.Markdown, doc: str) -> None:
        super().__init__(md)
        self.doc = doc
        self.spans: dict[etree.Element, tuple[int, int]] = {}
        self._cursor = 0  # where the enclosing root-level block starts (base for nested parses)
        self._progress = 0  # furthest root-level block start seen so far
        self._depth = 0  # nesting of root-level parses
        self._claimed = 0  # end of the text claimed by nested parses of the current step

    def parseBlocks(self, parent: etree.Element, blocks: list[str]) -> None:  # noqa: N802 (library API)
        if parent is not getattr(self, "root", None):
            super().parseBlocks(parent, blocks)
            return
        blocks = _Blocks(blocks)  # type: ignore[assignment]  (the processors only use blocks[0], pop(0), insert(0))
        joined_len = blocks.joined_len()  # type: ignore[attr-defined]
        # The whole document at the top; a nested parse (text before a heading, a rule or a quote inside
        # the block being processed) starts where that enclosing block starts.
        base = self._cursor if self._depth else 0
        outer_claim = self._claimed
        self._depth += 1
        try:
            self._parse_root_blocks(parent, blocks, base, joined_len)
        finally:
            self._depth -= 1
        self._claimed = max(outer_claim, base + joined_len)  # tell the enclosing step what this parse used

    def _parse_root_blocks(self, parent: etree.Element, blocks: _Blocks, base: int, joined_len: int) -> None:
        while blocks:
            start = self._locate(base + joined_len - blocks.joined_len(), blocks[0])
            self._progress = start
            count = len(parent)
            outer_cursor, self._cursor = self._cursor, start
            self._claimed = start
            for processor in self.blockprocessors:
                if processor.test(parent, blocks[0]) and processor.run(parent, blocks) is not False:
                    break
            self._cursor = outer_cursor
            claimed = self._claimed  # end of the text nested parses consumed during this step
            end = base + joined_len
            if blocks:
                end = self._locate(end - blocks.joined_len(), blocks[0])
            end = max(end, start)
            created = parent[count:]  # only the new children (copying them all each step was quadratic)
            if not created:
                if len(parent):  # e.g. a loose list item or lazy continuation joined the previous element
                    first, last = self.spans.get(parent[-1], (start, end))
                    self.spans[parent[-1]] = (first, max(last, end))
                continue
            for el in created:
                if el not in self.spans:
                    self.spans[el] = (max(start, claimed), end)

    def _locate(self, guess: int, block: str) -> int:
        """Where ``block`` starts in the document: the length-based guess, else the next occurrence."""
        if self.doc.startswith(block, guess):
            return guess
        found = self.doc.find(block, self._progress) if block else -1
        return found if found >= 0 else guess


class _Blocks:
    """The blocks still to parse, front first, as Python-Markdown's block processors use them (``blocks[0]``,
    ``blocks.pop(0)``, ``blocks.insert(0, rest)``), kept in reverse so each of those is O(1), with the
    length of ``"\n\n".join(blocks)`` kept up to date: recounting it (or popping the front of a list) at
    every block made a file of a few thousand rulings take seconds.
    """

    def __init__(self, blocks: list[str]) -> None:
        self._reversed = blocks[::-1]
        self._chars = sum(len(b) for b in blocks)

    def __len__(self) -> int:
        return len(self._reversed)

    def __getitem__(self, index: int) -> str:
        return self._reversed[len(self._reversed) - 1 - index if index >= 0 else -1 - index]

    def pop(self, index: int = 0) -> str:
        block = self._reversed.pop(len(self._reversed) - 1 - index)
        self._chars -= len(block)
        return block

    def insert(self, index: int, block: str) -> None:
        self._reversed.insert(len(self._reversed) - index, block)
        self._chars += len(block)

    def joined_len(self) -> int:
        """``len("\n\n".join(blocks))``."""
        return self._chars + 2 * max(len(self._reversed) - 1, 0)


def _parse_blocks(doc: str) -> list[_Block]:
    """Top-level elements of ``doc`` in order, each with its trimmed source span."""
    md = markdown.Markdown()
    parser = _SpanParser(md, doc)
    parser.blockprocessors = md.parser.blockprocessors
    for processor in parser.blockprocessors:
        processor.parser = parser
    md.parser = parser
    root = parser.parseDocument(doc.split("\n")).getroot()
    blocks = []
    for element in root:
        start, end = parser.spans.get(element, (0, 0))
        while start < end and doc[start] == "\n":  # keep indentation: it is part of the text
            start += 1
        while end > start and doc[end - 1].isspace():
            end -= 1
        blocks.append(_Block(element, start, end))
    return blocks


def _heading_text(element: etree.Element) -> str:
    """A heading as written (inline Markdown is not rendered: the title is quoted, not reformatted)."""
    return "".join(element.itertext()).strip()


def _metadata_lines(source: str) -> list[tuple[str, str]]:
    """The leading ``Key: value`` lines of a paragraph, if one of their keys is a known metadata key."""
    pairs = []
    for line in source.split("\n"):
        key, sep, value = line.partition(":")
        key = " ".join(key.strip("*_ ").split()).lower()  # "**Judge:** Ann" is a common way to write it
        if not sep or not key or len(key.split()) > _MAX_KEY_WORDS:
            break
        pairs.append((key, value.strip().strip("*_").strip()))
    known = _DATE_KEYS.keys() | _JUDGE_KEYS | _APPLIES_KEYS | _EVENT_KEYS
    return pairs if any(key in known for key, _ in pairs) else []


def _iso_date(value: str) -> str | None:
    """``YYYY-MM-DD`` if ``value`` is exactly a real calendar date in that form, else None."""
    try:
        parsed = dt.datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        return None
    return value if parsed.isoformat() == value else None


@dataclass
class _Metadata:
    changes: list[Change]
    see_also: list[CrossRef]
    judge: str | None
    event: str | None = None


def _read_metadata(
    pairs: list[tuple[str, str]], raw_lines: list[str], first_line: int, title: str, file: str
) -> tuple[_Metadata, list[Anomaly]]:
    """Turn ``Key: value`` lines into changes, a judge and cross-references; odd lines become anomalies."""
    meta = _Metadata(changes=[], see_also=[], judge=None)
    anomalies: list[Anomaly] = []
    for offset, ((key, value), raw) in enumerate(zip(pairs, raw_lines, strict=True)):
        line, raw = first_line + offset, raw.strip()
        if key in _DATE_KEYS:
            iso = _iso_date(value)
            if iso is None:
                message = f"ruling '{title}': {raw!r} is not a date in YYYY-MM-DD form; date ignored"
                anomalies.append(Anomaly(file, line, "bad-date", message))
            else:
                meta.changes.append(Change(kind=_DATE_KEYS[key], date=iso, raw=raw, line=line))
        elif key in _JUDGE_KEYS:
            meta.judge = value or None
        elif key in _EVENT_KEYS:
            meta.event = value or None
        elif key in _APPLIES_KEYS:
            separator = ";" if ";" in value else ","  # "Applies to: Battles, Combat Segment; Terrain"
            names = [name.strip() for name in value.split(separator)]
            meta.see_also.extend(
                CrossRef(text=name, target=name if _ENTRY_ID.match(name) else None, line=line) for name in names if name
            )
        else:
            message = f"ruling '{title}': unknown metadata {raw!r} (known: {_KNOWN_KEYS})"
            anomalies.append(Anomaly(file, line, "unknown-metadata", message))
    return meta, anomalies


def _normalise(text: str) -> str:
    """Unify line ends and blank out whitespace-only lines (they separate blocks); keeps line numbers."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join("" if not line.strip() else line for line in lines)


def parse_house_rulings(text: str, file: str) -> ParsedDocument:
    """Parse one Markdown file of house rulings; raises SourceError only if it holds no ruling at all."""
    doc = _normalise(text)
    newlines = [i for i, ch in enumerate(doc) if ch == "\n"]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1  # newlines before ``offset``, found in O(log n)

    blocks = _parse_blocks(doc)
    document: str | None = None
    rulings: list[tuple[_Block, list[_Block]]] = []
    current: list[_Block] | None = None
    for block in blocks:
        tag = block.element.tag
        if tag == "h1":
            if document is None and not rulings:
                document = _heading_text(block.element) or None
            current = None  # a later H1 closes the ruling above it
        elif tag == "h2":
            current = []
            rulings.append((block, current))
        elif current is not None:
            current.append(block)
    if not rulings:
        first = next((b.start for b in blocks), 0)
        message = "no ruling found: each ruling must start with a '## Title' heading"
        raise SourceError(file, message, line_of(first))

    document = document or DEFAULT_DOCUMENT
    anomalies: list[Anomaly] = []
    entries: list[Entry] = []
    taken = {make_id(KEY, _heading_text(heading.element)) for heading, _ in rulings}
    used: set[str] = set()
    counters: dict[str, int] = {}
    for heading, body in rulings:
        heading_line = line_of(heading.start)
        title = _heading_text(heading.element)
        if not title:
            message = "'##' heading has no title; skipped"
            anomalies.append(Anomaly(file, heading_line, "empty-heading", message))
            continue
        meta = _Metadata(changes=[], see_also=[], judge=None)
        if body and body[0].element.tag == "p":
            source = doc[body[0].start : body[0].end]
            pairs = _metadata_lines(source)
            if pairs:
                raw_lines = source.split("\n")[: len(pairs)]
                meta, found = _read_metadata(pairs, raw_lines, line_of(body[0].start), title, file)
                anomalies.extend(found)
                rest = body[0].start + sum(len(line) + 1 for line in raw_lines)  # body text in the same block
                body = ([_Block(body[0].element, rest, body[0].end)] if rest < body[0].end else []) + body[1:]
        body = [b for b in body if b.end > b.start]  # an element with no text has no line to cite
        paragraphs = [doc[b.start : b.end] for b in body]
        if not paragraphs:
            message = f"ruling '{title}' has no text; skipped"
            anomalies.append(Anomaly(file, heading_line, "empty-ruling", message))
            continue
        entry_id = make_id(KEY, title)
        if entry_id in used:
            entry_id = unique_id(entry_id, taken, counters)
            taken.add(entry_id)
            message = f"ruling '{title}' appears more than once in this file; this one is {entry_id}"
            anomalies.append(Anomaly(file, heading_line, "duplicate-ruling", message))
        used.add(entry_id)
        entries.append(Entry(
            id=entry_id,
            source=KEY,
            document=document,
            kind="ruling",
            title=title,
            section=[document],
            paragraphs=paragraphs,
            location=Location(file, heading_line, line_of(body[-1].end)),
            lines=[(line_of(b.start), line_of(b.end)) for b in body],
            changes=meta.changes,
            see_also=meta.see_also,
            judge=meta.judge,
            event=meta.event,
        ))
    return ParsedDocument(file=file, source=KEY, document=document, entries=entries, anomalies=anomalies)

"""The entry model: the one contract shared by the parsers, the index and the bot.

Every later layer reads these objects and nothing else from the source files, so the
model is deliberately small, explicit and serialisable to plain JSON (``to_dict``).
Text is always the verbatim source text; nothing here rewrites it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SourceKind = Literal["glossary", "obsidian-hand", "house"]
EntryKind = Literal[
    "term",  # a glossary definition
    "section",  # a numbered/headed section or sub-heading of a ruleset
    "cardinal-rule",
    "guideline",  # Obsidian Hand "Initial Guidelines" topic
    "ability",  # a player ability (with its timing group)
    "banned",  # one line of a banned list
    "update",  # one dated record of an update log
    "ruling",  # a house ruling (Markdown)
]
ChangeKind = Literal["added", "changed", "clarified", "updated", "removed"]

SOURCE_LABELS: dict[str, str] = {
    "glossary": "L5R Comprehensive Rules",
    "obsidian-hand": "The Obsidian Hand Ruleset",
    "house": "House rulings",
}


@dataclass(frozen=True)
class Location:
    """Where an entry sits in its source file (1-based, inclusive), for citations and lint."""

    file: str
    first_line: int
    last_line: int


@dataclass
class Change:
    """One dated change stamp or update-log record that applies to an entry.

    ``paragraph`` is the 0-based index into ``Entry.paragraphs`` that the stamp dates,
    or ``None`` when it dates the whole entry (a stamp standing alone at the start or
    end). ``date`` is ISO ``YYYY-MM-DD`` exactly as written (even if impossible: then
    ``anomaly`` says why and ``probable_date`` gives the evident intended date, if any).
    ``date`` is ``None`` only when no date could be read at all.
    """

    kind: ChangeKind
    date: str | None
    raw: str
    note: str | None = None
    paragraph: int | None = None
    line: int | None = None
    anomaly: str | None = None
    probable_date: str | None = None
    update_id: str | None = None  # the update-log entry this change came from, if any


@dataclass
class CrossRef:
    """A cross-reference found in the text ("See Glossary, Look"); ``target`` is an entry id or None."""

    text: str
    target: str | None = None
    line: int | None = None  # source line where the reference is written, when known (for lint)


@dataclass
class Entry:
    """One citable unit of rules text: a glossary term, a ruleset section, an ability, a banned card..."""

    id: str
    source: SourceKind
    document: str
    kind: EntryKind
    title: str
    section: list[str]
    paragraphs: list[str]
    location: Location
    aliases: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    see_also: list[CrossRef] = field(default_factory=list)
    url: str | None = None
    # Kind-specific facts, kept explicit rather than in a free-form dict:
    group: str | None = None  # ability timing group ("Limited", "Engage") or banned category ("Strongholds")
    old_wording: str | None = None  # update records: the "Old" wording, verbatim
    new_wording: str | None = None  # update records: the "New" wording, verbatim
    overrides: list[str] = field(default_factory=list)  # ids of glossary entries this format rule overrides
    overridden_by: list[str] = field(default_factory=list)  # ids of format rules overriding this entry
    judge: str | None = None  # house rulings: who ruled
    event: str | None = None  # house rulings: the event the ruling was made for ("Kotei 2026"), if any

    @property
    def text(self) -> str:
        """The verbatim text, one paragraph (source line or block) per line."""
        return "\n".join(self.paragraphs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form; the field set is the documented ``parse --json`` format."""
        data = asdict(self)
        data["text"] = self.text
        return data


@dataclass(frozen=True)
class Anomaly:
    """Something odd found while parsing, reported by ``lint`` with file and line; never fatal."""

    file: str
    line: int
    kind: str  # "impossible-date", "unparsed-stamp", "unbalanced-bracket", "dangling-reference", ...
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind}: {self.message}"


class SourceError(Exception):
    """A source file that cannot be parsed at all; the message names the file (and line)."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.reason = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")


@dataclass
class ParsedDocument:
    """What a parser returns for one file."""

    file: str
    source: SourceKind
    document: str
    entries: list[Entry]
    anomalies: list[Anomaly] = field(default_factory=list)


@dataclass
class Corpus:
    """All entries from all loaded files, cross-linked, plus what went wrong where."""

    entries: list[Entry]
    anomalies: list[Anomaly] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def by_id(self) -> dict[str, Entry]:
        return {e.id: e for e in self.entries}


_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """Stable, ASCII, hyphenated form of a title, used in entry ids ("Targeting paradoxes" -> "targeting-paradoxes")."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _SLUG_DROP.sub("-", folded).strip("-") or "entry"


def make_id(source: SourceKind, *parts: str) -> str:
    """Entry ids are ``<source>:<slug>`` so they survive re-parsing and can be put in URLs and custom ids."""
    return f"{source}:" + "-".join(slugify(p) for p in parts if p)

"""The entry model: the one contract shared by the parsers, the index and the bot.

Every later layer reads these objects and nothing else from the source files, so the
model is deliberately small, explicit and serialisable to plain JSON (``to_dict``).
Text is always the verbatim source text; nothing here rewrites it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
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


def line_span(first: int, last: int) -> str:
    """``line 25`` or ``lines 22-31``."""
    return f"line {first}" if first == last else f"lines {first}-{last}"


# A paragraph the source numbers itself ("3. A duel begins to resolve..."): that number is how a judge finds it.
_ITEM = re.compile(r"(\d{1,3})\.\s")

# The marks the sources put before a list item ("• Hida Kisada ...", "– Hare Clan: Shiro Usagi", "- A Personality ...").
BULLETS = ("•", "–", "-", "*", "·", "—")
_LIST_ITEM = re.compile(r"\s*[" + re.escape("".join(BULLETS)) + r"]\s")


def is_list_item(paragraph: str) -> bool:
    """A paragraph that is one item of a list: a bullet, then a space (so "-20 Honor" is not one)."""
    return _LIST_ITEM.match(paragraph) is not None


def introduces_list(paragraphs: list[str], k: int) -> bool:
    """Whether paragraph ``k`` introduces a list: it ends with a colon and is not an item itself ("The following
    Keywords are considered Clan Alignments ...:", "There are three exceptions:")."""
    return paragraphs[k].rstrip().endswith(":") and not is_list_item(paragraphs[k])


def _indent(paragraph: str) -> int:
    return len(paragraph) - len(paragraph.lstrip())


def parent_item(paragraphs: list[str], k: int) -> int | None:
    """For a list item nested under another (more indented than the item above it, or than that item's earlier
    siblings), the item it belongs to: "• Black-backed Dynasty cards form the Dynasty Deck" is a sub-point of
    "• 2 decks, each containing at least 40 cards each (40/40)", which is what a question about deck sizes needs
    quoted. ``None`` for a paragraph that is not such an item."""
    if not 0 <= k < len(paragraphs) or not is_list_item(paragraphs[k]):
        return None
    depth = _indent(paragraphs[k])
    for j in range(k - 1, -1, -1):
        if not is_list_item(paragraphs[j]):
            return None
        if _indent(paragraphs[j]) < depth:
            return j
    return None


def paragraph_name(entry: Entry, index: int) -> str:
    """How a judge finds paragraph ``index`` (0-based) of ``entry``: by the source's own number where it numbers
    its items (``item 3.``; an unnumbered paragraph inside the list is ``the paragraph after item 1.``), else by
    counting its paragraphs from 1 (``paragraph 2``), the count a citation's line numbers confirm.

    Resolve's fifth paragraph is the item its source numbers "3.": called "paragraph 5" it matched nothing a
    judge could see.
    """
    own = _ITEM.match(entry.paragraphs[index]) if 0 <= index < len(entry.paragraphs) else None
    if own:
        return f"item {own.group(1)}."
    for k in range(min(index, len(entry.paragraphs)) - 1, -1, -1):
        before = _ITEM.match(entry.paragraphs[k])
        if before:
            return f"the paragraph after item {before.group(1)}."
    return f"paragraph {index + 1}"


def paragraphs_name(entry: Entry, first: int, last: int) -> str:
    """``paragraph_name`` for a run of paragraphs: ``paragraphs 2-4`` (or each end named by its own number)."""
    if first == last:
        return paragraph_name(entry, first)
    a, b = paragraph_name(entry, first), paragraph_name(entry, last)
    if a.startswith("paragraph ") and b.startswith("paragraph "):
        return f"paragraphs {first + 1}-{last + 1}"
    return f"{a} to {b}"


def citation(entry: Entry, paragraph: int | None = None, until: int | None = None) -> str:
    """Where a judge finds the quoted text: document › section path › entry, then the lines, then the file.

    With ``paragraph`` (0-based) the citation is that paragraph's own (``paragraph 3, line 25``; ``item 3.``
    where the source numbers it, ``paragraph_name``), so a judge quoting one paragraph can point at exactly
    it; with ``until`` too, the run of paragraphs from one to the other; without, the whole entry's lines.
    Every front end (the answers, the HTML rulebook, the JSON) cites through this one function.
    """
    # A glossary page's section ("Glossary T") already ends its document title; don't say it twice.
    parts = [entry.document, *(s for s in entry.section if not entry.document.endswith(s))]
    if not entry.section or entry.section[-1] != entry.title:
        parts.append(entry.title)
    where = " › ".join(p for p in parts if p)
    if paragraph is not None and 0 <= paragraph < len(entry.paragraphs):
        last = until if until is not None and paragraph <= until < len(entry.paragraphs) else paragraph
        numbered = f"{paragraphs_name(entry, paragraph, last)}, " if len(entry.paragraphs) > 1 else ""
        first_line, last_line = entry.paragraph_lines(paragraph)[0], entry.paragraph_lines(last)[1]
        where += f", {numbered}{line_span(first_line, last_line)}"
    else:
        where += ", " + line_span(entry.location.first_line, entry.location.last_line)
    return f"{where} · {entry.location.file}"


def clip(text: str, limit: int = 100) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis: a label (a title, a choice name), never rule
    text, which is quoted whole or paged."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def sort_date(change: Change) -> str:
    """The date a change is ordered by: the evident intended date when the printed one is impossible."""
    return change.probable_date or change.date or ""


def ordered_changes(changes: Iterable[Change], *, per_paragraph: bool = True) -> list[Change]:
    """Changes as an answer lists them: oldest first (undated last), a stamp repeated word for word shown
    once (``per_paragraph``: once per paragraph it dates, else once for the whole text)."""
    seen: set[tuple[str, str | None, str | None, int | None]] = set()
    out: list[Change] = []
    for change in sorted(changes, key=lambda c: sort_date(c) or "9999"):
        key = (change.kind, change.date, change.note, change.paragraph if per_paragraph else None)
        if key not in seen:
            seen.add(key)
            out.append(change)
    return out


@dataclass
class CrossRef:
    """A cross-reference found in the text ("See Glossary, Look"); ``target`` is an entry id or None."""

    text: str
    target: str | None = None
    line: int | None = None  # source line where the reference is written, when known (for lint)


@dataclass
class Restatement:
    """The same rule stated a second time elsewhere in its document, and whether the two texts differ.

    The Obsidian Hand gives some player abilities twice (the Initial Guidelines' list and the abilities
    section); a judge shown one of them must learn that the other exists and whether its words differ.
    """

    paragraphs: list[int]  # this entry's paragraphs that state the rule (0-based)
    entry: str  # the id of the entry that states it again
    other_paragraphs: list[int]  # that entry's paragraphs that state it (0-based)
    differs: bool  # the two texts are not the same words
    # where they differ: positions in ``paragraphs`` (and ``other_paragraphs``) whose two texts are not the same
    # words. Seppuku's copies differ only in the line on negation; a result quoting that line of the other copy
    # shows the difference, one quoting its first line does not
    differing: list[int] = field(default_factory=list)
    # of those, where the other entry's copy says every word of this one, in order, and more (an added clause):
    # Seppuku's guideline line adds "; unless the action explicitly interacts with Seppuku", so the ability's
    # Restatement has ``fuller == [1]`` and the guideline's has none. Search quotes the fuller copy first
    fuller: list[int] = field(default_factory=list)


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
    # Rulings: the date the rule it applies to changed after it was made ("needs review"), while no judge has
    # looked at it again (server rulings: bot.rulings.review; house files: glossary.linking). Answers say "made
    # before the rule changed on D".
    changed_since: str | None = None
    # Where each paragraph stands in the source: (first_line, last_line), 1-based, parallel to ``paragraphs``.
    # A citation of one quoted paragraph gives its own lines, not the whole entry's range.
    lines: list[tuple[int, int]] = field(default_factory=list)
    # The name shown for this entry: its title, told apart from same-titled entries by group or source
    # ("Ninjitsu (Open)", "Honor (Victory Conditions)"). Set by ``glossary.linking``; defaults to the title.
    label: str = ""
    restated: list[Restatement] = field(default_factory=list)  # the same rule stated elsewhere in the document

    def __post_init__(self) -> None:
        if not self.label:
            self.label = self.title

    def paragraph_lines(self, index: int | None) -> tuple[int, int]:
        """Source lines of paragraph ``index`` (the whole entry's lines when unknown or ``None``)."""
        if index is not None and 0 <= index < len(self.lines):
            return self.lines[index]
        return (self.location.first_line, self.location.last_line)

    def paragraph_at(self, line: int) -> int | None:
        """The paragraph that holds source line ``line``, if any."""
        return next((k for k, (first, last) in enumerate(self.lines) if first <= line <= last), None)

    def paragraph_changes(self, index: int | None) -> list[Change]:
        """The changes that date paragraph ``index``: its own stamps and those dating the whole entry."""
        return [c for c in self.changes if c.paragraph is None or c.paragraph == index]

    def paragraphs_naming(self, ids: Iterable[str]) -> list[int]:
        """The paragraphs holding a line this entry's own links tie to one of ``ids`` (an update record's line
        "Proclaim – limited its use to the player's turn" names Proclaim), in order."""
        wanted = set(ids)
        found = {self.paragraph_at(ref.line) for ref in self.see_also if ref.target in wanted and ref.line is not None}
        return sorted(k for k in found if k is not None)

    def stamps_of(self, index: int) -> list[Change]:
        """The change stamps that paragraph ``index`` consists of, when it is nothing but a stamp on its own line
        (``[CHANGED 21 May 2008; …]``); else none."""
        if not 0 <= index < len(self.paragraphs):
            return []
        text = self.paragraphs[index].strip()
        return [c for c in self.changes if c.raw.strip() == text]

    def stamp_only(self, index: int) -> bool:
        """Whether paragraph ``index`` is nothing but a change stamp: a date of the paragraph it closes, not a rule
        of its own."""
        return bool(self.stamps_of(index))

    def rule_paragraph(self, index: int) -> int:
        """The paragraph a quote at ``index`` shows: ``index`` itself, unless it is only a stamp; then the
        paragraph that stamp dates (Terrain's "[CHANGED 21 May 2008; a Terrain's entering play is a rulebook
        effect ...]" is answered by the paragraph saying so, under that date), or for a stamp dating the whole
        entry, its first paragraph that is not a stamp. Quoted alone, a stamp answers nothing."""
        stamps = self.stamps_of(index)
        if not stamps:
            return index
        dated = [c.paragraph for c in stamps if c.paragraph is not None]
        if dated and 0 <= dated[0] < len(self.paragraphs) and not self.stamp_only(dated[0]):
            return dated[0]
        return next((k for k in range(len(self.paragraphs)) if not self.stamp_only(k)), index)

    @property
    def text(self) -> str:
        """The verbatim text, one paragraph (source line or block) per line."""
        return "\n".join(self.paragraphs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form; the field set is the documented ``parse --json`` format."""
        data = asdict(self)
        data["text"] = self.text
        return data


Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")  # most serious first

# How serious each kind of anomaly is (the table in the README's lint section). ``error``: source text is
# missing from the answers or the copy is damaged; ``warning``: answers are complete but something in the
# source is wrong or ambiguous and a person should look; ``info``: worth knowing, nothing to fix here.
# ``lint --strict`` fails on errors and warnings, never on info.
ANOMALY_SEVERITY: dict[str, Severity] = {
    # text that no answer can show, or a damaged copy
    "unparsed-line": "error",  # Obsidian Hand: a line outside any entry, skipped
    "content-after-footer": "error",  # glossary: a heading after the page footer, ignored
    "empty-heading": "error",  # a heading without a name: what follows it is not an entry
    "truncated": "error",  # Obsidian Hand: the document stops mid-section
    # answers complete, but the source needs a look
    "impossible-date": "warning",  # shown as written, flagged, sorted by the probable date
    "unbalanced-bracket": "warning",  # a stamp closed with '}' or never closed; still read
    "unparsed-stamp": "warning",  # a bracket that looks like a stamp but gives no date: shown, not dated
    "bad-date": "warning",  # house ruling: Date: not YYYY-MM-DD; the date is ignored
    "unknown-metadata": "warning",  # house ruling: a Key: line that is not Date/Judge/Applies to
    "empty-entry": "warning",
    "empty-update": "warning",
    "empty-ability": "warning",
    "empty-ruling": "warning",  # house ruling without text: skipped
    "rule-changed-after-ruling": "warning",  # house ruling dated before a later change stamp of its rule
    "duplicate-id": "warning",  # both kept, the later renamed -2, -3, ...
    "duplicate-title": "warning",
    "duplicate-ruling": "warning",
    "toc-mismatch": "warning",  # glossary page contents and headings disagree: a damaged copy?
    "divergent-restatement": "warning",  # a rule stated twice in one document in different words (Seppuku)
    "long-line": "warning",  # a line over the length cap: quoted whole, searched only up to the cap
    # worth knowing, nothing to fix in these files
    "dangling-reference": "info",  # "See Battles, Combat Segment": a rulebook chapter that is not loaded
    "update-log-order": "info",  # an update log not written in date order (answers sort by date anyway)
}
DEFAULT_SEVERITY: Severity = "warning"  # a kind not in the table (a new check) is looked at, not ignored


@dataclass(frozen=True)
class Anomaly:
    """Something odd found while parsing, reported by ``lint`` with file and line; never fatal.

    ``severity`` is derived from ``kind`` (``ANOMALY_SEVERITY``) unless the parser knows better for this
    one case, e.g. a house ruling's "Applies to" naming nothing is a warning although rule text naming an
    unloaded chapter (the same kind, ``dangling-reference``) is info.
    """

    file: str
    line: int
    kind: str  # "impossible-date", "unparsed-stamp", "unbalanced-bracket", "dangling-reference", ...
    message: str
    severity: Severity = None  # type: ignore[assignment]  # None: derived from kind in __post_init__

    def __post_init__(self) -> None:
        if self.severity is None:
            object.__setattr__(self, "severity", ANOMALY_SEVERITY.get(self.kind, DEFAULT_SEVERITY))
        elif self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r} (expected one of {', '.join(SEVERITIES)})")

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

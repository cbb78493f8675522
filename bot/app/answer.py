"""The answer model: what the judge says, in no particular format.

The judge (``bot.app.compose``) builds one ``Answer`` per command; each front end renders it its own way
(``bot.app.renderers``: Discord Markdown and embeds, plain text for the console and CLIs, HTML). Nothing here
is Markdown or HTML: text is held as written — rule text verbatim, user input as typed (less bidi
controls) — so a renderer escapes, marks up, clips or pages for its own medium and no front end ever has
to undo another's escaping.

The pieces, from small to large:

* ``Run``: a stretch of text with one style (plain, strong, emphasis, code, a link) and, for quoted rule
  text, the ``marks`` (offsets) of the question's words or of the sentence that answers.
* Blocks: ``Line`` (our own words around labels and values), ``Quote`` (verbatim rule text with its
  citation and the changes dating it), ``Relation`` (another text related to a quoted one, typed: which
  rule *amends* it, *restates* it, a ruling that *applies*; each with its own quote and citation),
  ``Citation`` (where a text stands), ``Dates`` (the changes that date a text), ``Note`` (what the judge
  says about the answer: no rule stands out, a copy is truncated) and ``Group`` (blocks read as one unit,
  such as one search result).
* ``Answer``: a title, body blocks, or ``items`` shown a few at a time (search results, change rows),
  labelled ``facts`` (history, citation), ``links`` to open other entries, and ``kind``/``arg``, the key
  from which the same answer is rebuilt (a button after a restart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from glossary.model import Change, Entry

Style = Literal["plain", "strong", "emph", "code"]


@dataclass(frozen=True)
class Run:
    """Text with one style. ``marks`` are ``(start, end)`` offsets into ``text`` that a renderer shows
    marked (bold on Discord); ``href`` makes the run a link."""

    text: str
    style: Style = "plain"
    marks: tuple[tuple[int, int], ...] = ()
    href: str | None = None


Inline = tuple[Run, ...]


def runs(*parts: str | Run) -> Inline:
    """Runs from plain strings and runs (a string is plain text)."""
    return tuple(p if isinstance(p, Run) else Run(p) for p in parts if not isinstance(p, str) or p)


def strong(text: str) -> Run:
    return Run(text, "strong")


def emph(text: str) -> Run:
    return Run(text, "emph")


def code(text: str) -> Run:
    """Our own literal command text (``/define``); never user or rule text."""
    return Run(text, "code")


def plain_text(parts: Inline) -> str:
    """The runs' text, without any styling."""
    return "".join(r.text for r in parts)


# -- blocks ------------------------------------------------------------------------------------------------


@dataclass
class Line:
    """One line (or short paragraph) of the judge's own words, with labels and values in it.

    ``role`` tells a renderer what the line is for (``"head"`` of a result, ``"label"`` before a quote, ``"row"``
    of a list), so it can size or style it for its medium."""

    parts: Inline
    role: str = ""


@dataclass
class Citation:
    """Where ``entry`` (or one paragraph of it) stands: the renderer words it with ``index.results.citation``
    and adds links (the source page, the exported rulebook at that paragraph)."""

    entry: Entry
    paragraph: int | None = None
    links: tuple[tuple[str, str], ...] = ()  # (label, URL): the source page, the rulebook at that paragraph
    role: str = ""
    until: int | None = None  # the last paragraph of a quoted run that starts at ``paragraph``


@dataclass
class Dates:
    """The changes that date a shown text, oldest first; ``paragraph`` is the quoted paragraph (its own
    changes need no label, the whole entry's are labelled so), ``None`` when the entry is shown whole."""

    changes: list[Change]
    entry: Entry | None = None
    paragraph: int | None = None
    role: str = ""


@dataclass
class Quote:
    """Verbatim rule text: one paragraph of ``entry`` (``paragraph``), several, or its whole text.

    ``text`` is exactly the source's; ``marks`` are offsets into it (the question's words), ``sentences``
    too (the sentence or two that answer: a renderer that marks them shows them instead of the words,
    bold on Discord, ``▶…◀`` on the console, ``<mark>`` in HTML). ``inline`` texts are shown as the body of
    an answer (an entry in full), the others as a quotation under what introduces them."""

    entry: Entry
    text: str
    paragraph: int | None = None
    marks: tuple[tuple[int, int], ...] = ()
    inline: bool = False
    role: str = ""
    sentences: tuple[tuple[int, int], ...] = ()


RelationKind = Literal[
    "amends",  # a format's update or rule changes this text in that format
    "restates",  # the format states the same rule in its own words (changing nothing said here)
    "updates",  # a format's update-log record is about this text; it gives no Old/New wording to compare
    "covers",  # the format has its own rule on the same topic (linked by name, no words in common)
    "restated-elsewhere",  # the same document states this again (the same or other words)
    "house-ruling",  # a host's house ruling applies to it
    "server-ruling",  # this server's own ruling applies to it
    "concerns-entry",  # a format update concerns the entry, and which paragraph is not clear
    "changed-rule",  # under an update-log record: the rule that record changed, as the sources now read
]


@dataclass
class Relation:
    """Another text related to a quoted one, and how: decided by the judge at the level where it is true.

    ``scope`` is the paragraph(s) of the quoted entry it concerns (``None``: the whole entry). ``earlier``
    marks an older update of a topic the log changed several times (the latest leads). ``quote`` is the
    related text with its own citation; ``differs`` says whether a restatement's words differ."""

    kind: RelationKind
    entry: Entry
    of: Entry
    heading: Inline = ()  # how the judge introduces it, e.g. "In The Obsidian Hand Ruleset, X amends this:"
    scope: tuple[int, ...] | None = None
    quote: Quote | None = None
    citation: Citation | None = None
    dates: Dates | None = None
    earlier: bool = False
    differs: bool = False
    date: str | None = None
    role: str = ""


@dataclass
class Note:
    """What the judge says about the answer itself ("no rule stands out", "this copy ends here")."""

    parts: Inline
    kind: str = ""


@dataclass
class Group:
    """Blocks read as one unit (one search result, one entry under a heading); never split across pages
    when it fits one."""

    blocks: list[Block]
    role: str = ""


Block = Line | Citation | Dates | Quote | Relation | Note | Group


@dataclass(frozen=True)
class Link:
    """Something to open from the answer: an entry, by id, with a short label."""

    label: str
    entry_id: str


@dataclass
class Fact:
    """A labelled fact shown with the answer (History, Citation, About); Discord shows these as fields."""

    name: str
    blocks: list[Block]


@dataclass
class Item:
    """One of a list answer's items (a search result, a change row) and what it links to."""

    blocks: list[Block]
    links: list[Link] = field(default_factory=list)


Tone = Literal["rule", "banned", "neutral", "error"]


@dataclass
class Answer:
    """A whole answer; see the module docstring. ``source`` (a source kind key) and ``tone`` let a renderer
    colour it; ``hit_ids`` are the entries it answers with (logged, counted)."""

    title: str
    kind: str
    arg: str = ""
    body: list[Block] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    per_page: int = 0  # items per page, when the answer is a list
    compact: bool = False  # list items are one line each (change rows), not paragraphs
    facts: list[Fact] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    footer: str = ""
    url: str | None = None
    source: str | None = None
    tone: Tone = "neutral"
    hit_ids: list[str] = field(default_factory=list)
    notice: Note | None = None  # opens the first page (e.g. "this server's rulings are unavailable")

    def with_notice(self, text: str) -> Answer:
        """This answer opened by a notice (italic on Discord)."""
        self.notice = Note(runs(text), "notice")
        return self

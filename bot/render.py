"""Rendering of engine results into ``Answer`` objects (plain data: no Discord objects, no network).

One ``Answer`` feeds both the Discord embeds (``bot.views``) and the console text
(``to_text``), so what a judge reads in a terminal is exactly what the server shows.
Text is Discord Markdown with the rule text escaped (so it displays verbatim); pages are
cut at paragraph boundaries and sized here, against Discord's limits, on the final strings.
Escaping is ``index.markdown``'s single linear pass (discord.py's helpers are super-linear on
hostile text), and every step here is linear in its input: one huge or adversarial paragraph
costs its length, never its length squared. This module never imports discord, so the console
runs without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from glossary.export_html import paragraph_href
from glossary.model import SOURCE_LABELS, Change, Entry
from index.markdown import ZWSP, escape_markdown, escape_mentions
from index.overlay import is_scoped
from index.results import UNSURE, BannedResult, ChangeRecord, DefineResult, Hit, citation, line_span

# Discord's documented limits (characters unless noted).
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_COUNT_LIMIT = 25
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FOOTER_LIMIT = 2048
EMBED_TOTAL_LIMIT = 6000
CONTENT_LIMIT = 2000
BUTTON_LABEL_LIMIT = 80
CHOICE_LIMIT = 100
MAX_LINKS = 20  # four rows of five buttons; the fifth row is for paging / posting

ELLIPSIS = "…"
_FOOTER_PAGE_RESERVE = 24  # room for " · page 999/999"

COLOURS = {"glossary": 0x2B6CB0, "obsidian-hand": 0x553C9A, "house": 0xB7791F}
NEUTRAL_COLOUR = 0x4A5568
ERROR_COLOUR = 0xC53030

# Answer kinds: one letter each, because they travel inside 100-character button ids.
ENTRY, DEFINE, ASK, RULE, CHANGES, BANNED = "e", "d", "a", "r", "c", "b"
KINDS = (ENTRY, DEFINE, ASK, RULE, CHANGES, BANNED)

ASK_LIMIT = 15  # at most; the engine lists only answers close to the best one
NEAR_LIMIT = 5  # nearest terms offered when nothing answers closely
ASK_PER_PAGE = 3
UNSURE_NOTE = (
    "*No rule stands out for this question: these are the closest matches, and none may answer it. "
    "Try other words, or `/define` a term.*"
)
CHANGES_PER_PAGE = 10


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True)
class Link:
    """A button that opens an entry (a cross-reference, a did-you-mean candidate, a search result)."""

    label: str
    entry_id: str


@dataclass
class Page:
    description: str
    fields: list[Field] = field(default_factory=list)
    footer: str = ""
    links: list[Link] = field(default_factory=list)


@dataclass
class Answer:
    """A rendered answer; ``kind``/``arg`` say how to rebuild it, so buttons can carry only those."""

    title: str
    pages: list[Page]
    kind: str = ENTRY
    arg: str = ""
    url: str | None = None
    colour: int = NEUTRAL_COLOUR
    hit_ids: list[str] = field(default_factory=list)

    def page_number(self, n: int) -> int:
        """``n`` clamped to the pages there are (a button may point past the end after a reload)."""
        return max(0, min(n, len(self.pages) - 1))

    def page(self, n: int) -> Page:
        return self.pages[self.page_number(n)]


def escape(text: str) -> str:
    """Text from a user or a source file, made inert: no Markdown effects, no mentions."""
    return escape_mentions(escape_markdown(text))


# Bidirectional-text controls (embeddings, overrides, isolates, marks): echoed user input could use them to
# make the rest of a title read backwards ("Rules for: <U+202E>...") or disguise what was asked.
_BIDI_CONTROLS = dict.fromkeys(map(ord, "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))


def echo(text: str) -> str:
    """What a user typed, as shown back in an answer's title or message: bidi controls dropped, then escaped.

    Only user input is echoed this way; rule text is quoted exactly as written (``escape``).
    """
    return escape(text.translate(_BIDI_CONTROLS))


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters at a word boundary, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    # Never leave a dangling escape backslash that would swallow the marker.
    return cut.rstrip(" \t\n\\") + ELLIPSIS


_ESCAPED_MENTION = re.compile(rf"@{ZWSP}+(?:everyone|here|[!&]?\d+)")
_CUT_WINDOW = 64  # characters either side of a cut searched for a defused mention (a bounded look)


def _escape_safe_cut(text: str, start: int, cut: int) -> int:
    """``cut`` moved back if it would separate an escaping backslash from what it escapes, or split a
    defused mention (so ``plain`` can undo every escape on every page).

    A backslash escapes the next character when the run of backslashes ending at it is odd; the run
    is counted once, so a long run of escaped backslashes costs its length, not its length squared.
    """
    for mention in _ESCAPED_MENTION.finditer(text, max(start, cut - _CUT_WINDOW), cut + _CUT_WINDOW):
        if start < mention.start() < cut < mention.end():
            cut = mention.start()  # a defused "@everyone" goes to the next page whole
            break
    run = 0
    while cut - run - 1 >= start and text[cut - run - 1] == "\\":
        run += 1
    return cut - 1 if run % 2 else cut


def split_long(block: str, limit: int) -> list[str]:
    """Split one over-long paragraph into word-boundary pieces, each cut marked with an ellipsis.

    Works on offsets into ``block`` (no re-slicing of the remainder), so the cost is linear in its length.
    """
    pieces: list[str] = []
    start, end = 0, len(block)
    room = limit - 2 * len(ELLIPSIS)
    while end - start + (len(ELLIPSIS) if pieces else 0) > limit:
        cut = block.rfind(" ", start, start + room)
        if cut - start <= room // 2:
            cut = start + room
        cut = _escape_safe_cut(block, start, cut)  # an escape and what it escapes stay on one page
        head = block[start:cut].rstrip(" \t\n")
        pieces.append((ELLIPSIS if pieces else "") + head + ELLIPSIS)
        start = cut
        while start < end and block[start] in " \t\n":
            start += 1
    pieces.append((ELLIPSIS if pieces else "") + block[start:])
    return pieces


def paginate(blocks: Sequence[str], limit: int, separator: str = "\n\n") -> list[str]:
    """Pack paragraphs into pages of at most ``limit`` characters, splitting only between paragraphs
    (a single paragraph longer than a page is split between words, with markers)."""
    pieces: list[str] = []
    for block in blocks:
        pieces.extend(split_long(block, limit) if len(block) > limit else [block])
    pages: list[str] = []
    current: list[str] = []  # the page being filled; only its length is kept up to date (no re-copying)
    size = 0
    for piece in pieces:
        if not size:  # an empty page so far: the piece starts it
            current, grown = [piece], len(piece)
        else:
            grown = size + len(separator) + len(piece)
        if grown <= limit:
            if size:
                current.append(piece)
            size = grown
        else:
            pages.append(separator.join(current))
            current, size = [piece], len(piece)
    if size or not pages:
        pages.append(separator.join(current))
    return pages


def pack(items: Sequence[tuple[str, Sequence[Link]]], per_page: int, budget: int, separator: str) -> list[Page]:
    """Group whole items (a search result, a change line) into pages: at most ``per_page`` each and
    within ``budget`` characters; each page carries the buttons of the items it shows."""
    pages: list[Page] = []
    texts: list[str] = []
    links: list[Link] = []
    size = 0
    for block, block_links in items:
        block = shorten(block, budget)
        if size and (len(texts) >= per_page or size + len(separator) + len(block) > budget):
            pages.append(Page(separator.join(texts), [], "", _unique_links(links)))
            texts, links, size = [], [], 0
        if not size:  # nothing shown yet on this page: the block starts it
            texts, size = [block], len(block)
        else:
            texts.append(block)
            size += len(separator) + len(block)
        links += block_links
    pages.append(Page(separator.join(texts), [], "", _unique_links(links)))
    return pages


def number_pages(pages: list[Page], footer: str) -> list[Page]:
    """Give every page ``footer``, plus "page i/n" when there is more than one page."""
    for i, page in enumerate(pages):
        numbered = f"page {i + 1}/{len(pages)}" if len(pages) > 1 else ""
        page.footer = " · ".join(p for p in (footer, numbered) if p)
    return pages


def description_budget(title: str, footer: str, fields: Sequence[Field] = ()) -> int:
    """Room left for a page's description once the title, footer (and its page number) and fields count
    towards Discord's per-embed total."""
    fixed = len(title) + len(footer) + _FOOTER_PAGE_RESERVE + sum(len(f.name) + len(f.value) for f in fields)
    return min(DESCRIPTION_LIMIT, EMBED_TOTAL_LIMIT - fixed)


def embed_size(title: str, page: Page) -> int:
    """Characters Discord counts towards the 6,000 per-message embed total."""
    return len(title) + len(page.description) + len(page.footer) + sum(len(f.name) + len(f.value) for f in page.fields)


def _date_text(change: Change) -> str:
    """The date as printed; an impossible one is kept and followed by the evident intended date."""
    if change.date is None:
        return change.raw
    if change.anomaly and change.probable_date and change.probable_date != change.date:
        return f"{change.date} (as printed; probably {change.probable_date})"
    return change.date


def scope_text(change: Change, entry: Entry | None, paragraph: int | None = None) -> str:
    """Which text a change dates, when that is not plain from where it is shown.

    Under one quoted paragraph (``paragraph`` given) a change of that paragraph needs no label, and one
    dating the whole entry says so. In an entry shown in full, each change names its paragraph (1-based,
    as a judge counts them). An entry of one paragraph needs no label at all.
    """
    if entry is None or len(entry.paragraphs) <= 1:
        return ""
    if entry.source == "house" or entry.kind == "update":  # a ruling's or an update record's date is all of it
        return ""
    if change.paragraph is None:
        return " (whole entry)"
    if paragraph is not None and change.paragraph == paragraph:
        return ""
    return f" (paragraph {change.paragraph + 1})"


def history_line(
    changes: Iterable[Change], entry: Entry | None = None, paragraph: int | None = None
) -> str:
    """``Added 2007-09-20 (paragraph 2) · Changed 2008-05-21: <note>``, oldest first, identical stamps merged.

    With ``entry`` each change says which paragraph it dates (see ``scope_text``); the caller chooses the
    changes, and must only pass the ones that date the text it shows.
    """
    seen: set[tuple[str, str | None, str | None, int | None]] = set()
    parts: list[str] = []
    ordered = sorted(changes, key=lambda c: sort_date(c) or "9999")  # undated last
    for change in ordered:
        key = (change.kind, change.date, change.note, change.paragraph if entry is not None else None)
        if key in seen:
            continue
        seen.add(key)
        text = f"{change.kind.capitalize()} {_date_text(change)}{scope_text(change, entry, paragraph)}"
        if change.note:
            text += f": {change.note}"
        parts.append(text)
    return " · ".join(parts)


def paragraph_changes(entry: Entry, paragraph: int | None) -> list[Change]:
    """The changes that date paragraph ``paragraph`` as shown: its own stamps and those of the whole entry."""
    return [c for c in entry.changes if c.paragraph is None or c.paragraph == paragraph]


def sort_date(change: Change) -> str:
    """The date to order by: the evident intended date when the printed one is impossible."""
    return change.probable_date or change.date or ""


class Renderer:
    """Turns results into Answers; ``lookup`` resolves entry ids (overrides, cross-references);
    ``rulings`` gives the asking server's own rulings that apply to an entry (none outside a server)."""

    def __init__(
        self,
        lookup: Callable[[str], Entry | None],
        rulebook_url: str | None = None,
        children: Callable[[str], list[Entry]] | None = None,
        *,
        rulings: Callable[[str], Sequence[Entry]] | None = None,
    ) -> None:
        self.lookup = lookup
        self.rulebook_url = rulebook_url.rstrip("/") if rulebook_url else None
        # The sub-headings under a section, for headings that have no text of their own ("I. CARDINAL RULES").
        self.children = children or (lambda _entry_id: [])
        self.rulings = rulings or (lambda _entry_id: ())

    # -- shared pieces ---------------------------------------------------------------------------

    def rulebook_link(self, entry: Entry, paragraph: int | None = None) -> str | None:
        """The entry (or one of its paragraphs) in the exported HTML rulebook, when RULEBOOK_URL is set (a
        server's own rulings are not in it)."""
        if not self.rulebook_url or is_scoped(entry.id):
            return None
        return f"{self.rulebook_url}/{paragraph_href(entry, paragraph)}"

    def entry_url(self, entry: Entry) -> str | None:
        """The title link: the exported rulebook if there is one, else the source page."""
        return self.rulebook_link(entry) or entry.url

    def citation_text(self, entry: Entry, limit: int = FIELD_VALUE_LIMIT, paragraph: int | None = None) -> str:
        """Citation (of one paragraph when given) plus the links a judge can click: the source page and the
        exported rulebook (at that paragraph's anchor).

        Within ``limit`` the citation words are shortened first: a link cut in half would not work.
        """
        links = []
        if entry.url:
            links.append(f"[source page]({entry.url})")
        rulebook = self.rulebook_link(entry, paragraph if len(entry.paragraphs) > 1 else None)
        if rulebook:
            links.append(f"[rulebook]({rulebook})")
        tail = " · " + " · ".join(links) if links else ""
        if len(tail) > limit // 2:  # absurdly long URLs: keep the citation readable, drop the links
            tail = ""
        return shorten(escape(citation(entry, paragraph)), limit - len(tail)) + tail

    def _finish(
        self,
        title: str,
        blocks: Sequence[str],
        fields: Sequence[Field],
        footer: str,
        links: Sequence[Link] = (),
    ) -> list[Page]:
        """Lay out ``blocks`` as pages that each carry the fields, within every embed limit."""
        title = shorten(title, TITLE_LIMIT)
        fields = [
            Field(shorten(f.name, FIELD_NAME_LIMIT), shorten(f.value, FIELD_VALUE_LIMIT), f.inline) for f in fields
        ][:FIELD_COUNT_LIMIT]
        footer = shorten(footer, FOOTER_LIMIT - _FOOTER_PAGE_RESERVE)
        texts = paginate(blocks, description_budget(title, footer, fields))
        links = _unique_links(links)
        return number_pages([Page(text, list(fields), "", links) for text in texts], footer)

    # -- entries ---------------------------------------------------------------------------------

    def overriders(self, entry: Entry) -> list[Entry]:
        """What amends ``entry``, in the order a judge needs it: the format's own rules, then its update-log
        records newest first (the latest state of a topic the log changed several times leads, its history
        follows), then house rulings (never called the format's rule)."""
        found = [e for e in (self.lookup(i) for i in entry.overridden_by) if e is not None]
        rules = [e for e in found if e.source != "house" and e.kind != "update"]
        updates = sorted(
            (e for e in found if e.source != "house" and e.kind == "update"),
            key=lambda e: max((sort_date(c) for c in e.changes), default=""),
            reverse=True,
        )
        return rules + updates + [e for e in found if e.source == "house"]

    def _override_heading(self, rule: Entry, earlier: bool) -> str:
        """``The Obsidian Hand Ruleset rule — Tactical Advantage (applies in that format):`` and the like."""
        if rule.source == "house":
            return f"**House ruling — {escape(rule.label)}**{ruling_credit(rule)}:"
        label = escape(SOURCE_LABELS.get(rule.source, rule.document))
        if rule.kind == "update":
            which = "earlier update" if earlier else "latest update on this"
            return f"**{label} — {which}: {escape(rule.label)}** (applies in that format):"
        return f"**{label} rule — {escape(rule.label)}** (applies in that format):"

    def _restatement_blocks(self, entry: Entry) -> list[str]:
        """The same rule stated elsewhere in the document: shown in full when its words differ."""
        blocks = []
        for r in entry.restated:
            other = self.lookup(r.entry)
            if other is None:
                continue
            first = other.paragraph_lines(r.other_paragraphs[0])[0]
            last = other.paragraph_lines(r.other_paragraphs[-1])[1]
            where = f"{escape(other.label)}, {line_span(first, last)}"
            if r.differs:
                blocks.append(f"**The ruleset states this again in {where}, and the texts differ.** There it reads:")
                blocks.extend(escape(other.paragraphs[k]) for k in r.other_paragraphs)
            else:
                blocks.append(f"*Stated in the same words in {where}.*")
        return blocks

    def _children_blocks(self, entry: Entry) -> list[str]:
        """A heading with no text of its own is answered by its sub-headings and their text, never emptily."""
        blocks = []
        for child in self.children(entry.id):
            blocks.append(f"**{escape(child.label)}**")
            blocks.extend(escape(p) for p in child.paragraphs)
            history = history_line(child.changes, child)
            blocks.append(f"— {self.citation_text(child)}" + (f"\n— {escape(history)}" if history else ""))
        return blocks

    def entry(self, entry: Entry, *, kind: str = ENTRY, arg: str | None = None, extra: Sequence[Link] = ()) -> Answer:
        """An entry in full: format rules amending it first, then house rulings, then its verbatim text (or,
        for a bare heading, its sub-headings' text), any restatement of it, its history and citation."""
        blocks: list[str] = []
        fields: list[Field] = []
        overriders = self.overriders(entry)
        updates_shown = 0
        for rule in overriders:
            blocks.append(self._override_heading(rule, earlier=rule.kind == "update" and updates_shown > 0))
            updates_shown += rule.kind == "update"
            blocks.extend(escape(p) for p in rule.paragraphs)
            history = history_line(rule.changes, rule)
            blocks.append(f"— {self.citation_text(rule)}" + (f"\n— {escape(history)}" if history else ""))
        if overriders:
            blocks.append(f"**{escape(SOURCE_LABELS.get(entry.source, entry.document))} text:**")
        children = [] if entry.paragraphs else self._children_blocks(entry)
        blocks.extend(escape(p) for p in entry.paragraphs)
        if children:
            blocks.append("*This heading has no text of its own; under it:*")
            blocks.extend(children)
        blocks.extend(self._restatement_blocks(entry))
        for label, wording in (("Old", entry.old_wording), ("New", entry.new_wording)):
            if wording and wording not in entry.text:
                blocks.append(f"**{label}:**\n{escape(wording)}")
        server = [r for r in self.rulings(entry.id) if r.id != entry.id]
        for ruling in server:  # this server's own rulings, read after the rule they apply to
            blocks.append(f"**Server ruling — {escape(ruling.title)}**{ruling_credit(ruling)}:")
            blocks.extend(escape(p) for p in ruling.paragraphs)

        facts = []
        if entry.group:
            facts.append(("Category" if entry.kind == "banned" else "Group") + f": {escape(entry.group)}")
        if is_scoped(entry.id):
            facts.append("Server ruling" + ruling_credit(entry))
        elif entry.source == "house":
            facts.append("House ruling" + ruling_credit(entry))
        elif entry.judge:
            facts.append(f"Ruled by {escape(entry.judge)}")
        if server:
            facts.append("This server's rulings: " + ", ".join(escape(r.title) for r in server))
        if entry.overrides:
            names = [self._name(i) for i in entry.overrides]
            verb = "Applies to" if entry.source == "house" else "Overrides in this format"
            facts.append(f"{verb}: " + ", ".join(escape(n) for n in names))
        if facts:
            fields.append(Field("About", "\n".join(facts)))
        fields += self._record_fields(entry)

        links = [Link(_label(r.text), r.target) for r in entry.see_also if r.target]
        links += [Link(_label(_rule_kind(r) + ": " + r.label), r.id) for r in overriders]
        links += [Link(_label(c.label), c.id) for c in self.children(entry.id)] if children else []
        links += [Link(_label("Also stated in: " + self._name(r.entry)), r.entry) for r in entry.restated]
        applies = "Applies to: " if entry.source == "house" else "Overrides: "
        links += [Link(_label(applies + self._name(i)), i) for i in entry.overrides]
        links += [Link(_label("Server ruling: " + r.title), r.id) for r in server]
        links += list(extra)
        links = [ln for ln in links if ln.entry_id != entry.id]
        footer = f"{SOURCE_LABELS.get(entry.source, entry.source)} · {entry.kind} · {entry.id}"
        title = shorten(escape(entry.label), TITLE_LIMIT)
        return Answer(
            title=title,
            pages=self._finish(title, blocks, fields, footer, links),
            kind=kind,
            arg=entry.id if arg is None else arg,
            url=self.entry_url(entry),
            colour=COLOURS.get(entry.source, NEUTRAL_COLOUR),
            hit_ids=[entry.id, *(r.id for r in overriders), *(r.id for r in server)],
        )

    def _record_fields(self, entry: Entry) -> list[Field]:
        """The History (when dated; each change naming the paragraph it dates) and Citation fields every full
        answer ends with."""
        history = history_line(entry.changes, entry)
        fields = [Field("History", escape(history))] if history else []
        return [*fields, Field("Citation", self.citation_text(entry))]

    def _name(self, entry_id: str) -> str:
        found = self.lookup(entry_id)
        return found.label if found else entry_id

    def define(self, term: str, result: DefineResult) -> Answer:
        if result.same_name:  # several entries answer to this very name: show them all, told apart
            return self.several(term, result)
        if result.entry is not None:  # a confident guess: still offer the other candidates
            others = [Link(_label("Or: " + c.label), c.id) for c in result.candidates if c.id != result.entry.id]
            return self.entry(result.entry, extra=others)
        links = [Link(_label(c.label), c.id) for c in result.candidates]
        if links:
            text = "Did you mean: " + ", ".join(f"**{escape(c.label)}**" for c in result.candidates) + "?"
        else:
            text = "Nothing in the rules matches that. Try `/ask` with a whole question."
        return self.message(f"No entry for “{echo(term)}”", text, kind=DEFINE, arg=term, links=links)

    def several(self, term: str, result: DefineResult) -> Answer:
        """Every entry named ``term`` ("Ninjitsu": Open, Reaction, Battle), each in full under its label, with
        its own dates and citation; other candidates follow as buttons."""
        entries = list(result.same_name)
        if result.entry is not None and result.entry not in entries:  # "honor" is Family Honor's short name too
            entries.insert(0, result.entry)
        alike = len({e.title.casefold() for e in entries}) == 1
        name = entries[0].title if alike else " ".join(term.split())
        title = shorten(f"{escape(name) if alike else echo(name)} — {len(entries)} entries", TITLE_LIMIT)
        blocks = [
            "Several entries go by this name: "
            + ", ".join(f"**{escape(e.label)}**" for e in entries)
            + ". Each is quoted below with its own dates and citation."
        ]
        for e in entries:
            blocks.append(f"**{escape(e.label)}** — {escape(SOURCE_LABELS.get(e.source, e.source))}")
            blocks.extend(escape(p) for p in e.paragraphs)
            for rule in self.overriders(e):
                blocks.append(f"Amended by **{escape(rule.label)}**:\n" + quote(shorten(escape(rule.text), 400)))
            blocks.extend(self._restatement_blocks(e))
            history = history_line(e.changes, e)
            blocks.append(f"— {self.citation_text(e)}" + (f"\n— {escape(history)}" if history else ""))
        links = [Link(_label(e.label), e.id) for e in entries]
        links += [Link(_label("Or: " + c.label), c.id) for c in result.candidates if c not in entries]
        footer = f"{len(entries)} entries named “{name}”"
        return Answer(
            title=title,
            pages=self._finish(title, blocks, [], footer, links),
            kind=DEFINE,
            arg=term,
            colour=COLOURS.get(entries[0].source, NEUTRAL_COLOUR),
            hit_ids=[e.id for e in entries],
        )

    def rule(self, ref: str, hits: Sequence[Hit], family: Sequence[tuple[str, Entry]] = ()) -> Answer:
        """A section in full; a reference to one that does not exist says so and lists those that do."""
        if not hits:
            if family:
                listed = "\n".join(f"- {escape(name)}" for name, _e in family)
                text = f"There is no “{echo(ref)}” in {escape(family[0][1].document)}. It has:\n{listed}"
                links = [Link(_label(name), e.id) for name, e in family]
            else:
                text = "Try the section's number or name, e.g. `Cardinal Rule 2` or `Deck Construction`."
                links = []
            return self.message(f"No section matches “{echo(ref)}”", text, kind=RULE, arg=ref, links=links)
        others = [Link(_label("Also: " + h.entry.label), h.entry.id) for h in hits[1:]]
        return self.entry(hits[0].entry, kind=RULE, arg=ref, extra=others)

    # -- search results ----------------------------------------------------------------------------

    def ask(self, question: str, hits: Sequence[Hit], near: Sequence[Entry] = ()) -> Answer:
        """Top results, a few per page, each with its answering paragraph, citation and dates.

        ``near``: when no hit is close enough to show, the nearest terms, offered as buttons.
        """
        title = shorten(f"Rules for: {echo(' '.join(question.split()))}", TITLE_LIMIT)
        if not hits:
            text = "No rules text answers that question closely. Try other words, or `/define` a term."
            if near:
                text += "\nNearest terms: " + ", ".join(f"**{escape(e.title)}**" for e in near) + "."
            links = [Link(_label(e.title), e.id) for e in near]
            return self.message(title, text, kind=ASK, arg=question, links=links)
        footer = "Open a result to read it in full"
        items = [
            (
                self._hit_block(k, hit),
                [Link(_label(f"{k}. {hit.entry.label}"), hit.entry.id)]
                + [Link(_label("Server ruling: " + r.title), r.id) for r in self.rulings(hit.entry.id)],
            )
            for k, hit in enumerate(hits, start=1)
        ]
        if _unsure(hits):
            items[0] = (UNSURE_NOTE + "\n\n" + items[0][0], items[0][1])
        pages = number_pages(pack(items, ASK_PER_PAGE, description_budget(title, footer), "\n\n"), footer)
        return Answer(title, pages, kind=ASK, arg=question, hit_ids=[h.entry.id for h in hits])

    def _hit_block(self, number: int, hit: Hit) -> str:
        """One search result: the answering paragraph, the dates of that paragraph only, what amends it in
        the format (named and quoted, latest first), a restatement with other words, and its own lines."""
        entry = hit.entry
        source = SOURCE_LABELS.get(entry.source, entry.source)
        if entry.source == "house":
            kind = "Server ruling" if is_scoped(entry.id) else "House ruling"
            source = kind + ruling_credit(entry, escaped=False)
        head = f"**{number}. {escape(entry.label)}** — {escape(source)}"
        if not entry.paragraphs:  # a bare heading: say what is under it rather than quote nothing
            under = ", ".join(escape(c.label) for c in self.children(entry.id)) or "nothing"
            return "\n".join([head, f"(A heading with no text of its own; under it: {under}.)",
                              self.citation_text(entry, 400)])
        paragraph = hit.paragraph if hit.paragraph is not None and hit.paragraph < len(entry.paragraphs) else 0
        hit = Hit(hit.entry, hit.score, hit.snippet, paragraph, hit.changes)
        snippet = hit.snippet or entry.paragraphs[paragraph]
        # The engine's snippet is Markdown (bold query words); only mentions still need defusing.
        body = escape_mentions(snippet) if hit.snippet else escape(snippet)
        lines = [head, quote(shorten(body, 1000))]
        # Only the stamps that date the quoted paragraph (or the whole entry, labelled so): never another's.
        dating = [c for c in hit.changes if c.paragraph is None or c.paragraph == hit.paragraph]
        history = history_line(dating, entry, hit.paragraph)
        if history:
            lines.append(shorten(escape(history), 300))
        updates_shown = 0
        for rule in self.overriders(entry):
            if rule.source == "house":
                lines.append(f"House ruling **{escape(rule.label)}**{ruling_credit(rule)} applies:")
            else:
                earlier = rule.kind == "update" and updates_shown > 0
                updates_shown += rule.kind == "update"
                what = "Earlier" if earlier else f"In {escape(SOURCE_LABELS.get(rule.source, rule.document))}"
                when = next((f" ({_date_text(c)})" for c in rule.changes if rule.kind == "update"), "")
                lines.append(f"{what}, **{escape(rule.label)}**{when} amends this:")
            lines.append(quote(shorten(escape(rule.text), 300)))
        for r in entry.restated:
            other = self.lookup(r.entry)
            if r.differs and other is not None and hit.paragraph in r.paragraphs:
                lines.append(f"The ruleset states this again in **{escape(other.label)}**, in other words:")
                lines.append(quote(shorten(escape("\n".join(other.paragraphs[k] for k in r.other_paragraphs)), 500)))
        for ruling in self.rulings(entry.id):
            lines.append(f"This server's ruling applies: **{escape(ruling.title)}**{ruling_credit(ruling)}")
        lines.append(self.citation_text(entry, 400, hit.paragraph))
        return "\n".join(lines)

    # -- change history, banned list, messages -----------------------------------------------------

    def changes(
        self, records: Sequence[ChangeRecord], since: str | None, until: str | None, source: str | None
    ) -> Answer:
        """Change history, newest first, ten records per page."""
        arg = f"{since or ''}|{until or ''}|{source or ''}"
        span = " ".join(p for p in (f"since {since}" if since else "", f"until {until}" if until else "") if p)
        where = SOURCE_LABELS.get(source, source) if source else "all sources"
        title = f"Rule changes — {where}" + (f", {span}" if span else "")
        ordered = sorted(records, key=lambda r: sort_date(r.change), reverse=True)
        if not ordered:
            return self.message(title, "No dated changes in that range.", kind=CHANGES, arg=arg)
        footer = f"{len(ordered)} change{'s' if len(ordered) != 1 else ''}, newest first"
        items = [(self._change_line(r), [Link(_label(r.entry.label), r.entry.id)]) for r in ordered]
        pages = number_pages(pack(items, CHANGES_PER_PAGE, description_budget(title, footer), "\n"), footer)
        return Answer(title, pages, kind=CHANGES, arg=arg, hit_ids=[r.entry.id for r in ordered[:CHANGES_PER_PAGE]])

    def _change_line(self, record: ChangeRecord) -> str:
        """One dated change: date, kind, where (entry label, and the paragraph it dates when the entry has
        several, so two alike rows say which text each dates), its note."""
        change, entry = record.change, record.entry
        if entry.source == "house":  # the ruling's file title is noise here; say what it is and who ruled
            kind = "Server ruling" if is_scoped(entry.id) else "House ruling"
            where = f"{kind} › {entry.label}" + (f" ({entry.judge})" if entry.judge else "")
        else:
            parts = [*entry.section[-1:], entry.label] if entry.section[-1:] != [entry.title] else [entry.label]
            where = " › ".join(parts)
        line = f"**{_date_text(change)}** · {change.kind.capitalize()} · {escape(where)}{scope_text(change, entry)}"
        if change.note:
            line += f": {escape(change.note)}"
        return shorten(line, 380)

    def banned(self, result: BannedResult) -> Answer:
        """Whether what was typed is banned. A unique part of one banned name is that card; part of several
        lists them all as banned; "not on the list" only when no banned name matches, with the list's bans by
        kind of card named, since those can still cover a card the list does not name."""
        if result.record is None and result.matches:
            return self._banned_several(result)
        if result.record is None:
            links = [Link(_label(e.title), e.id) for e in result.near]
            near = ", ".join(f"**{escape(e.title)}**" for e in result.near)
            text = f"“{echo(result.query)}” is not named on {escape(SOURCE_LABELS['obsidian-hand'])}'s banned list."
            kinds = [e for e in result.kinds if e not in result.near]
            if kinds:
                text += "\nThe list also bans by kind of card: " + "; ".join(
                    f"**{escape(e.title)}**" for e in kinds
                ) + ". Check whether the card is one of those."
                links += [Link(_label(e.title), e.id) for e in kinds]
            if near:
                text += f"\nClosest banned names: {near}."
            return self.message("Not on the banned list", text, kind=BANNED, arg=result.query, links=links)
        record = result.record
        lines = [f"**{escape(record.title)}** is **banned** in {escape(record.document)}."]
        if result.how == "version":
            lines.insert(
                0,
                f"The banned list names one version of “{echo(result.query)}”; other versions (another "
                "subtitle or experience level) are not named on it.",
            )
        elif result.how == "partial":
            lines.append(f"(“{echo(result.query)}” is part of this card's name, and of no other banned card's.)")
        if record.group:
            lines.append(f"Category: {escape(record.group)}")
        if result.banned_on:
            lines.append(f"Banned on: {result.banned_on}")
        blocks = ["\n".join(lines)]
        blocks += [escape(p) for p in record.paragraphs if p.strip() and p.strip() != record.title]
        title = f"{'One version banned' if result.how == 'version' else 'Banned'}: {escape(record.title)}"
        footer = f"{SOURCE_LABELS.get(record.source, record.source)} · banned list"
        pages = self._finish(title, blocks, self._record_fields(record), footer)
        return Answer(
            title=shorten(title, TITLE_LIMIT),
            pages=pages,
            kind=BANNED,
            arg=result.query,
            url=self.entry_url(record),
            colour=ERROR_COLOUR,
            hit_ids=[record.id],
        )

    def _banned_several(self, result: BannedResult) -> Answer:
        """What was typed is part of several banned names: every one of them is banned; list them."""
        rows = []
        for record in result.matches:
            facts = [escape(record.group)] if record.group else []
            rows.append(f"- **{escape(record.title)}** — banned" + (f" ({', '.join(facts)})" if facts else ""))
        document = result.matches[0].document
        text = (
            f"“{echo(result.query)}” is part of the name of {len(result.matches)} cards on the banned list of "
            f"{escape(document)}, all banned:\n" + "\n".join(rows)
        )
        first, last = result.matches[0].location, result.matches[-1].location
        where = f"{document} › {result.matches[0].section[0]}" if result.matches[0].section else document
        cite = f"{where}, {line_span(first.first_line, last.last_line)} · {first.file}"
        title = shorten(f"Banned cards matching “{echo(result.query)}”", TITLE_LIMIT)
        footer = f"{SOURCE_LABELS['obsidian-hand']} · banned list"
        links = [Link(_label(e.title), e.id) for e in result.matches]
        return Answer(
            title=title,
            pages=self._finish(title, [text], [Field("Citation", escape(cite))], footer, links),
            kind=BANNED,
            arg=result.query,
            colour=ERROR_COLOUR,
            hit_ids=[e.id for e in result.matches],
        )

    def banned_list(self, results: Sequence[BannedResult]) -> Answer:
        """The whole banned list grouped by category as printed, each card with the date it was banned."""
        listed = [(r.record, r.banned_on) for r in results if r.record is not None]
        if not listed:
            return self.message("Banned list", "No banned list is loaded.", kind=BANNED)
        groups: dict[str, list[str]] = {}
        for record, banned_on in listed:
            when = f" — banned {banned_on}" if banned_on else ""
            groups.setdefault(record.group or "Other", []).append(f"- {escape(record.title)}{when}")
        blocks = [f"**{escape(group)}**\n" + "\n".join(lines) for group, lines in groups.items()]
        first, last = listed[0][0], listed[-1][0]
        where = " › ".join([first.document, *first.section[:1]])
        loc, end = first.location, last.location
        span = f"{loc.file}, lines {loc.first_line}-{end.last_line}" if loc.file == end.file else loc.file
        title = f"Banned list — {escape(first.document)}"
        footer = f"{len(listed)} lines · dates from the update log where it gives one"
        return Answer(
            title=shorten(title, TITLE_LIMIT),
            pages=self._finish(title, blocks, [Field("Citation", escape(f"{where} ({span})"))], footer),
            kind=BANNED,
            arg="",
            colour=ERROR_COLOUR,
            hit_ids=[record.id for record, _ in listed],
        )

    def message(
        self,
        title: str,
        text: str,
        *,
        kind: str = DEFINE,
        arg: str = "",
        links: Sequence[Link] = (),
        colour: int = NEUTRAL_COLOUR,
    ) -> Answer:
        """A short answer (not found, an error, a refusal) in the same structure as a full one."""
        pages = self._finish(title, [text], [], "", links)
        return Answer(shorten(title, TITLE_LIMIT), pages, kind=kind, arg=arg, colour=colour)


def quote(text: str) -> str:
    """Discord block quote of (already escaped) text, line by line."""
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def ruling_credit(entry: Entry, *, escaped: bool = True) -> str:
    """`` (Judge, 2026-11-01, Event)`` for a house ruling: who ruled, when (the earliest date), and at
    which event, as far as known."""
    dates = sorted(c.date for c in entry.changes if c.date)
    parts = [entry.judge or "", dates[0] if dates else "", entry.event or ""]
    text = ", ".join(p for p in parts if p)
    if not text:
        return ""
    return f" ({escape(text) if escaped else text})"


def _rule_kind(entry: Entry) -> str:
    """Button prefix for an entry that amends another: a house ruling is not the format's rule."""
    return "House ruling" if entry.source == "house" else "Format rule"


def _label(text: str) -> str:
    """Button labels are plain text (no Markdown), at most 80 characters."""
    return shorten(" ".join(text.split()), BUTTON_LABEL_LIMIT) or "Open"


def _unique_links(links: Iterable[Link]) -> list[Link]:
    seen: set[str] = set()
    unique = []
    for link in links:
        if link.entry_id not in seen:
            seen.add(link.entry_id)
            unique.append(link)
    return unique[:MAX_LINKS]


# One left-to-right pass: our own links, bold and code markers, and escapes. Escapes are consumed where they
# stand, so an escaped "[" or "*" is never taken for markup. Link text and address are bounded and cannot
# cross a bracket, so a failed link attempt never rescans text another attempt covers.
_PLAIN = re.compile(
    r"\[(?P<text>[^\[\]\n\\]{1,200})\]\((?P<href>https?://[^()\s\[\]\\<]+)\)|\*\*|`|\\(?P<escaped>[\s\S])"
)
_MENTION_ESCAPE = re.compile(rf"@{ZWSP}(?={ZWSP}*+(?:everyone|here|[!&]?\d))")


def _plain_piece(match: re.Match[str]) -> str:
    if match.group("text") is not None:
        return f"{match.group('text')} <{match.group('href')}>"
    return match.group("escaped") or ""


def plain(markdown: str) -> str:
    """Discord Markdown as terminal text: drop bold markers and undo escapes (rule text is verbatim again).

    The exact inverse of ``escape``: ``plain(escape(text)) == text`` for every text; linear time.
    """
    return _PLAIN.sub(_plain_piece, _MENTION_ESCAPE.sub("@", markdown))


def to_text(answer: Answer, pages: Iterable[int] | None = None) -> str:
    """The console form of an answer: every page, fields as labelled lines, buttons as ids to open."""
    out = [plain(answer.title), "=" * min(len(plain(answer.title)), 78)]
    if answer.url:
        out.append(answer.url)
    chosen = range(len(answer.pages)) if pages is None else pages
    links: list[Link] = []
    for n in chosen:
        page = answer.page(n)
        if len(answer.pages) > 1:
            out.append(f"--- page {n + 1}/{len(answer.pages)} ---")
        out.append(plain(page.description))
        links += page.links
    last = answer.page(len(answer.pages) - 1)
    for f in last.fields:
        out.append(f"{plain(f.name)}: {plain(f.value)}")
    links = _unique_links(links)
    if links:
        out.append("Open: " + "; ".join(f"{plain(ln.label)} (/open {ln.entry_id})" for ln in links))
    footer = re.sub(r" · page \d+/\d+$", "", last.footer)
    if footer:
        out.append(f"[{plain(footer)}]")
    return "\n".join(out)


def _unsure(hits: Sequence[Hit]) -> bool:
    """Whether no ranked hit stands out (each below ``UNSURE``); hits not ranked so (a server ruling) don't count."""
    ranked = [h.confidence for h in hits if h.confidence is not None]
    return bool(ranked) and max(ranked) < UNSURE

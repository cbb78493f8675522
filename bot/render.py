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

from glossary.export_html import entry_href
from glossary.model import SOURCE_LABELS, Change, Entry
from index.markdown import ZWSP, escape_markdown, escape_mentions
from index.results import BannedResult, ChangeRecord, DefineResult, Hit, citation

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

ASK_LIMIT = 15
ASK_PER_PAGE = 3
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


def history_line(changes: Iterable[Change]) -> str:
    """``Added 2007-09-20 · Changed 2008-05-21: <note>``, oldest first, identical stamps merged."""
    seen: set[tuple[str, str | None, str | None]] = set()
    parts: list[str] = []
    ordered = sorted(changes, key=lambda c: sort_date(c) or "9999")  # undated last
    for change in ordered:
        key = (change.kind, change.date, change.note)
        if key in seen:
            continue
        seen.add(key)
        text = f"{change.kind.capitalize()} {_date_text(change)}"
        if change.note:
            text += f": {change.note}"
        parts.append(text)
    return " · ".join(parts)


def sort_date(change: Change) -> str:
    """The date to order by: the evident intended date when the printed one is impossible."""
    return change.probable_date or change.date or ""


class Renderer:
    """Turns results into Answers; ``lookup`` resolves entry ids (overrides, cross-references)."""

    def __init__(self, lookup: Callable[[str], Entry | None], rulebook_url: str | None = None) -> None:
        self.lookup = lookup
        self.rulebook_url = rulebook_url.rstrip("/") if rulebook_url else None

    # -- shared pieces ---------------------------------------------------------------------------

    def rulebook_link(self, entry: Entry) -> str | None:
        """The entry's page in the exported HTML rulebook, when RULEBOOK_URL is set."""
        return f"{self.rulebook_url}/{entry_href(entry)}" if self.rulebook_url else None

    def entry_url(self, entry: Entry) -> str | None:
        """The title link: the exported rulebook if there is one, else the source page."""
        return self.rulebook_link(entry) or entry.url

    def citation_text(self, entry: Entry, limit: int = FIELD_VALUE_LIMIT) -> str:
        """Citation plus the links a judge can click: the source page and the exported rulebook.

        Within ``limit`` the citation words are shortened first: a link cut in half would not work.
        """
        links = []
        if entry.url:
            links.append(f"[source page]({entry.url})")
        rulebook = self.rulebook_link(entry)
        if rulebook:
            links.append(f"[rulebook]({rulebook})")
        tail = " · " + " · ".join(links) if links else ""
        if len(tail) > limit // 2:  # absurdly long URLs: keep the citation readable, drop the links
            tail = ""
        return shorten(escape(citation(entry)), limit - len(tail)) + tail

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

    def entry(self, entry: Entry, *, kind: str = ENTRY, arg: str | None = None, extra: Sequence[Link] = ()) -> Answer:
        """An entry in full: format rules amending it first, then house rulings, then its verbatim text,
        history and citation."""
        blocks: list[str] = []
        fields: list[Field] = []
        found = [e for e in (self.lookup(i) for i in entry.overridden_by) if e is not None]
        # The format's own rules first, then the server's house rulings (never called the format's rule).
        overriders = [e for e in found if e.source != "house"] + [e for e in found if e.source == "house"]
        for rule in overriders:
            if rule.source == "house":
                blocks.append(f"**House ruling — {escape(rule.title)}**{ruling_credit(rule)}:")
            else:
                label = SOURCE_LABELS.get(rule.source, rule.document)
                blocks.append(f"**{escape(label)} rule — {escape(rule.title)}** (applies in that format):")
            blocks.extend(escape(p) for p in rule.paragraphs)
            history = history_line(rule.changes)
            blocks.append(f"— {self.citation_text(rule)}" + (f"\n— {escape(history)}" if history else ""))
        if overriders:
            blocks.append(f"**{escape(SOURCE_LABELS.get(entry.source, entry.document))} text:**")
        blocks.extend(escape(p) for p in entry.paragraphs)
        for label, wording in (("Old", entry.old_wording), ("New", entry.new_wording)):
            if wording and wording not in entry.text:
                blocks.append(f"**{label}:**\n{escape(wording)}")

        facts = []
        if entry.group:
            facts.append(("Category" if entry.kind == "banned" else "Group") + f": {escape(entry.group)}")
        if entry.source == "house":
            facts.append("House ruling" + ruling_credit(entry))
        elif entry.judge:
            facts.append(f"Ruled by {escape(entry.judge)}")
        if entry.overrides:
            names = [self._name(i) for i in entry.overrides]
            verb = "Applies to" if entry.source == "house" else "Overrides in this format"
            facts.append(f"{verb}: " + ", ".join(escape(n) for n in names))
        if facts:
            fields.append(Field("About", "\n".join(facts)))
        fields += self._record_fields(entry)

        links = [Link(_label(r.text), r.target) for r in entry.see_also if r.target]
        links += [Link(_label(_rule_kind(r) + ": " + r.title), r.id) for r in overriders]
        applies = "Applies to: " if entry.source == "house" else "Overrides: "
        links += [Link(_label(applies + self._name(i)), i) for i in entry.overrides]
        links += list(extra)
        links = [ln for ln in links if ln.entry_id != entry.id]
        footer = f"{SOURCE_LABELS.get(entry.source, entry.source)} · {entry.kind} · {entry.id}"
        title = shorten(escape(entry.title), TITLE_LIMIT)
        return Answer(
            title=title,
            pages=self._finish(title, blocks, fields, footer, links),
            kind=kind,
            arg=entry.id if arg is None else arg,
            url=self.entry_url(entry),
            colour=COLOURS.get(entry.source, NEUTRAL_COLOUR),
            hit_ids=[entry.id, *(r.id for r in overriders)],
        )

    def _record_fields(self, entry: Entry) -> list[Field]:
        """The History (when dated) and Citation fields every full answer ends with."""
        history = history_line(entry.changes)
        fields = [Field("History", escape(history))] if history else []
        return [*fields, Field("Citation", self.citation_text(entry))]

    def _name(self, entry_id: str) -> str:
        found = self.lookup(entry_id)
        return found.title if found else entry_id

    def define(self, term: str, result: DefineResult) -> Answer:
        if result.entry is not None:  # a confident guess: still offer the other candidates
            others = [Link(_label("Or: " + c.title), c.id) for c in result.candidates if c.id != result.entry.id]
            return self.entry(result.entry, extra=others)
        links = [Link(_label(c.title), c.id) for c in result.candidates]
        if links:
            text = "Did you mean: " + ", ".join(f"**{escape(c.title)}**" for c in result.candidates) + "?"
        else:
            text = "Nothing in the rules matches that. Try `/ask` with a whole question."
        return self.message(f"No entry for “{echo(term)}”", text, kind=DEFINE, arg=term, links=links)

    def rule(self, ref: str, hits: Sequence[Hit]) -> Answer:
        if not hits:
            return self.message(
                f"No section matches “{echo(ref)}”",
                "Try the section's number or name, e.g. `Cardinal Rule 2` or `Deck Construction`.",
                kind=RULE,
                arg=ref,
            )
        others = [Link(_label("Also: " + h.entry.title), h.entry.id) for h in hits[1:]]
        return self.entry(hits[0].entry, kind=RULE, arg=ref, extra=others)

    # -- search results ----------------------------------------------------------------------------

    def ask(self, question: str, hits: Sequence[Hit]) -> Answer:
        """Top results, a few per page, each with its answering paragraph, citation and dates."""
        title = shorten(f"Rules for: {echo(' '.join(question.split()))}", TITLE_LIMIT)
        if not hits:
            return self.message(
                title,
                "No rules text matches that question. Try other words, or `/define` a term.",
                kind=ASK,
                arg=question,
            )
        footer = "Open a result to read it in full"
        items = [
            (self._hit_block(k, hit), [Link(_label(f"{k}. {hit.entry.title}"), hit.entry.id)])
            for k, hit in enumerate(hits, start=1)
        ]
        pages = number_pages(pack(items, ASK_PER_PAGE, description_budget(title, footer), "\n\n"), footer)
        return Answer(title, pages, kind=ASK, arg=question, hit_ids=[h.entry.id for h in hits])

    def _hit_block(self, number: int, hit: Hit) -> str:
        entry = hit.entry
        source = SOURCE_LABELS.get(entry.source, entry.source)
        if entry.source == "house":
            source = "House ruling" + ruling_credit(entry, escaped=False)
        head = f"**{number}. {escape(entry.title)}** — {escape(source)}"
        snippet = hit.snippet or (entry.paragraphs[hit.paragraph] if hit.paragraph is not None else entry.text)
        # The engine's snippet is Markdown (bold query words); only mentions still need defusing.
        body = escape_mentions(snippet) if hit.snippet else escape(snippet)
        body = shorten(body, 1000)
        quoted = "\n".join("> " + line if line else ">" for line in body.split("\n"))
        lines = [head, quoted]
        history = history_line(hit.changes or entry.changes)
        if history:
            lines.append(shorten(escape(history), 300))
        by_source = {found.source for found in (self.lookup(i) for i in entry.overridden_by) if found is not None}
        if by_source - {"house"}:
            lines.append(f"Overridden in {escape(SOURCE_LABELS['obsidian-hand'])} — open it to see the format's rule")
        if "house" in by_source:
            lines.append("A house ruling applies — open it to see the ruling")
        lines.append(self.citation_text(entry, 400))
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
        items = [(self._change_line(r), [Link(_label(r.entry.title), r.entry.id)]) for r in ordered]
        pages = number_pages(pack(items, CHANGES_PER_PAGE, description_budget(title, footer), "\n"), footer)
        return Answer(title, pages, kind=CHANGES, arg=arg, hit_ids=[r.entry.id for r in ordered[:CHANGES_PER_PAGE]])

    def _change_line(self, record: ChangeRecord) -> str:
        change, entry = record.change, record.entry
        if entry.source == "house":  # the ruling's file title is noise here; say what it is and who ruled
            where = f"House ruling › {entry.title}" + (f" ({entry.judge})" if entry.judge else "")
        else:
            parts = [*entry.section[-1:], entry.title] if entry.section[-1:] != [entry.title] else [entry.title]
            where = " › ".join(parts)
        line = f"**{_date_text(change)}** · {change.kind.capitalize()} · {escape(where)}"
        if change.note:
            line += f": {escape(change.note)}"
        return shorten(line, 380)

    def banned(self, result: BannedResult) -> Answer:
        if result.record is None:
            links = [Link(_label(e.title), e.id) for e in result.near]
            near = ", ".join(f"**{escape(e.title)}**" for e in result.near)
            text = f"“{echo(result.query)}” is not on {escape(SOURCE_LABELS['obsidian-hand'])}'s banned list."
            if near:
                text += f"\nClosest banned names: {near}."
            return self.message("Not banned", text, kind=BANNED, arg=result.query, links=links)
        record = result.record
        lines = [f"**{escape(record.title)}** is **banned** in {escape(record.document)}."]
        if record.group:
            lines.append(f"Category: {escape(record.group)}")
        if result.banned_on:
            lines.append(f"Banned on: {result.banned_on}")
        blocks = ["\n".join(lines)]
        blocks += [escape(p) for p in record.paragraphs if p.strip() and p.strip() != record.title]
        title = f"Banned: {escape(record.title)}"
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


def ruling_credit(entry: Entry, *, escaped: bool = True) -> str:
    """`` (Judge, 2026-11-01)`` for a house ruling: who ruled and when (the earliest date), if known."""
    dates = sorted(c.date for c in entry.changes if c.date)
    parts = [entry.judge or "", dates[0] if dates else ""]
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

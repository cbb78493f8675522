"""The Discord renderer: an ``Answer`` as embeds — the only place that writes Discord Markdown.

Rule text and user input are escaped here (``markdown_escape``'s single linear pass: discord.py's helpers
are super-linear on hostile text), the question's words are marked bold, quotations are clipped to what an
embed holds (saying so with an ellipsis), and pages are cut at paragraph boundaries and sized against
Discord's limits on the final strings. Every step is linear in its input: one huge or adversarial
paragraph costs its length, never its length squared. ``plain`` undoes the escaping exactly (tests use it
to read a page as text). This module never imports discord.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.app.answer import (
    Answer,
    Block,
    Citation,
    Dates,
    Fact,
    Group,
    Inline,
    Line,
    Link,
    Note,
    Quote,
    Relation,
    Run,
    plain_text,
)
from bot.app.commands import ENTRY
from bot.app.compose import history_line
from bot.app.renderers.markdown_escape import ZWSP, escape_markdown, escape_mentions
from index.results import citation as citation_words

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

@dataclass(frozen=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass
class Page:
    description: str
    fields: list[Field] = field(default_factory=list)
    footer: str = ""
    links: list[Link] = field(default_factory=list)


@dataclass
class Message:
    """An answer as Discord shows it: embed pages; ``kind``/``arg`` say how to rebuild it, so buttons can
    carry only those."""

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


def quote(text: str) -> str:
    """Discord block quote of (already escaped) text, line by line."""
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def marked(text: str, marks: Sequence[tuple[int, int]]) -> str:
    """``text`` escaped, the ``marks`` spans in **bold** (each piece escaped on its own, so a piece that
    starts with a list or quote marker cannot become one), mentions defused."""
    out, pos = [], 0
    for s, e in marks:
        if s < pos or e <= s or e > len(text):
            continue
        out.append(escape_markdown(text[pos:s]))
        out.append(f"**{escape_markdown(text[s:e])}**")
        pos = e
    out.append(escape_markdown(text[pos:]))
    return escape_mentions("".join(out))


def close_bold(text: str) -> str:
    """``text`` (escaped, marked, maybe clipped before an ``ELLIPSIS``) with a bold that a clip left open
    closed before the ellipsis, or dropped when nothing of it is left: an open ``**`` would bold the rest."""
    pos, opened = 0, -1
    while pos < len(text):
        if text[pos] == "\\":
            pos += 2
        elif text.startswith("**", pos):
            opened = -1 if opened >= 0 else pos
            pos += 2
        else:
            pos += 1
    if opened < 0:
        return text
    head, tail = (text[: -len(ELLIPSIS)], ELLIPSIS) if text.endswith(ELLIPSIS) else (text, "")
    if not head[opened + 2:].strip():
        return head[:opened].rstrip() + tail
    return head.rstrip() + "**" + tail


def _run(run: Run) -> str:
    if run.style == "code":
        return f"`{run.text}`"  # our own command text only (``answer.code``)
    text = marked(run.text, run.marks) if run.marks else escape(run.text)
    if run.href:
        return f"[{text}]({run.href})"
    if run.style == "strong":
        return f"**{text}**"
    if run.style == "emph":
        return f"*{text}*"
    return text


def inline(parts: Inline) -> str:
    return "".join(_run(r) for r in parts)


# How long a quotation may run in each place before it is clipped (the full text is one click away).
QUOTE_CLIP = {"hit": 1000, "related": 300, "restated": 500}
LINE_CLIP = {"row": 380}
DATES_CLIP = {"hit": 300}
CITATION_ROOM = {"hit": 400, "related": 400}


def citation_text(c: Citation, limit: int = FIELD_VALUE_LIMIT) -> str:
    """Citation words plus the links a judge can click; within ``limit`` the words are shortened first (a
    link cut in half would not work)."""
    links = [f"[{label}]({url})" for label, url in c.links]
    tail = " · " + " · ".join(links) if links else ""
    if len(tail) > limit // 2:  # absurdly long URLs: keep the citation readable, drop the links
        tail = ""
    return shorten(escape(citation_words(c.entry, c.paragraph, c.until)), limit - len(tail)) + tail


def lines_of(block: Block) -> list[str]:
    """A block as Discord Markdown paragraphs (separate blocks of a page)."""
    if isinstance(block, Line):
        text = inline(block.parts)
        return [shorten(text, LINE_CLIP[block.role]) if block.role in LINE_CLIP else text]
    if isinstance(block, Note):
        return [f"*{inline(block.parts)}*"]
    if isinstance(block, Quote):
        marks = block.sentences or block.marks  # the sentence that answers in bold, else the question's words
        body = marked(block.text, marks) if marks else escape(block.text)
        if block.inline:
            return [body]
        short = close_bold(shorten(body, QUOTE_CLIP.get(block.role, 1000)))
        if short == body:
            return [quote(body)]
        return [quote(short) + "\n" + rest_at(citation_words(block.entry, block.paragraph))]
    if isinstance(block, Citation):
        text = citation_text(block, CITATION_ROOM.get(block.role, FIELD_VALUE_LIMIT))
        return [f"— {text}" if block.role == "dash" else text]
    if isinstance(block, Dates):
        text = escape(history_line(block.changes, block.entry, block.paragraph))
        if block.role in DATES_CLIP:
            text = shorten(text, DATES_CLIP[block.role])
        return [f"— {text}" if block.role == "dash" else text] if text else []
    if isinstance(block, Relation):
        return _relation(block)
    if isinstance(block, Group):
        return ["\n".join(line for child in block.blocks for line in lines_of(child))]
    raise TypeError(f"unknown block {type(block).__name__}")


def rest_at(where: str) -> str:
    """The line under a quotation shortened for Discord: where the whole text stands (its citation words), so
    the "…" never hides where the rest is."""
    return escape(f"(Shortened here: the whole text is at {where}.)")


def _related_quote(rel: Relation, limit: int) -> list[str]:
    """A related text quoted (clipped to ``limit``), then its citation; when clipped, the citation line says
    that the whole text stands there."""
    assert rel.quote is not None
    body = escape(rel.quote.text)
    short = shorten(body, limit)
    cited = citation_text(rel.citation, CITATION_ROOM["related"]) if rel.citation is not None else ""
    if short == body:
        return [quote(body), *([cited] if cited else [])]
    where = cited or escape(citation_words(rel.quote.entry, rel.quote.paragraph))
    return [quote(short), f"(Shortened here: the whole text is at {where}.)"]


def _relation(rel: Relation) -> list[str]:
    """Under a search result: the heading, the related text quoted (clipped) and its citation, as one block.
    In an entry shown whole: the heading in bold, the related text in full, then its citation and dates."""
    heading = inline(rel.heading)
    if rel.role == "entry":  # the heading in bold as a whole (no bold nested inside it)
        words = plain_text(rel.heading).rstrip(":")
        out = [f"**{escape(words)}**:" if words else ""]
        if rel.quote is not None:
            out += [escape(p) for p in rel.entry.paragraphs] if rel.quote.text == rel.entry.text else [
                escape(rel.quote.text)]
        cited = [f"— {citation_text(rel.citation)}"] if rel.citation is not None else []
        history = history_line(rel.dates.changes, rel.dates.entry) if rel.dates is not None else ""
        if history:
            cited.append(f"— {escape(history)}")
        return [p for p in out if p] + (["\n".join(cited)] if cited else [])
    lines = [heading]
    if rel.quote is not None:
        limit = 400 if rel.role == "several" else QUOTE_CLIP.get(rel.quote.role, 300)
        lines += _related_quote(rel, limit)
    elif rel.citation is not None:
        lines.append(citation_text(rel.citation, CITATION_ROOM["related"]))
    return ["\n".join(lines)]


def _fields(facts: Sequence[Fact]) -> list[Field]:
    return [Field(f.name, "\n".join(line for b in f.blocks for line in lines_of(b))) for f in facts]


def _label(text: str) -> str:
    """Button labels are plain text (no Markdown), at most 80 characters."""
    return shorten(" ".join(text.split()), BUTTON_LABEL_LIMIT) or "Open"


def _unique_links(links: Iterable[Link]) -> list[Link]:
    seen: set[str] = set()
    unique = []
    for link in links:
        if link.entry_id not in seen:
            seen.add(link.entry_id)
            unique.append(Link(_label(link.label), link.entry_id))
    return unique[:MAX_LINKS]


def _finish(
    title: str, blocks: Sequence[str], fields: Sequence[Field], footer: str, links: Sequence[Link]
) -> list[Page]:
    """Lay out ``blocks`` as pages that each carry the fields, within every embed limit."""
    fields = [
        Field(shorten(f.name, FIELD_NAME_LIMIT), shorten(f.value, FIELD_VALUE_LIMIT), f.inline) for f in fields
    ][:FIELD_COUNT_LIMIT]
    footer = shorten(footer, FOOTER_LIMIT - _FOOTER_PAGE_RESERVE)
    texts = paginate(blocks, description_budget(title, footer, fields))
    unique = _unique_links(links)
    return number_pages([Page(text, list(fields), "", unique) for text in texts], footer)


def colour_of(answer: Answer) -> int:
    if answer.tone in ("banned", "error"):
        return ERROR_COLOUR
    if answer.tone == "rule" and answer.source:
        return COLOURS.get(answer.source, NEUTRAL_COLOUR)
    return NEUTRAL_COLOUR


def render(answer: Answer) -> Message:
    """The answer as Discord embed pages."""
    title = shorten(escape(answer.title), TITLE_LIMIT)
    if answer.items:
        separator = "\n" if answer.compact else "\n\n"
        footer = answer.footer
        items = [("\n\n".join(line for b in item.blocks for line in lines_of(b)), item.links) for item in answer.items]
        pages = pack(items, answer.per_page or len(items), description_budget(title, footer), separator)
        for page in pages:
            page.links = _unique_links(page.links)
        pages = number_pages(pages, footer)
    else:
        blocks = [line for b in answer.body for line in lines_of(b)]
        pages = _finish(title, blocks, _fields(answer.facts), answer.footer, answer.links)
    message = Message(title, pages, answer.kind, answer.arg, answer.url, colour_of(answer), list(answer.hit_ids))
    if answer.notice is not None:
        with_notice(message, inline(answer.notice.parts))
    return message


def with_notice(message: Message, note: str) -> Message:
    """``message`` with ``note`` (italic) opening its first page, still within Discord's embed limits."""
    page = message.pages[0]
    note = f"*{note}*"
    room = min(DESCRIPTION_LIMIT, EMBED_TOTAL_LIMIT - embed_size(message.title, page) + len(page.description))
    text = f"{note}\n\n{page.description}" if page.description else note
    page.description = shorten(text, max(room, len(note)))
    return message


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
    """Discord Markdown read back as text: bold markers dropped and escapes undone (``plain(escape(t)) == t``
    for every text; linear time). For tests and logs that read a rendered page; front ends render text
    themselves (``bot.app.renderers.text``)."""
    return _PLAIN.sub(_plain_piece, _MENTION_ESCAPE.sub("@", markdown))


def page_text(message: Message, n: int = 0) -> str:
    """One page of a message as plain text: its description, then its fields."""
    page = message.page(n)
    parts = [plain(page.description)] + [f"{plain(f.name)}: {plain(f.value)}" for f in page.fields]
    return "\n".join(parts)

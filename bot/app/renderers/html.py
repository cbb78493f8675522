"""The HTML renderer: answer-model blocks (``bot.app.answer``) as HTML, for the exported rulebook.

What it says is what the composer decided: every relation is introduced by the composer's own heading
("... amends paragraph 2 (in that format)", "... states this in its own words in ..."), its related text
quoted with its own citation and dates. It words nothing of its own beyond layout: the paragraph an
amendment concerns gets it underneath (``entry_parts``), a paragraph reference becomes a link to that
paragraph's anchor.

Rule text is never altered: plain-text sources are written into the page as text, escaping only the
characters HTML itself needs (``&``, ``<``, ``>``), so the page source reads like the rules; bullets
(``•``, ``*``, ``**``, ``–``, ``- ``) become nested lists by their indentation and marker, each item
still showing its marker as written. House rulings, written in Markdown, are rendered as Markdown with
raw HTML disabled and only http(s), mailto and relative links kept, checked after character references
are decoded the way a browser decodes them.
"""

from __future__ import annotations

import dataclasses
import html
import re
import xml.etree.ElementTree as etree
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import urlsplit

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markdown.util import AMP_SUBSTITUTE

from bot.app.anchors import entry_href, fragment, paragraph_href, paragraph_id
from bot.app.answer import (
    Answer,
    Block,
    Citation,
    Dates,
    Group,
    Inline,
    Line,
    Note,
    Quote,
    Relation,
    Run,
    plain_text,
)
from bot.app.compose import scope_text, source_label
from glossary.model import Change, Entry, line_span, ordered_changes, paragraph_name
from glossary.model import citation as citation_words

_SAFE_SCHEMES = {"http", "https", "mailto"}  # and relative URLs (no scheme at all)
# What a browser's URL parser ignores: leading/trailing C0 controls and spaces, tabs and newlines anywhere.
_URL_EDGES = "".join(map(chr, range(0x21)))
_URL_IGNORED = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")
# A bullet: optional indentation (spaces, no-break spaces, tabs), a marker, then a space and text. "****Both"
# (a footnote mark with no space) is not a bullet. The marker stays in the text; the nesting shows the level.
INDENT = " \t\u00a0"  # spaces, tabs and no-break spaces before a bullet: its nesting shows instead
_BULLET = re.compile(r"^(?P<indent>[ \t\u00a0]*)(?P<marker>\*+|[•·–—-])[ \t\u00a0]+\S")


def text(value: str) -> str:
    """Text for an element's content: only ``&``, ``<`` and ``>`` escaped, everything else as written."""
    return html.escape(value, quote=False)


def attr(value: str) -> str:
    """Text for a double-quoted attribute value."""
    return html.escape(value, quote=True)


def render_literal(value: str) -> str:
    """One plain-text paragraph as an HTML paragraph, shown exactly as written.

    Nothing is interpreted: ``*``, ``[``, ``#`` or ``1.`` stay characters, and the page's stylesheet keeps
    spaces and line breaks (``white-space: pre-wrap``), so only what HTML needs is escaped.
    """
    return f"<p>{text(value)}</p>"


# -- safe Markdown (house rulings) -------------------------------------------------------------------------


class _SafeLinks(Treeprocessor):
    """Drop link targets and image sources with a scheme other than http(s)/mailto (e.g. ``javascript:``)."""

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not safe_url(value):
                    del element.attrib[attribute]


def browser_url(value: str) -> str:
    """The URL a browser follows for an attribute value as Python-Markdown writes it out.

    Markdown keeps character references in attributes (``&#106;avascript:``, ``javascript&#58;``) and
    browsers decode them, then drop tabs and newlines anywhere (``java&#9;script:``) and control characters
    and spaces at the ends. Doing the same before looking at the scheme is the only sound order; decoding
    here may go further than a browser would (a reference without ``;``), which can only make a check
    stricter.
    """
    decoded = html.unescape(value.replace(AMP_SUBSTITUTE, "&"))
    return decoded.translate(_URL_IGNORED).strip(_URL_EDGES)


def safe_url(url: str) -> bool:
    """True for a relative, http(s) or mailto URL, judged on what the browser will see.

    A colon before the first ``/``, ``?`` or ``#`` with anything but an allowed scheme in front of it is
    refused too: a browser may not call that a scheme today, but nothing in a rulebook needs one.
    """
    seen = browser_url(url)
    try:
        urlsplit(seen)
    except ValueError:  # e.g. "http://[" (an unclosed IPv6 host): not a link anyone meant
        return False
    first = re.search(r"[:/?#]", seen)
    if first is None or first.group() != ":":
        return True  # no scheme: relative
    scheme = _SCHEME.fullmatch(seen[: first.end()])
    return scheme is not None and scheme.group(1).lower() in _SAFE_SCHEMES


class _SafeMarkdown(Extension):
    """Markdown without raw HTML (it is shown as text) and without unsafe link schemes."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (library API)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeLinks(md), "safe_links", 0)


def render_markdown(value: str) -> str:
    """A house ruling's Markdown source, rendered as Markdown (it was written as Markdown), safely."""
    return markdown.markdown(value, extensions=[_SafeMarkdown()])


def is_markdown(entry: Entry) -> bool:
    """House rulings were written in Markdown; every other source is plain text."""
    return entry.source == "house"


def render_paragraph(entry: Entry, paragraph: str) -> str:
    """One paragraph as HTML, Markdown or literal by its source."""
    return render_markdown(paragraph) if is_markdown(entry) else render_literal(paragraph)


# -- facts about where a text stands ---------------------------------------------------------------------


def bullet_level(paragraph: str) -> tuple[int, int] | None:
    """How deep a bullet sits, as a sortable key: (indentation width, marker depth); None if no bullet.

    Indentation counts spaces and no-break spaces as one, tabs as four. ``**`` is one deeper than ``*``
    at the same indentation (the Obsidian Hand's "* Seppuku: …" / "** The above ability …").
    """
    m = _BULLET.match(paragraph)
    if m is None:
        return None
    indent = len(m["indent"].replace("\t", "    "))
    marker = m["marker"]
    return indent, len(marker) if marker.startswith("*") else 1


def source_lines(entry: Entry, index: int) -> str | None:
    """Where paragraph ``index`` stands in its file ("line 25", "lines 13–15"); None when not known."""
    if not 0 <= index < len(entry.lines):
        return None
    return line_span(*entry.lines[index]).replace("-", "–")  # the model's span, with a typographic dash


def file_name(path: str) -> str:
    """A source file as the published rulebook names it: the file's name, never the host's folders."""
    return PurePath(path).name or path


def published(entry: Entry) -> Entry:
    """``entry`` as a published page may cite it: its file by name only."""
    name = file_name(entry.location.file)
    if name == entry.location.file:
        return entry
    return dataclasses.replace(entry, location=dataclasses.replace(entry.location, file=name))


# -- the renderer ---------------------------------------------------------------------------------------


@dataclass
class EntryParts:
    """An entry's answer laid out for its article: what comes before its text (relations to the whole
    entry), the text itself (each paragraph anchored, an amendment under the paragraph it concerns) and
    what follows (restatements elsewhere, old and new wordings)."""

    before: list[str] = field(default_factory=list)
    text: str = ""
    after: list[str] = field(default_factory=list)


class HtmlRenderer:
    """Renders blocks as HTML fragments. ``lookup`` says which entries have an anchor to link to (the
    rulebook's own entries); an entry it does not know is named in text, never by a broken link."""

    def __init__(self, lookup: Callable[[str], Entry | None] | Mapping[str, Entry] | None = None) -> None:
        if lookup is None:
            self.lookup: Callable[[str], Entry | None] = lambda _entry_id: None
        elif isinstance(lookup, Mapping):
            self.lookup = lookup.get
        else:
            self.lookup = lookup

    # -- inline text and links ---------------------------------------------------------------------------

    def run(self, run: Run) -> str:
        body = self._marked(run.text, run.marks)
        if run.style == "strong":
            body = f"<strong>{body}</strong>"
        elif run.style == "emph":
            body = f"<em>{body}</em>"
        elif run.style == "code":
            body = f"<code>{body}</code>"
        if run.href and safe_url(run.href):
            return f'<a href="{attr(run.href)}">{body}</a>'
        return body

    @staticmethod
    def _marked(value: str, marks: Iterable[tuple[int, int]]) -> str:
        """``value`` escaped, its ``marks`` spans in ``<mark>``."""
        out, pos = [], 0
        for s, e in marks:
            if s < pos or e <= s or e > len(value):
                continue
            out += [text(value[pos:s]), f"<mark>{text(value[s:e])}</mark>"]
            pos = e
        out.append(text(value[pos:]))
        return "".join(out)

    def inline(self, parts: Inline) -> str:
        return "".join(self.run(r) for r in parts)

    def link(self, entry_id: str, label: str | None = None) -> str:
        """A link to an entry's anchor, or plain text when the entry is not in the rulebook (never a broken
        link). The default text is the entry's label, which tells same-titled entries apart."""
        target = self.lookup(entry_id)
        if target is None:
            return text(label or entry_id)
        return f'<a href="{attr(entry_href(target))}">{text(label or target.label)}</a>'

    def paragraph_link(self, entry: Entry, index: int, label: str) -> str:
        if self.lookup(entry.id) is None:
            return text(label)
        return f'<a href="{attr(paragraph_href(entry, index))}">{text(label)}</a>'

    # -- paragraphs -------------------------------------------------------------------------------------

    @staticmethod
    def cite(entry: Entry, index: int) -> str:
        """The paragraph's number and its own source line(s), linking to its anchor (not copied with the text)."""
        where = source_lines(entry, index)
        href = attr(f"#{fragment(paragraph_id(entry, index))}")
        # <wbr>: the citation may wrap to its own line instead of dragging the paragraph's last word along
        return f'<wbr><a class="cite" href="{href}">¶{index + 1}{f" · {where}" if where else ""}</a>'

    def paragraphs(
        self,
        entry: Entry,
        indices: Iterable[int] | None = None,
        *,
        anchored: bool = True,
        under: Mapping[int, str] | None = None,
    ) -> str:
        """Paragraphs of ``entry`` (all of them by default): runs of bullets as lists nested by level.

        ``anchored``: each paragraph gets its id (``<entry id>-p<N>``) and its ``¶N`` citation — only in
        the entry's own article; a quotation elsewhere has neither. ``under[k]`` is HTML shown under
        paragraph ``k`` (inside its list item when it is a bullet). Items keep spaces as written
        (``pre-wrap``), so no layout whitespace may stand inside an item: line breaks in the page source go
        only between paragraphs and between the items of one list.
        """
        out: list[str] = []
        levels: list[tuple[int, int]] = []  # the open lists' levels, outermost first
        under = under or {}
        markdown_source = is_markdown(entry)

        def close_lists() -> None:
            while levels:
                levels.pop()
                out.append("</li>\n</ul>")
            out.append("\n")

        for index in range(len(entry.paragraphs)) if indices is None else indices:
            paragraph = entry.paragraphs[index]
            ident = f' id="{attr(paragraph_id(entry, index))}"' if anchored else ""
            cls = ' class="para"' if anchored else ""
            cite = self.cite(entry, index) if anchored else ""
            below = under.get(index, "")
            level = None if markdown_source else bullet_level(paragraph)
            if level is None:
                if levels:
                    close_lists()
                if markdown_source:
                    md = cls if anchored else ' class="md"'  # quoted Markdown flows; the article keeps its lines
                    out.append(f"<div{md}{ident}>{render_markdown(paragraph)}{cite}</div>\n")
                else:
                    out.append(f"<p{cls}{ident}>{text(paragraph)}{cite}</p>\n")
                if below:
                    out.append(below + "\n")
                continue
            if not levels:
                out.append('<ul class="bullets">\n')
                levels.append(level)
            else:
                while len(levels) > 1 and level < levels[-1]:
                    levels.pop()
                    out.append("</li>\n</ul>")
                if level > levels[-1]:
                    out.append("<ul>\n")  # deeper: a list inside the open item
                    levels.append(level)
                else:
                    out.append("</li>\n")  # the same level (or shallower than the first item): a sibling
            out.append(f"<li{cls}{ident}>{text(paragraph.lstrip(INDENT))}{cite}{below}")
        if levels:
            close_lists()
        return "".join(out).rstrip("\n")

    # -- blocks -----------------------------------------------------------------------------------------

    def block(self, block: Block) -> str:
        """One block as HTML. It may stand inside a bullet's list item, whose text keeps its white space: the
        stylesheet sets ``white-space: normal`` on every block but the quoted rule text itself."""
        if isinstance(block, Line):
            role = f" {attr(block.role)}" if block.role else ""
            return f'<p class="line{role}">{self.inline(block.parts)}</p>'
        if isinstance(block, Note):
            return f'<p class="note">{self.inline(block.parts)}</p>'
        if isinstance(block, Quote):
            return self.quote(block)
        if isinstance(block, Citation):
            return self.citation(block)
        if isinstance(block, Dates):
            return self.dates(block)
        if isinstance(block, Relation):
            return self.relation(block)
        if isinstance(block, Group):
            role = f" {attr(block.role)}" if block.role else ""
            return f'<div class="group{role}">{"".join(self.block(b) for b in block.blocks)}</div>'
        raise TypeError(f"unknown block {type(block).__name__}")

    def quote(self, quote: Quote) -> str:
        """Verbatim text of another place, as a quotation: a whole entry paragraph by paragraph (bullets as
        lists), one paragraph with a link to its anchor, or a wording as it stands."""
        entry = quote.entry
        if quote.paragraph is None and entry.paragraphs and quote.text == entry.text:
            body = self.paragraphs(entry, anchored=False)
        elif (quote.sentences or quote.marks) and not is_markdown(entry):  # the answering sentence, else words
            body = f"<p>{self._marked(quote.text, quote.sentences or quote.marks)}</p>"
        elif is_markdown(entry):
            body = f'<div class="md">{render_markdown(quote.text)}</div>'
        else:
            body = render_literal(quote.text)
        cite = ""
        if quote.paragraph is not None and 0 <= quote.paragraph < len(entry.paragraphs):
            n = quote.paragraph + 1
            where = source_lines(entry, quote.paragraph)
            cite = f'<p class="cite-line">{self.paragraph_link(entry, quote.paragraph, f"¶{n}")}' + (
                f" · {text(where)}" if where else "") + "</p>"
        return f'<blockquote class="quote">{body}{cite}</blockquote>'

    def citation(self, c: Citation) -> str:
        """Where a text stands (the composer's citation words, the file named without its folders), a link
        to it in this rulebook, and the citation's own links (the source page)."""
        entry = c.entry
        paragraph = c.paragraph if c.paragraph is not None and len(entry.paragraphs) > 1 else None
        words = text(citation_words(published(entry), paragraph, c.until if paragraph is not None else None))
        if self.lookup(entry.id) is not None:
            href = paragraph_href(entry, paragraph)
            words = f'<a href="{attr(href)}">{words}</a>'
        links = [f'<a href="{attr(url)}">{text(label)}</a>' for label, url in c.links if safe_url(url)]
        return f'<p class="citation">— {" · ".join([words, *links])}</p>'

    def change(self, change: Change, entry: Entry | None, paragraph: int | None = None) -> str:
        """One change: kind, date, which paragraph it dates when that is not plain from where it is shown (a
        link to it, with its line), what is odd about it, its note."""
        parts = [f'<span class="kind">{text(change.kind.capitalize())}</span>']
        parts.append(f"<time>{text(change.date)}</time>" if change.date else text(change.raw))
        if entry is not None and scope_text(change, entry, paragraph):
            if change.paragraph is None or not 0 <= change.paragraph < len(entry.paragraphs):
                parts.append("(whole entry)")
            else:
                lines = source_lines(entry, change.paragraph)
                where = f", {text(lines)}" if lines else ""
                link = self.paragraph_link(entry, change.paragraph, paragraph_name(entry, change.paragraph))
                parts.append(f"({link}{where})")
        if change.anomaly:
            probable = ""
            if change.probable_date and change.probable_date not in change.anomaly:
                probable = f"; probably {change.probable_date}"
            parts.append(f"<em>(written {text(change.raw)}: {text(change.anomaly)}{text(probable)})</em>")
        if change.note:
            parts.append(f"— {text(change.note)}")
        return " ".join(parts)

    def dates(self, dates: Dates, cls: str = "dates", label: str = "Dates") -> str:
        """The changes dating a text, oldest first, one per item."""
        changes = ordered_changes(dates.changes)
        if not changes:
            return ""
        items = "".join(f"<li>{self.change(c, dates.entry, dates.paragraph)}</li>" for c in changes)
        return f'<ul class="{attr(cls)}" aria-label="{attr(label)}">{items}</ul>'

    def relation(self, rel: Relation) -> str:
        """Another text related to a quoted one: the composer's heading, the text, its citation and dates."""
        parts = [f'<p class="head">{self.inline(rel.heading)}</p>']
        if rel.quote is not None:
            parts.append(self.quote(rel.quote))
        if rel.citation is not None:
            parts.append(self.citation(rel.citation))
        if rel.dates is not None:
            parts.append(self.dates(rel.dates))
        earlier = " earlier" if rel.earlier else ""
        return f'<div class="relation {attr(rel.kind)}{earlier}">{"".join(parts)}</div>'

    # -- an entry shown whole ---------------------------------------------------------------------------

    def entry_parts(self, answer: Answer, entry: Entry) -> EntryParts:
        """``answer`` (``Composer.entry(entry)``) laid out around the entry's anchored text.

        A relation the composer scopes to paragraphs of the entry is shown under the last of them (its
        heading names them); one concerning the whole entry comes before the text, as the composer orders
        them, and the composer's line introducing the text stays only when such a relation precedes it.
        """
        parts = EntryParts()
        under: dict[int, list[str]] = {}
        own: list[int] = []
        intro = f"{source_label(entry)} text:"
        pending_intro = False
        for block in answer.body:
            if isinstance(block, Quote) and block.entry is entry and block.inline and block.paragraph is not None:
                own.append(block.paragraph)
            elif isinstance(block, Relation) and _scoped(block, entry):
                assert block.scope is not None
                under.setdefault(max(block.scope), []).append(self.relation(block))
            elif isinstance(block, Line) and plain_text(block.parts) == intro and not own:
                pending_intro = bool(parts.before)
            elif own:
                parts.after.append(self.block(block))
            else:
                parts.before.append(self.block(block))
        if pending_intro and own:
            parts.before.append(f'<p class="line label">{text(intro)}</p>')
        if own:
            parts.text = self.paragraphs(entry, own, under={k: "".join(v) for k, v in under.items()})
        return parts

    def render(self, answer: Answer) -> str:
        """A whole answer as an HTML fragment: title, body (or items), facts."""
        out = [f'<article class="answer"><h2>{text(answer.title)}</h2>']
        blocks = answer.body or [b for item in answer.items for b in item.blocks]
        out += [self.block(b) for b in blocks]
        for fact in answer.facts:
            out.append(f'<div class="fact"><p class="line label">{text(fact.name)}:</p>'
                       f'{"".join(self.block(b) for b in fact.blocks)}</div>')
        out.append("</article>")
        return "\n".join(out)


def _scoped(rel: Relation, entry: Entry) -> bool:
    """Whether ``rel`` concerns known paragraphs of ``entry`` (else it concerns the whole entry)."""
    return bool(rel.scope) and rel.of is entry and all(0 <= k < len(entry.paragraphs) for k in rel.scope or ())

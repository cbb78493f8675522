"""Render the parsed entries as a static, browsable rulebook (plain HTML and CSS, no JavaScript).

Pages: ``index.html`` (entries by source, rules terms A–Z, banned cards A–Z, by section), one page per
source (``glossary.html``, ``obsidian-hand.html``, ``house.html``) where every entry is an element whose
``id`` is exactly the entry id and every paragraph one whose id is ``<entry id>-p<N>`` (N counts the
entry's paragraphs from 1, as ``Entry.paragraphs`` holds them), ``banned.html`` and ``changes.html``
(every dated change, newest first).

Rule text is never altered: plain-text sources are written into the page as text, escaping only the
characters HTML itself needs (``&``, ``<``, ``>``), so the page source reads like the rules; bullets
(``•``, ``*``, ``**``, ``–``, ``- ``) become nested lists by their indentation and marker, each item
still showing its marker as written. House rulings, written in Markdown, are rendered as Markdown with
raw HTML disabled and only http(s), mailto and relative links kept, checked after character references
are decoded the way a browser decodes them.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from urllib.parse import quote, urlsplit

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markdown.util import AMP_SUBSTITUTE

from glossary.kinds import SOURCE_LABELS
from glossary.model import Change, Entry

DEFAULT_TITLE = "L5R rules judge: rulebook"
STYLESHEET = "style.css"
INDEX_PAGE = "index.html"
BANNED_PAGE = "banned.html"
CHANGES_PAGE = "changes.html"
SOURCE_ORDER = ["glossary", "obsidian-hand", "house"]

_SAFE_SCHEMES = {"http", "https", "mailto"}  # and relative URLs (no scheme at all)
# What a browser's URL parser ignores: leading/trailing C0 controls and spaces, tabs and newlines anywhere.
_URL_EDGES = "".join(map(chr, range(0x21)))
_URL_IGNORED = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")
# A bullet: optional indentation (spaces, no-break spaces, tabs), a marker, then a space and text. "****Both"
# (a footnote mark with no space) is not a bullet. The marker stays in the text; the nesting shows the level.
_INDENT = " \t\u00a0"  # spaces, tabs and no-break spaces before a bullet: its nesting shows instead
_BULLET = re.compile(r"^(?P<indent>[ \t\u00a0]*)(?P<marker>\*+|[•·–—-])[ \t\u00a0]+\S")
# How a precedence link reads, by the source of the rule that takes precedence.
_OVERRIDDEN_LABELS = {
    "obsidian-hand": f"Overridden in the format of {SOURCE_LABELS['obsidian-hand']} by",
    "house": "House ruling taking precedence here",
}
_OVERRIDES_LABELS = {
    "obsidian-hand": f"{SOURCE_LABELS['obsidian-hand']} rule; in that format it overrides",
    "house": "House ruling; takes precedence over",
}
_EXTRA_PAGES = (
    f'<li><a href="{BANNED_PAGE}">Banned list</a></li><li><a href="{CHANGES_PAGE}">Change log</a></li>'
)

CSS = """\
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fdfdfb; --muted: #5f6368; --accent: #8b1a1a;
  --rule: #ddd; --mark: #fff3c4; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8e6e3; --bg: #161616; --muted: #a0a0a0; --accent: #f08080; --rule: #333; --mark: #3d3520; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 46rem; padding: 0 1rem 3rem; font: 1.05rem/1.55 system-ui, sans-serif;
  color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
a { color: var(--accent); }
header { border-bottom: 2px solid var(--accent); padding: .75rem 0 .5rem; margin-bottom: 1rem; }
header .site { font-weight: 700; text-decoration: none; }
header nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; margin: .4rem 0 0; }
h1 { font-size: 1.6rem; line-height: 1.25; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--rule); }
.entry { border-top: 1px solid var(--rule); padding: .5rem 0 .75rem; scroll-margin-top: .5rem; }
.entry:target, .para:target { background: var(--mark); outline: .4rem solid var(--mark); }
.para { scroll-margin-top: .5rem; }
.entry h3 { margin: .25rem 0; font-size: 1.15rem; }
.entry h3 a { color: inherit; text-decoration: none; }
.meta, .changes, .links, .count, .cite, .note { color: var(--muted); font-size: .9rem; }
.changes { padding-left: 1.2rem; }
.text p { margin: .4rem 0; white-space: pre-wrap; }
.text ul.bullets, .text ul.bullets ul { list-style: none; margin: .2rem 0; padding-left: 1.4rem;
  white-space: normal; }
.text ul.bullets { padding-left: .4rem; }
.text ul.bullets li { white-space: pre-wrap; padding-left: 1em; text-indent: -1em; margin: .15rem 0; }
.text pre { white-space: pre-wrap; }
.cite { margin-left: .5em; font-size: .75rem; text-decoration: none; white-space: nowrap; user-select: none;
  text-indent: 0; }
.contents ul { padding-left: 1.2rem; margin: .2rem 0; }
.letters { font-size: 1.1rem; }
.letters a { display: inline-block; min-width: 1.6rem; text-align: center; }
ul.entries { padding-left: 1.2rem; }
time { font-variant-numeric: tabular-nums; }
"""


def page_for(source: str) -> str:
    """The file name of a source's page (``obsidian-hand`` -> ``obsidian-hand.html``)."""
    return f"{source}.html"


def _fragment(entry_id: str) -> str:
    """The URL fragment of an entry's anchor: its id, percent-encoded except for the ``:``."""
    return quote(entry_id, safe=":")


def entry_href(entry: Entry) -> str:
    """Relative URL of an entry's anchor; ``RULEBOOK_URL`` (ending in ``/``) + this links an answer."""
    return f"{page_for(entry.source)}#{_fragment(entry.id)}"


def paragraph_id(entry: Entry, index: int) -> str:
    """The element id of paragraph ``index`` (0-based, into ``entry.paragraphs``): ``glossary:terrain-p3``
    for the third. Numbers count every paragraph the entry holds (a bullet, a stamp on its own line) from 1,
    the same numbers "(paragraph N)" and the ``¶N`` beside each paragraph show."""
    return f"{entry.id}-p{index + 1}"


def paragraph_href(entry: Entry, index: int | None) -> str:
    """Relative URL of one paragraph's anchor (the entry's anchor when ``index`` is None or out of range)."""
    if index is None or not 0 <= index < len(entry.paragraphs):
        return entry_href(entry)
    return f"{page_for(entry.source)}#{_fragment(paragraph_id(entry, index))}"


def _text(text: str) -> str:
    """Text for an element's content: only ``&``, ``<`` and ``>`` escaped, everything else as written."""
    return html.escape(text, quote=False)


def _attr(text: str) -> str:
    """Text for a double-quoted attribute value."""
    return html.escape(text, quote=True)


def render_literal(text: str) -> str:
    """One plain-text paragraph as an HTML paragraph, shown exactly as written.

    Nothing is interpreted: ``*``, ``[``, ``#`` or ``1.`` stay characters, and the page's stylesheet keeps
    spaces and line breaks (``white-space: pre-wrap``), so only what HTML needs is escaped.
    """
    return f"<p>{_text(text)}</p>"


class _SafeLinks(Treeprocessor):
    """Drop link targets and image sources with a scheme other than http(s)/mailto (e.g. ``javascript:``)."""

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not _safe_url(value):
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


def _safe_url(url: str) -> bool:
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


def render_markdown(text: str) -> str:
    """A house ruling's Markdown source, rendered as Markdown (it was written as Markdown), safely."""
    return markdown.markdown(text, extensions=[_SafeMarkdown()])


def render_paragraph(entry: Entry, paragraph: str) -> str:
    """One paragraph as HTML: house rulings were written in Markdown; every other source is plain text."""
    return render_markdown(paragraph) if entry.source == "house" else render_literal(paragraph)


def _bullet_level(paragraph: str) -> tuple[int, int] | None:
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


def _source_lines(entry: Entry, index: int) -> str | None:
    """Where paragraph ``index`` stands in its file ("line 25", "lines 13–15"); None when not known."""
    if not 0 <= index < len(entry.lines):
        return None
    first, last = entry.lines[index]
    return f"line {first}" if first == last else f"lines {first}–{last}"


def _cite(entry: Entry, index: int) -> str:
    """The paragraph's number and its own source line(s), linking to its anchor (not copied with the text)."""
    where = _source_lines(entry, index)
    href = _attr(f"#{_fragment(paragraph_id(entry, index))}")
    # <wbr>: the citation may wrap to its own line instead of dragging the paragraph's last word along
    return f'<wbr><a class="cite" href="{href}">¶{index + 1}{f" · {where}" if where else ""}</a>'


def _render_text(entry: Entry) -> str:
    """An entry's paragraphs: each one anchored and cited; runs of bullets as lists nested by level.

    Items keep spaces as written (``pre-wrap``), so no layout whitespace may stand inside an item: line
    breaks in the page source go only between paragraphs and between the items of one list.
    """
    out: list[str] = []
    levels: list[tuple[int, int]] = []  # the open lists' levels, outermost first

    def close_lists() -> None:
        while levels:
            levels.pop()
            out.append("</li>\n</ul>")
        out.append("\n")

    for index, paragraph in enumerate(entry.paragraphs):
        ident = _attr(paragraph_id(entry, index))
        cite = _cite(entry, index)
        level = None if entry.source == "house" else _bullet_level(paragraph)
        if level is None:
            if levels:
                close_lists()
            if entry.source == "house":
                out.append(f'<div class="para" id="{ident}">{render_markdown(paragraph)}{cite}</div>\n')
            else:
                out.append(f'<p class="para" id="{ident}">{_text(paragraph)}{cite}</p>\n')
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
        out.append(f'<li class="para" id="{ident}">{_text(paragraph.lstrip(_INDENT))}{cite}')
    if levels:
        close_lists()
    return "".join(out).rstrip("\n")


def _own_path(entry: Entry) -> list[str] | None:
    """The section path a section entry heads ("II. THE PLAYER", "F. Deck …"); None for other entries."""
    if entry.section and entry.section[-1].strip().casefold() == entry.title.strip().casefold():
        return entry.section
    return None


@dataclass
class _Node:
    """One level of a section's contents: a sub-heading (an entry, or just a name) and what is under it."""

    name: str
    entry: Entry | None = None
    items: list[_Node | Entry] = field(default_factory=list)
    children: dict[str, _Node] = field(default_factory=dict)

    def child(self, name: str) -> _Node:
        if name not in self.children:
            self.children[name] = _Node(name)
            self.items.append(self.children[name])
        return self.children[name]


def _contents(site: _Site, entry: Entry) -> _Node | None:
    """The sub-headings and entries under a section entry, in document order; None if it has none.

    "I. CARDINAL RULES" holds the cardinal rules; "II.F Deck Constructions and Restrictions" its two
    sub-sections; "D. Player Abilities and Traits" the abilities under their timing groups.
    """
    path = _own_path(entry)
    if path is None:
        return None
    root = _Node(entry.title, entry)
    depth = len(path)
    for other in site.by_file[(entry.source, entry.location.file)]:
        if other is entry or other.section[:depth] != path:
            continue
        rest = other.section[depth:]
        owns = _own_path(other) is not None
        if owns and not rest:
            continue  # another entry heading the very same path (a repeated heading): not beneath this one
        node = root
        for name in rest[:-1] if owns else rest:
            node = node.child(name)
        if owns:
            node.child(rest[-1]).entry = other
        else:
            node.items.append(other)
    return root if root.items else None


def _render_contents(site: _Site, node: _Node) -> str:
    items = []
    for item in node.items:
        if isinstance(item, _Node):
            head = site.link(item.entry.id) if item.entry is not None else _text(item.name)
            inner = _render_contents(site, item) if item.items else ""
            items.append(f"<li>{head}{inner}</li>")
        else:
            items.append(f"<li>{site.link(item.id)}</li>")
    return f"<ul>{''.join(items)}</ul>"


@dataclass
class _Site:
    """What every page needs: the entries by id, the site title and the navigation."""

    entries: list[Entry]
    by_id: dict[str, Entry]
    title: str
    sources: list[str]
    by_file: dict[tuple[str, str], list[Entry]] = field(default_factory=dict)  # (source, file) -> its entries

    def __post_init__(self) -> None:
        for entry in self.entries:
            self.by_file.setdefault((entry.source, entry.location.file), []).append(entry)

    def link(self, entry_id: str, label: str | None = None) -> str:
        """A link to an exported entry, or plain text when the id is not in the site (never a broken link).

        The default text is the entry's label, which tells same-titled entries apart ("Ninjitsu (Open)").
        """
        target = self.by_id.get(entry_id)
        if target is None:
            return _text(label or entry_id)
        return f'<a href="{_attr(entry_href(target))}">{_text(label or target.label)}</a>'

    def page(self, heading: str, body: str) -> str:
        nav = [f'<li><a href="{INDEX_PAGE}">Index</a></li>']
        nav += [f'<li><a href="{page_for(s)}">{_text(_label(s))}</a></li>' for s in self.sources]
        nav += [_EXTRA_PAGES]
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_text(heading if heading == self.title else f'{heading} · {self.title}')}</title>\n"
            f'<link rel="stylesheet" href="{STYLESHEET}">\n</head>\n<body>\n'
            f'<header><a class="site" href="{INDEX_PAGE}">{_text(self.title)}</a>\n'
            f'<nav aria-label="Site"><ul>{"".join(nav)}</ul></nav></header>\n'
            f"<main>\n<h1>{_text(heading)}</h1>\n{body}\n</main>\n</body>\n</html>\n"
        )


def _label(source: str) -> str:
    """A source's name for readers ("L5R Comprehensive Rules"); an unknown source goes by its key."""
    return SOURCE_LABELS.get(source, source)


def _change_date(change: Change) -> str | None:
    """The date a change sorts by: the evident intended date when the written one is impossible."""
    return change.probable_date or change.date


def _place(entry: Entry, depth: int | None = None) -> str:
    """Document › section › ..., leaving out a section the document title already names
    ("L5R Comprehensive Rules — Glossary T" is not followed by "Glossary T")."""
    sections = [s for s in entry.section[:depth] if not entry.document.endswith(s)]
    return " › ".join(dict.fromkeys([entry.document, *sections]))


def _source_of(entry_id: str, site: _Site) -> str:
    """The source of an entry, from its id (``<source>:<slug>``) when it is not in the site."""
    entry = site.by_id.get(entry_id)
    return entry.source if entry is not None else entry_id.partition(":")[0]


def _file_name(path: str) -> str:
    """A source file as the published rulebook names it: the file's name, never the host's folders."""
    return PurePath(path).name or path


def _describe_change(change: Change, entry: Entry) -> str:
    """One change as a line of HTML: kind, date, which paragraph (a link to it), what is odd, its note."""
    parts = [f'<span class="kind">{_text(change.kind)}</span>']
    if change.date:
        parts.append(f"<time>{_text(change.date)}</time>")
    else:
        parts.append(_text(change.raw))
    if change.paragraph is not None and 0 <= change.paragraph < len(entry.paragraphs):
        lines = _source_lines(entry, change.paragraph)
        where = f", {lines}" if lines else ""
        href = _attr(paragraph_href(entry, change.paragraph))
        parts.append(f'(<a href="{href}">paragraph {change.paragraph + 1}</a>{where})')
    elif change.paragraph is None:
        parts.append("(whole entry)")
    if change.anomaly:
        probable = ""
        if change.probable_date and change.probable_date not in change.anomaly:
            probable = f"; probably {change.probable_date}"
        parts.append(f"<em>(written {_text(change.raw)}: {_text(change.anomaly)}{_text(probable)})</em>")
    if change.note:
        parts.append(f"— {_text(change.note)}")
    return " ".join(parts)


def _render_entry(site: _Site, entry: Entry) -> str:
    meta = [_text(_place(entry))]
    meta.append(_text(entry.kind + (f": {entry.group}" if entry.group else "")))
    if entry.judge:
        meta.append(f"judge: {_text(entry.judge)}")
    if entry.event:
        meta.append(f"event: {_text(entry.event)}")
    loc = entry.location
    lines = f"line {loc.first_line}" if loc.first_line == loc.last_line else f"lines {loc.first_line}–{loc.last_line}"
    meta.append(f"{_text(_file_name(loc.file))}, {lines}")
    out = [
        f'<article class="entry" id="{_attr(entry.id)}">',
        f'<h3><a href="#{_attr(_fragment(entry.id))}">{_text(entry.label)}</a></h3>',
        f'<p class="meta">{" · ".join(meta)}</p>',
    ]
    contents = _contents(site, entry)
    if entry.paragraphs:
        out += ['<div class="text">', _render_text(entry), "</div>"]
    else:
        out.append(f'<p class="note">{"No text of its own; it is made up of:" if contents else "No text."}</p>')
    if contents is not None:
        label = _attr(f"Contents of {entry.label}")
        heading = "" if not entry.paragraphs else '<p class="note">Contents:</p>'
        out.append(f'<nav class="contents" aria-label="{label}">{heading}{_render_contents(site, contents)}</nav>')
    if entry.changes:
        items = "".join(f"<li>{_describe_change(c, entry)}</li>" for c in entry.changes)
        out.append(f'<ul class="changes" aria-label="Changes">{items}</ul>')
    if entry.overridden_by:
        groups: dict[str, list[str]] = defaultdict(list)  # overriding source -> ids, in the entry's order
        for other in entry.overridden_by:
            groups[_source_of(other, site)].append(other)
        for source, ids in groups.items():
            label = _OVERRIDDEN_LABELS.get(source, f"Overridden in {_label(source)} by")
            links = ", ".join(site.link(i) for i in ids)
            out.append(f'<p class="links overridden">{_text(label)}: {links}</p>')
    if entry.overrides:
        links = ", ".join(
            site.link(i) + (f" ({_text(_label(site.by_id[i].source))})" if i in site.by_id else "")
            for i in entry.overrides
        )
        default = f"{_label(entry.source)}; overrides"
        label = _OVERRIDES_LABELS.get(entry.source, default)
        out.append(f'<p class="links overrides">{_text(label)}: {links}</p>')
    if entry.see_also:
        refs = ", ".join(site.link(r.target, r.text) if r.target else _text(r.text) for r in entry.see_also)
        label = "Applies to" if entry.kind == "ruling" else "See also"
        out.append(f'<p class="links see-also">{label}: {refs}</p>')
    if entry.url and _safe_url(entry.url):
        out.append(f'<p class="links">Original: <a href="{_attr(entry.url)}">{_text(entry.url)}</a></p>')
    out.append("</article>")
    return "\n".join(out)


def _source_page(site: _Site, source: str) -> str:
    """All entries of one source in their document order, with a heading whenever the section changes."""
    body: list[str] = []
    current: str | None = None
    entries = [e for e in site.entries if e.source == source]
    body.append(f'<p class="count">{len(entries)} entries.</p>')
    for entry in entries:
        heading = _place(entry, depth=1)
        if heading != current:
            current = heading
            body.append(f"<h2>{_text(heading)}</h2>")
        body.append(_render_entry(site, entry))
    return site.page(_label(source), "\n".join(body))


def _letter(title: str) -> str:
    first = next((c for c in title if c.isalnum()), "#")
    return first.upper() if first.isalpha() else "#"


def _entry_list(site: _Site, entries: Iterable[Entry]) -> str:
    items = "".join(f"<li>{site.link(e.id)}</li>" for e in entries)
    return f'<ul class="entries">{items}</ul>'


def _a_to_z(site: _Site, entries: list[Entry], prefix: str) -> list[str]:
    """Entries by first letter, each letter with an anchor ``<prefix>-<L>`` and a row of jumps."""
    by_letter: dict[str, list[Entry]] = defaultdict(list)
    for entry in sorted(entries, key=lambda e: (e.label.casefold(), e.id)):
        by_letter[_letter(entry.label)].append(entry)
    letters = sorted(by_letter, key=lambda c: (c == "#", c))
    jumps = " ".join(f'<a href="#{prefix}-{_attr(c)}">{_text(c)}</a>' for c in letters)
    body = [f'<p class="letters">{jumps}</p>']
    for c in letters:
        body.append(f'<h3 id="{prefix}-{_attr(c)}">{_text(c)}</h3>')
        body.append(_entry_list(site, by_letter[c]))
    return body


def _index_page(site: _Site) -> str:
    body = ['<h2 id="by-source">By source</h2>', "<ul>"]
    for source in site.sources:
        entries = [e for e in site.entries if e.source == source]
        documents = ", ".join(dict.fromkeys(e.document for e in entries))
        label = _label(source)
        body.append(
            f'<li><a href="{page_for(source)}">{_text(label)}</a> <span class="count">({len(entries)} entries; '
            f"{_text(documents)})</span></li>"
        )
    body.append(_EXTRA_PAGES)
    body.append("</ul>")

    # Rules terms and banned card names apart: "House of Black Lion" is not a rule, "Honor" is not a card.
    rules = [e for e in site.entries if e.kind != "banned"]
    banned = [e for e in site.entries if e.kind == "banned"]
    body.append('<h2 id="by-letter">Rules A–Z</h2>')
    body += _a_to_z(site, rules, "letter")
    if banned:
        body.append('<h2 id="banned-by-letter">Banned cards A–Z</h2>')
        body.append(
            f'<p class="count">{len(banned)} card names on the banned list (not rules terms); '
            f'with dates on the <a href="{BANNED_PAGE}">banned list</a>.</p>'
        )
        body += _a_to_z(site, banned, "banned")

    body.append('<h2 id="by-section">By section</h2>')
    for source in site.sources:
        body.append(f"<h3>{_text(_label(source))}</h3>")
        sections: dict[str, list[Entry]] = defaultdict(list)
        for entry in site.entries:
            if entry.source == source:
                sections[_place(entry)].append(entry)
        for name, entries in sections.items():
            body.append(f"<h4>{_text(name)}</h4>")
            body.append(_entry_list(site, entries))
    return site.page(site.title, "\n".join(body))


def _banned_page(site: _Site) -> str:
    banned = [e for e in site.entries if e.kind == "banned"]
    if not banned:
        return site.page("Banned list", "<p>The loaded sources have no banned list.</p>")
    groups: dict[str, list[Entry]] = defaultdict(list)
    for entry in banned:
        groups[entry.group or "Other"].append(entry)
    body = [f'<p class="count">{len(banned)} banned cards.</p>']
    for group, entries in groups.items():
        body.append(f"<h2>{_text(group)}</h2>")
        items = []
        for entry in entries:
            dates = ", ".join(_text(c.date) for c in entry.changes if c.date)
            added = f' <span class="meta">(listed {dates})</span>' if dates else ""
            items.append(f"<li>{site.link(entry.id)}{added}</li>")
        body.append(f'<ul class="entries">{"".join(items)}</ul>')
    return site.page("Banned list", "\n".join(body))


def _changes_page(site: _Site) -> str:
    records = [(c, e) for e in site.entries for c in e.changes]
    records.sort(key=lambda r: r[1].label.casefold())
    records.sort(key=lambda r: _change_date(r[0]) or "", reverse=True)  # newest first; undated last
    if not records:
        return site.page("Change log", "<p>No dated changes in the loaded sources.</p>")
    items = []
    for change, entry in records:
        source = _text(_label(entry.source))
        via = ""
        if change.update_id and change.update_id != entry.id:
            via = f" (from update {site.link(change.update_id)})"
        items.append(
            f"<li>{_describe_change(change, entry)}: {site.link(entry.id)} "
            f'<span class="meta">{source}</span>{via}</li>'
        )
    count = f'<p class="count">{len(records)} changes, newest first.</p>'
    return site.page("Change log", f'{count}\n<ul class="entries">{"".join(items)}</ul>')


def export_html(entries: list[Entry], out_dir: Path, title: str = DEFAULT_TITLE) -> list[Path]:
    """Write the site into ``out_dir`` (created if needed); returns the files written, index first.

    Raises ValueError for duplicate element ids (two entries with one id, or an entry whose id is another
    entry's paragraph anchor): two elements with one id would make links ambiguous.
    """
    seen: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in seen:
            where = f"{entry.location.file}:{entry.location.first_line}"
            raise ValueError(f"duplicate entry id {entry.id!r} ({where}); every anchor must be unique")
        seen[entry.id] = entry
    for entry in entries:
        for index in range(len(entry.paragraphs)):
            clash = seen.get(paragraph_id(entry, index))
            if clash is not None:
                where = f"{clash.location.file}:{clash.location.first_line}"
                raise ValueError(
                    f"entry id {clash.id!r} ({where}) is also the anchor of paragraph {index + 1} of {entry.id!r}"
                )
    present = {e.source for e in entries}
    sources = [s for s in SOURCE_ORDER if s in present] + sorted(present - set(SOURCE_ORDER))
    site = _Site(entries=list(entries), by_id={e.id: e for e in entries}, title=title, sources=sources)

    out_dir.mkdir(parents=True, exist_ok=True)
    pages = {INDEX_PAGE: _index_page(site)}
    pages.update({page_for(s): _source_page(site, s) for s in sources})
    pages[BANNED_PAGE] = _banned_page(site)
    pages[CHANGES_PAGE] = _changes_page(site)
    pages[STYLESHEET] = CSS
    written = []
    for name, content in pages.items():
        path = out_dir / name
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written

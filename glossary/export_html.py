"""Render the parsed entries as a static, browsable rulebook (plain HTML and CSS, no JavaScript).

Pages: ``index.html`` (entries by source, by letter and by section), one page per source
(``glossary.html``, ``obsidian-hand.html``, ``house.html``) where every entry is an element whose
``id`` is exactly the entry id (so ``house.html#house:terrain-...`` works and the bot can link to it),
``banned.html`` and ``changes.html`` (every dated change, newest first). Rule text is never altered:
plain-text sources are escaped character by character before Python-Markdown renders them, so every
character shows exactly as written; house rulings, written in Markdown, are rendered as Markdown with
raw HTML disabled and only safe link schemes kept.
"""

from __future__ import annotations

import html
import string
import xml.etree.ElementTree as etree
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from glossary.model import SOURCE_LABELS, Change, Entry

DEFAULT_TITLE = "L5R rules judge: rulebook"
STYLESHEET = "style.css"
INDEX_PAGE = "index.html"
BANNED_PAGE = "banned.html"
CHANGES_PAGE = "changes.html"
SOURCE_ORDER = ["glossary", "obsidian-hand", "house"]

# Every ASCII punctuation character may mean something to Markdown (or HTML); as numeric character
# references they mean nothing and still display as themselves.
_LITERAL = {c: f"&#{ord(c)};" for c in string.punctuation}
_SAFE_SCHEMES = {"", "http", "https", "mailto"}
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
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; margin: .4rem 0 0; }
h1 { font-size: 1.6rem; line-height: 1.25; }
h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid var(--rule); }
.entry { border-top: 1px solid var(--rule); padding: .5rem 0 .75rem; scroll-margin-top: .5rem; }
.entry:target { background: var(--mark); outline: .4rem solid var(--mark); }
.entry h3 { margin: .25rem 0; font-size: 1.15rem; }
.entry h3 a { color: inherit; text-decoration: none; }
.meta, .changes, .links, .count { color: var(--muted); font-size: .9rem; }
.changes { padding-left: 1.2rem; }
.text p { margin: .4rem 0; }
.text pre { white-space: pre-wrap; }
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


def render_literal(text: str) -> str:
    """Rule text as HTML via Python-Markdown, with every character shown exactly as written.

    Punctuation becomes character references (so ``*``, ``[``, ``<``, ``#``, ``1.`` never turn into
    markup), leading spaces become no-break spaces (so indentation is not read as a code block), and
    line breaks stay line breaks.
    """
    lines = []
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)].expandtabs(4)
        lines.append("&nbsp;" * len(indent) + "".join(_LITERAL.get(c, c) for c in body.rstrip()))
    return markdown.markdown("  \n".join(lines))


class _SafeLinks(Treeprocessor):
    """Drop link targets and image sources with a scheme other than http(s)/mailto (e.g. ``javascript:``)."""

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not _safe_url(value):
                    del element.attrib[attribute]


def _safe_url(url: str) -> bool:
    """True for a relative, http(s) or mailto URL; a URL that cannot even be split is not safe."""
    try:
        scheme = urlsplit(url.strip()).scheme
    except ValueError:  # e.g. "http://[" (an unclosed IPv6 host)
        return False
    return scheme.lower() in _SAFE_SCHEMES


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


@dataclass
class _Site:
    """What every page needs: the entries by id, the site title and the navigation."""

    entries: list[Entry]
    by_id: dict[str, Entry]
    title: str
    sources: list[str]

    def link(self, entry_id: str, label: str | None = None) -> str:
        """A link to an exported entry, or plain text when the id is not in the site (never a broken link)."""
        target = self.by_id.get(entry_id)
        if target is None:
            return _e(label or entry_id)
        return f'<a href="{_e(entry_href(target))}">{_e(label or target.title)}</a>'

    def page(self, heading: str, body: str) -> str:
        nav = [f'<li><a href="{INDEX_PAGE}">Index</a></li>']
        nav += [f'<li><a href="{page_for(s)}">{_e(_label(s))}</a></li>' for s in self.sources]
        nav += [_EXTRA_PAGES]
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(heading if heading == self.title else f'{heading} · {self.title}')}</title>\n"
            f'<link rel="stylesheet" href="{STYLESHEET}">\n</head>\n<body>\n'
            f'<header><a class="site" href="{INDEX_PAGE}">{_e(self.title)}</a>\n'
            f'<nav aria-label="Site"><ul>{"".join(nav)}</ul></nav></header>\n'
            f"<main>\n<h1>{_e(heading)}</h1>\n{body}\n</main>\n</body>\n</html>\n"
        )


def _e(text: str) -> str:
    return html.escape(text, quote=True)


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


def _describe_change(change: Change) -> str:
    """One change as a line of HTML: kind, date, which paragraph, what is odd about it, its note."""
    parts = [f'<span class="kind">{_e(change.kind)}</span>']
    if change.date:
        parts.append(f"<time>{_e(change.date)}</time>")
    else:
        parts.append(_e(change.raw))
    if change.paragraph is not None:
        parts.append(f"(paragraph {change.paragraph + 1})")
    if change.anomaly:
        probable = ""
        if change.probable_date and change.probable_date not in change.anomaly:
            probable = f"; probably {change.probable_date}"
        parts.append(f"<em>(written {_e(change.raw)}: {_e(change.anomaly)}{_e(probable)})</em>")
    if change.note:
        parts.append(f"— {_e(change.note)}")
    return " ".join(parts)


def _render_entry(site: _Site, entry: Entry) -> str:
    meta = [_e(_place(entry))]
    meta.append(_e(entry.kind + (f": {entry.group}" if entry.group else "")))
    if entry.judge:
        meta.append(f"judge: {_e(entry.judge)}")
    if entry.event:
        meta.append(f"event: {_e(entry.event)}")
    loc = entry.location
    meta.append(f"{_e(loc.file)}, lines {loc.first_line}–{loc.last_line}")
    out = [
        f'<article class="entry" id="{_e(entry.id)}">',
        f'<h3><a href="#{_e(_fragment(entry.id))}">{_e(entry.title)}</a></h3>',
        f'<p class="meta">{" · ".join(meta)}</p>',
        '<div class="text">',
        *(render_paragraph(entry, p) for p in entry.paragraphs),
        "</div>",
    ]
    if entry.changes:
        items = "".join(f"<li>{_describe_change(c)}</li>" for c in entry.changes)
        out.append(f'<ul class="changes" aria-label="Changes">{items}</ul>')
    if entry.overridden_by:
        groups: dict[str, list[str]] = defaultdict(list)  # overriding source -> ids, in the entry's order
        for other in entry.overridden_by:
            groups[_source_of(other, site)].append(other)
        for source, ids in groups.items():
            label = _OVERRIDDEN_LABELS.get(source, f"Overridden in {_label(source)} by")
            links = ", ".join(site.link(i) for i in ids)
            out.append(f'<p class="links overridden">{_e(label)}: {links}</p>')
    if entry.overrides:
        links = ", ".join(
            site.link(i) + (f" ({_e(_label(site.by_id[i].source))})" if i in site.by_id else "")
            for i in entry.overrides
        )
        default = f"{_label(entry.source)}; overrides"
        label = _OVERRIDES_LABELS.get(entry.source, default)
        out.append(f'<p class="links overrides">{_e(label)}: {links}</p>')
    if entry.see_also:
        refs = ", ".join(site.link(r.target, r.text) if r.target else _e(r.text) for r in entry.see_also)
        label = "Applies to" if entry.kind == "ruling" else "See also"
        out.append(f'<p class="links see-also">{label}: {refs}</p>')
    if entry.url:
        out.append(f'<p class="links">Original: <a href="{_e(entry.url)}">{_e(entry.url)}</a></p>')
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
            body.append(f"<h2>{_e(heading)}</h2>")
        body.append(_render_entry(site, entry))
    return site.page(_label(source), "\n".join(body))


def _letter(title: str) -> str:
    first = next((c for c in title if c.isalnum()), "#")
    return first.upper() if first.isalpha() else "#"


def _entry_list(site: _Site, entries: Iterable[Entry]) -> str:
    items = "".join(f"<li>{site.link(e.id)}</li>" for e in entries)
    return f'<ul class="entries">{items}</ul>'


def _index_page(site: _Site) -> str:
    body = ['<h2 id="by-source">By source</h2>', "<ul>"]
    for source in site.sources:
        entries = [e for e in site.entries if e.source == source]
        documents = ", ".join(dict.fromkeys(e.document for e in entries))
        label = _label(source)
        body.append(
            f'<li><a href="{page_for(source)}">{_e(label)}</a> <span class="count">({len(entries)} entries; '
            f"{_e(documents)})</span></li>"
        )
    body.append(_EXTRA_PAGES)
    body.append("</ul>")

    by_letter: dict[str, list[Entry]] = defaultdict(list)
    for entry in sorted(site.entries, key=lambda e: (e.title.casefold(), e.id)):
        by_letter[_letter(entry.title)].append(entry)
    letters = sorted(by_letter, key=lambda c: (c == "#", c))
    body.append('<h2 id="by-letter">By letter</h2>')
    jumps = " ".join(f'<a href="#letter-{_e(c)}">{_e(c)}</a>' for c in letters)
    body.append(f'<p class="letters">{jumps}</p>')
    for c in letters:
        body.append(f'<h3 id="letter-{_e(c)}">{_e(c)}</h3>')
        body.append(_entry_list(site, by_letter[c]))

    body.append('<h2 id="by-section">By section</h2>')
    for source in site.sources:
        body.append(f"<h3>{_e(_label(source))}</h3>")
        sections: dict[str, list[Entry]] = defaultdict(list)
        for entry in site.entries:
            if entry.source == source:
                sections[_place(entry)].append(entry)
        for name, entries in sections.items():
            body.append(f"<h4>{_e(name)}</h4>")
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
        body.append(f"<h2>{_e(group)}</h2>")
        items = []
        for entry in entries:
            dates = ", ".join(_e(c.date) for c in entry.changes if c.date)
            added = f' <span class="meta">(listed {dates})</span>' if dates else ""
            items.append(f"<li>{site.link(entry.id)}{added}</li>")
        body.append(f'<ul class="entries">{"".join(items)}</ul>')
    return site.page("Banned list", "\n".join(body))


def _changes_page(site: _Site) -> str:
    records = [(c, e) for e in site.entries for c in e.changes]
    records.sort(key=lambda r: r[1].title.casefold())
    records.sort(key=lambda r: _change_date(r[0]) or "", reverse=True)  # newest first; undated last
    if not records:
        return site.page("Change log", "<p>No dated changes in the loaded sources.</p>")
    items = []
    for change, entry in records:
        source = _e(_label(entry.source))
        via = ""
        if change.update_id and change.update_id != entry.id:
            via = f" (from update {site.link(change.update_id)})"
        items.append(
            f"<li>{_describe_change(change)}: {site.link(entry.id)} "
            f'<span class="meta">{source}</span>{via}</li>'
        )
    count = f'<p class="count">{len(records)} changes, newest first.</p>'
    return site.page("Change log", f'{count}\n<ul class="entries">{"".join(items)}</ul>')


def export_html(entries: list[Entry], out_dir: Path, title: str = DEFAULT_TITLE) -> list[Path]:
    """Write the site into ``out_dir`` (created if needed); returns the files written, index first.

    Raises ValueError for duplicate entry ids: two elements with one id would make links ambiguous.
    """
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            where = f"{entry.location.file}:{entry.location.first_line}"
            raise ValueError(f"duplicate entry id {entry.id!r} ({where}); every anchor must be unique")
        seen.add(entry.id)
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

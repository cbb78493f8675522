"""The browsable rulebook: a static site (plain HTML and CSS; JavaScript only for its search) of every loaded
entry, as the judge answers it.

Each entry's article is ``Composer.entry(entry)`` rendered by ``bot.app.renderers.html``, so the site says
what the bot says: a format update that amends one paragraph is shown, worded as an amendment, under that
paragraph only; a format rule that states a glossary rule in its own words is called a restatement; a
house ruling applies to the entry; every related text is quoted with its own citation and dates. What is
the site's own is navigation: pages, the contents of heading-only sections, links, A–Z lists.

Pages: ``index.html`` (entries by source, rules terms A–Z, banned cards A–Z, by section), one page per
source (``glossary.html``, ``obsidian-hand.html``, ``house.html``) where every entry is an element whose
``id`` is exactly the entry id and every paragraph one whose id is ``<entry id>-p<N>`` (``bot.app.anchors``),
``banned.html`` and ``changes.html`` (every dated change, newest first), and ``style.css``.

Search (``bot.app.rulebook_search``): a Pagefind index in ``pagefind/``, one record per entry at its anchor,
and ``search.js``, which shows Pagefind's search box in every page's header. Without JavaScript the box
stays hidden and every page reads as before; ``search=False`` writes the site without any of it.

``python -m bot export OUT_DIR`` writes it, with the paragraph scopes of the judge's own index
(``Engine.scope``); without them (``scope=None``) a relation is placed by the composer's own fallback (an
entry of one paragraph is that paragraph; otherwise the whole entry).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.app.anchors import entry_href, fragment, page_for, paragraph_href, paragraph_id
from bot.app.answer import Dates
from bot.app.compose import Composer
from bot.app.renderers.html import HtmlRenderer, attr, file_name, safe_url, text
from bot.app.rulebook_search import SEARCH_SCRIPT, SEARCH_SCRIPT_NAME, Record, build_index
from glossary.kinds import is_ruling, label
from glossary.model import Entry, sort_date

__all__ = [
    "DEFAULT_TITLE",
    "entry_href",
    "export_rulebook",
    "page_for",
    "paragraph_href",
    "paragraph_id",
]

DEFAULT_TITLE = "L5R rules judge: rulebook"
STYLESHEET = "style.css"
INDEX_PAGE = "index.html"
BANNED_PAGE = "banned.html"
CHANGES_PAGE = "changes.html"
SOURCE_ORDER = ["glossary", "obsidian-hand", "house"]

Scope = Callable[[str, str], tuple[int, ...] | None]

_EXTRA_PAGES = (
    f'<li><a href="{BANNED_PAGE}">Banned list</a></li><li><a href="{CHANGES_PAGE}">Change log</a></li>'
)

CSS = """\
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fdfdfb; --muted: #5f6368; --accent: #8b1a1a;
  --rule: #ddd; --mark: #fff3c4; --house: #b7791f; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8e6e3; --bg: #161616; --muted: #a0a0a0; --accent: #f08080; --rule: #333; --mark: #3d3520;
    --house: #e0b050; }
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
.meta, .changes, .links, .count, .cite, .note, .citation, .dates, .cite-line { color: var(--muted); font-size: .9rem; }
.changes { padding-left: 1.2rem; }
.text p { margin: .4rem 0; white-space: pre-wrap; }
.text ul.bullets, .text ul.bullets ul { list-style: none; margin: .2rem 0; padding-left: 1.4rem;
  white-space: normal; }
.text ul.bullets { padding-left: .4rem; }
.text ul.bullets li { white-space: pre-wrap; padding-left: 1em; text-indent: -1em; margin: .15rem 0; }
.text pre { white-space: pre-wrap; }
.cite { margin-left: .5em; font-size: .75rem; text-decoration: none; white-space: nowrap; user-select: none;
  text-indent: 0; }
.relation { margin: .5rem 0 .75rem; padding: .1rem 0 .1rem .75rem; border-left: 3px solid var(--rule);
  white-space: normal; text-indent: 0; font-size: .95rem; }
.relation.amends, .relation.updates, .relation.concerns-entry { border-left-color: var(--accent); }
.relation.house-ruling, .relation.server-ruling { border-left-color: var(--house); }
.relation p { margin: .25rem 0; }
.relation p.head, .relation .citation { white-space: normal; }
.quote { margin: .25rem 0 .25rem .25rem; }
.quote p, .quote li { white-space: pre-wrap; }
.quote .md p, .quote .md li { white-space: normal; }
.dates { list-style: none; padding-left: 0; margin: .2rem 0; }
.citation, .cite-line { margin: .2rem 0; }
.contents ul { padding-left: 1.2rem; margin: .2rem 0; }
.letters { font-size: 1.1rem; }
.letters a { display: inline-block; min-width: 1.6rem; text-align: center; }
ul.entries { padding-left: 1.2rem; }
time { font-variant-numeric: tabular-nums; }
.search { margin: .6rem 0 0; }
.search[hidden] { display: none; }
.search .pagefind-ui { --pagefind-ui-scale: .85; --pagefind-ui-primary: var(--accent); --pagefind-ui-text: var(--fg);
  --pagefind-ui-background: var(--bg); --pagefind-ui-border: var(--rule); --pagefind-ui-tag: var(--rule);
  --pagefind-ui-font: inherit; }
.search mark { background: var(--mark); color: inherit; }
"""


def _place(entry: Entry, depth: int | None = None) -> str:
    """Document › section › ..., leaving out a section the document title already names
    ("L5R Comprehensive Rules — Glossary T" is not followed by "Glossary T")."""
    sections = [s for s in entry.section[:depth] if not entry.document.endswith(s)]
    return " › ".join(dict.fromkeys([entry.document, *sections]))


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


@dataclass
class _Site:
    """What every page needs: the entries by id, the composer and renderer, the site title and navigation."""

    entries: list[Entry]
    by_id: dict[str, Entry]
    title: str
    sources: list[str]
    composer: Composer
    html: HtmlRenderer
    search: bool = False  # whether pages carry the search box (the Pagefind index is written beside them)
    by_file: dict[tuple[str, str], list[Entry]] = field(default_factory=dict)  # (source, file) -> its entries

    def __post_init__(self) -> None:
        for entry in self.entries:
            self.by_file.setdefault((entry.source, entry.location.file), []).append(entry)

    def link(self, entry_id: str, label: str | None = None) -> str:
        return self.html.link(entry_id, label)

    def page(self, heading: str, body: str) -> str:
        nav = [f'<li><a href="{INDEX_PAGE}">Index</a></li>']
        nav += [f'<li><a href="{page_for(s)}">{text(label(s))}</a></li>' for s in self.sources]
        nav += [_EXTRA_PAGES]
        search = ""
        if self.search:  # hidden until search.js shows it: without JavaScript there is no dead box
            search = '<div class="search" id="search" hidden></div>\n'
            search += f'<script src="{SEARCH_SCRIPT_NAME}" defer></script>\n'
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{text(heading if heading == self.title else f'{heading} · {self.title}')}</title>\n"
            f'<link rel="stylesheet" href="{STYLESHEET}">\n</head>\n<body>\n'
            f'<header><a class="site" href="{INDEX_PAGE}">{text(self.title)}</a>\n'
            f'<nav aria-label="Site"><ul>{"".join(nav)}</ul></nav>\n{search}</header>\n'
            f"<main>\n<h1>{text(heading)}</h1>\n{body}\n</main>\n</body>\n</html>\n"
        )


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
            head = site.link(item.entry.id) if item.entry is not None else text(item.name)
            inner = _render_contents(site, item) if item.items else ""
            items.append(f"<li>{head}{inner}</li>")
        else:
            items.append(f"<li>{site.link(item.id)}</li>")
    return f"<ul>{''.join(items)}</ul>"


def _linked(site: _Site, entry_id: str) -> str:
    """A link to an entry named with its source ("Terrain (L5R Comprehensive Rules)")."""
    target = site.by_id.get(entry_id)
    return site.link(entry_id) + (f" ({text(label(target.source))})" if target is not None else "")


def _link_lines(site: _Site, entry: Entry) -> list[str]:
    """What the entry bears on and refers to, as links, in the composer's words: a house ruling "Applies to"
    the entries it names; a format rule "Bears in this format on" the glossary entries it is linked to."""
    out = []
    refs = [
        _linked(site, r.target) if r.target in entry.overrides else site.link(r.target, r.text)
        if r.target else text(r.text)
        for r in entry.see_also
    ]
    if is_ruling(entry):
        named = {r.target for r in entry.see_also}
        refs += [_linked(site, i) for i in entry.overrides if i not in named]
        if refs:
            out.append(f'<p class="links applies-to see-also">Applies to: {", ".join(refs)}</p>')
        return out
    if entry.overrides:
        links = ", ".join(_linked(site, i) for i in entry.overrides)
        out.append(f'<p class="links bears-on">Bears in this format on: {links}</p>')
        refs = [ref for r, ref in zip(entry.see_also, refs, strict=True) if r.target not in entry.overrides]
    if refs:
        out.append(f'<p class="links see-also">See also: {", ".join(refs)}</p>')
    return out


def _article(site: _Site, entry: Entry) -> str:
    answer = site.composer.entry(entry)
    parts = site.html.entry_parts(answer, entry)
    meta = [text(_place(entry))]
    meta.append(text(entry.kind + (f": {entry.group}" if entry.group else "")))
    if entry.judge:
        meta.append(f"judge: {text(entry.judge)}")
    if entry.event:
        meta.append(f"event: {text(entry.event)}")
    loc = entry.location
    lines = f"line {loc.first_line}" if loc.first_line == loc.last_line else f"lines {loc.first_line}–{loc.last_line}"
    meta.append(f"{text(file_name(loc.file))}, {lines}")
    out = [
        f'<article class="entry" id="{attr(entry.id)}">',
        f'<h3><a href="#{attr(fragment(entry.id))}">{text(entry.label)}</a></h3>',
        f'<p class="meta">{" · ".join(meta)}</p>',
        *parts.before,
    ]
    contents = _contents(site, entry)
    if parts.text:
        out += ['<div class="text">', parts.text, "</div>"]
    else:
        out.append(f'<p class="note">{"No text of its own; it is made up of:" if contents else "No text."}</p>')
    if contents is not None:
        contents_label = attr(f"Contents of {entry.label}")
        heading = "" if not parts.text else '<p class="note">Contents:</p>'
        listed = _render_contents(site, contents)
        out.append(f'<nav class="contents" aria-label="{contents_label}">{heading}{listed}</nav>')
    out += parts.after
    for fact in answer.facts:
        if fact.name == "History":
            out += [site.html.dates(b, "changes", "Changes") for b in fact.blocks if isinstance(b, Dates)]
    out += _link_lines(site, entry)
    if entry.url and safe_url(entry.url):
        out.append(f'<p class="links">Original: <a href="{attr(entry.url)}">{text(entry.url)}</a></p>')
    out.append("</article>")
    return "\n".join(p for p in out if p)


def _source_page(site: _Site, source: str, articles: dict[str, str]) -> str:
    """All entries of one source in their document order, with a heading whenever the section changes;
    ``articles``: each entry's article by id (the search indexes the same ones)."""
    body: list[str] = []
    current: str | None = None
    entries = [e for e in site.entries if e.source == source]
    body.append(f'<p class="count">{len(entries)} entries.</p>')
    for entry in entries:
        heading = _place(entry, depth=1)
        if heading != current:
            current = heading
            body.append(f"<h2>{text(heading)}</h2>")
        body.append(articles[entry.id])
    return site.page(label(source), "\n".join(body))


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
    jumps = " ".join(f'<a href="#{prefix}-{attr(c)}">{text(c)}</a>' for c in letters)
    body = [f'<p class="letters">{jumps}</p>']
    for c in letters:
        body.append(f'<h3 id="{prefix}-{attr(c)}">{text(c)}</h3>')
        body.append(_entry_list(site, by_letter[c]))
    return body


def _index_page(site: _Site) -> str:
    body: list[str] = []
    if site.search:
        body.append('<noscript><p class="note">Search needs JavaScript; the lists below work without it.</p>'
                    "</noscript>")
    body += ['<h2 id="by-source">By source</h2>', "<ul>"]
    for source in site.sources:
        entries = [e for e in site.entries if e.source == source]
        documents = ", ".join(dict.fromkeys(e.document for e in entries))
        body.append(
            f'<li><a href="{page_for(source)}">{text(label(source))}</a> <span class="count">({len(entries)} '
            f"entries; {text(documents)})</span></li>"
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
        body.append(f"<h3>{text(label(source))}</h3>")
        sections: dict[str, list[Entry]] = defaultdict(list)
        for entry in site.entries:
            if entry.source == source:
                sections[_place(entry)].append(entry)
        for name, entries in sections.items():
            body.append(f"<h4>{text(name)}</h4>")
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
        body.append(f"<h2>{text(group)}</h2>")
        items = []
        for entry in entries:
            dates = ", ".join(text(c.date) for c in entry.changes if c.date)
            added = f' <span class="meta">(listed {dates})</span>' if dates else ""
            items.append(f"<li>{site.link(entry.id)}{added}</li>")
        body.append(f'<ul class="entries">{"".join(items)}</ul>')
    return site.page("Banned list", "\n".join(body))


def _changes_page(site: _Site) -> str:
    records = [(c, e) for e in site.entries for c in e.changes]
    records.sort(key=lambda r: r[1].label.casefold())
    records.sort(key=lambda r: sort_date(r[0]), reverse=True)  # newest first; undated last
    if not records:
        return site.page("Change log", "<p>No dated changes in the loaded sources.</p>")
    items = []
    for change, entry in records:
        source = text(label(entry.source))
        via = ""
        if change.update_id and change.update_id != entry.id:
            via = f" (from update {site.link(change.update_id)})"
        items.append(
            f"<li>{site.html.change(change, entry)}: {site.link(entry.id)} "
            f'<span class="meta">{source}</span>{via}</li>'
        )
    count = f'<p class="count">{len(records)} changes, newest first.</p>'
    return site.page("Change log", f'{count}\n<ul class="entries">{"".join(items)}</ul>')


def _check_ids(entries: list[Entry]) -> None:
    """Raise ValueError for duplicate element ids (two entries with one id, or an entry whose id is another
    entry's paragraph anchor): two elements with one id would make links ambiguous."""
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


def export_rulebook(
    entries: list[Entry],
    out_dir: Path,
    title: str = DEFAULT_TITLE,
    *,
    scope: Scope | None = None,
    search: bool = True,
) -> list[Path]:
    """Write the site into ``out_dir`` (created if needed); returns the files written, index first (the
    search index's folder, ``pagefind/``, last).

    ``scope(rule_id, entry_id)``: the paragraphs of the entry a linked rule concerns (``Engine.scope``), so
    an amendment is shown under the paragraph it amends. ``search``: index every entry with Pagefind and
    put its search box on every page. Raises ValueError for duplicate element ids, and
    ``rulebook_search.SearchIndexError`` (an OSError) with one line when Pagefind cannot run.
    """
    _check_ids(entries)
    present = {e.source for e in entries}
    sources = [s for s in SOURCE_ORDER if s in present] + sorted(present - set(SOURCE_ORDER))
    by_id = {e.id: e for e in entries}
    # No rulebook URL (the site links within itself) and no sub-heading text under a heading: the site
    # lists a heading's contents as links instead of quoting them a second time.
    composer = Composer(by_id.get, None, children=lambda _entry_id: [], scope=scope)
    site = _Site(list(entries), by_id, title, sources, composer, HtmlRenderer(by_id), search=search)
    articles = {e.id: _article(site, e) for e in site.entries}

    out_dir.mkdir(parents=True, exist_ok=True)
    pages = {INDEX_PAGE: _index_page(site)}
    pages.update({page_for(s): _source_page(site, s, articles) for s in sources})
    pages[BANNED_PAGE] = _banned_page(site)
    pages[CHANGES_PAGE] = _changes_page(site)
    pages[STYLESHEET] = CSS
    if search:
        pages[SEARCH_SCRIPT_NAME] = SEARCH_SCRIPT
    written = []
    for name, content in pages.items():
        path = out_dir / name
        path.write_text(content, encoding="utf-8")
        written.append(path)
    if search:
        records = [Record(entry_href(e), e.label, articles[e.id], label(e.source)) for e in site.entries]
        written.append(build_index(out_dir, records))
    return written

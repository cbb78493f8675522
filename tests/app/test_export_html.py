"""The static rulebook (``bot.app.rulebook``, rendered by ``bot.app.renderers.html``): verbatim text, one anchor
per entry id, links that resolve, change log order, and relations worded and placed as the composer decides."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app.compose import Composer
from bot.app.renderers.html import browser_url, render_literal, render_markdown
from bot.app.rulebook import entry_href, export_rulebook, paragraph_href, paragraph_id
from glossary.house import EXAMPLES_DIR
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Change, CrossRef, Entry, Location
from index.engine import Engine

TERRAIN = [
    "A Battle Action card with the Terrain keyword establishes the kind of ground the current battle is being "
    "fought on.",
    "If a Terrain is already in play at the current battlefield, no player can play another Terrain there.",
    "[CHANGED 21 May 2008; a Terrain's entering play is a rulebook effect, not one of its own effects]",
    "The “Terrain Battle:” action on a Terrain card can not be used while it is in play.",
]


class _Page(HTMLParser):
    """Collects ids, links, scripts, the visible text of each ``<p>`` and of each paragraph element
    (``class="para"``: a ``<p>``, a bullet ``<li>`` or a house ruling's ``<div>``) of one page.

    A paragraph's ``¶N · line L`` citation (``a.cite``), the items nested inside a bullet and a relation
    shown under it (``div.relation``: an amendment of that paragraph, quoted) are not part of its text.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.meta: list[dict[str, str | None]] = []
        self.paragraphs: list[str] = []
        self.paras: dict[str, str] = {}  # paragraph id -> its text
        self.depth: dict[str, int] = {}  # paragraph id -> how many lists it is inside
        self.cites: dict[str, str] = {}  # paragraph id -> its citation text
        self._in_p = 0
        self._open: list[tuple[str, str]] = []  # (tag, paragraph id) of open paragraph elements
        self._lists = 0
        self._in_cite = 0
        self._in_relation = 0  # open <div>s from a div.relation down

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "div" and (self._in_relation or "relation" in (a.get("class") or "").split()):
            self._in_relation += 1
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"] or "")
        if tag == "a" and a.get("class") == "cite":
            self._in_cite += 1
        if tag == "meta":
            self.meta.append(a)
        if tag == "ul":
            self._lists += 1
        if tag == "p":
            self._in_p += 1
            self.paragraphs.append("")
        if "para" in (a.get("class") or "").split() and not self._in_relation:
            ident = a.get("id") or ""
            self._open.append((tag, ident))
            self.paras[ident] = ""
            self.depth[ident] = self._lists
        if tag == "br" and self._in_p:
            self.paragraphs[-1] += "\n"

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._in_p -= 1
        if tag == "ul":
            self._lists -= 1
        if tag == "a" and self._in_cite:
            self._in_cite -= 1
        if self._in_relation:
            self._in_relation -= tag == "div"
            return
        if self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._in_cite:
            if self._open:
                self.cites[self._open[-1][1]] = self.cites.get(self._open[-1][1], "") + data
            return
        if self._in_p:
            self.paragraphs[-1] += data
        if self._in_relation:
            return
        if self._open and self._lists == self.depth[self._open[-1][1]]:  # not in a list nested inside it
            self.paras[self._open[-1][1]] += data


def parse_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _visible(html_text: str) -> str:
    page = _Page()
    page.feed(html_text)
    return "\n".join(page.paragraphs)


def _lines(text: str) -> list[str]:
    return [line.replace("\xa0", " ").strip() for line in text.split("\n") if line.strip()]


def _entry(entry_id: str, source: str, kind: str, title: str, paragraphs: list[str], **extra: object) -> Entry:
    document = {"glossary": "L5R Comprehensive Rules — Glossary T", "obsidian-hand": "The Obsidian Hand Ruleset",
                "house": "Kotei rulings"}[source]
    return Entry(id=entry_id, source=source, document=document, kind=kind, title=title,  # type: ignore[arg-type]
                 section=extra.pop("section", [document.split(" — ")[-1]]),  # type: ignore[arg-type]
                 paragraphs=paragraphs, location=Location("f.txt", 1, len(paragraphs)), **extra)  # type: ignore[arg-type]


@pytest.fixture
def entries() -> list[Entry]:
    terrain = _entry(
        "glossary:terrain", "glossary", "term", "Terrain", TERRAIN,
        changes=[Change(kind="changed", date="2008-05-21", raw=TERRAIN[2], note="a Terrain's entering play is a "
                        "rulebook effect, not one of its own effects", paragraph=1)],
        overridden_by=["obsidian-hand:update-2015-10-25", "house:terrain-after-destruction"],
        see_also=[CrossRef("Battles, Combat Segment", None)],
    )
    target = _entry(
        "glossary:target", "glossary", "term", "Target",
        ["A special procedure that involves designating one or more cards or other game entity (such as a "
         "Province or player). The word “target” must appear as a verb or an adjective for the procedure to be "
         "considered targeting -- just “choosing” something is not targeting.",
         'A "change to targeting" is anything that changes the actual target or the player who chooses '
         "targeting. [ADDED Sept 25 2007}"],
        changes=[Change(kind="added", date="2007-09-25", raw="[ADDED Sept 25 2007}", paragraph=1,
                        anomaly="stamp closed with '}'")],
    )
    update = _entry(
        "obsidian-hand:update-2015-10-25", "obsidian-hand", "update", "Update 10/25/2015",
        ["One Terrain per battlefield will be returned. This is in relation to the previous change in Terrains."],
        section=["Updates"], overrides=["glossary:terrain"],
        changes=[Change(kind="updated", date="2015-10-25", raw="[10/25/2015]")],
    )
    banned = _entry(
        "obsidian-hand:banned-moshi-eihime", "obsidian-hand", "banned", "Moshi Eihime", ["Moshi Eihime"],
        section=["Banned Cards", "Personalities"], group="Personalities",
        changes=[Change(kind="added", date="2016-02-15", raw="[02/15/2016]", note="Moshi Eihime added to Banned List",
                        update_id="obsidian-hand:update-2016-02-15")],
    )
    ruling = _entry(
        "house:terrain-after-destruction", "house", "ruling", "Terrain after destruction",
        ["A destroyed Terrain is *no longer in play*.", "- effects end\n- not negation",
         "<script>alert(1)</script> [bad](javascript:alert(1)) [ok](https://example.com/rules)"],
        judge="Jane Doe", overrides=["glossary:terrain"],
        changes=[Change(kind="added", date="2026-11-01", raw="Date: 2026-11-01", line=2)],
        see_also=[CrossRef("Terrain", "glossary:terrain"), CrossRef("Ranged Attack", None),
                  CrossRef("Nowhere", "glossary:not-exported")],
    )
    return [terrain, target, update, banned, ruling]


def _all_links_resolve(out: Path) -> list[str]:
    """Every relative link in the site names an existing page and, if it has a fragment, an existing id there."""
    ids = {p.name: set(parse_page(p).ids) for p in out.glob("*.html")}
    broken = []
    for name in ids:
        for href in parse_page(out / name).hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc:
                continue
            page = parts.path or name
            fragment = unquote(parts.fragment)
            if page not in ids or (fragment and fragment not in ids[page]):
                broken.append(f"{name}: {href}")
    return broken


def test_files_written_and_every_entry_has_its_anchor(entries: list[Entry], tmp_path: Path) -> None:
    written = export_rulebook(entries, tmp_path / "site", title="Test rulebook")
    assert [p.name for p in written] == [
        "index.html", "glossary.html", "obsidian-hand.html", "house.html", "banned.html", "changes.html", "style.css",
        "search.js", "pagefind",
    ]
    assert all(p.is_file() for p in written[:-1]) and written[-1].is_dir()
    for entry in entries:
        page = parse_page(tmp_path / "site" / entry_href(entry).split("#")[0])
        assert page.ids.count(entry.id) == 1, entry.id
    assert entry_href(entries[0]) == "glossary.html#glossary:terrain"


def test_every_link_resolves_and_pages_are_phone_ready(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    assert _all_links_resolve(tmp_path) == []
    for path in tmp_path.glob("*.html"):
        page = parse_page(path)
        assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.meta, path.name
        # The only script is the search's, deferred; its box is hidden until the script shows it.
        html_text = path.read_text(encoding="utf-8")
        assert re.findall(r"<script\b[^>]*>", html_text) == ['<script src="search.js" defer>'], path.name
        assert '<div class="search" id="search" hidden></div>' in html_text, path.name
    css = (tmp_path / "style.css").read_text(encoding="utf-8")
    assert "max-width: 46rem" in css


def test_rule_text_is_shown_exactly_as_written(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    shown = parse_page(tmp_path / "glossary.html").paragraphs
    for paragraph in TERRAIN + entries[1].paragraphs:
        assert paragraph in shown


def test_cross_references_overrides_and_judge(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    house = (tmp_path / "house.html").read_text(encoding="utf-8")
    assert '<a href="glossary.html#glossary:terrain">Terrain</a>' in house
    assert "Applies to: " in house and "Ranged Attack" in house and "Nowhere" in house
    assert "glossary:not-exported" not in house  # an unknown target is text, never a dead link
    assert "judge: Jane Doe" in house
    glossary = (tmp_path / "glossary.html").read_text(encoding="utf-8")
    # Without paragraph scopes (no index) the update concerns the entry as a whole: worded as the composer
    # words it, quoted, with its own citation (a link to it) and dates, before the text it amends.
    assert (
        '<div class="relation updates"><p class="head">In The Obsidian Hand Ruleset, the latest update about this '
        "entry: <strong>Update 10/25/2015</strong> (2015-10-25) (in that format):</p>"
        '<blockquote class="quote"><p>One Terrain per battlefield will be returned.'
    ) in glossary
    assert (
        '<p class="citation">— <a href="obsidian-hand.html#obsidian-hand:update-2015-10-25">The Obsidian Hand '
        "Ruleset › Updates › Update 10/25/2015, line 1 · f.txt</a></p>"
        '<ul class="dates" aria-label="Dates"><li><span class="kind">Updated</span> <time>2015-10-25</time></li></ul>'
    ) in glossary
    assert (
        '<div class="relation house-ruling"><p class="head">House ruling — Terrain after destruction (Jane Doe, '
        "2026-11-01):</p>"
    ) in glossary
    assert '<a href="house.html#house:terrain-after-destruction">Kotei rulings › Terrain after destruction' in glossary
    assert glossary.index('class="relation updates"') < glossary.index('id="glossary:terrain-p1"')
    assert "Overridden" not in glossary and "precedence" not in glossary
    assert (
        'Applies to: <a href="glossary.html#glossary:terrain">Terrain</a> (L5R Comprehensive Rules), Ranged Attack, '
        "Nowhere</p>"
    ) in house
    # the paragraph a stamp dates is a link to that paragraph's anchor (the fixture has no per-paragraph lines)
    assert '<time>2008-05-21</time> (<a href="glossary.html#glossary:terrain-p2">paragraph 2</a>)' in glossary
    obsidian = (tmp_path / "obsidian-hand.html").read_text(encoding="utf-8")
    assert (
        "Bears in this format on: "
        '<a href="glossary.html#glossary:terrain">Terrain</a> (L5R Comprehensive Rules)'
    ) in obsidian


def test_an_amendment_stands_under_the_paragraph_it_concerns(entries: list[Entry], tmp_path: Path) -> None:
    """With the scope the index works out, the update is shown under paragraph 2 only, and says so."""
    scopes = {("obsidian-hand:update-2015-10-25", "glossary:terrain"): (1,)}
    export_rulebook(entries, tmp_path, scope=lambda rule, entry: scopes.get((rule, entry)))
    glossary = (tmp_path / "glossary.html").read_text(encoding="utf-8")
    p2, p3 = glossary.index('id="glossary:terrain-p2"'), glossary.index('id="glossary:terrain-p3"')
    amends = glossary.index('<div class="relation updates">')
    assert p2 < amends < p3 and glossary.count('class="relation updates') == 1
    assert "about paragraph 2: <strong>Update 10/25/2015</strong> (2015-10-25) (in that format):" in glossary
    assert "amends" not in glossary  # neither update gives Old/New wording: neither is called an amendment
    assert parse_page(tmp_path / "glossary.html").paras["glossary:terrain-p2"] == TERRAIN[1]  # the quote is apart
    # the house ruling applies to the entry as a whole: before the text, introduced as the composer does
    assert glossary.index('class="relation house-ruling"') < glossary.index(
        '<p class="line label">L5R Comprehensive Rules text:</p>') < glossary.index('id="glossary:terrain-p1"')


def test_house_markdown_is_rendered_without_raw_html_or_unsafe_links(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    house = (tmp_path / "house.html").read_text(encoding="utf-8")
    assert "<em>no longer in play</em>" in house
    assert "<li>effects end</li>" in house
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in house
    assert "javascript:" not in house.replace("(javascript:alert(1))", "")
    assert '<a href="https://example.com/rules">ok</a>' in house
    assert re.findall(r"<script\b[^>]*>", house) == ['<script src="search.js" defer>']  # the search's only


def test_change_log_is_newest_first_and_links_each_entry(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    page = (tmp_path / "changes.html").read_text(encoding="utf-8")
    order = ["2026-11-01", "2016-02-15", "2015-10-25", "2008-05-21", "2007-09-25"]
    positions = [page.index(f"<time>{d}</time>") for d in order]
    assert positions == sorted(positions)
    assert '<a href="house.html#house:terrain-after-destruction">Terrain after destruction</a>' in page
    assert "(written [ADDED Sept 25 2007}: stamp closed with '}')" in page  # quotes need no escaping in text
    # the update record named by a change is not exported here: shown as text, not a dead link
    assert "from update obsidian-hand:update-2016-02-15" in page


def test_banned_page_groups_cards(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    page = (tmp_path / "banned.html").read_text(encoding="utf-8")
    assert "<h2>Personalities</h2>" in page
    assert '<a href="obsidian-hand.html#obsidian-hand:banned-moshi-eihime">Moshi Eihime</a>' in page
    assert "(listed 2016-02-15)" in page


def test_index_lists_by_source_letter_and_section(entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(entries, tmp_path)
    index = parse_page(tmp_path / "index.html")
    # Moshi Eihime is a banned card, not a rules term: under "Banned cards A–Z", not "Rules A–Z"
    assert {"by-source", "by-letter", "by-section", "letter-T", "letter-U", "banned-by-letter", "banned-M"} <= set(
        index.ids
    )
    assert "letter-M" not in index.ids
    hrefs = set(index.hrefs)
    assert {entry_href(e) for e in entries} <= hrefs
    assert {"glossary.html", "obsidian-hand.html", "house.html", "banned.html", "changes.html"} <= hrefs


def test_duplicate_ids_are_refused(entries: list[Entry], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^duplicate entry id 'glossary:terrain' \(f\.txt:1\)"):
        export_rulebook([*entries, entries[0]], tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "****Both are under a watchlist for possible changes",
        "  • Only available Starting Holdings are BK & BH (MRPs); Legacy rulebook ability available.",
        "1. not a list <b>not bold</b> [not a link](http://x) `not code` # not a heading",
        "*not emphasis* and _not either_ and **nor this** <http://not.autolinked>",
        "Setext?\n=====\n---\n> not a quote\n    not code &amp; \\escaped\\",
    ],
)
def test_literal_rendering_keeps_every_character(text: str) -> None:
    rendered = render_literal(text)
    assert _lines(_visible(rendered)) == _lines(text)
    for tag in ("<b>", "<strong>", "<em>", "<a ", "<code>", "<h1>", "<blockquote>", "<ol>", "<hr"):
        assert tag not in rendered


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"])
               | st.sampled_from(list("ab *_[]()<>#`-=1.!&;:\\\n"))))
def test_literal_rendering_property(text: str) -> None:
    assert _lines(_visible(render_literal(text))) == _lines(text)


def test_render_markdown_basics() -> None:
    assert render_markdown("**Bold** and <i>raw</i>") == "<p><strong>Bold</strong> and &lt;i&gt;raw&lt;/i&gt;</p>"


def test_real_corpus_exports_every_entry_and_links_resolve(tmp_path: Path) -> None:
    corpus = load_corpus([SHIPPED_SOURCES, EXAMPLES_DIR])
    assert corpus.errors == []
    assert {e.source for e in corpus.entries} == {"glossary", "obsidian-hand", "house"}
    export_rulebook(corpus.entries, tmp_path)  # without the index's scopes: every relation to the whole entry
    ids = set()
    for path in tmp_path.glob("*.html"):
        if path.name not in {"index.html", "banned.html", "changes.html"}:
            ids.update(parse_page(path).ids)
    assert {e.id for e in corpus.entries} <= ids
    assert _all_links_resolve(tmp_path) == []
    for source in ("glossary", "obsidian-hand"):
        shown = parse_page(tmp_path / f"{source}.html").paras
        paragraphs = [(e, i, p) for e in corpus.entries if e.source == source for i, p in enumerate(e.paragraphs)]
        assert len(paragraphs) > 100
        # each one shown exactly as written under its own anchor (a bullet's indentation is its nesting)
        wrong = [(e.id, i) for e, i, p in paragraphs if shown.get(f"{e.id}-p{i + 1}") != p.lstrip(" \t\xa0")]
        assert wrong == []


def test_unsplittable_link_is_dropped_not_a_crash() -> None:
    assert render_markdown("[x](http://[bad) and [y](https://ok.example/)") == (
        '<p><a>x</a> and <a href="https://ok.example/">y</a></p>'
    )


def test_probable_date_is_said_once_and_unknown_overriders_are_no_dead_links(tmp_path: Path) -> None:
    resolve = _entry(
        "glossary:resolve", "glossary", "term", "Resolve", ["A duel begins to resolve. [CHANGED May 30 3008]"],
        changes=[Change(kind="changed", date="3008-05-30", raw="[CHANGED May 30 3008]", paragraph=0,
                        anomaly="impossible date 3008-05-30 (in the future); probably 2008-05-30",
                        probable_date="2008-05-30")],
        overridden_by=["house:not-exported"],
    )
    export_rulebook([resolve], tmp_path)
    glossary = (tmp_path / "glossary.html").read_text(encoding="utf-8")
    assert glossary.count("probably 2008-05-30") == 1
    # the composer states no relation to a rule it cannot quote: nothing links to it
    assert "house:not-exported" not in glossary and 'class="relation' not in glossary


# --- issue 8: a rulebook a judge can read, cite and link to ----------------------------------------


@pytest.fixture(scope="module")
def shipped_index(index_copy: Callable[..., Path]) -> Iterator[tuple[Engine, Path]]:
    """The shipped rules and the example house rulings, indexed as the bot indexes them (paragraph scopes)."""
    index_dir = index_copy("index")  # the shipped paragraphs' vectors come from its cache
    engine = Engine.open([SHIPPED_SOURCES, EXAMPLES_DIR], index_dir)
    try:
        yield engine, index_dir
    finally:
        engine.close()


@pytest.fixture(scope="module")
def shipped_site(
    shipped_index: tuple[Engine, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Entry]]:
    engine, _ = shipped_index
    out = tmp_path_factory.mktemp("shipped")
    export_rulebook(engine.corpus.entries, out, scope=engine.scope)
    return out, engine.corpus.by_id()


def test_page_source_is_readable(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    """Only what HTML needs is escaped: rule text reads in the page source as it does in the file."""
    out, _ = shipped_site
    glossary = (out / "glossary.html").read_text(encoding="utf-8")
    obsidian = (out / "obsidian-hand.html").read_text(encoding="utf-8")
    assert ">[CHANGED 21 May 2008; a Terrain's entering play is a rulebook effect, not one of its own effects]<" in (
        glossary
    )
    assert "The “Terrain Battle:” action on a Terrain card can not be used while it is in play." in glossary
    assert "Only available Starting Holdings are BK &amp; BH (MRPs); Legacy rulebook ability available." in obsidian
    for page in (glossary, obsidian, (out / "changes.html").read_text(encoding="utf-8")):
        assert "&#" not in page and "&nbsp;" not in page and "&quot;" not in page.replace('="', "")


def test_nested_bullets_keep_their_level(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    out, _ = shipped_site
    obsidian = parse_page(out / "obsidian-hand.html")
    glossary = parse_page(out / "glossary.html")
    abilities = "obsidian-hand:guideline-player-abilities-p"  # "  •", "\xa0 \xa0 *", "\xa0 \xa0 **"
    assert [obsidian.depth[f"{abilities}{n}"] for n in range(1, 6)] == [1, 1, 1, 2, 3]
    deck = "obsidian-hand:ii-f-the-play-deck-and-deck-construction-p"  # "  •" and "    •"
    assert [obsidian.depth[f"{deck}{n}"] for n in range(1, 12)] == [0, 0, 1, 2, 2, 1, 1, 1, 1, 0, 0]
    seppuku = "obsidian-hand:ability-seppuku-p"  # "*" then "**" at the same indentation
    assert [obsidian.depth[f"{seppuku}{n}"] for n in range(1, 4)] == [0, 1, 2]
    clans = "obsidian-hand:ii-a-clan-alignment-p"  # "– Crab Clan"
    assert obsidian.depth[f"{clans}5"] == 1 and obsidian.paras[f"{clans}5"] == "– Crab Clan"
    footnote = "obsidian-hand:guideline-deck-construction-p8"  # "****Both are under a watchlist": not a bullet
    assert obsidian.depth[footnote] == 0 and obsidian.paras[footnote].startswith("****Both")
    ranged = "glossary:ranged-attack-p"  # glossary pages: "- "
    assert [glossary.depth[f"{ranged}{n}"] for n in range(6, 10)] == [0, 1, 1, 0]
    assert glossary.paras[f"{ranged}7"].startswith("- A simultaneous Ranged Attack")


def test_bullet_levels_from_indentation_and_markers(tmp_path: Path) -> None:
    paragraphs = ["Intro:", "• one", "\t• under one (a tab)", "      * deeper still", "  • between: a child of one",
                  "• two", "Outro.", "  - first of a new list, indented", "- less indented than the first"]
    export_rulebook([_entry("glossary:b", "glossary", "term", "B", paragraphs)], tmp_path)
    page = parse_page(tmp_path / "glossary.html")
    assert [page.depth[f"glossary:b-p{n}"] for n in range(1, 10)] == [0, 1, 2, 3, 2, 1, 0, 1, 1]
    assert [page.paras[f"glossary:b-p{n}"] for n in range(1, 10)] == [p.lstrip(" \t") for p in paragraphs]


def test_an_anchor_and_a_citation_per_paragraph(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    out, by_id = shipped_site
    page = parse_page(out / "glossary.html")
    terrain = by_id["glossary:terrain"]
    for n, paragraph in enumerate(terrain.paragraphs, 1):
        assert page.paras[f"glossary:terrain-p{n}"] == paragraph
        first, last = terrain.lines[n - 1]
        assert page.cites[f"glossary:terrain-p{n}"] == f"¶{n} · line {first}" and first == last
    assert page.cites["glossary:terrain-p3"] == "¶3 · line 25"
    # the stamp of line 26 closes paragraph 3: its "(paragraph 3)" links there, with that paragraph's line
    html_text = (out / "glossary.html").read_text(encoding="utf-8")
    assert '(<a href="glossary.html#glossary:terrain-p3">paragraph 3</a>, line 25)' in html_text
    changes = (out / "changes.html").read_text(encoding="utf-8")
    assert '(<a href="glossary.html#glossary:terrain-p3">paragraph 3</a>, line 25)' in changes
    # every paragraph of every entry has its anchor on the entry's page, numbered from 1
    ids = {name: set(parse_page(out / name).ids) for name in ("glossary.html", "obsidian-hand.html", "house.html")}
    missing = [
        paragraph_id(e, i) for e in by_id.values() for i in range(len(e.paragraphs))
        if paragraph_id(e, i) not in ids[entry_href(e).split("#")[0]]
    ]
    assert missing == []
    assert paragraph_href(terrain, 2) == "glossary.html#glossary:terrain-p3"
    assert paragraph_href(terrain, None) == paragraph_href(terrain, 99) == "glossary.html#glossary:terrain"
    house = parse_page(out / "house.html")
    ruling = "house:terrain-destroyed-before-battle-resolution"
    assert house.cites[f"{ruling}-p2"] == "¶2 · lines 13–15"  # a Markdown block over several lines


def test_multi_line_paragraphs_keep_their_line_breaks(tmp_path: Path) -> None:
    entry = _entry("glossary:m", "glossary", "term", "M", ["first line\n  second, indented", "plain"])
    entry.lines = [(4, 5), (7, 7)]
    export_rulebook([entry], tmp_path)
    page = parse_page(tmp_path / "glossary.html")
    assert page.paras["glossary:m-p1"] == "first line\n  second, indented"
    assert page.cites == {"glossary:m-p1": "¶1 · lines 4–5", "glossary:m-p2": "¶2 · line 7"}
    assert "white-space: pre-wrap" in (tmp_path / "style.css").read_text(encoding="utf-8")


def _contents(out: Path, entry_id: str) -> list[tuple[int, str]]:
    """(nesting, link text or sub-heading) of the contents list shown in one entry's article."""
    page = (out / "obsidian-hand.html").read_text(encoding="utf-8")
    article = page[page.index(f'<article class="entry" id="{entry_id}">'):]
    article = article[: article.index("</article>")]
    assert '<div class="text">\n</div>' not in article and '<div class="text"></div>' not in article
    nav = article[article.index('<nav class="contents"'): article.index("</nav>")]

    class Items(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.depth, self.items = 0, []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.depth += tag == "ul"

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag == "ul"

        def handle_data(self, data: str) -> None:
            if self.depth and data.strip():
                self.items.append((self.depth, data))

    items = Items()
    items.feed(nav)
    return items.items


def test_heading_only_sections_show_their_contents(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    out, by_id = shipped_site
    assert by_id["obsidian-hand:i-cardinal-rules"].paragraphs == []  # no body of its own in the source
    assert _contents(out, "obsidian-hand:i-cardinal-rules") == [
        (1, "Cardinal Rule 1: Cards vs. Rules"), (1, "Cardinal Rule 2: Cards vs. Cards"),
        (1, "Cardinal Rule 3: Oracle vs. Cards"), (1, "Cardinal Rule 4: Oracle vs. Rules"),
    ]
    assert _contents(out, "obsidian-hand:ii-f-deck-constructions-and-restrictions") == [
        (1, "The Play Deck and Deck Construction"), (1, "Deck Restrictions"),
    ]
    assert _contents(out, "obsidian-hand:iii-a-starting-card-types") == [
        (1, "Strongholds"), (2, "A. Clan Alignment (Strongholds)"), (2, "B. Province Strength"),
        (2, "C. Gold Production"), (2, "D. Starting Family Honor"), (1, "Senseis"), (1, "Winds"),
        (1, "Starting Holdings"),
    ]
    page = (out / "obsidian-hand.html").read_text(encoding="utf-8")
    assert '<p class="note">No text of its own; it is made up of:</p>' in page
    # a section with text of its own and sub-headings lists them too: abilities under their timing groups
    abilities = _contents(out, "obsidian-hand:ii-d-player-abilities-and-traits")
    assert abilities[:4] == [(1, "Limited"), (2, "Lobby"), (2, "Favor Cycle"), (2, "Kharmic")]
    assert (2, "Ninjitsu (Open)") in abilities and (1, "Reaction") in abilities
    assert _all_links_resolve(out) == []


def test_a_to_z_keeps_banned_cards_apart_from_rules(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    out, by_id = shipped_site
    index = (out / "index.html").read_text(encoding="utf-8")
    rules = index[index.index('id="by-letter"'): index.index('id="banned-by-letter"')]
    banned = index[index.index('id="banned-by-letter"'): index.index('id="by-section"')]
    banned_ids = [i for i, e in by_id.items() if e.kind == "banned"]
    assert len(banned_ids) == 25
    for entry_id in banned_ids:
        assert f"#{entry_id}" not in rules
        assert f"#{entry_id}\"" in banned
    assert "#glossary:terrain\"" in rules and "#glossary:terrain\"" not in banned
    assert "Rules A–Z" in index and "Banned cards A–Z" in index


def test_same_titled_entries_are_shown_with_their_labels(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    out, by_id = shipped_site
    obsidian = (out / "obsidian-hand.html").read_text(encoding="utf-8")
    for label in ("Ninjitsu (Open)", "Ninjitsu (Reaction)", "Ninjitsu (Battle)", "Enlightened (Open)",
                  "Enlightened (Battle)", "Honor (Victory Conditions)", "Honor (Interrupt)"):
        entry = next(e for e in by_id.values() if e.label == label)
        assert f'<h3><a href="#{entry.id}">{label}</a></h3>' in obsidian
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<a href="obsidian-hand.html#obsidian-hand:ability-ninjitsu-reaction">Ninjitsu (Reaction)</a>' in index
    assert ">Ninjitsu</a>" not in index
    equip = by_id["glossary:equip"].label
    assert equip != "Equip" and f">{equip}</a>" in index
    # a link to one of them says which one: the format's Equip ability bears on the glossary's Equip
    assert f'Bears in this format on: <a href="glossary.html#glossary:equip">{equip}</a>' in obsidian


def test_a_paragraph_anchor_that_is_another_entry_id_is_refused(tmp_path: Path) -> None:
    clash = [_entry("glossary:terrain", "glossary", "term", "Terrain", ["a", "b", "c"]),
             _entry("glossary:terrain-p3", "glossary", "term", "Terrain P3", ["x"])]
    with pytest.raises(ValueError, match=r"'glossary:terrain-p3' .* is also the anchor of paragraph 3 of"):
        export_rulebook(clash, tmp_path)


def test_the_published_rulebook_names_files_without_the_host_folders(tmp_path: Path) -> None:
    ruling = _entry("house:r", "house", "ruling", "R", ["Text."])
    ruling.location = Location("/srv/private/judges/rulings.md", 3, 5)
    export_rulebook([ruling], tmp_path)
    house = (tmp_path / "house.html").read_text(encoding="utf-8")
    assert "rulings.md, lines 3–5" in house and "/srv/private" not in house


# --- issue 12, defect 1: no script through a house ruling's links ----------------------------------

HOSTILE = [
    "[a](&#106;avascript:alert(5))",
    "[c](javascript&#58;alert(7))",
    "[b](java&#9;script:alert(8))",
    "[d](&#x6A;avascript:alert(1))",
    "[e](&#0000106;avascript:alert(1))",
    "[f](jav&#x0A;ascript:alert(1))",
    "[g](&#32;javascript:alert(1))",
    "[h](JaVaScRiPt:alert(1))",
    "[i](&#1;javascript:alert(1))",
    "[j](java&Tab;script:alert(1))",
    "[k](javascript&colon;alert(1))",
    "[l](vbscript:msgbox(1))",
    "[m](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![n](&#106;avascript:alert(1))",
    "[o]: &#106;avascript:alert(1)\n\n[o]",
]


def _browser_sees(href: str) -> str:
    """An href as a browser follows it: references decoded (HTMLParser does that for attribute values),
    tabs and newlines dropped, controls and spaces trimmed at both ends, the scheme lower-cased."""
    url = href.replace("\t", "").replace("\n", "").replace("\r", "").strip("".join(map(chr, range(0x21))))
    scheme, colon, _ = url.partition(":")
    return (scheme.lower() + colon + _) if colon and "/" not in scheme else url


def _links(html_text: str) -> list[str]:
    page = _Page()
    page.feed(html_text)
    srcs = re.findall(r'src="([^"]*)"', html_text)
    return [_browser_sees(h) for h in page.hrefs] + [_browser_sees(html.unescape(s)) for s in srcs]


@pytest.mark.parametrize("markdown_text", HOSTILE)
def test_encoded_script_links_are_dropped(markdown_text: str) -> None:
    rendered = render_markdown(markdown_text)
    assert _links(rendered) == [], rendered
    assert "<a" in rendered or "<img" in rendered  # the link text stays, only its target goes


@pytest.mark.parametrize(
    ("markdown_text", "href"),
    [
        ("[ok](https://example.com/rules?a=1&b=2)", "https://example.com/rules?a=1&b=2"),
        ("[mail](mailto:judge@example.com)", "mailto:judge@example.com"),
        ("[rel](glossary.html#glossary:terrain)", "glossary.html#glossary:terrain"),
        ("[frag](#house:r-p2)", "#house:r-p2"),
        ("[enc](&#104;ttps://example.com/)", "https://example.com/"),
        ("[amp](&amp;#106;avascript:x)", "&#106;avascript:x"),  # once decoded: a relative path, no script
        ("<judge@example.com>", "mailto:judge@example.com"),
    ],
)
def test_safe_links_are_kept(markdown_text: str, href: str) -> None:
    assert _links(render_markdown(markdown_text)) == [href]


def test_browser_url_decodes_before_the_scheme_is_read() -> None:
    assert browser_url("&#106;avascript:alert(5)") == "javascript:alert(5)"
    assert browser_url("javascript&#58;alert(7)") == "javascript:alert(7)"
    assert browser_url("java&#9;script:alert(8)") == "javascript:alert(8)"
    assert browser_url(" \x01https://x.example/\n") == "https://x.example/"


_SCRIPT = "javascript:alert(1)"


@st.composite
def _disguised_script_url(draw: st.DrawFn) -> str:
    """javascript: with each character maybe written as a decimal/hex reference, tabs or newlines between
    characters, controls or spaces in front, and any case."""
    parts = [draw(st.sampled_from(["", " ", "\x01", "&#32;", "&#x1;"]))]
    for c in _SCRIPT[: _SCRIPT.index("(")]:
        c = draw(st.sampled_from([c, c.upper()]))
        form = draw(st.sampled_from(["plain", "dec", "hex", "pad"]))
        parts.append({"plain": c, "dec": f"&#{ord(c)};", "hex": f"&#x{ord(c):x};", "pad": f"&#000{ord(c)};"}[form])
        parts.append(draw(st.sampled_from(["", "", "&#9;", "&#10;", "&#13;", "\t"])))
    return "".join(parts) + "alert(1)"


@settings(max_examples=300, deadline=None)
@given(_disguised_script_url())
def test_no_disguised_script_url_survives(url: str) -> None:
    rendered = render_markdown(f"[x]({url}) and ![y]({url})")
    schemes = [m.group(1) for h in _links(rendered) if (m := re.match(r"([a-z][a-z0-9+.-]*):", h, re.I))]
    assert set(schemes) <= {"http", "https", "mailto"}, rendered
    assert not any("javascript" in h.lower() for h in _links(rendered)), rendered


# --- the rulebook says what the judge says: relations as the composer decides them -------------------


class _Relations(HTMLParser):
    """Every ``div.relation`` of a page: (article id, paragraph id it stands under or None, kind classes,
    heading text, the link of its citation)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[dict[str, object]] = []
        self._article: str | None = None
        self._paragraph: str | None = None
        self._in_text = False
        self._depth = 0  # open divs inside the current relation
        self._head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if self._depth:
            self._depth += tag == "div"
            if tag == "p" and "head" in classes:
                self._head = True
            if tag == "a" and "citation" in self._last_p and "href" not in self.found[-1]:
                self.found[-1]["href"] = a.get("href")
            if tag == "p":
                self._last_p = classes
            return
        if tag == "article":
            self._article, self._paragraph, self._in_text = a.get("id"), None, False
        elif tag == "div" and "text" in classes:
            self._in_text = True
        elif "para" in classes:
            self._paragraph = a.get("id")
        elif tag == "div" and "relation" in classes:
            self._depth = 1
            self._last_p: list[str] = []
            self.found.append({"article": self._article, "under": self._paragraph if self._in_text else None,
                               "kind": classes[1:], "head": ""})

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= tag == "div"
            if tag == "p":
                self._head = False
        elif tag == "div" and self._in_text:
            self._in_text = False

    def handle_data(self, data: str) -> None:
        if self._depth and self._head:
            self.found[-1]["head"] = str(self.found[-1]["head"]) + data


def _relations(path: Path, article: str | None = None) -> list[dict[str, object]]:
    parser = _Relations()
    parser.feed(path.read_text(encoding="utf-8"))
    return [r for r in parser.found if article is None or r["article"] == article]


def test_terrain_paragraph_2_is_amended_by_both_updates_latest_first(
    shipped_site: tuple[Path, dict[str, Entry]],
) -> None:
    """The one-Terrain-per-battlefield paragraph carries the Obsidian Hand's 10/25/2015 and 10/20/2015 updates,
    worded as updates about it (neither gives Old/New wording, so neither is called an amendment); paragraph 3
    (and every other) carries none."""
    out, by_id = shipped_site
    terrain = by_id["glossary:terrain"]
    assert "no player can play another Terrain there" in terrain.paragraphs[1]
    found = _relations(out / "glossary.html", "glossary:terrain")
    amends = [r for r in found if "updates" in r["kind"]]
    assert not [r for r in found if "amends" in r["kind"]]
    assert [(r["under"], r["href"]) for r in amends] == [
        ("glossary:terrain-p2", "obsidian-hand.html#obsidian-hand:update-2015-10-25"),
        ("glossary:terrain-p2", "obsidian-hand.html#obsidian-hand:update-2015-10-20"),
    ]
    assert amends[0]["head"] == ("In The Obsidian Hand Ruleset, the latest update about paragraph 2: "
                                 "Update 10/25/2015 (2015-10-25) (in that format):")
    assert amends[1]["head"] == ("In The Obsidian Hand Ruleset, an earlier update about paragraph 2: "
                                 "Update 10/20/2015 (2015-10-20) (in that format):")
    assert "earlier" in amends[1]["kind"] and "earlier" not in amends[0]["kind"]
    assert not any(r["under"] == "glossary:terrain-p3" for r in found)
    assert {r["under"] for r in found} == {"glossary:terrain-p2", None}  # the house rulings: the whole entry
    page = (out / "glossary.html").read_text(encoding="utf-8")
    article = page[page.index('<article class="entry" id="glossary:terrain">'):]
    article = article[: article.index("</article>")]
    p3 = article[article.index('id="glossary:terrain-p3"'): article.index('id="glossary:terrain-p4"')]
    assert "relation" not in p3 and "amends" not in p3
    assert "Overridden" not in page


def test_family_honor_reads_as_the_formats_own_rule_on_it(shipped_site: tuple[Path, dict[str, Entry]]) -> None:
    """The Obsidian Hand's "B. Family Honor" is linked to the glossary's Family Honor by its name alone (no
    words in common): the rulebook says the format also has a rule on it, never that it restates, amends or
    overrides it."""
    out, _ = shipped_site
    found = _relations(out / "glossary.html", "glossary:family-honor")
    assert found == [{
        "article": "glossary:family-honor",
        "under": "glossary:family-honor-p1",
        "kind": ["covers"],
        "head": "The Obsidian Hand Ruleset also has a rule on this, B. Family Honor (in that format):",
        "href": "obsidian-hand.html#obsidian-hand:ii-b-family-honor",
    }]
    for page in out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "Overridden" not in text and "overrides" not in text, page.name


def test_every_relation_is_placed_and_worded_as_the_composer_decides(
    shipped_index: tuple[Engine, Path], shipped_site: tuple[Path, dict[str, Entry]]
) -> None:
    """For every entry: a relation the composer scopes to paragraphs stands under the last of them, worded
    with the composer's heading for the entry shown whole; one to the whole entry stands before the text."""
    engine, _ = shipped_index
    out, by_id = shipped_site
    composer = Composer(engine.get, None, scope=engine.scope)
    shown = [r for name in ("glossary.html", "obsidian-hand.html", "house.html") for r in _relations(out / name)]
    expected = []
    for entry in by_id.values():
        for rel in composer.relations(entry, None, role="entry"):
            under = f"{entry.id}-p{max(rel.scope) + 1}" if rel.scope else None
            head = "".join(run.text for run in rel.heading)
            expected.append({"article": entry.id, "under": under, "kind": [rel.kind, *(["earlier"] * rel.earlier)],
                             "head": head, "href": f"{entry_href(rel.entry)}"})
        for k in range(len(entry.paragraphs)):  # under paragraph k: exactly what the composer says bears on it
            here = {r["href"] for r in shown if r["under"] == f"{entry.id}-p{k + 1}"}
            assert here <= {entry_href(r.entry) for r in composer.relations(entry, k) if r.scope}, (entry.id, k)
    assert sorted(shown, key=repr) == sorted(expected, key=repr)
    assert len(expected) > 5


def test_bot_export_command_writes_the_site(
    shipped_index: tuple[Engine, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m bot export OUT_DIR --sources … --title …`` (the index folder as configured)."""
    from bot.__main__ import main

    _, index_dir = shipped_index
    monkeypatch.setenv("L5R_INDEX_DIR", str(index_dir))
    monkeypatch.chdir(tmp_path)  # no .env of the working folder is read
    out = tmp_path / "site"
    code = main(["export", str(out), "--sources", str(SHIPPED_SOURCES), "--sources", str(EXAMPLES_DIR),
                 "--title", "Kotei rulebook"])
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == f"wrote 9 file(s) to {out}"
    assert sorted(p.name for p in out.iterdir()) == [
        "banned.html", "changes.html", "glossary.html", "house.html", "index.html", "obsidian-hand.html", "pagefind",
        "search.js", "style.css",
    ]
    assert (out / "pagefind" / "pagefind-entry.json").is_file()
    assert "<title>Kotei rulebook</title>" in (out / "index.html").read_text(encoding="utf-8")
    assert [r["under"] for r in _relations(out / "glossary.html", "glossary:terrain") if "updates" in r["kind"]] == [
        "glossary:terrain-p2", "glossary:terrain-p2"]
    assert main(["export", str(tmp_path / "other"), "--sources", str(tmp_path / "missing")]) == 1
    assert "missing" in capsys.readouterr().err


def test_bot_export_without_pagefind_is_one_line(
    shipped_index: tuple[Engine, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Pagefind cannot run (here: its binary is missing): exit status 1 and one line, not a traceback."""
    from bot.__main__ import main

    _, index_dir = shipped_index
    monkeypatch.setenv("L5R_INDEX_DIR", str(index_dir))
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(tmp_path / "missing-pagefind"))
    monkeypatch.chdir(tmp_path)
    code = main(["export", str(tmp_path / "site"), "--sources", str(SHIPPED_SOURCES), "--sources", str(EXAMPLES_DIR)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: Pagefind cannot run (") and "missing-pagefind" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_the_glossary_layer_no_longer_exports(capsys: pytest.CaptureFixture[str]) -> None:
    from glossary.cli import main

    assert main(["export", "--html", "site"]) == 2
    assert "python -m bot export OUT_DIR" in capsys.readouterr().err

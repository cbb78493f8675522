"""The static rulebook: verbatim text, one anchor per entry id, links that resolve, change log order."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glossary.export_html import entry_href, export_html, render_literal, render_markdown
from glossary.house import EXAMPLES_DIR
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Change, CrossRef, Entry, Location

TERRAIN = [
    "A Battle Action card with the Terrain keyword establishes the kind of ground the current battle is being "
    "fought on.",
    "If a Terrain is already in play at the current battlefield, no player can play another Terrain there.",
    "[CHANGED 21 May 2008; a Terrain's entering play is a rulebook effect, not one of its own effects]",
    "The “Terrain Battle:” action on a Terrain card can not be used while it is in play.",
]


class _Page(HTMLParser):
    """Collects ids, links, scripts and the visible text of each ``<p>`` of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.meta: list[dict[str, str | None]] = []
        self.paragraphs: list[str] = []
        self._in_p = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"] or "")
        if tag == "meta":
            self.meta.append(a)
        if tag == "p":
            self._in_p += 1
            self.paragraphs.append("")
        if tag == "br" and self._in_p:
            self.paragraphs[-1] += "\n"

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._in_p -= 1

    def handle_data(self, data: str) -> None:
        if self._in_p:
            self.paragraphs[-1] += data


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
    written = export_html(entries, tmp_path / "site", title="Test rulebook")
    assert [p.name for p in written] == [
        "index.html", "glossary.html", "obsidian-hand.html", "house.html", "banned.html", "changes.html", "style.css",
    ]
    assert all(p.is_file() for p in written)
    for entry in entries:
        page = parse_page(tmp_path / "site" / entry_href(entry).split("#")[0])
        assert page.ids.count(entry.id) == 1, entry.id
    assert entry_href(entries[0]) == "glossary.html#glossary:terrain"


def test_every_link_resolves_and_pages_are_phone_ready(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    assert _all_links_resolve(tmp_path) == []
    for path in tmp_path.glob("*.html"):
        page = parse_page(path)
        assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.meta, path.name
        assert "script" not in page.tags, path.name
    css = (tmp_path / "style.css").read_text(encoding="utf-8")
    assert "max-width: 46rem" in css


def test_rule_text_is_shown_exactly_as_written(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    shown = parse_page(tmp_path / "glossary.html").paragraphs
    for paragraph in TERRAIN + entries[1].paragraphs:
        assert paragraph in shown


def test_cross_references_overrides_and_judge(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    house = (tmp_path / "house.html").read_text(encoding="utf-8")
    assert '<a href="glossary.html#glossary:terrain">Terrain</a>' in house
    assert "Applies to: " in house and "Ranged Attack" in house and "Nowhere" in house
    assert "glossary:not-exported" not in house  # an unknown target is text, never a dead link
    assert "judge: Jane Doe" in house
    glossary = (tmp_path / "glossary.html").read_text(encoding="utf-8")
    assert (
        'Overridden in the format of The Obsidian Hand Ruleset by: '
        '<a href="obsidian-hand.html#obsidian-hand:update-2015-10-25">Update 10/25/2015</a>'
    ) in glossary
    assert (
        'House ruling taking precedence here: '
        '<a href="house.html#house:terrain-after-destruction">Terrain after destruction</a>'
    ) in glossary
    assert (
        'House ruling; takes precedence over: <a href="glossary.html#glossary:terrain">Terrain</a>'
        " (L5R Comprehensive Rules)"
    ) in house
    assert "<time>2008-05-21</time> (paragraph 2)" in glossary
    obsidian = (tmp_path / "obsidian-hand.html").read_text(encoding="utf-8")
    assert (
        "The Obsidian Hand Ruleset rule; in that format it overrides: "
        '<a href="glossary.html#glossary:terrain">Terrain</a> (L5R Comprehensive Rules)'
    ) in obsidian


def test_house_markdown_is_rendered_without_raw_html_or_unsafe_links(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    house = (tmp_path / "house.html").read_text(encoding="utf-8")
    assert "<em>no longer in play</em>" in house
    assert "<li>effects end</li>" in house
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in house
    assert "javascript:" not in house.replace("(javascript:alert(1))", "")
    assert '<a href="https://example.com/rules">ok</a>' in house
    assert "<script" not in house


def test_change_log_is_newest_first_and_links_each_entry(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    page = (tmp_path / "changes.html").read_text(encoding="utf-8")
    order = ["2026-11-01", "2016-02-15", "2015-10-25", "2008-05-21", "2007-09-25"]
    positions = [page.index(f"<time>{d}</time>") for d in order]
    assert positions == sorted(positions)
    assert '<a href="house.html#house:terrain-after-destruction">Terrain after destruction</a>' in page
    assert "(written [ADDED Sept 25 2007}: stamp closed with &#x27;}&#x27;)" in page
    # the update record named by a change is not exported here: shown as text, not a dead link
    assert "from update obsidian-hand:update-2016-02-15" in page


def test_banned_page_groups_cards(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    page = (tmp_path / "banned.html").read_text(encoding="utf-8")
    assert "<h2>Personalities</h2>" in page
    assert '<a href="obsidian-hand.html#obsidian-hand:banned-moshi-eihime">Moshi Eihime</a>' in page
    assert "(listed 2016-02-15)" in page


def test_index_lists_by_source_letter_and_section(entries: list[Entry], tmp_path: Path) -> None:
    export_html(entries, tmp_path)
    index = parse_page(tmp_path / "index.html")
    assert {"by-source", "by-letter", "by-section", "letter-T", "letter-M", "letter-U"} <= set(index.ids)
    hrefs = set(index.hrefs)
    assert {entry_href(e) for e in entries} <= hrefs
    assert {"glossary.html", "obsidian-hand.html", "house.html", "banned.html", "changes.html"} <= hrefs


def test_duplicate_ids_are_refused(entries: list[Entry], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^duplicate entry id 'glossary:terrain' \(f\.txt:1\)"):
        export_html([*entries, entries[0]], tmp_path)


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
    export_html(corpus.entries, tmp_path)
    ids = set()
    for path in tmp_path.glob("*.html"):
        if path.name not in {"index.html", "banned.html", "changes.html"}:
            ids.update(parse_page(path).ids)
    assert {e.id for e in corpus.entries} <= ids
    assert _all_links_resolve(tmp_path) == []
    shown = {line for text in parse_page(tmp_path / "glossary.html").paragraphs for line in text.split("\n")}
    glossary_paragraphs = [p for e in corpus.entries if e.source == "glossary" for p in e.paragraphs]
    assert len(glossary_paragraphs) > 100
    assert [p for p in glossary_paragraphs if p not in shown] == []  # each one shown exactly as written


def test_unsplittable_link_is_dropped_not_a_crash() -> None:
    assert render_markdown("[x](http://[bad) and [y](https://ok.example/)") == (
        '<p><a>x</a> and <a href="https://ok.example/">y</a></p>'
    )


def test_probable_date_is_said_once_and_unknown_overriders_keep_their_source(tmp_path: Path) -> None:
    resolve = _entry(
        "glossary:resolve", "glossary", "term", "Resolve", ["A duel begins to resolve. [CHANGED May 30 3008]"],
        changes=[Change(kind="changed", date="3008-05-30", raw="[CHANGED May 30 3008]", paragraph=0,
                        anomaly="impossible date 3008-05-30 (in the future); probably 2008-05-30",
                        probable_date="2008-05-30")],
        overridden_by=["house:not-exported"],
    )
    export_html([resolve], tmp_path)
    glossary = (tmp_path / "glossary.html").read_text(encoding="utf-8")
    assert glossary.count("probably 2008-05-30") == 1
    assert '<p class="links overridden">House ruling taking precedence here: house:not-exported</p>' in glossary

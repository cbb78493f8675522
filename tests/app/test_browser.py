"""The exported rulebook in a real browser: headless Chromium (Debian's package) driven by Playwright.

The site is served over HTTP on 127.0.0.1 and browsed with JavaScript disabled (the site must not need
it): open the index, follow links to a cross-reference's anchor, check every entry id is on its page,
check nothing overflows a phone-width screen, and save screenshots in ``test-artifacts/``. Its search
(Pagefind, ``bot.app.rulebook_search``) is the one thing that needs JavaScript: tested with it on, over HTTP
and from ``file://``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.app.rulebook import entry_href, export_rulebook
from glossary.house import EXAMPLES_DIR
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Entry
from index.engine import Engine

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE = {"width": 390, "height": 844}
# How long a page may take to show what it should: generous, because the suite runs on two workers on a
# machine that may be busy (Pagefind's UI script is loaded and parsed before the search box shows).
PATIENT_MS = 60_000

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test skipped: /usr/bin/chromium is not installed (apt-get install -y chromium)",
)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (library signature)
        """Keep the test output clean."""


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory, index_copy: Callable[..., Path]) -> tuple[Path, list[Entry]]:
    """The real corpus (shipped sources + the example house rulings) exported as ``python -m bot export``
    does (with the index's paragraph scopes, and its search index)."""
    engine = Engine.open([SHIPPED_SOURCES, EXAMPLES_DIR], index_copy("index"))  # embeds only the house rulings
    corpus = engine.corpus
    out = tmp_path_factory.mktemp("rulebook")
    export_rulebook(corpus.entries, out, scope=engine.scope)
    engine.close()
    return out, corpus.entries


@pytest.fixture(scope="module")
def site(site_dir: tuple[Path, list[Entry]]) -> Iterator[tuple[str, list[Entry]]]:
    """The exported site served on 127.0.0.1."""
    out, entries = site_dir
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", entries
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_follow_cross_reference_to_its_anchor(site: tuple[str, list[Entry]], browser: object) -> None:
    from playwright.sync_api import expect

    base, entries = site
    ruling = next(e for e in entries if e.id == "house:terrain-destroyed-before-battle-resolution")
    ref = next(r for r in ruling.see_also if r.text == "Terrain")
    assert ref.target == "glossary:terrain"

    context = browser.new_context(viewport=PHONE, java_script_enabled=False)  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(base + "index.html")
    expect(page).to_have_title("L5R rules judge: rulebook")
    expect(page.locator("#search")).to_be_hidden()  # no dead search box without JavaScript, but a note
    # (a real browser shows <noscript>; Playwright turns script off but still parses it as with script on)
    assert "Search needs JavaScript" in (page.locator("noscript").text_content() or "")
    page.get_by_role("navigation").get_by_role("link", name="House rulings").click()
    expect(page).to_have_url(base + "house.html")

    article = page.locator(f'[id="{ruling.id}"]')
    expect(article).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "rulebook-house-rulings.png"), full_page=True)
    article.locator("p.see-also").get_by_role("link", name="Terrain", exact=True).click()

    expect(page).to_have_url(base + "glossary.html#glossary:terrain")
    target = page.locator('[id="glossary:terrain"]')
    expect(target).to_be_visible()
    expect(target).to_be_in_viewport()
    expect(target.get_by_role("heading", name="Terrain", exact=True)).to_be_visible()
    expect(target).to_contain_text("no player can play another Terrain there.")
    page.screenshot(path=str(ARTIFACTS / "rulebook-cross-reference.png"))

    # The update amending paragraph 2 stands under it, and its citation is a working link, back the other way.
    amendment = target.locator('[id="glossary:terrain-p2"] + div.relation.updates + div.relation.updates.earlier')
    expect(amendment).to_contain_text("an earlier update about paragraph 2: Update 10/20/2015 (2015-10-20)")
    amendment.locator('p.citation a[href="obsidian-hand.html#obsidian-hand:update-2015-10-20"]').click()
    expect(page).to_have_url(base + "obsidian-hand.html#obsidian-hand:update-2015-10-20")
    expect(page.locator('[id="obsidian-hand:update-2015-10-20"]')).to_be_in_viewport()
    context.close()


def test_every_entry_id_is_on_its_page_and_fits_a_phone(site: tuple[str, list[Entry]], browser: object) -> None:
    base, entries = site
    context = browser.new_context(viewport=PHONE)  # type: ignore[attr-defined]
    page = context.new_page()
    pages = sorted({entry_href(e).split("#")[0] for e in entries} | {"index.html", "banned.html", "changes.html"})
    found: dict[str, set[str]] = {}
    for name in pages:
        page.goto(base + name)
        found[name] = set(page.locator("[id]").evaluate_all("els => els.map(e => e.id)"))
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways on a phone by {overflow}px"
        # Scripts: the search's own files only, none inline (house rulings cannot add one)
        assert page.locator("script:not([src])").count() == 0, name
        sources = set(page.locator("script").evaluate_all("els => els.map(e => e.src)"))
        assert sources <= {base + "search.js", base + "pagefind/pagefind-ui.js"}, (name, sources)
    missing = [e.id for e in entries if e.id not in found[entry_href(e).split("#")[0]]]
    assert missing == []
    assert len(entries) > 100  # the whole shipped corpus, not a stub

    page.goto(base + "index.html")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "rulebook-index.png"))
    page.goto(base + "changes.html")
    first_dates = page.locator("main time").all_inner_texts()[:5]
    assert first_dates == sorted(first_dates, reverse=True)
    context.close()


HOSTILE_RULINGS = """\
# Hostile rulings

## Encoded links
Judge: Mallory

[a](&#106;avascript:alert(5)) [c](javascript&#58;alert(7)) [b](java&#9;script:alert(8))
[d](&#x6A;avascript:alert(1)) [e](jav&#x0A;ascript:alert(2)) [f](&#32;javascript:alert(3))
[g](javascript&colon;alert(4)) ![h](&#106;avascript:alert(6)) [i](data:text/html,<script>alert(9)</script>)

[ok](https://example.com/) [frag](#house:encoded-links)
"""


def test_encoded_script_links_do_not_run(tmp_path: Path, browser: object) -> None:
    """Issue 12: with JavaScript on, clicking every link of a hostile house ruling never runs script."""
    rulings = tmp_path / "rulings"
    rulings.mkdir()
    (rulings / "hostile.md").write_text(HOSTILE_RULINGS, encoding="utf-8")
    corpus = load_corpus([SHIPPED_SOURCES, rulings])
    out = tmp_path / "site"
    export_rulebook(corpus.entries, out)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    context = browser.new_context(viewport=PHONE, java_script_enabled=True)  # type: ignore[attr-defined]
    context.set_default_timeout(PATIENT_MS)  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(base + "house.html")
        article = page.locator('[id="house:encoded-links"]')
        links = article.locator(".text a:not(.cite)")
        assert links.count() == 10  # 8 hostile, 2 safe (the image is not a link)
        # What the browser resolved each href to (an anchor without href resolves to "")
        resolved = links.evaluate_all("els => els.map(e => e.href)")
        assert [h for h in resolved if h and not h.startswith((base, "https://example.com/"))] == []
        assert resolved[-2:] == ["https://example.com/", base + "house.html#house:encoded-links"]
        sources = article.locator("img").evaluate_all("els => els.map(e => e.src)")
        assert sources == [""]
        for i in range(links.count() - 2):  # every hostile one; the safe ones would leave the page
            links.nth(i).click()
            page.wait_for_timeout(50)
        assert dialogs == []
        assert page.url.startswith(base + "house.html")
        assert page.evaluate("typeof window.__pwned") == "undefined"
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_paragraph_anchor_nested_bullets_and_contents(site: tuple[str, list[Entry]], browser: object) -> None:
    """A "(paragraph 3)" link lands on that paragraph; nested bullets are indented deeper; a heading-only
    section shows its sub-headings."""
    from playwright.sync_api import expect

    base, _ = site
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(base + "glossary.html#glossary:terrain")
    terrain = page.locator('[id="glossary:terrain"]')
    terrain.locator("ul.changes").get_by_role("link", name="paragraph 3", exact=True).click()
    expect(page).to_have_url(base + "glossary.html#glossary:terrain-p3")
    paragraph = page.locator('[id="glossary:terrain-p3"]')
    expect(paragraph).to_be_in_viewport()
    expect(paragraph).to_contain_text("If requirements, costs and any required targeting")
    expect(paragraph.locator("a.cite")).to_have_text("¶3 · line 25")

    page.goto(base + "obsidian-hand.html#obsidian-hand:guideline-player-abilities")
    lefts = [
        page.locator(f'[id="obsidian-hand:guideline-player-abilities-p{n}"]').evaluate(
            "e => e.getBoundingClientRect().left"
        )
        for n in (3, 4, 5)
    ]
    assert lefts[0] < lefts[1] < lefts[2], lefts
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "rulebook-nested-bullets.png"))

    page.goto(base + "obsidian-hand.html#obsidian-hand:i-cardinal-rules")
    section = page.locator('[id="obsidian-hand:i-cardinal-rules"]')
    expect(section.get_by_role("navigation")).to_be_visible()
    section.get_by_role("link", name="Cardinal Rule 2: Cards vs. Cards").click()
    expect(page).to_have_url(base + "obsidian-hand.html#obsidian-hand:cardinal-rule-2")
    context.close()


# --- search (issue 19): Pagefind's index and UI, JavaScript on -----------------------------------------


def _watch_errors(page: object) -> list[str]:
    """Script errors and failed requests of the site's own files (the browser's favicon request aside)."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))  # type: ignore[attr-defined]
    page.on(  # type: ignore[attr-defined]
        "response", lambda r: r.status >= 400 and errors.append(f"{r.status} {r.url}")
    )
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url} ({r.failure})"))  # type: ignore[attr-defined]
    return errors


def _left_page_errors(errors: list[str], before_leaving: int) -> list[str]:
    """The errors once a link was followed, without the fetches the browser itself cancelled because the
    page was left: Pagefind still loads fragments of lower results while the first is clicked, and
    Chromium reports those as failed with net::ERR_ABORTED (seen once in CI). Every error before leaving
    still counts, and so does a 4xx/5xx or a script error after."""
    return errors[:before_leaving] + [e for e in errors[before_leaving:] if "net::ERR_ABORTED" not in e]


@pytest.mark.parametrize(
    ("word", "entry_id", "title"),
    [("terrain", "glossary:terrain", "Terrain"), ("targeting", "glossary:target", "Target")],
)
def test_search_lands_on_the_entry(
    site: tuple[str, list[Entry]], browser: object, word: str, entry_id: str, title: str
) -> None:
    """A player's word typed in the search box of the index page: the first result is the entry, and
    following it lands on the entry's anchor."""
    from playwright.sync_api import expect

    base, _ = site
    context = browser.new_context(viewport=PHONE, java_script_enabled=True)  # type: ignore[attr-defined]
    context.set_default_timeout(PATIENT_MS)  # type: ignore[attr-defined]
    expect.set_options(timeout=PATIENT_MS)
    page = context.new_page()
    errors = _watch_errors(page)
    page.goto(base + "index.html")
    search = page.get_by_role("search", name="Search this site")  # Pagefind's form
    expect(search).to_be_visible()
    box = search.get_by_role("textbox")
    expect(box).to_have_attribute("placeholder", "Search the rules")
    box.fill(word)
    results = search.locator(".pagefind-ui__result")
    expect(results.first).to_be_visible()
    first = results.first.locator("a.pagefind-ui__result-link")
    expect(first).to_have_text(title)
    expect(first).to_have_attribute("href", f"{entry_id.split(':')[0]}.html#{entry_id}")
    expect(results.first.locator("mark").first).to_be_visible()  # the word shown where it stands
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the search results scroll sideways on a phone by {overflow}px"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"rulebook-search-{word}.png"))

    assert errors == []
    before_leaving = len(errors)
    first.click()
    expect(page).to_have_url(base + f"{entry_id.split(':')[0]}.html#{entry_id}")
    target = page.locator(f'[id="{entry_id}"]')
    expect(target).to_be_in_viewport()
    expect(target.get_by_role("heading", name=title, exact=True)).to_be_visible()
    assert _left_page_errors(errors, before_leaving) == []
    context.close()


def test_search_from_another_page_and_for_nonsense(site: tuple[str, list[Entry]], browser: object) -> None:
    """Every page's header has the box; a word in no rule shows "No results", and no error."""
    from playwright.sync_api import expect

    base, _ = site
    context = browser.new_context(viewport=PHONE, java_script_enabled=True)  # type: ignore[attr-defined]
    context.set_default_timeout(PATIENT_MS)  # type: ignore[attr-defined]
    expect.set_options(timeout=PATIENT_MS)
    page = context.new_page()
    errors = _watch_errors(page)
    page.goto(base + "house.html")
    box = page.locator("header").get_by_role("search", name="Search this site").get_by_role("textbox")
    box.fill("zzzzqqq")
    expect(page.locator(".pagefind-ui__message")).to_have_text("No results for zzzzqqq")
    expect(page.locator(".pagefind-ui__result")).to_have_count(0)

    box.fill("ranged attack")  # then a real one, from this page: the link goes to another page's anchor
    first = page.locator("a.pagefind-ui__result-link").first
    expect(first).to_have_text("Ranged Attack")
    assert errors == []
    before_leaving = len(errors)
    first.click()
    expect(page).to_have_url(base + "glossary.html#glossary:ranged-attack")
    expect(page.locator('[id="glossary:ranged-attack"]')).to_be_in_viewport()
    assert _left_page_errors(errors, before_leaving) == []
    context.close()


def test_search_from_a_file_says_how_to_serve_the_folder(site_dir: tuple[Path, list[Entry]], browser: object) -> None:
    """Browsers refuse Pagefind's module and index to a file:// page (Chromium: "Cross origin requests are
    only supported for protocol schemes: … http, https …"): instead of a box that never answers, a note says
    how to serve the folder. The rest of the site works from the file."""
    from playwright.sync_api import expect

    out, _ = site_dir
    context = browser.new_context(viewport=PHONE, java_script_enabled=True)  # type: ignore[attr-defined]
    context.set_default_timeout(PATIENT_MS)  # type: ignore[attr-defined]
    expect.set_options(timeout=PATIENT_MS)
    page = context.new_page()
    page.goto((out / "index.html").as_uri())
    search = page.locator("#search")
    expect(search).to_be_visible()
    expect(search).to_contain_text("run python -m http.server in the folder and open http://127.0.0.1:8000/")
    expect(search.get_by_role("textbox")).to_have_count(0)
    page.get_by_role("navigation").get_by_role("link", name="House rulings").click()
    expect(page.locator('[id="house:terrain-destroyed-before-battle-resolution"]')).to_be_visible()
    context.close()

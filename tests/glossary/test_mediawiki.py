"""Glossary page parsing: the shipped corpus in full, both export styles, page errors and robustness."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glossary.mediawiki import (
    anchor,
    derive_aliases,
    find_cross_refs,
    looks_like_glossary_page,
    parse_glossary_page,
)
from glossary.model import ParsedDocument, SourceError

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "glossary" / "sources"
PAGES = Path(__file__).resolve().parents[1] / "pages"
TODAY = datetime.date(2026, 1, 1)
FILES = {
    "T": "000_99c7513ab738c7d1.txt",
    "R": "001_043f9cd10b383175.txt",
    "E": "002_6da8b4809aadefbe.txt",
    "F": "003_d8672a9bda4ff19e.txt",
}
TITLES = {
    "T": [
        "Tactical",
        "Tactician",
        "Target",
        "Targeting paradoxes",
        "Terrain",
        "This",
        "Token",
        "Transfer",
        "Tribe",
        "Turn",
    ],
    "R": [
        "Raise/rise",
        "Ranged Attack",
        "Redirect(ion)",
        "Reduce",
        "Region",
        "Remain",
        "Remove from the game",
        "Resolve",
        "Restriction",
        "Result (of a duel)",
        "Return",
        "Reveal",
        "Ring",
    ],
    "E": [
        "Each other",
        "Element keyword",
        "Enemy",
        "Engage",
        "Enlightenment victory",
        "Enter",
        "Entering-play Honor loss",
        "Equip",
        "Even if",
        "Exchange",
        "Expensive",
        "Experienced",
    ],
    "F": [
        "Face-down",
        "Face-up",
        "Facing",
        "Fall",
        "Family Honor",
        "Family name",
        "Focus",
        "Focus Effect",
        "Focus pool",
        "Focused cards",
        "Focusing area",
        "Focus Value",
        "Follower",
        "For",
        "For each",
        "Force",
        "Force total",
        "From",
    ],
}
# (page, entry id, kind, date, paragraph it dates or None for the whole entry, file line). A stamp-only line
# closes the paragraph before it (middle or end of an entry); only one straight under the heading dates it all.
STAMPS = [
    ("T", "glossary:target", "added", "2007-09-20", 1, 13),
    ("T", "glossary:target", "added", "2007-09-20", 2, 14),
    ("T", "glossary:target", "added", "2007-09-25", 3, 15),
    ("T", "glossary:targeting-paradoxes", "added", "2008-03-16", 3, 21),
    ("T", "glossary:terrain", "changed", "2008-05-21", 2, 26),
    ("T", "glossary:terrain", "added", "2008-03-24", 8, 31),
    ("R", "glossary:raise-rise", "clarified", "2008-03-16", 4, 9),
    ("R", "glossary:ranged-attack", "added", "2007-09-22", 9, 21),
    ("R", "glossary:reduce", "added", "2008-03-16", 3, 29),
    ("R", "glossary:resolve", "added", "2007-09-22", None, 39),
    ("R", "glossary:resolve", "changed", "3008-05-30", 4, 43),
    ("R", "glossary:return", "added", "2007-07-28", 1, 55),
    ("E", "glossary:enemy", "added", "2008-04-20", 2, 11),
    ("E", "glossary:enter", "added", "2008-05-01", 0, 21),
    ("E", "glossary:entering-play-honor-loss", "clarified", "2008-07-08", 0, 23),
    ("E", "glossary:even-if", "clarified", "2008-03-23", 4, 36),
    ("F", "glossary:facing", "added", "2008-02-12", 0, 11),
    ("F", "glossary:for-each", "added", "2007-07-17", 3, 41),
]


def source_text(name: str) -> str:
    return (SOURCES / name).read_text(encoding="utf-8")


def parse_page(letter: str) -> ParsedDocument:
    return parse_glossary_page(source_text(FILES[letter]), FILES[letter], today=TODAY)


@pytest.fixture(scope="module")
def corpus() -> dict[str, ParsedDocument]:
    return {letter: parse_page(letter) for letter in FILES}


def entry(corpus: dict[str, ParsedDocument], entry_id: str):
    found = [e for doc in corpus.values() for e in doc.entries if e.id == entry_id]
    assert len(found) == 1, entry_id
    return found[0]


def test_titles_and_counts(corpus: dict[str, ParsedDocument]) -> None:
    assert {letter: [e.title for e in doc.entries] for letter, doc in corpus.items()} == TITLES
    assert sum(len(doc.entries) for doc in corpus.values()) == 53


def test_page_metadata(corpus: dict[str, ParsedDocument]) -> None:
    doc = corpus["T"]
    assert (doc.file, doc.source, doc.document) == (
        FILES["T"],
        "glossary",
        "L5R Comprehensive Rules — Glossary T",
    )
    target = doc.entries[3]
    assert target.id == "glossary:targeting-paradoxes"
    assert (target.kind, target.source, target.section) == ("term", "glossary", ["Glossary T"])
    assert target.document == "L5R Comprehensive Rules — Glossary T"
    assert target.url == "http://rules.l5r.com/Glossary_T#Targeting_paradoxes"
    assert (target.location.file, target.location.first_line, target.location.last_line) == (
        FILES["T"],
        16,
        21,
    )
    assert target.paragraphs[0].startswith("If targeting requires information")
    assert target.paragraphs[-1] == "[ADDED March 16 2008]"


@pytest.mark.parametrize(
    ("entry_id", "url"),
    [
        ("glossary:raise-rise", "http://rules.l5r.com/Glossary_R#Raise.2Frise"),
        ("glossary:result-of-a-duel", "http://rules.l5r.com/Glossary_R#Result_.28of_a_duel.29"),
        ("glossary:entering-play-honor-loss", "http://rules.l5r.com/Glossary_E#Entering-play_Honor_loss"),
        ("glossary:focus-value", "http://rules.l5r.com/Glossary_F#Focus_Value"),
    ],
)
def test_entry_urls(corpus: dict[str, ParsedDocument], entry_id: str, url: str) -> None:
    assert entry(corpus, entry_id).url == url


def test_anchor_encoding() -> None:
    assert anchor("Targeting paradoxes") == "Targeting_paradoxes"
    assert anchor("Raise/rise") == "Raise.2Frise"
    assert anchor("Daimyō’s rule") == "Daimy.C5.8D.E2.80.99s_rule"


def test_all_stamps(corpus: dict[str, ParsedDocument]) -> None:
    found = []
    for letter, doc in corpus.items():
        lines = source_text(FILES[letter]).split("\n")
        for e in doc.entries:
            for change in e.changes:
                assert change.raw in lines[change.line - 1], change
                found.append((letter, e.id, change.kind, change.date, change.paragraph, change.line))
    assert found == STAMPS


def test_stamp_details(corpus: dict[str, ParsedDocument]) -> None:
    terrain = entry(corpus, "glossary:terrain").changes[0]
    assert (
        terrain.raw
        == "[CHANGED 21 May 2008; a Terrain's entering play is a rulebook effect, not one of its own effects]"
    )
    assert terrain.note == "a Terrain's entering play is a rulebook effect, not one of its own effects"
    resolve = entry(corpus, "glossary:resolve").changes[1]
    assert (resolve.date, resolve.probable_date) == ("3008-05-30", "2008-05-30")
    assert resolve.anomaly == "impossible date 3008-05-30 (in the future); probably 2008-05-30"
    brace = entry(corpus, "glossary:target").changes[2]
    assert (brace.raw, brace.date) == ("[ADDED Sept 25 2007}", "2007-09-25")
    assert brace.anomaly is not None and "unbalanced bracket" in brace.anomaly
    assert entry(corpus, "glossary:even-if").changes[0].raw == "[CLARIFICATION March 23 2008]"
    assert entry(corpus, "glossary:for-each").changes[0].raw == "[ADDED Jul 17 07]"


def test_anomalies(corpus: dict[str, ParsedDocument]) -> None:
    found = [(a.file, a.line, a.kind) for doc in corpus.values() for a in doc.anomalies]
    assert found == [
        (FILES["T"], 15, "unbalanced-bracket"),
        (FILES["R"], 43, "impossible-date"),
    ]
    assert str(corpus["R"].anomalies[0]).startswith(
        f"{FILES['R']}:43: impossible-date: impossible date 3008-05-30"
    )


@pytest.mark.parametrize(
    ("entry_id", "aliases"),
    [
        ("glossary:raise-rise", ["raise", "rise", "cannot raise", "can not rise", "cannot rise"]),
        ("glossary:redirect-ion", ["redirect", "redirection"]),
        ("glossary:result-of-a-duel", ["result", "result of a duel"]),
        ("glossary:face-down", ["face down", "facedown"]),
        ("glossary:face-up", ["face up", "faceup"]),
        ("glossary:family-honor", ["honor"]),
        ("glossary:fall", ["cannot be lowered", "cannot fall", "cannot fall below"]),
        ("glossary:entering-play-honor-loss", ["entering play honor loss"]),
        ("glossary:tactical", []),
        ("glossary:remove-from-the-game", []),
    ],
)
def test_aliases(corpus: dict[str, ParsedDocument], entry_id: str, aliases: list[str]) -> None:
    assert entry(corpus, entry_id).aliases == aliases


def test_alias_rules_are_general() -> None:
    assert derive_aliases("Pre-game", []) == ["pre game", "pregame"]
    assert derive_aliases("Move(ment)", []) == ["move", "movement"]
    assert derive_aliases("Honor", ['"Honor" is a short term for Family Honor.']) == []
    assert derive_aliases("Chi", ['Same as "Force of will."']) == ["force of will"]


@pytest.mark.parametrize(
    ("entry_id", "refs"),
    [
        ("glossary:tactical", ["Perform"]),
        ("glossary:tactician", ["Battles, Combat Segment"]),
        ("glossary:target", ["Required Targeting"]),
        ("glossary:raise-rise", ["reduce"]),
        ("glossary:ranged-attack", ["Abilities and actions, Required targeting"]),
        ("glossary:result-of-a-duel", ["For"]),
        ("glossary:reveal", ["Look", "Show"]),
        ("glossary:enemy", ["Sequence of Play, Attack Phase, Battles", "Leader"]),
        ("glossary:enlightenment-victory", ["The Player, Enlightenment Victory"]),
        ("glossary:experienced", ["Unique", "Physically marked card states, Overlaying"]),
        ("glossary:follower", ["Card types, Followers"]),
        ("glossary:face-down", ["Physically marked card states, Face up and face down"]),
        ("glossary:this", ["Special wording rules, Referring to things", "Effects"]),
        ("glossary:turn", []),
    ],
)
def test_cross_references(corpus: dict[str, ParsedDocument], entry_id: str, refs: list[str]) -> None:
    see_also = entry(corpus, entry_id).see_also
    assert [r.text for r in see_also] == refs
    assert all(r.target is None for r in see_also)


def test_cross_references_dedupe() -> None:
    refs = find_cross_refs(["See Perform.", "(see Perform) and see Glossary, Look"])
    assert [r.text for r in refs] == ["Perform", "Look"]


def test_cross_reference_keeps_a_parenthetical_in_the_name() -> None:
    refs = find_cross_refs(['See Result (of a duel). Also (see Perform) and See "Raise/rise."'])
    assert [r.text for r in refs] == ["Result (of a duel)", "Perform", "Raise/rise"]


def _normalise(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("letter", list(FILES))
def test_paragraphs_are_verbatim_source_lines(corpus: dict[str, ParsedDocument], letter: str) -> None:
    lines = source_text(FILES[letter]).split("\n")
    for e in corpus[letter].entries:
        assert lines[e.location.first_line - 1] == f"[edit] {e.title}"
        body = [_normalise(x) for x in lines[e.location.first_line : e.location.last_line] if x.strip()]
        assert [_normalise(p) for p in e.paragraphs] == body
        assert e.paragraphs and e.text == "\n".join(e.paragraphs)


CHROME = re.compile(
    r"^(Glossary [A-Z]$|From Legend of the Five Rings Rules|Contents|Back to the Comprehensive Rules|Jump to:"
    r"|Personal tools|Retrieved from|Views$|Navigation$|Search$|Toolbox$|This page|\s*\d+ \w|\[hide\]"
    r"|Main Page|Log in)"
)


def _assert_no_chrome(doc: ParsedDocument) -> None:
    for e in doc.entries:
        for paragraph in e.paragraphs:
            assert not CHROME.match(paragraph), (e.id, paragraph)


def test_no_chrome_in_shipped_pages(corpus: dict[str, ParsedDocument]) -> None:
    for doc in corpus.values():
        _assert_no_chrome(doc)
    assert corpus["R"].entries[-1].paragraphs == ["A card type representing mastery of mystical teachings."]


def fixture(name: str) -> ParsedDocument:
    return parse_glossary_page((PAGES / name).read_text(encoding="utf-8"), name, today=TODAY)


def _comparable(doc: ParsedDocument) -> list[tuple]:
    """Entries as comparable tuples; the two styles differ only in the bullet mark, kept verbatim in each."""
    return [
        (
            e.id,
            e.title,
            e.section,
            [p.replace("• ", "- ", 1) if p.startswith("• ") else p for p in e.paragraphs],
            e.aliases,
            [r.text for r in e.see_also],
            e.url,
            [(c.kind, c.date, c.raw, c.note, c.paragraph, c.anomaly) for c in e.changes],
        )
        for e in doc.entries
    ]


def test_both_export_styles_give_the_same_entries() -> None:
    compact, browser = fixture("glossary_L_compact.txt"), fixture("glossary_L_browser.txt")
    assert _comparable(compact) == _comparable(browser)
    assert compact.anomalies == [] and browser.anomalies == []
    _assert_no_chrome(browser)
    look = browser.entries[2]
    assert look.paragraphs[-1].endswith("[REMOVED 2 February 2009; Province peeking]")
    assert (look.location.first_line, look.location.last_line) == (36, 42)
    assert (compact.entries[2].location.first_line, compact.entries[2].location.last_line) == (17, 20)


def test_browser_style_entries() -> None:
    doc = fixture("glossary_L_browser.txt")
    assert doc.document == "L5R Comprehensive Rules — Glossary L"
    assert [e.title for e in doc.entries] == ["Leader", "Limited", "Look"]
    leader, limited, look = doc.entries
    assert [(c.kind, c.date, c.paragraph, c.line) for c in leader.changes] == [
        ("added", "2007-10-17", 0, 13),
        ("clarified", "2008-06-03", 0, 13),
        ("added", "2009-10-04", 2, 19),
    ]
    assert [(c.kind, c.date, c.note, c.paragraph) for c in limited.changes] == [
        ("added", "2007-09-24", None, None),
        ("updated", "2008-06-28", "Ability", 4),
    ]
    assert limited.paragraphs[3:5] == [
        "• Only one Limited action can be taken each turn, by each player.",
        "• A Limited action cannot be taken while another action is resolving.",
    ]
    assert limited.aliases == ["limited abilities"]
    assert [r.text for r in limited.see_also] == ["Action Phase"]
    assert [(c.kind, c.date, c.note, c.paragraph) for c in look.changes] == [
        ("added", "2008-03-30", "material on hidden cards", 0),
        ("removed", "2009-02-02", "Province peeking", 2),
    ]
    assert [r.text for r in look.see_also] == ["Reveal", "Show"]
    assert leader.url == "http://rules.l5r.com/Glossary_L#Leader"
    assert [r.text for r in leader.see_also] == ["Battles, Leaders"]


def test_second_browser_page() -> None:
    doc = fixture("glossary_S_browser.txt")
    assert [e.id for e in doc.entries] == ["glossary:show", "glossary:side", "glossary:singular"]
    show, side, singular = doc.entries
    assert show.changes[0].note == "shown cards return to their previous state"
    assert [r.text for r in show.see_also] == ["Look", "Reveal"]
    assert side.paragraphs == [
        "Each battle has two sides, the attacking side and the defending side. Cards outside of armies are "
        "not on any side.",
        "• A Region or Terrain is never on a side.",
        "• An army belongs to the side of the player who controls it. [CLARIFIED, 8 July 2008]",
    ]
    assert [(c.kind, c.date, c.paragraph, c.line) for c in side.changes] == [
        ("clarified", "2008-07-08", 2, 22)
    ]
    assert singular.aliases == ["single"]
    assert [(a.line, a.kind) for a in doc.anomalies] == [(26, "unbalanced-bracket")]
    assert singular.location.last_line == 28
    _assert_no_chrome(doc)


def test_windows_line_endings_and_bom_give_the_same_entries() -> None:
    text = source_text(FILES["R"])
    plain = parse_glossary_page(text, "r.txt", today=TODAY)
    windows = parse_glossary_page("\ufeff" + text.replace("\n", "\r\n"), "r.txt", today=TODAY)
    assert _comparable(plain) == _comparable(windows)
    assert [e.location for e in plain.entries] == [e.location for e in windows.entries]


def test_heading_with_edit_link_after_the_term() -> None:
    text = "Glossary Z\nZone [edit]\nAn area.\nBack to the Comprehensive Rules\n"
    doc = parse_glossary_page(text, "z.txt")
    assert [(e.title, e.paragraphs, e.url) for e in doc.entries] == [
        ("Zone", ["An area."], "http://rules.l5r.com/Glossary_Z#Zone")
    ]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("", "empty file", None),
        ("  \n\n\t\n", "empty file", None),
        (
            "Glossary Q\nFrom Legend of the Five Rings Rules\nContents |\nBack to the Comprehensive Rules\n",
            "no '[edit] Term' entries",
            1,
        ),
        (
            "Some notes\n[edit] Term\ntext\nBack to the Comprehensive Rules\n",
            "no 'Glossary <letter>' title",
            1,
        ),
        ("Glossary Q\n[edit] Quick\nFast.\n[edit] Quiet\nSilent.\n", "truncated page", 5),
    ],
)
def test_source_errors(text: str, message: str, line: int | None) -> None:
    with pytest.raises(SourceError) as caught:
        parse_glossary_page(text, "bad.txt")
    assert message in str(caught.value) and caught.value.file == "bad.txt" and caught.value.line == line
    assert str(caught.value).startswith("bad.txt")


def test_truncated_shipped_page_is_an_error() -> None:
    lines = source_text(FILES["T"]).split("\n")
    with pytest.raises(SourceError, match=r"^000\.txt:30: truncated page"):
        parse_glossary_page("\n".join(lines[:30]), "000.txt")


def test_other_documents_are_not_glossary_pages() -> None:
    name = "004_f05ef39847fd66e3.txt"
    with pytest.raises(SourceError, match="not a glossary page"):
        parse_glossary_page(source_text(name), name)


def test_looks_like_glossary_page() -> None:
    assert all(looks_like_glossary_page(source_text(name)) for name in FILES.values())
    assert looks_like_glossary_page((PAGES / "glossary_S_browser.txt").read_text(encoding="utf-8"))
    assert not looks_like_glossary_page(source_text("004_f05ef39847fd66e3.txt"))
    assert not looks_like_glossary_page("# A house ruling\n\nText.")


def test_page_level_anomalies() -> None:
    text = (
        "Glossary Q\nContents\n1 Quick\n2 Quiet\n3 Quest\n"
        "[edit] Quick\nFast. [ADDED Sept 2007]\n[edit] Quick\nAgain.\n[edit] Quiet\n[edit]\nstray\n"
        "Back to the Comprehensive Rules\n[edit] Later\nlate text\n"
    )
    doc = parse_glossary_page(text, "q.txt", today=TODAY)
    assert [e.id for e in doc.entries] == ["glossary:quick", "glossary:quick-2", "glossary:quiet"]
    assert doc.entries[2].paragraphs == [] and doc.entries[2].location.last_line == 10
    assert [(a.line, a.kind) for a in doc.anomalies] == [
        (14, "content-after-footer"),
        (7, "unparsed-stamp"),
        (10, "empty-entry"),
        (11, "empty-heading"),
        (8, "duplicate-id"),
        (5, "toc-mismatch"),  # the contents line that lists it
    ]
    assert "'Quest'" in doc.anomalies[-1].message


def test_renamed_duplicate_never_takes_another_entrys_id() -> None:
    text = "Glossary Q\n[edit] Quick\nA.\n[edit] Quick\nB.\n[edit] Quick 2\nC.\nBack to the Comprehensive Rules\n"
    doc = parse_glossary_page(text, "q.txt", today=TODAY)
    assert [(e.id, e.paragraphs) for e in doc.entries] == [
        ("glossary:quick", ["A."]),
        ("glossary:quick-3", ["B."]),
        ("glossary:quick-2", ["C."]),
    ]
    assert [str(a) for a in doc.anomalies] == [
        "q.txt:4: duplicate-id: glossary:quick repeated; renamed glossary:quick-3"
    ]


# --- robustness: random and damaged pages ---------------------------------------------------------------

_SHIPPED_LINES = [line for name in FILES.values() for line in source_text(name).split("\n")]
_line = st.one_of(
    st.sampled_from(_SHIPPED_LINES),
    st.sampled_from(
        [
            "[edit] ",
            "[edit]",
            "Glossary ",
            "Back to the Comprehensive Rules",
            "Personal tools",
            "Contents",
            "1 Look",
            "[ADDED",
            "[CHANGED May 30 3008}",
            "See ",
            "(see ",
            '"',
            "•",
            "[edit] (",
        ]
    ),
    st.text(max_size=40),
)


def _check(text: str) -> None:
    try:
        doc = parse_glossary_page(text, "random.txt", today=TODAY)
    except SourceError as error:
        assert error.file == "random.txt"
        return
    stripped = {line.strip().replace("•", "-") for line in text.split("\n")}
    for e in doc.entries:
        assert e.id.startswith("glossary:") and e.title
        assert 1 <= e.location.first_line <= e.location.last_line
        for paragraph in e.paragraphs:
            assert paragraph.replace("•", "-") in stripped or paragraph.startswith("- ")
        for change in e.changes:
            assert change.paragraph is None or 0 <= change.paragraph < len(e.paragraphs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, max_size=40).map("\n".join))
def test_random_pages_return_or_raise_source_error(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(FILES.values())),
    st.data(),
)
def test_damaged_shipped_pages_return_or_raise_source_error(name: str, data: st.DataObject) -> None:
    lines = source_text(name).split("\n")
    cut = data.draw(st.integers(0, len(lines)))
    lines = lines[:cut] if data.draw(st.booleans()) else lines
    for _ in range(data.draw(st.integers(0, 5))):
        position = data.draw(st.integers(0, len(lines)))
        lines.insert(position, data.draw(_line))
    for _ in range(data.draw(st.integers(0, 3))):
        if lines:
            del lines[data.draw(st.integers(0, len(lines) - 1))]
    _check("\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text(text: str) -> None:
    _check(text)

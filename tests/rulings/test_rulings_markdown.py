"""Rulings as house-rulings Markdown: drafts checked so they round-trip, export and import via glossary.house."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.rulings.markdown import (
    TEXT_MAX,
    check_draft,
    export_markdown,
    parse_import,
    ruling_entry,
    ruling_markdown,
)
from bot.rulings.repository import Ruling
from glossary.house import parse_house_rulings
from index.engine import Engine
from index.query.overlay import NameResolver


@pytest.fixture(scope="module")
def resolver(default_index: Path) -> NameResolver:
    engine = Engine.open(None, default_index)
    return NameResolver(engine.corpus)


def stored(n: int, title: str, text: str, applies: tuple[str, ...] = (), event: str | None = None) -> Ruling:
    at = dt.datetime(2026, 11, 1, 12, tzinfo=dt.UTC)
    return Ruling(n, "guild:1", 1, "active", title, text, applies, event, "Ann", "2026-11-01", at, "1", at, "1")


def test_a_good_draft_has_no_problems_and_links_names(resolver: NameResolver) -> None:
    draft, problems = check_draft("  Terrain  during a duel ", "Text.\r\n\r\n- a\n- b\n\n", "Kotei", "terrain; Target",
                                  resolver)  # fmt: skip
    assert problems == []
    assert draft.title == "Terrain during a duel" and draft.text == "Text.\n\n- a\n- b"
    assert draft.applies_to == ("glossary:terrain", "glossary:target") and draft.event == "Kotei"


@pytest.mark.parametrize(
    ("title", "text", "applies", "expected"),
    [
        ("", "Text.", "", "The title is empty."),
        ("T", "", "", "The ruling text is empty."),
        ("T" * 201, "Text.", "", "The title is 201 characters long; at most 200."),
        ("T", "x" * (TEXT_MAX + 1), "", f"The ruling text is {TEXT_MAX + 1} characters long; at most {TEXT_MAX}."),
        ("# T", "Text.", "", "The title cannot start with “#”."),
        ("T", "Text.", "Terain", "“Terain” is not the name of any entry in the rules."),
        ("T", "One.\n\n## Two\n\nX", "", "would start a new ruling"),
        ("T", "Heading\n=======\n\nX", "", "would start a new ruling"),
        ("T", "Text.", ", ".join(["Target"] * 11), "“Applies to” names 11 entries; at most 10."),
    ],
)
def test_bad_drafts_say_what_is_wrong(resolver: NameResolver, title, text, applies, expected) -> None:
    _draft, problems = check_draft(title, text, None, applies, resolver)
    assert any(expected in p for p in problems), problems


def test_a_shared_name_must_be_told_apart(resolver: NameResolver) -> None:
    shared = next(e for e in resolver.corpus.entries if len(resolver.resolve(e.title)) > 1)
    _draft, problems = check_draft("T", "Text.", None, shared.title, resolver)
    assert problems and "write one of:" in problems[0] and shared.id in problems[0]
    draft, problems = check_draft("T", "Text.", None, shared.id, resolver)
    assert problems == [] and draft.applies_to == (shared.id,)


def test_export_reads_back_as_the_same_rulings(resolver: NameResolver) -> None:
    shared = next(e for e in resolver.corpus.entries if len(resolver.resolve(e.title)) > 1)
    rulings = [
        stored(1, "Terrain during a duel", "No Terrain.\n\n- really", ("glossary:terrain",), "Kotei 2026"),
        stored(2, "Shared names", "Text with: colons.", (shared.id, "glossary:target")),
    ]
    text = export_markdown(rulings, resolver, "Test Guild rulings")
    doc = parse_house_rulings(text, "export.md")
    assert doc.anomalies == [] and doc.document == "Test Guild rulings"
    assert [(e.title, e.judge, e.event) for e in doc.entries] == [
        ("Terrain during a duel", "Ann", "Kotei 2026"),
        ("Shared names", "Ann", None),
    ]
    drafts, problems = parse_import(text.encode(), "export.md", resolver)
    assert problems == []
    assert [(d.title, d.text, d.applies_to, d.event, d.judge, d.ruled_on) for d in drafts] == [
        (r.title, r.text, r.applies_to, r.event, r.judge, r.ruled_on) for r in rulings
    ]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60)
                .filter(lambda t: t.strip()), min_size=1, max_size=4))  # fmt: skip
def test_any_text_a_draft_check_accepts_round_trips(resolver: NameResolver, paragraphs: list[str]) -> None:
    text = "\n\n".join(paragraphs)
    draft, problems = check_draft("A ruling", text, None, "", resolver)
    if problems:
        return  # refused with a message: never stored, so never exported
    exported = ruling_markdown(draft.title, draft.text, ruled_on="2026-11-01", judge="Ann")
    drafts, import_problems = parse_import(exported.encode(), "x.md", resolver)
    assert import_problems == [] and [d.text for d in drafts] == [draft.text]


def test_import_problems_carry_line_numbers_and_nothing_is_returned_half(resolver: NameResolver) -> None:
    text = "## A\nDate: 2026-02-30\nApplies to: Target, Nowhere\n\nText.\n\n## B\nJudge: Ann\nVenue: X\n\nText.\n"
    drafts, problems = parse_import(text.encode(), "f.md", resolver)
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [
        (2, "bad-date"),
        (3, "ruling 'A'"),
        (9, "unknown-metadata"),
    ]
    assert "“Nowhere” is not the name of any entry" in str(problems[1])
    for data, message in [
        (b"", "the file is empty"),
        (b"no heading at all\n", "no ruling found"),
        (b"\xff\xfe## A", "not UTF-8"),
        (b"x" * (512 * 1024 + 1), "an import takes at most 512 KB and 5,000 rulings at once"),
        (b"## R\n\nText.\n" * 5_001, "the file holds 5,001 rulings; an import takes at most 512 KB and 5,000"),
    ]:
        drafts, problems = parse_import(data, "f.md", resolver)
        assert drafts == [] and message in str(problems[0]), problems


def test_a_stored_ruling_becomes_an_entry_with_its_credit(resolver: NameResolver, tmp_path: Path) -> None:
    ruling = stored(42, "Terrain during a duel", "First.\n\nSecond.", ("glossary:terrain",), "Kotei 2026")
    entry = ruling_entry(ruling, resolver)
    assert entry.id == "house:#42" and entry.paragraphs == ["First.", "Second."]
    assert entry.judge == "Ann" and entry.event == "Kotei 2026" and entry.section == ["Kotei 2026"]
    assert [(c.kind, c.date) for c in entry.changes] == [("added", "2026-11-01")]
    assert [(r.text, r.target) for r in entry.see_also] == [("Terrain", "glossary:terrain")]

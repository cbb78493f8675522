"""House rulings in Markdown: structure, metadata, verbatim bodies, line numbers and error reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glossary.house import DEFAULT_DOCUMENT, EXAMPLES_DIR, _parse_blocks, parse_house_rulings
from glossary.loader import default_sources
from glossary.model import Change, CrossRef, Location, SourceError

SAMPLE = """\
# Kotei 2026 rulings

Rulings made at the Kotei. Intro text is not a ruling.

## Terrain played after another was destroyed
Date: 2026-11-01
Judge: Jane Doe
Applies to: Terrain, Ranged Attack

A destroyed Terrain no longer blocks a new one: "no player can play another Terrain there" applies
only while a Terrain is *in play* at the current battlefield.

- Its ongoing effects end.
- This is not negation.

## Ranged attack after Followers join
Judge: John Roe

The attack still resolves [see Ranged Attack]; targeting is not re-checked <on resolution>.
"""


def test_rulings_titles_ids_and_document() -> None:
    doc = parse_house_rulings(SAMPLE, "rulings/kotei.md")
    assert doc.source == "house"
    assert doc.file == "rulings/kotei.md"
    assert doc.document == "Kotei 2026 rulings"
    assert [e.id for e in doc.entries] == [
        "house:terrain-played-after-another-was-destroyed",
        "house:ranged-attack-after-followers-join",
    ]
    assert [e.title for e in doc.entries] == [
        "Terrain played after another was destroyed",
        "Ranged attack after Followers join",
    ]
    kinds = {(e.kind, e.source, e.document) for e in doc.entries}
    assert kinds == {("ruling", "house", "Kotei 2026 rulings")}
    assert doc.entries[0].section == ["Kotei 2026 rulings"]
    assert doc.anomalies == []


def test_metadata_is_parsed_and_not_part_of_the_body() -> None:
    first, second = parse_house_rulings(SAMPLE, "kotei.md").entries
    assert first.changes == [Change(kind="added", date="2026-11-01", raw="Date: 2026-11-01", line=6)]
    assert first.judge == "Jane Doe"
    assert first.see_also == [CrossRef("Terrain", None, line=8), CrossRef("Ranged Attack", None, line=8)]
    assert second.judge == "John Roe"
    assert second.changes == [] and second.see_also == []
    assert not any("Judge:" in p or "Date:" in p for e in (first, second) for p in e.paragraphs)


def test_body_blocks_are_the_markdown_source_verbatim() -> None:
    first, second = parse_house_rulings(SAMPLE, "kotei.md").entries
    assert first.paragraphs == [
        'A destroyed Terrain no longer blocks a new one: "no player can play another Terrain there" applies\n'
        "only while a Terrain is *in play* at the current battlefield.",
        "- Its ongoing effects end.\n- This is not negation.",
    ]
    assert second.paragraphs == [
        "The attack still resolves [see Ranged Attack]; targeting is not re-checked <on resolution>."
    ]


def test_locations_run_from_heading_to_last_line() -> None:
    first, second = parse_house_rulings(SAMPLE, "kotei.md").entries
    assert first.location == Location("kotei.md", 5, 14)
    assert second.location == Location("kotei.md", 16, 19)


def test_document_title_defaults_without_h1() -> None:
    doc = parse_house_rulings("## Only ruling\n\nText.\n", "a.md")
    assert doc.document == DEFAULT_DOCUMENT == "House rulings"
    assert doc.entries[0].section == ["House rulings"]


def test_heading_split_from_paragraph_metadata_then_body_and_setext_heading() -> None:
    text = "## First\nDate: 2026-01-02\nBody one.\nline two\n## Second\nBody two.\n\n"
    text += "Third\n-----\n\nBody three.\n"
    doc = parse_house_rulings(text, "b.md")
    assert [(e.title, e.paragraphs, e.location.first_line, e.location.last_line) for e in doc.entries] == [
        ("First", ["Body one.\nline two"], 1, 4),
        ("Second", ["Body two."], 5, 6),
        ("Third", ["Body three."], 8, 11),
    ]
    assert doc.entries[0].changes == [Change(kind="added", date="2026-01-02", raw="Date: 2026-01-02", line=2)]


def test_code_and_quote_blocks_keep_their_indentation_and_markers() -> None:
    text = "## R\n\nIntro.\n\n    indented text\n\n> quoted\n> rule\n"
    (entry,) = parse_house_rulings(text, "c.md").entries
    assert entry.paragraphs == ["Intro.", "    indented text", "> quoted\n> rule"]
    assert entry.location == Location("c.md", 1, 8)


def test_crlf_input_gives_the_same_result() -> None:
    plain = parse_house_rulings(SAMPLE, "kotei.md")
    crlf = parse_house_rulings(SAMPLE.replace("\n", "\r\n"), "kotei.md")
    assert [e.to_dict() for e in crlf.entries] == [e.to_dict() for e in plain.entries]


def test_no_heading_is_a_source_error_with_file_and_line() -> None:
    with pytest.raises(SourceError) as info:
        parse_house_rulings("\n\nJust some notes, no rulings.\n", "notes/empty.md")
    assert info.value.file == "notes/empty.md"
    assert info.value.line == 3
    assert str(info.value) == (
        "notes/empty.md:3: no ruling found: each ruling must start with a '## Title' heading"
    )


def test_only_an_h1_is_still_a_source_error() -> None:
    with pytest.raises(SourceError, match=r"^h\.md:1: no ruling found"):
        parse_house_rulings("# Title only\n", "h.md")


def test_bad_date_is_an_anomaly_and_the_ruling_still_loads() -> None:
    text = "## Bad date ruling\nDate: 2026-13-01\nJudge: Ann\n\nBody.\n\n"
    text += "## Good ruling\nDate: 2026-02-28\n\nOk.\n"
    doc = parse_house_rulings(text, "dates.md")
    assert [e.title for e in doc.entries] == ["Bad date ruling", "Good ruling"]
    bad, good = doc.entries
    assert bad.changes == [] and bad.judge == "Ann" and bad.paragraphs == ["Body."]
    assert good.changes[0].date == "2026-02-28"
    assert [str(a) for a in doc.anomalies] == [
        "dates.md:2: bad-date: ruling 'Bad date ruling': 'Date: 2026-13-01' is not a date in YYYY-MM-DD form;"
        " date ignored"
    ]


@pytest.mark.parametrize("value", ["2026-02-30", "1 Nov 2026", "2026-1-5", "20261101", "soon"])
def test_dates_must_be_real_iso_dates(value: str) -> None:
    doc = parse_house_rulings(f"## R\nDate: {value}\n\nBody.\n", "d.md")
    assert doc.entries[0].changes == []
    assert [(a.kind, a.line, a.file) for a in doc.anomalies] == [("bad-date", 2, "d.md")]


def test_other_date_keys_give_their_change_kind() -> None:
    text = "## R\nDate: 2026-01-01\nUpdated: 2026-03-04\nClarified: 2026-05-06\n\nBody.\n"
    (entry,) = parse_house_rulings(text, "k.md").entries
    assert [(c.kind, c.date, c.line) for c in entry.changes] == [
        ("added", "2026-01-01", 2),
        ("updated", "2026-03-04", 3),
        ("clarified", "2026-05-06", 4),
    ]


def test_applies_to_may_use_semicolons_for_names_with_commas() -> None:
    doc = parse_house_rulings("## R\nApplies to: Battles, Combat Segment; Terrain\n\nBody.\n", "s.md")
    assert [r.text for r in doc.entries[0].see_also] == ["Battles, Combat Segment", "Terrain"]


def test_bold_metadata_keys_are_read() -> None:
    (entry,) = parse_house_rulings("## R\n**Date:** 2026-11-01  \n**Judge:** Ann\n\nBody.\n", "b.md").entries
    assert entry.judge == "Ann"
    assert entry.changes == [Change(kind="added", date="2026-11-01", raw="**Date:** 2026-11-01", line=2)]


def test_unknown_metadata_key_is_reported_with_its_line() -> None:
    doc = parse_house_rulings("## R\nJudge: Ann\nVenue: Kotei\n\nBody.\n", "m.md")
    assert doc.entries[0].judge == "Ann"
    assert doc.entries[0].paragraphs == ["Body."]
    assert [str(a) for a in doc.anomalies] == [
        "m.md:3: unknown-metadata: ruling 'R': unknown metadata 'Venue: Kotei'"
        " (known: Date, Added, Updated, Changed, Clarified, Judge, Judges, Ruled by, Event, Applies to, See also)"
    ]


def test_event_is_read_and_entry_ids_in_applies_to_are_kept_as_targets() -> None:
    text = "## R\nEvent: Kotei 2026\nApplies to: Terrain; obsidian-hand:ninjitsu\n\nBody.\n"
    (entry,) = parse_house_rulings(text, "ev.md").entries
    assert entry.event == "Kotei 2026"
    assert entry.see_also == [
        CrossRef(text="Terrain", target=None, line=3),
        CrossRef(text="obsidian-hand:ninjitsu", target="obsidian-hand:ninjitsu", line=3),
    ]


def test_a_prose_first_paragraph_is_body_not_metadata() -> None:
    text = "## R\nThe rule: Terrain stays in play until battle resolution ends the battle.\n"
    (entry,) = parse_house_rulings(text, "p.md").entries
    assert entry.judge is None and entry.changes == []
    assert entry.paragraphs == ["The rule: Terrain stays in play until battle resolution ends the battle."]


def test_empty_ruling_and_duplicate_titles_are_reported() -> None:
    text = "## Empty\nDate: 2026-01-01\n\n## Same\n\nOne.\n\n## Same\n\nTwo.\n"
    doc = parse_house_rulings(text, "e.md")
    assert [(e.id, e.paragraphs) for e in doc.entries] == [
        ("house:same", ["One."]),
        ("house:same-2", ["Two."]),
    ]
    assert [(a.line, a.kind) for a in doc.anomalies] == [(1, "empty-ruling"), (8, "duplicate-ruling")]
    assert str(doc.anomalies[0]) == "e.md:1: empty-ruling: ruling 'Empty' has no text; skipped"
    assert str(doc.anomalies[1]) == (
        "e.md:8: duplicate-ruling: ruling 'Same' appears more than once in this file; this one is house:same-2"
    )


def test_renamed_duplicate_never_takes_another_rulings_id() -> None:
    doc = parse_house_rulings("## Same\n\nOne.\n\n## Same\n\nTwo.\n\n## Same 2\n\nThree.\n", "d.md")
    assert [(e.id, e.paragraphs) for e in doc.entries] == [
        ("house:same", ["One."]),
        ("house:same-3", ["Two."]),
        ("house:same-2", ["Three."]),
    ]


def test_examples_folder_is_marked_as_examples_and_parses_cleanly() -> None:
    files = sorted(EXAMPLES_DIR.glob("*.md"))
    assert files, "the sample rulings folder ships with the package"
    entries = []
    for path in files:
        doc = parse_house_rulings(path.read_text(encoding="utf-8"), path.name)
        assert "EXAMPLE" in doc.document
        assert doc.anomalies == []
        entries.extend(doc.entries)
    assert 2 <= len(entries) <= 3
    for entry in entries:
        assert any("EXAMPLE" in p for p in entry.paragraphs), entry.id
        assert entry.judge and entry.changes and entry.see_also


def test_examples_are_not_in_the_default_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("L5R_HOUSE_RULINGS", raising=False)
    monkeypatch.delenv("L5R_SOURCES", raising=False)
    assert all(Path(p).resolve() != EXAMPLES_DIR for p in default_sources())
    monkeypatch.setenv("L5R_HOUSE_RULINGS", str(EXAMPLES_DIR))
    assert Path(default_sources()[-1]).resolve() == EXAMPLES_DIR


_LINES = st.sampled_from([
    "# Title", "## Heading", "Some rule text.", "more *text*", "- item", "  - nested", "1. first",
    "    code", "> quoted", "---", "Setext", "=====", "", "", "Date: 2026-01-01", "[x]: http://example.com",
    "text ## not",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=16))
def test_block_spans_never_overlap_and_cover_every_text_line(lines: list[str]) -> None:
    doc = "\n".join(lines)
    spans = sorted((b.start, b.end) for b in _parse_blocks(doc))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    offset = 0
    for line in lines:
        # every line of prose lands inside some element's span (rules and link definitions make no element)
        if line.strip() and line not in {"---", "=====", "[x]: http://example.com"}:
            assert any(start <= offset < end for start, end in spans), line
        offset += len(line) + 1

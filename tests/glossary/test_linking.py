"""Corpus-wide links on the shipped documents: cross-references, format overrides, duplicates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from glossary.linking import normalise
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Corpus, Entry


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus([SHIPPED_SOURCES])


def entry(corpus: Corpus, entry_id: str) -> Entry:
    return corpus.by_id()[entry_id]


def test_normalise_folds_case_quotes_and_punctuation() -> None:
    assert normalise("“Reduce.”") == normalise("reduce") == "reduce"
    assert normalise("Cards vs. Cards") == "cards vs cards"


def test_cross_references_resolve_across_pages(corpus: Corpus) -> None:
    refs = {r.text: r.target for r in entry(corpus, "glossary:result-of-a-duel").see_also}
    assert refs == {"For": "glossary:for"}
    reduce_refs = {r.target for r in entry(corpus, "glossary:raise-rise").see_also}
    assert "glossary:reduce" in reduce_refs


def test_references_to_pages_not_loaded_stay_unresolved_and_are_reported(corpus: Corpus) -> None:
    reveal = entry(corpus, "glossary:reveal")
    assert [(r.text, r.target) for r in reveal.see_also] == [("Look", None), ("Show", None)]
    dangling = [a for a in corpus.anomalies if a.kind == "dangling-reference"]
    assert any("'Reveal' refers to 'Look'" in a.message for a in dangling)
    assert all(a.file and a.line > 0 for a in dangling)


def test_format_rules_override_same_topic_both_ways(corpus: Corpus) -> None:
    equip = entry(corpus, "glossary:equip")
    ability = next(e for e in corpus.entries if e.kind == "ability" and e.title == "Equip")
    assert ability.id in equip.overridden_by and equip.id in ability.overrides
    family = entry(corpus, "glossary:family-honor")
    section = next(e for e in corpus.entries if e.source == "obsidian-hand" and e.title == "B. Family Honor")
    assert section.id in family.overridden_by and family.id in section.overrides


def test_every_override_link_on_the_shipped_corpus(corpus: Corpus) -> None:
    """The complete set, so a new wrong link fails here (a wrong link is worse than none)."""
    pairs = sorted((e.id, target) for e in corpus.entries for target in e.overrides)
    assert pairs == [
        ("obsidian-hand:ability-equip", "glossary:equip"),
        ("obsidian-hand:ability-tactical-advantage", "glossary:tactical"),
        ("obsidian-hand:ii-b-family-honor", "glossary:family-honor"),
        ("obsidian-hand:ii-e-enlightenment", "glossary:enlightenment-victory"),
        ("obsidian-hand:update-2015-10-20", "glossary:terrain"),
        ("obsidian-hand:update-2015-10-25", "glossary:terrain"),
    ]
    back = sorted((source, e.id) for e in corpus.entries for source in e.overridden_by)
    assert back == sorted((a, b) for a, b in pairs)


def test_subheading_named_inside_its_parent_heading_overrides_the_glossary_topic(corpus: Corpus) -> None:
    """"Enlightenment" under "E. Victory Conditions" is the glossary's "Enlightenment victory"."""
    victory = entry(corpus, "glossary:enlightenment-victory")
    assert victory.overridden_by == ["obsidian-hand:ii-e-enlightenment"]
    # its siblings name no glossary entry on these pages, and the parent itself is not "Victory Conditions X"
    for sibling in ("military", "dishonor", "honor", "special-victory-conditions"):
        assert entry(corpus, f"obsidian-hand:ii-e-{sibling}").overrides == []


def test_a_format_rule_restating_a_glossary_rule_overrides_it(corpus: Corpus) -> None:
    """"Tactical Advantage" repeats the glossary's Tactical Battle ability word for word (14 words)."""
    assert entry(corpus, "obsidian-hand:ability-tactical-advantage").overrides == ["glossary:tactical"]
    assert entry(corpus, "glossary:tactical").overridden_by == ["obsidian-hand:ability-tactical-advantage"]
    # sharing a shorter phrase ("...the same title but different experience levels") is not the same topic
    assert entry(corpus, "obsidian-hand:ii-f-deck-restrictions").overrides == []
    assert entry(corpus, "glossary:experienced").overridden_by == []


def test_terrain_updates_amend_the_glossary_terrain(corpus: Corpus) -> None:
    terrain = entry(corpus, "glossary:terrain")
    assert terrain.overridden_by == ["obsidian-hand:update-2015-10-20", "obsidian-hand:update-2015-10-25"]


def test_glossary_honor_alias_does_not_capture_the_honor_ability(corpus: Corpus) -> None:
    honor_ability = next(e for e in corpus.entries if e.kind == "ability" and e.title == "Honor")
    assert honor_ability.overrides == []


def test_same_page_twice_gets_distinct_ids_and_a_duplicate_report(tmp_path: Path) -> None:
    page = SHIPPED_SOURCES / "000_99c7513ab738c7d1.txt"
    shutil.copy(page, tmp_path / "a.txt")
    shutil.copy(page, tmp_path / "b.txt")
    twice = load_corpus([tmp_path])
    ids = [e.id for e in twice.entries]
    assert len(ids) == len(set(ids)) == 20
    assert "glossary:target-2" in ids
    dupes = [a for a in twice.anomalies if a.kind == "duplicate-title"]
    assert len(dupes) == 10 and dupes[0].file == "b.txt"  # cited relative to the folder given


def test_house_ruling_links_to_glossary_and_format_rules_it_applies_to(tmp_path: Path) -> None:
    (tmp_path / "rulings.md").write_text(
        "## Naval Invasion from hand\nDate: 2026-11-02\nJudge: Test Judge\nApplies to: Naval Invasion, Terrain\n\n"
        "A test ruling body.\n",
        encoding="utf-8",
    )
    linked = load_corpus([SHIPPED_SOURCES, tmp_path])
    ruling = linked.by_id()["house:naval-invasion-from-hand"]
    assert ruling.overrides == ["obsidian-hand:ability-naval-invasion", "glossary:terrain"]
    assert ruling.id in linked.by_id()["obsidian-hand:ability-naval-invasion"].overridden_by
    assert ruling.id in linked.by_id()["glossary:terrain"].overridden_by


def test_dangling_house_reference_is_reported_on_its_applies_to_line(tmp_path: Path) -> None:
    (tmp_path / "rulings.md").write_text(
        "# Kotei\n\n## A ruling\nJudge: Test Judge\nApplies to: Terrain, No Such Rule\n\nBody.\n",
        encoding="utf-8",
    )
    linked = load_corpus([SHIPPED_SOURCES, tmp_path])
    dangling = [str(a) for a in linked.anomalies if a.kind == "dangling-reference" and a.file.endswith(".md")]
    assert dangling == [
        "rulings.md:5: dangling-reference: 'A ruling' refers to 'No Such Rule', which no loaded "
        "entry defines"
    ]

"""Every query kind of the engine on the shipped corpus, with concrete expected entries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glossary.loader import SHIPPED_SOURCES
from index.build import store
from index.engine import Engine
from index.results import BannedResult, DefineResult, Hit


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def ids(hits: list[Hit]) -> list[str]:
    return [h.entry.id for h in hits]


# ------------------------------------------------------------------------------------ corpus / get
def test_corpus_and_get(engine: Engine) -> None:
    assert len([e for e in engine.corpus.entries if e.source == "glossary"]) == 53
    assert engine.get("glossary:terrain").title == "Terrain"  # type: ignore[union-attr]
    assert engine.get("glossary:nope") is None


def test_stats(engine: Engine) -> None:
    s = engine.stats()
    assert s["entries"] == 146
    assert s["by_source"] == {"glossary": 53, "obsidian-hand": 93}
    assert s["by_kind"]["banned"] == 25 and s["by_kind"]["term"] == 53
    assert len(s["files"]) == 5 and len(s["fingerprint"]) == 64
    assert s["built_at"].endswith("+00:00") and s["build_seconds"] > 0


# ------------------------------------------------------------------------------------ search
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("is a terrain an enemy card?", "glossary:terrain"),
        ("when does a duel stop resolving?", "glossary:resolve"),
        ("Are multiple ranged attacks from one effect simultaneous or consecutive?", "glossary:ranged-attack"),
        ("Do I pay the gold cost when I transfer an attachment?", "glossary:transfer"),
        ("How many copies of a non-unique card can I include in a deck?", "obsidian-hand:ii-f-deck-restrictions"),
    ],
)
def test_search_ranks_the_answer_first(engine: Engine, question: str, expected: str) -> None:
    assert ids(engine.search(question))[0] == expected


def test_two_rules_that_both_say_it_are_both_shown(engine: Engine) -> None:
    """Cardinal Rule 2 says "follow the most recent printing"; Rule 3 says an Oracle revision "will be considered as
    the most recent printing". The stock model ranked Rule 2 first, the tuned one (2026-11-27) ranks Rule 3 first:
    what is asserted is that the answer is shown, among the first two."""
    got = ids(engine.search("Which cardinal rule says to follow the most recent printing of a card?"))
    assert "obsidian-hand:cardinal-rule-2" in got[:2]


def test_search_face_down_target_question(engine: Engine) -> None:
    q = "can I target a face-down card in a province?"
    assert ids(engine.search(q))[0] == "glossary:face-down"
    # Target answers too, at the paragraph about cards whose face is not revealed; it ranks just below the cut-off
    # (the face-down entries are said by name in the question), so "nearest terms" still offers it.
    assert "glossary:target" in [e.id for e in engine.nearest_terms(q, limit=4)]


def test_hyphen_spellings_find_the_same_entry(engine: Engine) -> None:
    for q in ("face-down", "face down", "facedown", "FACE\u2011DOWN"):
        assert ids(engine.search(q))[0] == "glossary:face-down", q


def test_typo_in_question_is_corrected(engine: Engine) -> None:
    assert ids(engine.search("when does a duel stopp resolvng"))[0] == "glossary:resolve"
    assert ids(engine.search("simultanous ranged atacks"))[0] == "glossary:ranged-attack"


def test_hit_snippet_paragraph_and_changes(engine: Engine) -> None:
    hit = engine.search("when does a duel stop resolving?")[0]
    assert hit.paragraph == 4
    assert hit.quote.startswith("3. A duel begins to resolve once")  # verbatim: no escaping, no Markdown
    marked = [hit.quote[a:b] for a, b in hit.spans]
    assert {"duel", "resolve", "stops", "resolving"} <= set(marked)
    kinds = sorted((c.kind, c.date) for c in hit.changes)
    assert kinds == [("added", "2007-09-22"), ("changed", "3008-05-30")]  # entry-wide stamp + that paragraph's
    d = hit.to_dict()
    for key in ("id", "title", "source", "section", "text", "quote", "spans", "changes", "citation", "score"):
        assert key in d
    where = "L5R Comprehensive Rules — Glossary R › Resolve, item 3., line 43"  # the source numbers it "3."
    assert d["citation"] == f"{where} · 001_043f9cd10b383175.txt"


def test_hit_changes_are_those_of_the_paragraph(engine: Engine) -> None:
    hit = engine.search("circle of steel explicit duration beyond the battle resolution")[0]
    assert hit.entry.id == "glossary:terrain"
    assert hit.paragraph == 8
    assert [(c.kind, c.date) for c in hit.changes] == [("added", "2008-03-24")]


def test_quote_keeps_markdown_characters_of_rule_text_verbatim(engine: Engine) -> None:
    """The index returns the text as written; escaping is the Discord renderer's job alone."""
    hits = engine.search("Seppuku Rehonor then destroy")
    # the guidelines' fuller copy of the rule leads (reorder.fuller_first); the ability's own text follows
    assert [h.entry.id for h in hits[:2]] == [
        "obsidian-hand:guideline-player-abilities",
        "obsidian-hand:ability-seppuku",
    ]
    assert hits[0].quote.startswith("\xa0 \xa0 * Seppuku: Rehonor, then destroy, a Personality")  # its indent too
    rec = hits[1]
    assert rec.quote.startswith("* Seppuku: Rehonor, then destroy, a Personality")
    assert [rec.quote[a:b] for a, b in rec.spans][:3] == ["Seppuku", "Rehonor", "destroy"]


def test_search_source_filter(engine: Engine) -> None:
    hits = engine.search("honor loss", limit=10, source="obsidian-hand")
    assert hits and all(h.entry.source == "obsidian-hand" for h in hits)
    hits = engine.search("honor loss", limit=10, source="glossary")
    assert hits and all(h.entry.source == "glossary" for h in hits)
    with pytest.raises(ValueError, match="unknown source"):
        engine.search("honor", source="wiki")


def test_search_since_filter(engine: Engine) -> None:
    hits = engine.search("terrain duel resolve", limit=10, since="2008-05-01")
    # Resolve via its 3008 -> 2008-05-30 stamp
    assert set(ids(hits)[:2]) == {"glossary:terrain", "glossary:resolve"}
    for h in hits:
        assert any((store.effective_date(c) or "") >= "2008-05-01" for c in h.entry.changes)
    assert all(h.entry.source == "obsidian-hand" for h in engine.search("card", limit=10, since="2016"))
    with pytest.raises(ValueError, match="since must be a date"):
        engine.search("terrain", since="last tuesday")


BAD_QUERIES = [
    "",
    "   ",
    '"unbalanced quote',
    "OR OR",
    "AND",
    "NOT NOT (",
    "field:x",
    "title:terrain",
    "*",
    "?",
    "terr*",
    "~2",
    "a" * 5000,
    ("noise " * 900) + "terrain",
    "\U0001f3ef\U0001f5e1\ufe0f\U0001f525",
    "((((((",
    "[edit]",
    "\\",
    "\x00\x01",
    "terrain^9999",
]


@pytest.mark.parametrize("q", BAD_QUERIES)
def test_bad_queries_never_raise(engine: Engine, q: str) -> None:
    hits = engine.search(q)
    assert isinstance(hits, list) and len(hits) <= 5
    assert isinstance(engine.define(q), DefineResult)
    assert len(engine.complete(q)) <= 25
    assert isinstance(engine.section(q), list)
    assert isinstance(engine.banned(q), BannedResult)


def test_bad_query_words_still_searched(engine: Engine) -> None:
    assert ids(engine.search("title:terrain OR OR"))[0] == "glossary:terrain"
    assert ids(engine.search('"terrain enemy'))[0] == "glossary:terrain"
    assert ids(engine.search(("noise " * 900) + "terrain"))[0] == "glossary:terrain"
    assert engine.search("") == [] and engine.search("\U0001f3ef") == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_random_text_never_raises(engine: Engine, text: str) -> None:
    for hit in engine.search(text, limit=3):
        assert hit.entry.id in engine.corpus.by_id()
    engine.define(text)
    assert all(len(name) <= 100 for name, _ in engine.complete(text))
    engine.section(text)
    engine.banned(text)
    engine.complete_section(text)
    engine.complete_banned(text)


# ------------------------------------------------------------------------------------ define
@pytest.mark.parametrize(
    ("term", "expected", "how"),
    [
        ("Terrain", "glossary:terrain", "exact"),
        ("  targeting PARADOXES ", "glossary:targeting-paradoxes", "exact"),
        ("Face Down", "glossary:face-down", "exact"),
        ("facedown", "glossary:face-down", "exact"),
        ("redirection", "glossary:redirect-ion", "exact"),
        ("honor", "glossary:family-honor", "alias"),
        ("cannot fall", "glossary:fall", "alias"),
        ("exp", "glossary:experienced", "prefix"),
        ("targt", "glossary:target", "fuzzy"),
        ("ranged atack", "glossary:ranged-attack", "fuzzy"),
        ("family honour", "glossary:family-honor", "fuzzy"),
        ("transfering", "glossary:transfer", "fuzzy"),
        ("tokens", "glossary:token", "fuzzy"),
        ("Moshi Eihime", "obsidian-hand:banned-moshi-eihime", "exact"),
        ("naval invasion", "obsidian-hand:ability-naval-invasion", "exact"),
    ],
)
def test_define(engine: Engine, term: str, expected: str, how: str) -> None:
    r = engine.define(term)
    assert r.entry is not None and r.entry.id == expected
    assert r.how == how


def test_define_prefers_the_glossary_definition_and_lists_others(engine: Engine) -> None:
    r = engine.define("equip")
    assert r.entry.id == "glossary:equip"  # type: ignore[union-attr]
    assert [c.id for c in r.candidates] == ["obsidian-hand:ability-equip"]


def test_define_ambiguous_gives_candidates(engine: Engine) -> None:
    r = engine.define("ninjitsu")
    assert r.entry is None and r.how == "exact"
    assert {c.id for c in r.candidates} == {
        "obsidian-hand:ability-ninjitsu-open",
        "obsidian-hand:ability-ninjitsu-reaction",
        "obsidian-hand:ability-ninjitsu-battle",
    }
    r = engine.define("face")
    assert r.entry is None and {c.id for c in r.candidates} == {"glossary:face-down", "glossary:face-up"}


def test_define_falls_back_to_full_text_then_none(engine: Engine) -> None:
    r = engine.define("circle of steel")
    assert r.how == "fulltext" and r.entry is not None and r.entry.id == "glossary:terrain"
    r = engine.define("zzzzqqq")
    assert r.entry is None and r.candidates == [] and r.how == "none"


# ------------------------------------------------------------------------------------ complete
def test_complete(engine: Engine) -> None:
    got = engine.complete("fa")
    names = [n for n, _ in got]
    assert names[:4] == ["Fall", "Face-up", "Facing", "Face-down"]  # shorter names first
    assert ("Family Honor", "glossary:family-honor") in got
    assert len(engine.complete("")) == 25
    assert len(engine.complete("t", limit=3)) == 3
    assert engine.complete("zzz") == []


def test_complete_word_starts_and_disambiguated_names(engine: Engine) -> None:
    assert ("Targeting paradoxes", "glossary:targeting-paradoxes") in engine.complete("paradox")
    ninja = dict(engine.complete("ninj"))
    assert len(ninja) == 3 and len(set(ninja.values())) == 3
    assert "Ninjitsu (Reaction)" in ninja
    assert all(len(n) <= 100 for n, _ in engine.complete("i"))


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("targt", "glossary:target"),
        ("ranged atack", "glossary:ranged-attack"),
        ("transfering", "glossary:transfer"),
        ("expereinced", "glossary:experienced"),
    ],
)
def test_complete_tolerates_a_typo_after_prefix_matches(engine: Engine, typed: str, first: str) -> None:
    assert ids_of(engine.complete(typed))[0] == first
    assert engine.complete("xyzzy") == []


def test_complete_banned_tolerates_a_typo(engine: Engine) -> None:
    assert ids_of(engine.complete_banned("moshi eihme")) == ["obsidian-hand:banned-moshi-eihime"]
    assert ids_of(engine.complete_banned("house of black"))[:1] == ["obsidian-hand:banned-house-of-the-black-lion"]


# ------------------------------------------------------------------------------------ section
@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("Cardinal Rule 2", "obsidian-hand:cardinal-rule-2"),
        ("cardinal rule 4", "obsidian-hand:cardinal-rule-4"),
        ("II.F", "obsidian-hand:ii-f-deck-constructions-and-restrictions"),
        ("ii f", "obsidian-hand:ii-f-deck-constructions-and-restrictions"),
        ("deck construction", "obsidian-hand:guideline-deck-construction"),
        ("Player Abilities", "obsidian-hand:guideline-player-abilities"),
        ("victory conditions", "obsidian-hand:ii-e-victory-conditions"),
        ("maximum hand size", "obsidian-hand:ii-c-maximum-hand-size"),
    ],
)
def test_section(engine: Engine, ref: str, expected: str) -> None:
    assert ids(engine.section(ref))[0] == expected


def test_section_heading_followed_by_its_contents(engine: Engine) -> None:
    assert ids(engine.section("II.F", limit=3)) == [
        "obsidian-hand:ii-f-deck-constructions-and-restrictions",
        "obsidian-hand:ii-f-the-play-deck-and-deck-construction",
        "obsidian-hand:ii-f-deck-restrictions",
    ]
    got = ids(engine.section("deck constructions"))
    assert "obsidian-hand:ii-f-deck-constructions-and-restrictions" in got[:2]


def test_complete_section(engine: Engine) -> None:
    got = engine.complete_section("ii")
    assert ("II.F Deck Constructions and Restrictions", "obsidian-hand:ii-f-deck-constructions-and-restrictions") in got
    assert ids_of(engine.complete_section("cardinal"))[:3] == [
        "obsidian-hand:i-cardinal-rules",
        "obsidian-hand:cardinal-rule-1",
        "obsidian-hand:cardinal-rule-2",
    ]
    empty = engine.complete_section("")
    assert len(empty) == 25 and all(len(n) <= 100 for n, _ in empty)
    # a heading is not qualified by itself; its contents are qualified by it
    assert empty[:2] == [
        ("Initial Guidelines", "obsidian-hand:initial-guidelines"),
        ("Deck Construction (Initial Guidelines)", "obsidian-hand:guideline-deck-construction"),
    ]


def ids_of(pairs: list[tuple[str, str]]) -> list[str]:
    return [i for _, i in pairs]


# ------------------------------------------------------------------------------------ changes
def test_changes_newest_first_with_anomaly_placed_by_probable_date(engine: Engine) -> None:
    recs = engine.changes(source="glossary")
    dates = [store.effective_date(r.change) for r in recs]
    assert dates == sorted(dates, reverse=True)
    assert len(recs) == 18
    top = [(r.change.date, r.entry.id) for r in recs[:3]]
    assert top == [
        ("2008-07-08", "glossary:entering-play-honor-loss"),
        ("3008-05-30", "glossary:resolve"),
        ("2008-05-21", "glossary:terrain"),
    ]
    resolve = recs[1].to_dict()
    assert resolve["anomaly"].startswith("impossible date") and resolve["probable_date"] == "2008-05-30"
    assert resolve["citation"].startswith("L5R Comprehensive Rules")


def test_changes_filters(engine: Engine) -> None:
    all_recs = engine.changes()
    assert [r.change.date for r in all_recs[:2]] == ["2016-02-15", "2016-02-15"]
    assert {r.entry.id for r in all_recs[:2]} == {
        "obsidian-hand:update-2016-02-15",
        "obsidian-hand:banned-moshi-eihime",
    }
    window = engine.changes(since="2008-03-16", until="2008-03-31")
    assert {(r.change.date, r.entry.id) for r in window} == {
        ("2008-03-16", "glossary:targeting-paradoxes"),
        ("2008-03-16", "glossary:raise-rise"),
        ("2008-03-16", "glossary:reduce"),
        ("2008-03-23", "glossary:even-if"),
        ("2008-03-24", "glossary:terrain"),
    }
    assert {r.entry.source for r in engine.changes(until="2008")} == {"glossary"}
    assert all(r.entry.source == "obsidian-hand" for r in engine.changes(since="2015"))
    with pytest.raises(ValueError, match="until must be a date"):
        engine.changes(until="May 2008")


# ------------------------------------------------------------------------------------ banned
def test_banned_exact_and_log_spelling(engine: Engine) -> None:
    r = engine.banned("House of Black Lion")
    assert r.is_banned and r.record.id == "obsidian-hand:banned-house-of-the-black-lion"  # type: ignore[union-attr]
    assert r.banned_on == "2015-10-05"
    r = engine.banned("koan's jingasa")
    assert r.record.id == "obsidian-hand:banned-koans-jingasa"  # type: ignore[union-attr]
    assert r.banned_on is None


def test_banned_typo(engine: Engine) -> None:
    r = engine.banned("Moshi Eihme")
    assert r.record.id == "obsidian-hand:banned-moshi-eihime" and r.banned_on == "2016-02-15"  # type: ignore[union-attr]


def test_not_banned(engine: Engine) -> None:
    r = engine.banned("Hida Kisada")
    assert not r.is_banned and r.record is None and r.banned_on is None
    assert all(e.kind == "banned" for e in r.near)
    r = engine.banned("Isawa Tadaka")  # only the Experienced 2CW version is banned: named, but not as this card
    assert not r.is_banned and r.how == "version"
    assert r.record is not None and r.record.id == "obsidian-hand:banned-isawa-tadaka-seven-thunder-experienced-2cw"


def test_a_unique_part_of_a_banned_name_is_that_card(engine: Engine) -> None:
    r = engine.banned("Gozoku")
    assert r.is_banned and r.how == "partial" and r.record is not None
    assert r.record.id == "obsidian-hand:banned-gozoku-sensei"


def test_a_part_of_several_banned_names_lists_them_all_as_banned(engine: Engine) -> None:
    r = engine.banned("Sensei")
    assert r.is_banned and r.record is None
    assert [e.id for e in r.matches] == ["obsidian-hand:banned-gozoku-sensei", "obsidian-hand:banned-yodin-sensei"]


def test_not_on_the_list_names_the_bans_by_kind_of_card(engine: Engine) -> None:
    r = engine.banned("Hida Kisada")
    assert [e.title for e in r.kinds] == ["Cards with the Rank (Kabuto) icon", "Unreleased Cards/Promos"]


def test_banned_list_in_document_order_with_dates(engine: Engine) -> None:
    listed = engine.banned_list()
    assert len(listed) == 25
    assert [r.record.group for r in listed].count("Strongholds") == 7
    assert (listed[0].record.title, listed[-1].record.title) == ("Gates of the Second City", "Unreleased Cards/Promos")
    dated = {r.record.title: r.banned_on for r in listed if r.banned_on}
    assert dated == {
        "House of the Black Lion": "2015-10-05",
        "Moshi Eihime": "2016-02-15",
        "Unreleased Cards/Promos": "2015-11-12",
    }


def test_complete_banned(engine: Engine) -> None:
    got = engine.complete_banned("koan")
    assert [i for _, i in got] == ["obsidian-hand:banned-koans-jingasa", "obsidian-hand:banned-koans-robes"]
    assert ("Lies, Lies, Lies", "obsidian-hand:banned-lies-lies-lies") in engine.complete_banned("lies")
    assert len(engine.complete_banned("")) == 25


def test_reload_returns_stats_and_keeps_answering(index_copy: Callable[..., Path], tmp_path: Path) -> None:
    eng = Engine.open([SHIPPED_SOURCES], index_copy(tmp_path / "ix"))
    try:
        stats = eng.reload()
        assert stats["rebuilt"] is True and stats["entries"] == 146
        assert ids(eng.search("is a terrain an enemy card?"))[0] == "glossary:terrain"
    finally:
        eng.close()


def test_an_inflection_of_a_title_is_that_term_before_longer_titles(engine: Engine) -> None:
    """"targeting" is Target (defined there), not only Targeting paradoxes, which starts with the word;
    the typo "targting" too. The longer title is still offered."""
    for typed in ("targeting", "targting", "Targeting"):
        result = engine.define(typed)
        assert result.entry is not None and result.entry.id == "glossary:target", typed
    assert "glossary:targeting-paradoxes" in [c.id for c in engine.define("targeting").candidates]
    assert engine.define("targeting paradoxes").entry.id == "glossary:targeting-paradoxes"

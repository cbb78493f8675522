"""index.query.overlay: a scope's own rulings merged into the shared answers without rebuilding the index."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from glossary.model import Change, CrossRef, Entry, Location
from index.engine import Engine
from index.query.overlay import NameResolver, Overlays, build_overlay, is_scoped, query_stems, scoped_id


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Engine:
    eng = Engine.open(None, default_index)
    yield eng
    eng.close()


def ruling(number: int, title: str, text: str, applies: list[str], date: str = "2026-11-01") -> Entry:
    return Entry(
        id=scoped_id(number),
        source="house",
        document="Server rulings",
        kind="ruling",
        title=title,
        section=["Server rulings"],
        paragraphs=text.split("\n\n"),
        location=Location(f"ruling {number}", 1, 1),
        changes=[Change(kind="added", date=date, raw=f"Date: {date}")],
        see_also=[CrossRef(text=t, target=t) for t in applies],
        judge="Ann",
    )


DUEL = ruling(
    1, "Terrain during a duel", "No Terrain may be played while a duel is being resolved.", ["glossary:terrain"]
)
BOWS = ruling(2, "Archers and ranged attacks", "Archer followers may make one Ranged Attack per battle.", [])


def test_ids_of_scoped_entries_never_look_like_shared_ids(engine: Engine) -> None:
    assert scoped_id(42) == "house:#42" and is_scoped("house:#42")
    assert not any(is_scoped(e.id) for e in engine.corpus.entries)
    with pytest.raises(ValueError):
        build_overlay("g", [dataclasses.replace(DUEL, id="house:duel")])


def test_a_ruling_is_found_by_its_words_and_placed_after_the_rule_it_applies_to(engine: Engine) -> None:
    overlay = build_overlay("guild:1", [DUEL, BOWS], 1, engine.corpus)
    plain = engine.search("can I play a terrain during a duel", limit=10)
    merged = engine.search("can I play a terrain during a duel", limit=10, overlay=overlay)
    ids = [h.entry.id for h in merged]
    assert "house:#1" in ids
    terrain = ids.index("glossary:terrain") if "glossary:terrain" in ids else None
    assert terrain is not None and ids[terrain + 1] == "house:#1"
    # The shared hits keep their order; nothing else changes.
    assert [i for i in ids if i != "house:#1"] == [h.entry.id for h in plain][: len(ids) - 1]
    hit = merged[ids.index("house:#1")]
    marked = {hit.quote[a:b] for a, b in hit.spans}
    assert "Terrain" in marked and "duel" in marked


def test_a_ruling_about_a_topic_with_no_shared_hit_is_ranked_by_the_common_score(engine: Engine) -> None:
    overlay = build_overlay("guild:1", [DUEL, BOWS], 1, engine.corpus)
    hits = engine.search("how many ranged attacks can archer followers make", limit=5, overlay=overlay)
    assert "house:#2" in [h.entry.id for h in hits[:3]]


def test_unrelated_questions_and_other_sources_get_no_ruling(engine: Engine) -> None:
    overlay = build_overlay("guild:1", [DUEL, BOWS], 1, engine.corpus)
    assert not any(is_scoped(h.entry.id) for h in engine.search("what is a province", 10, overlay=overlay))
    only_glossary = engine.search("terrain during a duel", 10, source="glossary", overlay=overlay)
    assert not any(is_scoped(h.entry.id) for h in only_glossary)
    assert not any(is_scoped(h.entry.id) for h in engine.search("terrain duel", 10, since="2027", overlay=overlay))


def test_scopes_are_isolated(engine: Engine) -> None:
    overlays = Overlays()
    overlays.put(build_overlay("guild:1", [DUEL], 1, engine.corpus))
    overlays.put(build_overlay("guild:2", [BOWS], 1, engine.corpus))
    one, two = overlays.get("guild:1"), overlays.get("guild:2")
    assert engine.get("house:#1", one) is DUEL and engine.get("house:#1", two) is None
    assert engine.get("house:#1") is None
    found = {h.entry.id for h in engine.search("terrain during a duel", 15, overlay=two)}
    assert "house:#1" not in found
    assert overlays.get(None) is None and overlays.get("guild:3") is None


def test_shared_entries_are_not_modified(engine: Engine) -> None:
    terrain = engine.get("glossary:terrain")
    before = list(terrain.overridden_by)
    overlay = build_overlay("guild:1", [DUEL], 1, engine.corpus)
    assert terrain.overridden_by == before
    assert overlay.applying_to("glossary:terrain") == (DUEL,)
    assert DUEL.overrides == ["glossary:terrain"]


def test_unknown_targets_are_dropped_from_the_links(engine: Engine) -> None:
    stray = ruling(3, "Stray", "Text.", ["glossary:no-such-entry", "glossary:target"])
    overlay = build_overlay("g", [stray], 1, engine.corpus)
    assert stray.overrides == ["glossary:target"] and overlay.applying_to("glossary:no-such-entry") == ()


def test_define_complete_and_changes_merge(engine: Engine) -> None:
    overlay = build_overlay("guild:1", [DUEL, BOWS], 1, engine.corpus)
    assert engine.define("terrain during a duel", overlay=overlay).entry is DUEL
    assert engine.define("terrain during a duel").entry is not DUEL
    terrain = engine.define("terrain", overlay=overlay)
    assert terrain.entry.id == "glossary:terrain"  # a shared name stays the shared entry
    assert engine.complete("terrain d", overlay=overlay)[0] == ("Terrain during a duel", "house:#1")
    assert ("Archers and ranged attacks", "house:#2") in engine.complete("ranged", overlay=overlay)
    records = engine.changes(source="house", overlay=overlay)
    assert [r.entry.id for r in records] == ["house:#1", "house:#2"]
    since = engine.changes(since="2026-01-01", overlay=overlay)
    assert {r.entry.id for r in since} == {"house:#1", "house:#2"}
    assert engine.changes(source="glossary", overlay=overlay) == engine.changes(source="glossary")


def test_a_newer_revision_is_never_replaced_by_an_older_one(engine: Engine) -> None:
    overlays = Overlays()
    overlays.put(build_overlay("g", [DUEL, BOWS], 5, engine.corpus))
    overlays.put(build_overlay("g", [DUEL], 4, engine.corpus))
    assert len(overlays.get("g")) == 2 and overlays.revisions() == {"g": 5}
    overlays.put(build_overlay("g", [DUEL], 6, engine.corpus))
    assert len(overlays.get("g")) == 1


def test_name_resolver_links_like_house_files_and_refuses_to_guess(engine: Engine) -> None:
    resolver = NameResolver(engine.corpus)
    assert resolver.resolve("ranged attack") == ["glossary:ranged-attack"]
    assert resolver.resolve("  TERRAIN ") == ["glossary:terrain"]
    assert resolver.resolve("glossary:target") == ["glossary:target"]
    assert resolver.resolve("no such thing") == []
    shared = [e for e in engine.corpus.entries if len(resolver.resolve(e.title)) > 1]
    assert shared, "the shipped corpus has titles two entries share"
    ambiguous = shared[0]
    assert resolver.label(ambiguous.id) == ambiguous.id
    assert resolver.label("glossary:terrain") == "Terrain"
    assert resolver.resolve(resolver.label(ambiguous.id)) == [ambiguous.id]


def test_overlay_of_hundreds_of_rulings_builds_and_answers(engine: Engine, tmp_path: Path) -> None:
    many = [ruling(n, f"Ruling number {n} on terrain", f"Text {n} about duels and terrain.", []) for n in range(300)]
    overlay = build_overlay("big", many, 1, engine.corpus)
    hits = engine.search("ruling number 7 on terrain", 5, overlay=overlay)
    assert hits[0].entry.id == "house:#7"


# -- by meaning ---------------------------------------------------------------------------------------
# A ruling sharing no word with the question that it answers ("castle" is the players' word for a stronghold):
# only the sentence-embedding model can find it.
CASTLE = ruling(3, "Changing strongholds", "Strongholds may not be changed between rounds of a tournament.", [])
LUNCH = ruling(4, "Lunch break", "The lunch break lasts forty-five minutes; the store sells sandwiches.", [])
SWAP = "can I swap my castle mid-event?"


@pytest.fixture(scope="module")
def words_only(words_only_index: Path) -> Engine:
    """The same rules with the model off (``L5R_EMBEDDING_MODEL=off``): ranking by words alone."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("L5R_EMBEDDING_MODEL", "off")
        eng = Engine.open(None, words_only_index)
    yield eng
    eng.close()


def test_a_ruling_in_other_words_is_found_by_meaning_and_not_without_the_model(
    engine: Engine, words_only: Engine
) -> None:
    assert engine.embedder is not None and words_only.embedder is None
    assert not set(query_stems(SWAP)) & set(query_stems(CASTLE.title + " " + CASTLE.text))  # no word in common
    overlay = engine.build_overlay("guild:1", [DUEL, BOWS, CASTLE, LUNCH], 1)
    assert overlay.model == engine.embedder.digest and overlay.unembedded == 0 and len(overlay.vectors) == 4
    ids = [h.entry.id for h in engine.search(SWAP, 10, overlay=overlay)]
    assert ids[:1] == ["house:#3"]  # the shared rules hold nothing this close: the ruling is the answer
    assert not {"house:#1", "house:#2", "house:#4"} & set(ids)  # the other rulings are unrelated
    plain = words_only.build_overlay("guild:1", [DUEL, BOWS, CASTLE, LUNCH], 1)
    assert plain.model is None and plain.vectors is None
    assert not any(is_scoped(h.entry.id) for h in words_only.search(SWAP, 10, overlay=plain))
    # the engine with a model, given an overlay built without one, also answers by words only
    assert "house:#3" not in [h.entry.id for h in engine.search(SWAP, 10, overlay=plain)]


def test_unrelated_rulings_stay_out_by_meaning_too(engine: Engine) -> None:
    overlay = engine.build_overlay("guild:1", [DUEL, BOWS, CASTLE, LUNCH], 1)
    for question in ("what is a province", "how many copies of a card", "do I lose honor when my personality dies",
                     "can my courtier kill himself to cut down an honor loss"):  # fmt: skip
        assert not any(is_scoped(h.entry.id) for h in engine.search(question, 10, overlay=overlay)), question
    duel = [h.entry.id for h in engine.search("can I play a terrain during a duel", 10, overlay=overlay)]
    assert "house:#1" in duel and not {"house:#3", "house:#4"} & set(duel)
    assert "house:#4" in [h.entry.id for h in engine.search("when do we eat", 10, overlay=overlay)]


def test_by_meaning_keeps_the_placement_after_the_rule_the_filters_and_the_scopes(engine: Engine) -> None:
    overlay = engine.build_overlay("guild:1", [DUEL, BOWS, CASTLE], 1)
    ids = [h.entry.id for h in engine.search("can I play a terrain during a duel", 10, overlay=overlay)]
    assert ids[ids.index("glossary:terrain") + 1] == "house:#1"
    assert not any(is_scoped(h.entry.id) for h in engine.search(SWAP, 10, source="glossary", overlay=overlay))
    assert not any(is_scoped(h.entry.id) for h in engine.search(SWAP, 10, since="2027", overlay=overlay))
    assert "house:#3" in [h.entry.id for h in engine.search(SWAP, 10, source="house", overlay=overlay)]
    other = engine.build_overlay("guild:2", [BOWS], 1)
    assert not any(is_scoped(h.entry.id) for h in engine.search(SWAP, 10, overlay=other))


def test_a_ruling_found_by_meaning_is_quoted_at_its_closest_paragraph(engine: Engine) -> None:
    two = ruling(5, "Event notes", "Sandwiches are sold at the counter.\n\n" + CASTLE.text, [])
    overlay = engine.build_overlay("guild:1", [two], 1)
    hit = next(h for h in engine.search(SWAP, 10, overlay=overlay) if h.entry.id == "house:#5")
    assert hit.paragraph == 1 and hit.quote.startswith("Strongholds")


def test_a_rebuild_embeds_only_what_changed(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = engine.embedder
    assert embedder is not None
    embedded: list[str] = []
    real = embedder.embed

    def counting(texts: list[str]):
        embedded.extend(texts)
        return real(texts)

    monkeypatch.setattr(embedder, "embed", counting)
    first = engine.build_overlay("guild:1", [DUEL, BOWS], 1)
    assert len(embedded) == 2
    edited = dataclasses.replace(BOWS, paragraphs=["Archer followers may make two Ranged Attacks per battle."])
    second = engine.build_overlay("guild:1", [DUEL, edited, CASTLE], 2, previous=first)
    assert len(embedded) == 4 and "Strongholds" in embedded[-1]  # the edit and the new ruling, nothing else
    assert second.unembedded == 0 and len(second.vectors) == 3
    # too many to embed now: published by words, filled in by a later build
    later = engine.build_overlay("guild:1", [DUEL, edited, CASTLE, LUNCH], 3, previous=second, embed_at_most=0)
    assert later.unembedded == 1 and len(embedded) == 4
    assert "house:#4" not in [h.entry.id for h in engine.search("when do we eat", 10, overlay=later)]
    filled = engine.build_overlay("guild:1", [DUEL, edited, CASTLE, LUNCH], 3, previous=later)
    assert filled.unembedded == 0 and len(embedded) == 5
    assert "house:#4" in [h.entry.id for h in engine.search("when do we eat", 10, overlay=filled)]

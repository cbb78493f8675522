"""Hybrid ranking: the shipped model, paragraph vectors in the build folder, the vector cache, the fallback
to words only, rarity-aware title matches, the cut-off and "nearest terms"."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from glossary.loader import SHIPPED_SOURCES
from index.build import lexical, vectors
from index.engine import Engine
from index.query import ranking, reorder
from index.text import embedding


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def ids(hits: list) -> list[str]:
    return [h.entry.id for h in hits]


def test_shipped_model_is_package_data_with_its_licence() -> None:
    folder = embedding.DEFAULT_MODEL
    for name in ("model.onnx", "tokenizer.json", "LICENSE", "README.md", "1_Pooling/config.json"):
        assert (folder / name).is_file(), name
    emb = embedding.load(folder)
    assert emb is not None and emb.dim == 384
    v = emb.embed(["A man is eating food.", "A man is eating a piece of bread.", "The new movie is awesome"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    # the model's README: 0.725 for the related pair, about -0.04 for the unrelated one
    assert v[0] @ v[1] > 0.65 and abs(v[0] @ v[2]) < 0.15
    # a vector depends on its text only: int8 activation scales are per call, so texts are never batched
    alone = emb.embed_query("A man is eating food.")
    assert np.array_equal(alone, v[0])
    long = "A man is eating food. " + "The rest of a long paragraph about Honor, Chi and Force. " * 12
    assert np.array_equal(emb.embed([long, "A man is eating food."])[1], alone)


def test_build_folder_holds_arrays_and_vectors(engine: Engine) -> None:
    st = engine._st
    assert st.index_path is not None and st.embedder is not None and st.vectors is not None
    for name in (lexical.FILE, vectors.FILE, vectors.META):
        assert (st.index_path / name).is_file(), name
    assert st.vectors.shape == (st.lex.n_units, 384)
    assert engine.stats()["embedding_model"] == "all-MiniLM-L6-v2-l5r-int8"


def test_lexical_arrays_agree_with_whoosh_postings(engine: Engine) -> None:
    st = engine._st
    lex = st.lex
    reader = st.searcher.reader()
    for term in ("terrain", "target", "honor", "seppuku"):
        t = lex.term_id[term]
        docs = lex.doc["body"][lex.ptr["body"][t] : lex.ptr["body"][t + 1]]
        assert len(docs) == reader.doc_frequency("body", term), term
        # paragraph postings point at paragraphs whose text holds the word
        units = lex.doc["para"][lex.ptr["para"][t] : lex.ptr["para"][t + 1]]
        for u in units[:5].tolist():
            entry = st.corpus.entries[lex.unit_entry[u]]
            assert term[:5] in entry.paragraphs[lex.unit_para[u]].lower()


def test_players_words_find_the_answering_paragraph(engine: Engine) -> None:
    hits = engine.search("are the little markers we put on cards considered cards")
    assert hits[0].entry.id == "glossary:token" and hits[0].paragraph == 0
    hits = engine.search("my opponent already has a swamp card on this battlefield, can I still play mine?")
    assert hits[0].entry.id == "glossary:terrain" and hits[0].paragraph == 1
    # changes keep their meaning: those dating the shown paragraph or the whole entry
    assert all(c.paragraph in (None, hits[0].paragraph) for c in hits[0].changes)


def test_common_title_words_do_not_pull_titles_up(engine: Engine) -> None:
    # "card" is everywhere: "Banned Cards" must not outrank the rule about copies
    got = ids(engine.search("how many copies of a card can I have"))
    assert got[0] == "obsidian-hand:ii-f-deck-restrictions" and "obsidian-hand:banned-cards" not in got
    # "hand" in "Obsidian Hand" must not pull up "C. Maximum Hand Size"
    got = ids(engine.search("is Moshi Eihime banned in Obsidian Hand", limit=15))
    assert got[0] == "obsidian-hand:banned-moshi-eihime" and "obsidian-hand:ii-c-maximum-hand-size" not in got
    # a dishonor question is not answered by the Honor ability
    got = ids(engine.search("how do I lose the game by dishonor", limit=15))
    assert "obsidian-hand:ability-honor" not in got and got[0] in (
        "obsidian-hand:ii-e-dishonor",
        "obsidian-hand:guideline-dishonor-victory",
    )


def test_title_share_scales_with_rarity(engine: Engine) -> None:
    st = engine._st
    card = st.lex.score({"card": 1.0}).title
    terrain = st.lex.score({"terrain": 1.0}).title
    assert terrain[st.order["glossary:terrain"]] > 3 * card[st.order["obsidian-hand:banned-cards"]]


def test_cut_off_does_not_pad_and_unanswerable_says_so(engine: Engine) -> None:
    assert len(engine.search("how many copies of a card can I have", limit=15)) < 5
    assert engine.search("how do I bake sourdough bread", limit=15) == []
    assert engine.search("what is the weather in paris", limit=15) == []  # "weather" is a typo of "water"
    near = engine.nearest_terms("what is the weather in paris")
    assert 1 <= len(near) <= 5


def test_close_questions_are_never_refused_by_the_floor(engine: Engine) -> None:
    st = engine._st
    for q in ("terrain", "face-down", "seppuku", "Moshi Eihime"):
        ev = ranking.evidence(st, q)
        assert ev is not None and ranking.is_close(ev), q


def test_model_off_ranks_by_words_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(embedding.ENV_MODEL, "off")
    eng = Engine.open([SHIPPED_SOURCES], tmp_path / "ix")
    try:
        assert eng._st.embedder is None and eng._st.vectors is None
        assert not (eng._st.index_path / vectors.FILE).exists()
        assert ids(eng.search("is a terrain an enemy card?"))[0] == "glossary:terrain"
        assert eng.stats()["embedding_model"] is None
    finally:
        eng.close()


def test_broken_model_logs_one_line_and_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    shutil.copy(embedding.DEFAULT_MODEL / "tokenizer.json", broken / "tokenizer.json")
    (broken / "model.onnx").write_bytes(b"this is not an onnx file")
    monkeypatch.setenv(embedding.ENV_MODEL, str(broken))
    with caplog.at_level(logging.WARNING, logger="index"):
        eng = Engine.open([SHIPPED_SOURCES], tmp_path / "ix")
    try:
        lines = [r.getMessage() for r in caplog.records if "embedding model" in r.getMessage()]
        assert len(lines) == 1 and "ranking by words only" in lines[0] and "\n" not in lines[0]
        assert eng._st.embedder is None
        hits = eng.search("can a simultaneous ranged attack kill a follower and its personality?")
        assert hits and hits[0].entry.id == "glossary:ranged-attack"
    finally:
        eng.close()


def test_model_change_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index_copy: Callable[..., Path]
) -> None:
    ixdir = index_copy(tmp_path / "ix")  # its vector cache spares embedding again after the model comes back
    monkeypatch.setenv(embedding.ENV_MODEL, "off")
    eng = Engine.open([SHIPPED_SOURCES], ixdir)
    off_fp = eng.stats()["fingerprint"]
    eng.close()
    monkeypatch.delenv(embedding.ENV_MODEL)
    eng = Engine.open([SHIPPED_SOURCES], ixdir)
    try:
        assert eng.stats()["rebuilt"] and eng.stats()["fingerprint"] != off_fp
        assert eng._st.vectors is not None
    finally:
        eng.close()


def test_rebuild_embeds_only_changed_paragraphs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index_copy: Callable[..., Path]
) -> None:
    src = tmp_path / "src"
    shutil.copytree(SHIPPED_SOURCES, src)
    ixdir = index_copy(tmp_path / "ix")
    eng = Engine.open([src], ixdir)
    eng.close()
    embedded: list[str] = []
    real = embedding.Embedder.embed

    def counting(self: embedding.Embedder, texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(embedding.Embedder, "embed", counting)
    page = next(p for p in sorted(src.iterdir()) if "Terrain" in p.read_text("utf-8"))
    text = page.read_text("utf-8")
    page.write_text(text.replace("no player can play another Terrain there", "no player can play a Terrain there"))
    eng = Engine.open([src], ixdir)
    try:
        assert eng.stats()["rebuilt"]
        assert len(embedded) == 1 and "no player can play a Terrain there" in embedded[0], embedded
        assert eng._st.vectors.shape[0] == eng._st.lex.n_units
    finally:
        eng.close()


def test_damaged_arrays_rebuild(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, index_copy: Callable[..., Path]
) -> None:
    ixdir = index_copy(tmp_path / "ix")
    eng = Engine.open([SHIPPED_SOURCES], ixdir)
    path = eng._st.index_path
    eng.close()
    (path / lexical.FILE).write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger="index"):
        eng = Engine.open([SHIPPED_SOURCES], ixdir)
    try:
        assert eng.stats()["rebuilt"] and eng._st.index_path != path
        assert any("unreadable" in r.getMessage() for r in caplog.records)
        assert ids(eng.search("is a terrain an enemy card?"))[0] == "glossary:terrain"
    finally:
        eng.close()


def test_filters_apply_to_the_fused_ranking(engine: Engine) -> None:
    hits = engine.search("can my courtier kill himself to cut down an honor loss", limit=10, source="glossary")
    assert hits and all(h.entry.source == "glossary" for h in hits)
    hits = engine.search("terrain", limit=10, since="2016")
    assert all(h.entry.source == "obsidian-hand" for h in hits)


def test_the_fuller_copy_of_a_rule_stated_twice_is_quoted_first(engine: Engine) -> None:
    """The Obsidian Hand states Seppuku's protection twice; only the guidelines' copy has the exception ("unless
    the action explicitly interacts with Seppuku"). Both copies are results: the fuller one leads, the other
    follows."""
    hits = engine.search("can opp negate my seppuku?")
    assert (hits[0].entry.id, hits[0].paragraph) == ("obsidian-hand:guideline-player-abilities", 3)
    assert hits[0].entry.paragraphs[3].endswith("unless the action explicitly interacts with Seppuku.")
    assert ("obsidian-hand:ability-seppuku", 1) in [(h.entry.id, h.paragraph) for h in hits[1:]]
    # the guidelines' "• Seppuku – Repeatable Reaction: ..." is the ability's first line with its name: not fuller
    hits = engine.search(
        "opp's action targets my samurai and makes me lose 4 honor. if he kills himself in response how much honor "
        "do i lose"
    )
    assert (hits[0].entry.id, hits[0].paragraph) == ("obsidian-hand:ability-seppuku", 0)


def test_the_rule_on_the_condition_a_still_question_sets_comes_first(engine: Engine) -> None:
    """"I have a Wind in play, can I still ...?": the words after "still" describe Favor Battle, but the condition
    before it is what answers: Winds' "you may not take rulebook Favor actions", its sentence marked."""
    q = "i have a wind in play, can i still discard the imperial favor to send an attacking unit home?"
    hits = engine.search(q)
    assert [(h.entry.id, h.paragraph) for h in hits[:2]] == [
        ("obsidian-hand:iii-a-winds", 2),
        ("obsidian-hand:ability-favor-battle", 0),
    ]
    text = hits[0].entry.paragraphs[2]
    assert [text[a:b] for a, b in hits[0].sentence_spans] == [
        "While you have a Wind in play, you may not take rulebook Favor actions (see Player Abilities and Traits)."
    ]
    # without a condition set up before "still", the ability asked about stays first
    assert engine.search("can i discard the imperial favor to send an attacking unit home?")[0].entry.id == (
        "obsidian-hand:ability-favor-battle"
    )


def test_condition_words_are_the_words_before_still() -> None:
    assert reorder.condition_words("I have a Wind in play, can I still discard the Favor?") >= {"wind"}
    assert "discard" not in reorder.condition_words("I have a Wind in play, can I still discard the Favor?")
    assert reorder.condition_words("can i discard the favor with a wind in play?") == set()

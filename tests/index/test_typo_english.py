"""Typo correction leaves plain English alone: "good" is not a typo of "gold", "targt" still is one of "target"."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES
from index.build.state import State
from index.engine import Engine
from index.query import parsing
from index.text import embedding, english


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


@pytest.fixture
def no_english(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The English list unavailable (its file missing): correction as it was before the check."""
    monkeypatch.setattr(english, "SOURCE", tmp_path / "no-tokenizer.json")


def terms(st: State, question: str) -> dict[str, float]:
    return parsing.query_terms(st, question)[0]


def test_shipped_list_is_whole_english_words() -> None:
    words = english.vocabulary(english.SOURCE)
    assert len(words) > 20000
    assert {"good", "weather", "whether", "castle", "honour"} <= words
    assert not any(w.startswith("#") or not w.isalpha() for w in words)
    assert not {"targt", "terain", "dishonr", "persnality"} & words


def test_english_words_are_not_corrected(engine: Engine) -> None:
    st = engine._st
    # The rules have near neighbours for both words, so only the English check keeps them as typed.
    assert parsing.correct(st, "good") == ["gold"]
    assert set(parsing.correct(st, "weather")) == {"water", "whether"}
    assert terms(st, "is it good to bow my personality") == {"bow": 1.0, "person": 1.0}
    assert terms(st, "does the weather matter in a battle") == {"battl": 1.0}


def test_real_typos_are_still_corrected(engine: Engine) -> None:
    st = engine._st
    assert terms(st, "targt") == {"target": parsing.FUZZY_WEIGHT}
    assert terms(st, "terain") == {"terrain": parsing.FUZZY_WEIGHT}
    assert terms(st, "dishonr") == {"dishonor": parsing.FUZZY_WEIGHT}
    assert terms(st, "can a persnality hold an atachment") == {
        "person": parsing.FUZZY_WEIGHT,
        "hold": 1.0,
        "attach": parsing.FUZZY_WEIGHT,
    }


def test_british_spellings_are_the_rules_words(engine: Engine) -> None:
    st = engine._st
    assert english.american("honour") == ["honor"]
    assert english.american("dishonoured") == ["dishonored"]
    assert english.american("specialised") == ["specialized"]
    for word in ("four", "hour", "scour", "source", "rise", "raise"):
        assert english.american(word) == [], word
    # "honour" is an English word, so it is not typo-corrected; it is the rules' "honor", in full.
    assert terms(st, "what does honour mean") == {"honor": 1.0}
    assert terms(st, "a dishonoured personality") == {"dishonor": 1.0, "person": 1.0}


def marked(hit) -> set[str]:  # type: ignore[no-untyped-def]
    """The words a hit marks in its quote (the question's words as found there), lower-cased."""
    return {hit.quote[a:b].lower() for a, b in hit.spans}


def test_good_in_a_question_does_not_bring_gold_rules(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = ("is it good to ambush?", "is a good personality worth recruiting?")
    for q in questions:
        hits = engine.search(q)
        assert not any("gold" in marked(h) for h in hits), q
    # What the same questions answered without the check: entries found through "gold" alone.
    monkeypatch.setattr(english, "SOURCE", Path("/nonexistent/tokenizer.json"))
    before = {q: engine.search(q) for q in questions}
    gold_before = {q: [h.entry.id for h in hits if "gold" in marked(h)] for q, hits in before.items()}
    # "good" read as "gold" found gold rules (for both questions with the stock model; with the tuned one of
    # 2026-11-27 the ambush question's answers no longer include one, the recruiting question's still do)
    assert gold_before["is a good personality worth recruiting?"], gold_before
    monkeypatch.undo()
    for q in questions:  # with the check: the same questions, and no hit quoted for its gold any more
        assert not any("gold" in marked(h) for h in engine.search(q)), q
    # the recruiting rule is among the answers (first before the 923 kept questions of 2026-11-26; now Reserve,
    # whose text recruits a Personality, leads this vague question)
    assert "obsidian-hand:ability-recruit" in [h.entry.id for h in engine.search(questions[1])]


def test_missing_list_corrects_as_before(engine: Engine, no_english: None, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="index"):
        assert terms(engine._st, "is it good") == {"gold": parsing.FUZZY_WEIGHT}
        assert terms(engine._st, "targt") == {"target": parsing.FUZZY_WEIGHT}
    warned = [r.getMessage() for r in caplog.records if "English word list" in r.getMessage()]
    assert len(warned) == 1 and "no-tokenizer.json" in warned[0]


def test_model_off_keeps_the_english_check(words_only_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``L5R_EMBEDDING_MODEL=off`` turns off the model, not the word list shipped beside it."""
    monkeypatch.setenv(embedding.ENV_MODEL, "off")
    eng = Engine.open([SHIPPED_SOURCES], words_only_index)
    try:
        assert eng._st.embedder is None
        assert terms(eng._st, "is it good to bow") == {"bow": 1.0}
        assert terms(eng._st, "terain") == {"terrain": parsing.FUZZY_WEIGHT}
    finally:
        eng.close()

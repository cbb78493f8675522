"""A server's confirmed questions (``index.query.overlay.Kept``): the question and a paraphrase quote the confirmed
paragraph first, other questions and other servers are unchanged, and a pair whose paragraph text changed is
dropped as a shipped kept question is."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.build.asked import digest
from index.engine import Engine
from index.query.overlay import Kept

HAND = "obsidian-hand:ii-c-maximum-hand-size"


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Engine:
    return Engine.open(None, default_index)


def first(engine: Engine, question: str, **kwargs: object) -> tuple[str, int | None]:
    hit = engine.search(question, **kwargs)[0]  # type: ignore[arg-type]
    return hit.entry.id, hit.paragraph


def test_a_confirmed_question_and_its_paraphrase_quote_the_confirmed_paragraph_first(engine: Engine) -> None:
    entry = engine.get(HAND)
    assert entry is not None
    assert first(engine, "max hand size") == (HAND, 1)  # the ranking's own pick: the paragraph after
    overlay = engine.build_overlay("guild:1", [], 1, kept=[Kept("max hand size", HAND, 0, digest(entry.paragraphs[0]))])
    assert len(overlay.kept) == 1 and overlay.unembedded == 0
    assert first(engine, "max hand size", overlay=overlay) == (HAND, 0)
    assert first(engine, "hand size limit", overlay=overlay) == (HAND, 0)  # a paraphrase (cosine 0.89)
    assert first(engine, "starting hand size", overlay=overlay) == first(engine, "starting hand size")  # 0.79
    assert first(engine, "is a terrain an enemy card", overlay=overlay) == first(engine, "is a terrain an enemy card")
    hit = engine.search("max hand size", overlay=overlay)[0]
    assert hit.quote == entry.paragraphs[0] and hit.spans  # the question's words are marked in it
    assert first(engine, "max hand size") == (HAND, 1)  # without the server's overlay: unchanged


def test_a_pair_whose_paragraph_changed_or_is_gone_is_dropped(engine: Engine) -> None:
    overlay = engine.build_overlay("guild:1", [], 1, kept=[
        Kept("max hand size", HAND, 0, "0" * 16),  # the text it was confirmed for is not the text now
        Kept("max hand size", HAND, 9, None),  # no such paragraph
        Kept("max hand size", "glossary:no-such-entry", 0, None),
    ])  # fmt: skip
    assert overlay.kept == ()
    assert first(engine, "max hand size", overlay=overlay) == (HAND, 1)


def test_the_same_words_count_without_the_model(words_only_index: Path) -> None:
    words = Engine.open(None, words_only_index, model=None)
    overlay = words.build_overlay("guild:1", [], 1, kept=[Kept("Max hand size", HAND, 0, None)])
    assert overlay.kept_vectors is None
    assert first(words, "max  hand SIZE", overlay=overlay) == (HAND, 0)
    assert first(words, "hand size limit", overlay=overlay) == first(words, "hand size limit")

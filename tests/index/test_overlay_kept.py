"""A server's confirmed questions (``index.query.overlay.Kept``): the question and a paraphrase quote the confirmed
paragraph first, other questions and other servers are unchanged, and a pair whose paragraph text changed is
dropped as a shipped kept question is."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.build.asked import digest
from index.engine import Engine
from index.query.overlay import Kept

EXP = "glossary:experienced"
# The ranking quotes Experienced paragraph 13 (non-unique versions) where paragraph 8 (line 49) answers it.
QUESTION = "can I run the experienced and non-experienced versions of the same unique personality in one deck"
PARAPHRASE = "can one deck hold both the unique experienced and non-experienced version of a personality"
OTHER = "when can an experienced personality overlay the one I have in play"  # the same entry, another question


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Engine:
    return Engine.open(None, default_index)


def first(engine: Engine, question: str, **kwargs: object) -> tuple[str, int | None]:
    hit = engine.search(question, **kwargs)[0]  # type: ignore[arg-type]
    return hit.entry.id, hit.paragraph


def test_a_confirmed_question_and_its_paraphrase_quote_the_confirmed_paragraph_first(engine: Engine) -> None:
    entry = engine.get(EXP)
    assert entry is not None
    assert first(engine, QUESTION) == (EXP, 12)  # the ranking's own pick: a paragraph on non-unique versions
    assert first(engine, PARAPHRASE) == (EXP, 12)
    overlay = engine.build_overlay("guild:1", [], 1, kept=[Kept(QUESTION, EXP, 7, digest(entry.paragraphs[7]))])
    assert len(overlay.kept) == 1 and overlay.unembedded == 0
    assert first(engine, QUESTION, overlay=overlay) == (EXP, 7)
    assert first(engine, PARAPHRASE, overlay=overlay) == (EXP, 7)  # a paraphrase
    assert first(engine, OTHER, overlay=overlay) == first(engine, OTHER)
    assert first(engine, "is a terrain an enemy card", overlay=overlay) == first(engine, "is a terrain an enemy card")
    hit = engine.search(QUESTION, overlay=overlay)[0]
    assert hit.quote == entry.paragraphs[7] and hit.spans  # the question's words are marked in it
    assert first(engine, QUESTION) == (EXP, 12)  # without the server's overlay: unchanged


def test_a_pair_whose_paragraph_changed_or_is_gone_is_dropped(engine: Engine) -> None:
    overlay = engine.build_overlay("guild:1", [], 1, kept=[
        Kept(QUESTION, EXP, 7, "0" * 16),  # the text it was confirmed for is not the text now
        Kept(QUESTION, EXP, 99, None),  # no such paragraph
        Kept(QUESTION, "glossary:no-such-entry", 0, None),
    ])  # fmt: skip
    assert overlay.kept == ()
    assert first(engine, QUESTION, overlay=overlay) == (EXP, 12)


def test_the_same_words_count_without_the_model(words_only_index: Path) -> None:
    words = Engine.open(None, words_only_index, model=None)
    overlay = words.build_overlay("guild:1", [], 1, kept=[Kept(QUESTION.upper(), EXP, 7, None)])
    assert overlay.kept_vectors is None
    said = "  ".join(QUESTION.split(" ", 3))  # other spacing: the same words
    assert first(words, said) != (EXP, 7)
    assert first(words, said, overlay=overlay) == (EXP, 7)
    assert first(words, PARAPHRASE, overlay=overlay) == first(words, PARAPHRASE)  # other words: no model, no match


# no loaded rule says; the question used before (gaining honor for destroying a province) is shipped as not
# covered since 2026-11-27 (night), so a server's confirmation no longer changes its answer
DUEL_HONOR = "do I gain honor when my personality wins a duel"
DUEL_HONOR_AGAIN = "does winning a duel give honor"


def test_a_question_confirmed_as_not_covered_says_so_in_that_server_only(engine: Engine) -> None:
    """A judge's "the loaded rules do not answer it": the question and a paraphrase keep their results, which
    now say they are like that question (so the answer says no rule stands out); other questions and servers
    are unchanged. The closest confirmed question decides: a paragraph pair closer to the question still leads."""
    plain = engine.search(DUEL_HONOR)
    assert plain[0].entry.id == "glossary:result-of-a-duel" and plain[0].like_unanswered is None
    overlay = engine.build_overlay("guild:1", [], 1, kept=[Kept(DUEL_HONOR, None, None)])
    assert len(overlay.kept) == 1 and overlay.unembedded == 0
    for question in (DUEL_HONOR, DUEL_HONOR_AGAIN):
        hits = engine.search(question, overlay=overlay)
        assert [h.entry.id for h in hits] == [h.entry.id for h in engine.search(question)]  # nothing moves
        assert hits[0].like_unanswered == DUEL_HONOR, question
    assert engine.search("what is the focus value of a card", overlay=overlay)[0].like_unanswered is None
    assert engine.search(DUEL_HONOR)[0].like_unanswered is None  # without the server's overlay
    entry = engine.get(EXP)
    assert entry is not None
    both = engine.build_overlay("guild:1", [], 1, kept=[
        Kept(DUEL_HONOR, None, None), Kept(QUESTION, EXP, 7, digest(entry.paragraphs[7])),
    ])  # fmt: skip
    assert first(engine, QUESTION, overlay=both) == (EXP, 7)
    assert engine.search(QUESTION, overlay=both)[0].like_unanswered is None
    assert engine.search(DUEL_HONOR, overlay=both)[0].like_unanswered == DUEL_HONOR

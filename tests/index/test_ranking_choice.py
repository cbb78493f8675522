"""Ranking features added after the hybrid search: thesaurus expansion of players' words, the choice of an
entry's answering paragraph without its own title words, and the evaluation that tunes and checks them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks.quality import evaluate, training
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine
from index.query import passages, ranking
from index.text import expansion
from index.text.analysis import fold
from index.text.thesaurus import PLAYER_TO_RULES


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


def top(
    engine: Engine, question: str, w: ranking.Weights, choose: bool = True, limit: int = 3
) -> list[tuple[str, int]]:
    st = engine._st
    ev = ranking.evidence(st, question)
    assert ev is not None
    fused, by = ranking.fuse_and_choose(st, ev, w)
    return [(st.ids[n], p) for n, p, _s in ranking.group(st, fused, limit, by if choose else None)]


# -- the thesaurus and query expansion ---------------------------------------------------------------------


def test_thesaurus_is_plain_folded_data() -> None:
    for key, values in PLAYER_TO_RULES.items():
        assert key == key.lower() and fold(key), key
        assert values and all(isinstance(v, str) and v for v in values), key
        assert fold(key) not in {fold(v) for v in values}, key  # expansion adds words, never the same ones


def test_rule_phrases_match_whole_words_longest_first() -> None:
    assert expansion.rule_phrases("Is it on the Forbidden List?") == ["banned"]
    assert expansion.rule_phrases("my CASTLE's money") == ["stronghold", "gold"]
    # a phrase key wins over its words, and a word inside another word is no match
    assert expansion.rule_phrases("what about the card name") == ["title"]
    assert expansion.rule_phrases("a coinage of landscapes") == []
    assert expansion.rule_phrases("errata'd text") == ["oracle"]
    assert expansion.rule_phrases("") == []


def test_a_signed_number_before_a_stat_is_a_bonus_or_a_penalty() -> None:
    assert expansion.rule_phrases("he gets +3 ph, later -2F") == ["personal honor", "bonus", "penalty"]
    assert expansion.rule_phrases("gives \u22121 chi") == ["penalty"]
    # with a stat named anywhere, a bare signed number changes it too; a score, a range, a date, gold and Honor do not
    assert expansion.rule_phrases("his force can't rise above 5. +3 from an item, then he takes -2.") == [
        "bonus", "penalty"]
    assert expansion.signed_changes("my family honor is at -20") == []
    assert expansion.signed_changes("his force drops to -2") == []
    assert expansion.signed_changes("a 1-3 force range, the 10-20-2015 update") == []
    assert expansion.signed_changes("do i pay +2 gold for his force 3 guy, or -2 honor?") == []
    assert expansion.signed_changes("i pay +2 for a crab personality") == []  # no stat named: a cost, not a bonus


def test_a_bonus_and_penalty_in_numbers_reach_the_example_that_rules_on_them(engine: Engine) -> None:
    """Seen in three judge sets: "+3 ph, later -2 ph" is a bonus cut by the limit and a later penalty, which the
    example under the rule settles (Raise/rise line 8: the lost part "does not count against any future
    penalties"); the question words alone quoted the rule and its one-line example (lines 5-6)."""
    for question in (
        "my guy has 4 ph and a trait 'ph cannot rise above 5'. he gets +3 ph, later -2 ph. is he at 3 or still 5?",
        "dude is 4F, +3 from an item but some effect says his force cannot rise above 5. later he takes -2. is he 3 "
        "or 5??",
    ):
        hit = engine.search(question)[0]
        quoted = {hit.paragraph, hit.companion.paragraph if hit.companion else None}
        assert hit.entry.id == "glossary:raise-rise" and 3 in quoted, question


def test_expansion_is_evidence_of_its_own(engine: Engine) -> None:
    st = engine._st
    ev = ranking.evidence(st, "does my teacher card go in the fate deck")
    assert ev is not None and ev.expanded is not None
    assert "sensei" not in ev.terms and ev.expanded.title[st.order["obsidian-hand:iii-a-senseis"]] > 0
    # by words alone the rule words lift the Senseis entry into the first two; without them it ranks lower
    # (with the model, its evidence reaches it too)
    question, sensei_id = "does my teacher card go in the fate deck", "obsidian-hand:iii-a-senseis"
    assert top(engine, question, ranking.DEFAULT)[0][0] == sensei_id
    unexpanded = replace(ranking.WORDS_ONLY, expand_para=0.0, expand_body=0.0, expand_title=0.0)
    with_words = [n for n, _p in top(engine, question, ranking.WORDS_ONLY, limit=10)]
    without = [n for n, _p in top(engine, question, unexpanded, limit=10)] + [sensei_id]
    assert with_words.index(sensei_id) <= 1 < without.index(sensei_id)
    # a question in rule words only gets nothing added
    plain = ranking.evidence(st, "what is the gold production of a stronghold")
    assert plain is not None and plain.expanded is None


def test_players_words_alone_still_answer(engine: Engine) -> None:
    # every question word is a player's word: the thesaurus' words are the only word evidence, and a word it
    # knows counts as a rule word for the "nothing close" check (a typo-corrected word does not)
    ev = ranking.evidence(engine._st, "teacher")
    assert ev is not None and ev.known == 1 and ev.n_content == 1
    hits = engine.search("teacher")
    assert hits and hits[0].entry.id == "obsidian-hand:iii-a-senseis"


# -- the answering paragraph -------------------------------------------------------------------------------


def test_own_title_words_are_told_apart(engine: Engine) -> None:
    st = engine._st
    comps = st.lex.score({"rang": 1.0, "attack": 1.0})
    assert comps.para_own is not None
    ranged = [u for u in range(st.lex.n_units) if st.ids[st.lex.unit_entry[u]] == "glossary:ranged-attack"]
    assert np.allclose(comps.para_own[ranged], comps.para[ranged]) and comps.para[ranged].min() > 0
    # Cardinal Rule 1 speaks of Ranged Attacks without being titled so: its matches are its own evidence
    rule1 = [u for u in range(st.lex.n_units) if st.ids[st.lex.unit_entry[u]] == "obsidian-hand:cardinal-rule-1"]
    assert comps.para[rule1].max() > 0 and comps.para_own[rule1].max() == 0


@pytest.mark.parametrize(
    ("question", "entry_id", "paragraph"),
    [
        ("what is a ranged attack", "glossary:ranged-attack", 0),
        ("does a token count as a card", "glossary:token", 0),
    ],
)
def test_title_words_do_not_choose_the_paragraph(engine: Engine, question: str, entry_id: str, paragraph: int) -> None:
    assert top(engine, question, ranking.DEFAULT)[0] == (entry_id, paragraph)
    hit = engine.search(question)[0]
    assert (hit.entry.id, hit.paragraph) == (entry_id, paragraph)
    # counted in, the title words would favour the paragraphs that repeat the title most
    st = engine._st
    ev = ranking.evidence(st, question)
    assert ev is not None
    feats, own = ranking.features(st, ev)
    para = ranking.FEATURES.index("para")
    units = np.flatnonzero(st.lex.unit_entry == st.order[entry_id])
    assert own[units, 0].max() > 0 and np.allclose(ranking.choice_features(feats, own)[units, para],
                                                   feats[units, para] - own[units, 0])


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        # Resolve's paragraph 5 states the Ranged Attack rule word for word ("4. A Ranged Attack itself ...")
        ("when does a ranged attack resolve", {("glossary:ranged-attack", 9), ("glossary:resolve", 5)}),
        ("is ranged attack a keyword", {("glossary:ranged-attack", 8)}),
        ("can a terrain be an enemy card", {("glossary:terrain", 2)}),
    ],
)
def test_other_words_still_choose_a_later_paragraph(
    engine: Engine, question: str, answers: set[tuple[str, int]]
) -> None:
    hit = engine.search(question)[0]
    assert (hit.entry.id, hit.paragraph) in answers


# -- the evaluation ---------------------------------------------------------------------------------------


def test_fitting_scores_agree_with_the_ranking_itself(engine: Engine) -> None:
    """The ranks the fit and the cross-validation use (``training.ranks`` on ``features``) are those of
    ``fuse`` + ``group``, for the shipped weights and for random ones."""
    data = evaluate.load_eval()
    data = {"search": data["search"][::5], "paraphrased": data["paraphrased"][::5]}
    questions = evaluate._questions(engine, data)
    feats, _choice = evaluate._feature_stack(engine, questions)
    expected = np.array([q.expected for q in questions])
    st = engine._st
    rng = np.random.default_rng(3)
    for w in [ranking.DEFAULT, *(ranking.DEFAULT.with_vector(rng.random(len(ranking.FEATURES))) for _ in range(5))]:
        ranks = training.ranks(feats, w.vector(), expected, st.lex.entry_starts)
        got, _paras = evaluate._mode_rankings(engine, questions, w, shapes=False)
        for i, qu in enumerate(questions):
            exp = st.ids[qu.expected]
            assert (got[i].index(exp) + 1 if exp in got[i] else 11) == min(ranks[i], 11), (w, qu.q)


def test_held_out_sets_are_scored_beside_what_each_change_replaced(engine: Engine) -> None:
    result = evaluate.run_heldout(engine)
    assert set(result) == {"paraphrased", "named"}
    para, named = result["paraphrased"], result["named"]
    assert para["shipped"]["n"] >= 30 and named["shipped"]["n"] >= 30
    # figures reached when these were written (the sets were never tuned on): no silent regression
    # the thesaurus added top-1 here until the model was tuned on the folded questions (2026-11-27, night); it
    # still adds top-3
    assert para["shipped"]["top1"] >= para["without thesaurus"]["top1"]
    assert para["shipped"]["top3"] > para["without thesaurus"]["top3"]
    assert named["shipped"]["top1_paragraph"] >= named["best fused paragraph"]["top1_paragraph"]
    text = evaluate.format_eval({**evaluate.run_eval(engine, tune=False), "heldout": result})
    assert "held-out set 'named'" in text and "without thesaurus" in text


def test_a_hit_analyses_only_the_paragraph_it_quotes(engine: Engine) -> None:

    st = engine._st
    entry = st.by_id["glossary:experienced"]  # twenty paragraphs
    st.para_tokens.pop(entry.id, None)
    st.one_para_tokens.clear()
    hit = passages.make_hit(st, entry, 1.0, {"overlay": 1.0}, paragraph=13)
    assert hit.paragraph == 13 and "overlay" in [hit.quote[a:b].lower() for a, b in hit.spans]
    assert entry.id not in st.para_tokens and list(st.one_para_tokens) == [(entry.id, 13)]
    # without a chosen paragraph every paragraph is analysed (the best one is picked from them)
    best = passages.make_hit(st, entry, 1.0, {"overlay": 1.0})
    assert entry.id in st.para_tokens and "overlay" in [best.quote[a:b].lower() for a, b in best.spans]
    assert st.paragraph_tokens_at(entry, 13) == st.para_tokens[entry.id][13]


# -- questions answered as the lookups would answer them ----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "entry_id"),
    [
        ("what is my maximum hand size", "obsidian-hand:ii-c-maximum-hand-size"),
        ("what's a ranged attack?", "glossary:ranged-attack"),
        ("define terrain", "glossary:terrain"),
        ("what does enemy mean", "glossary:enemy"),
        ("max hand size", "obsidian-hand:ii-c-maximum-hand-size"),  # only a name (a short form of it): its definition
        ("terrain", "glossary:terrain"),
    ],
)
def test_what_is_a_name_quotes_its_definition(engine: Engine, question: str, entry_id: str) -> None:
    ev = ranking.evidence(engine._st, question)
    assert ev is not None and engine._st.ids[ev.defines] == entry_id
    hit = engine.search(question)[0]
    assert (hit.entry.id, hit.paragraph) == (entry_id, 0)


@pytest.mark.parametrize(
    "question",
    ["what is the focus value of a card", "can a terrain be an enemy card", "what is honor", "honor"],
)
def test_other_questions_are_not_definitions(engine: Engine, question: str) -> None:
    # more than a name, not a "what is" question, or a name several entries share ("Honor"): ranked as usual
    ev = ranking.evidence(engine._st, question)
    assert ev is not None and ev.defines == -1


def test_a_ban_question_naming_a_banned_card_answers_with_its_line(engine: Engine) -> None:
    banned = "obsidian-hand:banned-moshi-eihime"
    for question in ("is moshi eihime banned in obsidian hand", "Moshi Eihime legal?"):
        ev = ranking.evidence(engine._st, question)
        assert ev is not None and ev.asks_ban
        assert [h.entry.id for h in engine.search(question)][:2] == [banned, "obsidian-hand:update-2016-02-15"]
    ev = ranking.evidence(engine._st, "what does moshi eihime do")
    assert ev is not None and not ev.asks_ban


def test_a_long_paste_counts_the_model_for_the_part_it_read(engine: Engine) -> None:
    short = ranking.evidence(engine._st, "is a terrain an enemy card")
    long = ranking.evidence(engine._st, ("noise " * 900) + "terrain")
    assert short is not None and long is not None
    assert short.read == 1.0 and 0.2 < long.read < 0.4
    feats, _own = ranking.features(engine._st, long)
    assert feats[:, ranking.FEATURES.index("asked")].max() == pytest.approx(long.read)


def test_a_change_question_naming_an_entry_answers_with_the_update_that_changed_it(engine: Engine) -> None:
    hits = engine.search("When was the Naval Invasion ability changed?")
    assert [h.entry.id for h in hits][:2] == ["obsidian-hand:update-2015-10-27", "obsidian-hand:ability-naval-invasion"]
    ev = ranking.evidence(engine._st, "what does Naval Invasion do?")
    assert ev is not None and not ev.asks_change  # no change word: ranked as usual
    assert engine.search("what does Naval Invasion do?")[0].entry.id == "obsidian-hand:ability-naval-invasion"
    # a glossary entry dates itself (its stamps): nothing is put before it
    ev = ranking.evidence(engine._st, "has terrain been changed?")
    assert ev is not None and ev.asks_change and engine.search("has terrain been changed?")[0].entry.id == (
        "glossary:terrain"
    )


@pytest.mark.parametrize(
    ("question", "entry_id", "paragraph"),
    [
        # For each's first paragraph quotes "Gain 1 Honor for each Samurai you control" whole and rules it one gain;
        # the second says "three separate ... Honor gains" of a differently worded card (issue 17)
        ("gain 1 honor for each samurai I control - is that three separate honor gains?", "glossary:for-each", 0),
        # only Fall's item 1. says "cannot fall below"; the opening paragraph says "cannot fall" (issue 17)
        ("my guy's force 'cannot fall below 2', he's at 4 and takes -3, what's his force", "glossary:fall", 1),
    ],
)
def test_the_paragraph_that_repeats_the_players_quotation_is_quoted(
    engine: Engine, question: str, entry_id: str, paragraph: int
) -> None:
    hit = engine.search(question)[0]
    assert (hit.entry.id, hit.paragraph) == (entry_id, paragraph)


def test_a_quotation_run_needs_words_beyond_the_entrys_name() -> None:
    from index.query import phrases

    said = phrases.words("what is entering-play honor loss?")
    seeds = phrases.grams(said)
    paragraph = phrases.words("Entering-play honor loss is applied when a card enters play.")
    assert phrases.longest_run(said, seeds, paragraph) == 4
    assert phrases.longest_run(said, seeds, paragraph, frozenset(phrases.words("Entering-play honor loss"))) == 0
    assert phrases.longest_run(said, seeds, phrases.words("of the is a")) == 0  # stop words are no quotation


def test_two_close_paragraphs_are_quoted_together_in_source_order(engine: Engine) -> None:
    """"How many cards must each of the dynasty and fate decks have?": the chooser puts the line that answers
    ("2 decks, each containing at least 40 cards each", paragraph 3, line 345) barely ahead of the Dynasty Deck
    line (paragraph 4, line 346); until the read sets were folded (2026-11-28, session 31) it was the other way
    round. Too close to call either way: the first result quotes both, in source order, each with its own line.
    A clear choice quotes one paragraph, and the issue's "three separate honor gains?" case does not bring the
    opposite ruling along. (Until the model was tuned again on the folded questions, 2026-11-27 night,
    "what's the minimum deck size for dynasty and fate in this format" was this case; it now chooses line 345.)"""
    from bot.app.judge import Judge
    from tests.rendering import to_text

    asked = "How many cards must each of the dynasty and fate decks have?"
    hit = engine.search(asked)[0]
    assert (hit.entry.id, hit.paragraph) == ("obsidian-hand:ii-f-the-play-deck-and-deck-construction", 2)
    assert hit.companion is not None and hit.companion.paragraph == 3
    shown = to_text(Judge(engine).ask(asked))
    first = shown[shown.index("1. ") : shown.index("2. ")]
    assert first.index("at least 40 cards each") < first.index("Black-backed Dynasty cards")
    assert "paragraph 3, line 345" in first and "paragraph 4, line 346" in first
    for clear in ("gain 1 honor for each samurai I control - is that three separate honor gains?", "max hand size"):
        assert engine.search(clear)[0].companion is None, clear

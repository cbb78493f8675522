"""Pointing at the sentence (issue 17): sentences of a quoted paragraph, the one that answers, and the rule
paragraph an example illustrates, quoted with it."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import parent_item
from index.build import vectors
from index.engine import Engine
from index.query.passages import companion, lead_in
from index.query.sentences import answering, case_asked, closest, parallel, split
from index.text.sentence_spans import worded


def pieces(text: str) -> list[str]:
    return [text[a:b] for a, b in split(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Follow the card. Then the rule.", ["Follow the card.", "Then the rule."]),
        ("Use e.g. a Follower, i.e. a card vs. a Personality. Done!",
         ["Use e.g. a Follower, i.e. a card vs. a Personality.", "Done!"]),
        ("3. Draw a card. Then discard.", ["3. Draw a card.", "Then discard."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("Wait... and then go. Wait... Then go.", ["Wait... and then go.", "Wait...", "Then go."]),
        ("Rule 4.2 applies, see J. Smith. Next", ["Rule 4.2 applies, see J. Smith.", "Next"]),
        ("A list:\n- one.\n- two", ["A list:", "- one.", "- two"]),
        ("One sentence; with a clause.", ["One sentence; with a clause."]),
    ],
)
def test_split_into_sentences(text: str, expected: list[str]) -> None:
    assert pieces(text) == expected


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Lowercased words with offsets: stand-ins for the analysed terms."""
    out, pos = [], 0
    for word in text.split():
        start = text.index(word, pos)
        pos = start + len(word)
        out.append((word.strip(".,;!?").lower(), start, pos))
    return out


def test_the_sentence_with_the_weightiest_terms_answers() -> None:
    text = "A Follower may be bowed. A Ranged Attack targets a Personality without Followers. Then discard."
    chosen = answering(text, tokens(text), {"ranged": 2.0, "personality": 1.5, "bowed": 0.5})
    assert [text[a:b] for a, b in chosen] == ["A Ranged Attack targets a Personality without Followers."]


def test_no_mark_when_one_sentence_or_nothing_stands_out() -> None:
    one = "A Ranged Attack targets a Personality without Followers."
    assert answering(one, tokens(one), {"ranged": 2.0}) == []
    two = "Ranged attacks are actions. Ranged attacks are simultaneous."
    assert answering(two, tokens(two), {"ranged": 2.0, "attacks": 1.0}) == []  # both sentences alike
    assert answering(two, tokens(two), {"duel": 2.0}) == []  # no question word at all


def test_a_change_stamp_is_not_a_sentence_to_single_out() -> None:
    """A one-sentence rule followed by its stamp is still one sentence: no mark (Resolve's item 3 was marked)."""
    one = "Ranged attacks can target any Personality in the battle. [ADDED Sept 20 2007]"
    assert answering(one, tokens(one), {"ranged": 2.0, "added": 1.0}) == []
    odd = "Ranged attacks can target any Personality in the battle. [ADDED Sept 25 2007}"
    assert answering(odd, tokens(odd), {"ranged": 2.0}) == []
    two = "Ranged attacks target a Personality. A duel has no target. [CHANGED 21 May 2008; reworded]"
    chosen = answering(two, tokens(two), {"ranged": 2.0})
    assert [two[a:b] for a, b in chosen] == ["Ranged attacks target a Personality."]


def test_a_sentence_that_qualifies_the_marked_one_is_marked_with_it() -> None:
    """Read alone, "Kuon can use his ability while bowed" says the opposite of the ruling the "However" after it
    gives: a mark never stops before the sentence that limits it, whatever words that one holds."""
    text = ("Bowed cards act. Kuon can use his ability while bowed. However, a card effect can stop him. "
            "Then discard.")
    chosen = answering(text, tokens(text), {"kuon": 2.0, "ability": 1.0, "bowed": 1.0})
    assert [text[a:b] for a, b in chosen] == ["Kuon can use his ability while bowed.",
                                              "However, a card effect can stop him."]
    unqualified = "Bowed cards act. Kuon can use his ability while bowed. Then a card effect can stop him. Then go."
    assert [unqualified[a:b] for a, b in answering(unqualified, tokens(unqualified), {"kuon": 2.0})] == [
        "Kuon can use his ability while bowed."]
    # when the mark and its qualifier are the whole paragraph, nothing stands out: no mark at all
    two = "Kuon can use his ability while bowed. But not when an effect says he cannot."
    assert answering(two, tokens(two), {"kuon": 2.0, "ability": 1.0}) == []


def test_an_example_brings_its_rule_and_a_rule_its_matching_example() -> None:
    paras = ["Follow the card.", "Example: a card that shoots.", "Rule two.", "For example, a duel."]
    assert companion(paras, 1, lambda k: False) == 0  # the example: its rule, always
    assert companion(paras, 2, lambda k: True) == 3  # the rule: its example when it holds question words
    assert companion(paras, 2, lambda k: False) is None
    assert companion(paras, 0, lambda k: True) == 1
    assert companion(["Example: alone."], 0, lambda k: True) is None


def test_a_short_list_item_brings_the_sentence_that_introduces_its_list() -> None:
    paras = [
        "Some Keywords count as Clan Alignments.",
        "The following Keywords are considered Clan Alignments only if their Stronghold is in play:",
        "– Hare Clan: Shiro Usagi",
        "– Imperial: Journey’s End Keep Experienced",  # as the source has it (line 204): a sibling, not nested
        "Unaligned Personalities have none.",
        "- A Personality destroyed for having 0 Chi is destroyed by the effect that last gave it a Chi penalty, "
        "or by the rulebook if there was none.",
    ]
    assert companion(paras, 2, lambda k: False) == 1  # "– Hare Clan: Shiro Usagi" says nothing alone
    assert companion(paras, 3, lambda k: False) == 1  # an item further down the same list: the same lead-in
    assert lead_in(paras, 1) is None and lead_in(paras, 4) is None  # not list items
    assert lead_in(["Honor changes:", "-20 Honor or below loses the game."], 1) is None  # a minus sign, no bullet
    # an item under a paragraph that does not end with a colon is a rule of its own
    assert lead_in(paras, 5) is None
    # a long item under a long lead-in (a rule's exception under the rule: "There are three exceptions:") comes
    # with it too; until 2026-11-27 (late night) it was quoted alone, and a judge set's "make two Ranged 3 Attacks"
    # missed the default the lead-in states
    long_item = "- " + " ".join(["word"] * 20) + "."
    long_lead = " ".join(["Some"] * 40) + " are:"
    assert lead_in([long_lead, long_item], 1) == 0
    assert lead_in(["These cards are:", long_item], 1) == 0
    assert lead_in([long_lead, "– Monk = Brotherhood of Shinsei"], 1) == 0
    # a lead-in that only points back ("These cards are:") gives way to the paragraph it points back to
    rule = "However, some cards share a name despite being separate cards."
    assert lead_in([rule, "These cards are:", "  • Corrupted Dojo (Fire and Shadow, Winds of Change)"], 2) == 0
    assert lead_in(["These cards are:", "  • Corrupted Dojo"], 1) == 0  # nothing before it: itself
    assert lead_in(["- an item", "These cards are:", "  • Corrupted Dojo"], 2) == 1  # an item before: itself


def test_a_list_item_answer_quotes_its_lead_in_first_each_with_its_own_lines(engine: Engine) -> None:
    """The Obsidian Hand's clan alignments: "– Hare Clan: Shiro Usagi" (paragraph 25, line 203) is the ruling
    only under "The following Keywords are considered Clan Alignments only if their respective Stronghold is in
    play:" (paragraph 24, line 202). Before, the item was quoted alone."""
    from bot.app.judge import Judge
    from tests.rendering import to_text

    shown = to_text(Judge(engine).ask("does the Hare Clan count as a clan alignment in this format"))
    lead = shown.index("> The following Keywords are considered Clan Alignments only if their respective "
                       "Stronghold is in play:")
    item = shown.index("> – Hare Clan: Shiro Usagi")
    assert lead < shown.index("paragraph 24, line 202", lead) < item < shown.index("paragraph 25, line 203", item)


@pytest.mark.parametrize(
    ("asked", "chosen", "companion"),
    [
        # the fourth judge set: the chooser takes the lead-in (line 17, ending "Some consequences of the
        # simultaneous/consecutive difference are that:"), which alone says nothing; the ruling is the item under it
        # (``ranking.item_under``)
        ("card gives me 2 ranged attacks at the same time. can the first one kill the follower so the 2nd one can "
         "hit the personality?", 5, 6),
        # the sixth judge set: the chooser takes the item (line 18); that the card's two attacks are simultaneous is
        # the default the lead-in states ("If not specified, they are simultaneous by default"), long as both are
        ("action just says 'make two Ranged 3 Attacks'. can I shoot the Follower off first and then hit the "
         "Personality he was covering with the second one?", 6, 5),
    ],
)
def test_a_lead_in_and_the_item_under_it_are_quoted_together(
    engine: Engine, asked: str, chosen: int, companion: int
) -> None:
    """Either one chosen, both are quoted, the lead-in first, each with its own line. Before, the first question
    quoted only line 17 and the second only line 18."""
    from bot.app.judge import Judge
    from tests.rendering import to_text

    hit = engine.search(asked)[0]
    assert (hit.entry.id, hit.paragraph) == ("glossary:ranged-attack", chosen)
    assert hit.companion is not None and hit.companion.paragraph == companion
    first = to_text(Judge(engine).ask(asked)).split("\n2. ", 1)[0].replace("▶", "").replace("◀", "")
    lead = first.index("If not specified, they are simultaneous by default.")
    item = first.index("> - A simultaneous Ranged Attack will not destroy a Follower in time")
    assert lead < first.index("paragraph 6, line 17", lead) < item < first.index("paragraph 7, line 18", item)


def test_a_paragraph_that_introduces_no_list_brings_no_item(engine: Engine) -> None:
    alone = engine.search("Opp's card sets my Personality's Force to 0. Is that a negation or a reduction?")[0]
    assert (alone.entry.id, alone.companion) == ("glossary:reduce", None)


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open(None, default_index)
    yield eng
    eng.close()


def test_shooting_a_personality_quotes_cardinal_rule_1_and_its_example(engine: Engine) -> None:
    hit = engine.search("can I shoot a personality that has followers")[0]
    assert hit.entry.id == "obsidian-hand:cardinal-rule-1"
    assert hit.quote.startswith("Example:") and hit.paragraph == 1
    assert hit.companion is not None and hit.companion.paragraph == 0  # the rule it illustrates
    row = hit.to_dict()
    assert row["companion"]["quote"].startswith("If the text of any card contradicts")
    assert row["companion"]["citation"] != row["citation"]


def test_sentence_spans_are_offsets_into_the_quote(engine: Engine) -> None:
    hits = engine.search("can I shoot a personality that has followers")
    marked = [h for h in hits if h.sentence_spans]
    assert marked, "some answer points at a sentence"
    for h in marked:
        for a, b in h.sentence_spans:
            assert 0 <= a < b <= len(h.quote) and h.quote[a:b] == h.quote[a:b].strip()
        assert any(a <= s and e <= b for a, b in h.sentence_spans for s, e in h.spans)  # holds question words


def test_a_note_qualifying_a_rule_is_quoted_with_it(engine: Engine) -> None:
    """Tactical Battle's "Any number of times per turn" read alone says a Tactician can be pumped again and again;
    the paragraph after it ("Note that … only one Force bonus to each Tactician per turn") says otherwise."""
    question = "yo can my tactician pump himself twice in one turn with the discard-a-card-for-force thing?"
    hit = engine.search(question)[0]
    assert hit.entry.id == "glossary:tactical"
    quoted = {hit.paragraph, hit.companion.paragraph if hit.companion else None}
    assert 3 in quoted and hit.entry.paragraphs[3].startswith("Note that")


def test_a_likewise_paragraph_is_quoted_under_the_rule_it_extends(engine: Engine) -> None:
    """"Likewise, more than three Experienced cards with the same title may be included ..." (line 50) was quoted
    alone for an experienced and a plain copy of one Personality; the rule that answers is the line before it."""
    hits = engine.search("can my experienced kisada and regular kisada both be in my deck")
    hit = next(h for h in hits if h.entry.id == "glossary:experienced")
    quoted = sorted(k for k in (hit.paragraph, hit.companion.paragraph if hit.companion else None) if k is not None)
    starts = [hit.entry.paragraphs[k][:24] for k in quoted]
    assert starts == ["Even if they are Unique,", "Likewise, more than thre"]


def test_a_nested_list_item_is_read_under_the_item_it_belongs_to(engine: Engine) -> None:
    """"Hida Kisada, the Little Bear Experienced (Ivory Edition) is a version of the latter." names no card
    itself: "the latter" is the item it is nested under, "Hida Kisada (Obsidian Edition, Emperor Edition)."."""
    deck = ["This consists of:", "  • 2 decks (40/40)", "    • Dynasty Deck", "    • Fate Deck", "  • 1 Stronghold"]
    assert [parent_item(deck, k) for k in range(5)] == [None, None, 1, 1, None]
    hit = engine.search("does experienced hida kisada little bear count as the same card as emperor edition kisada")[0]
    assert hit.entry.id == "obsidian-hand:ii-f-deck-restrictions"
    quoted = sorted(k for k in (hit.paragraph, hit.companion.paragraph if hit.companion else None) if k is not None)
    assert [hit.entry.paragraphs[k].strip()[:28] for k in quoted] == [
        "• Hida Kisada (Obsidian Edit", "• Hida Kisada, the Little Be"]


def test_a_nested_item_too_close_to_call_brings_the_item_it_belongs_to(engine: Engine) -> None:
    """"is a 38 card fate deck legal if my dynasty is 42" (tenth judge set) quoted line 353 with the nested
    "• Black-backed Dynasty cards form the Dynasty Deck" (346) beside it; the answer is the item it is nested
    under, "• 2 decks, each containing at least 40 cards each (40/40)" (345)."""
    hit = engine.search("is a 38 card fate deck legal if my dynasty is 42")[0]
    assert hit.entry.id == "obsidian-hand:ii-f-the-play-deck-and-deck-construction"
    shown = (hit.paragraph, hit.companion.paragraph if hit.companion else None)
    quoted = [hit.entry.paragraphs[k].strip() for k in shown if k is not None]
    assert "• 2 decks, each containing at least 40 cards each (40/40)" in quoted
    assert not any(q.startswith("• Black-backed") for q in quoted)


def test_the_even_if_example_is_not_marked_at_the_half_that_says_the_opposite(engine: Engine) -> None:
    """A player asked whether Hida Kuon can still use his ability when an effect says he cannot while bowed:
    the answer is the example's "However" sentence (he cannot), and its first sentence alone says he can."""
    question = "hida kuon 'even if bowed' but opp hit him with cant use abilities while bowed, can he still use it"
    hit = engine.search(question)[0]
    assert hit.entry.id == "glossary:even-if"
    quoted = {hit.paragraph, hit.companion.paragraph if hit.companion else None}
    assert 1 in quoted  # the example paragraph that holds the ruling is quoted, marked or not
    for paragraph, marks in [(hit.paragraph, hit.sentence_spans)] + (
        [(hit.companion.paragraph, hit.companion.sentence_spans)] if hit.companion else []
    ):
        text = hit.entry.paragraphs[paragraph]
        marked = [text[a:b] for a, b in marks]
        if any("Kuon can use his ability while bowed" in m for m in marked):
            assert any(m.startswith("However, if the effect") for m in marked), marked


def test_the_closest_sentence_is_marked_and_a_ruling_sentence_is_preferred_to_a_description() -> None:
    text = "Winds have a title. They change how the Favor is used. You may not take Favor actions."
    spans = split(text)
    assert closest(text, spans, np.array([0.2, 0.6, 0.3])) == [spans[1]]  # clearly closest: marked alone
    # the describing sentence is a little closer; the ruling one ("may not") is pointed at instead
    assert closest(text, spans, np.array([0.2, 0.55, 0.5])) == [spans[2]]
    plain = "Winds have a title. They change the Favor. The Favor is a card."  # no sentence rules
    spans = split(plain)
    assert closest(plain, spans, np.array([0.2, 0.61, 0.6])) == spans[1:]  # two within reach: both
    assert closest(plain, spans, np.array([0.6, 0.61, 0.59])) == []  # three: nothing stands out
    # one sentence, or cosines that do not match the sentences: no mark
    assert closest("One rule.", [(0, 9)], np.array([0.9])) == []
    assert closest(plain, spans, np.array([0.9])) == []


def test_of_two_parallel_sentences_the_case_the_question_names_is_marked() -> None:
    text = ("If a bonus is lost due to a cannot rise limit, it does not count against penalties. If a bonus is lost "
            "due to a maximum, it counts against penalties. Apply the maximum last.")
    spans = split(text)
    assert parallel(text, spans) == {0: 1, 1: 0}

    def toks(*words: str) -> list[tuple[str, int, int]]:
        return [(w, m.start(), m.end()) for w in words for m in re.finditer(w, text)]

    weight = {"rise": 1.0, "maximum": 1.0, "penalties": 1.0}
    # the meaning chose the maximum sentence; the question says "cannot rise" and not "maximum": the other case
    assert case_asked(text, spans, {1}, toks("rise", "penalties"), weight) == {0}
    # it names both, or neither: the meaning's choice stands
    assert case_asked(text, spans, {1}, toks("rise", "maximum"), weight) == {1}
    assert case_asked(text, spans, {1}, toks("penalties"), weight) == {1}
    assert parallel("One rule here. Another unrelated one.", split("One rule here. Another unrelated one.")) == {}


def test_the_cannot_rise_question_is_not_pointed_at_the_maximum_case(engine: Engine) -> None:
    """A player who reads only the mark must not read the opposite ruling: "he takes -2, is he 3 or 5" under a
    "cannot rise" limit is settled by the "cannot rise" sentence of the Raise/rise example, and the sentence beside
    it (a maximum) says the opposite."""
    hit = engine.search("dude is 4F, +3 from an item but his force cannot rise above 5. later he takes -2. is he 3 "
                        "or 5?")[0]
    assert hit.entry.id == "glossary:raise-rise"
    passages = [(hit.paragraph, hit.sentence_spans)]
    if hit.companion:
        passages.append((hit.companion.paragraph, hit.companion.sentence_spans))
    marked = [hit.entry.paragraphs[p][a:b] for p, spans in passages for a, b in spans]
    assert any("“cannot rise” limit, it does not count against" in m for m in marked), marked
    assert not any("due to a maximum" in m for m in marked), marked


def test_the_sentence_that_qualifies_the_closest_comes_with_it() -> None:
    text = "Kuon can use his ability while bowed. However, an effect may stop him. Bow him later."
    spans = split(text)
    assert closest(text, spans, np.array([0.9, 0.3, 0.1])) == spans[:2]


@pytest.mark.parametrize(
    ("question", "entry", "sentence"),
    [
        # reported to the judge in players' words; the marks pointed elsewhere or nowhere before sentence vectors
        ("opp just played a Terrain and I've got a 'destroy target enemy card' action. can I point it at the terrain?",
         "glossary:terrain", "A Terrain is not in any side or army; thus, it is never an enemy or opposing card."),
        ("opp blew up my terrain mid battle, but its effect says it cant be negated lol. does the effect keep going?",
         "glossary:terrain", "This is not negation of those effects"),
        ("can my family honor go below zero", "obsidian-hand:ii-b-family-honor",
         "Family Honor may have a negative value."),
        ("I'm going second this game, which side of my two-sided stronghold do I use?",
         "obsidian-hand:iii-a-strongholds", "Players that do not go first must use the white-bordered side"),
    ],
)
def test_the_answering_sentence_is_marked_by_meaning(engine: Engine, question: str, entry: str, sentence: str) -> None:
    hit = engine.search(question)[0]
    assert hit.entry.id == entry
    marked = [hit.quote[a:b] for a, b in hit.sentence_spans]
    assert len(marked) == 1 and marked[0].startswith(sentence), marked


def test_a_build_has_a_vector_for_each_sentence_of_a_paragraph_of_two_or_more(engine: Engine) -> None:
    st = engine._st
    assert st.sentence_vectors is not None and st.sentence_rows
    total = 0
    for entry in st.corpus.entries:
        for p, text in enumerate(entry.paragraphs):
            found = st.sentence_rows.get((entry.id, p))
            if len(worded(text)) < 2:
                assert found is None
                continue
            start, spans = found
            assert start == total and list(spans) == worded(text)
            total += len(spans)
    assert len(st.sentence_vectors) == total
    assert np.allclose(np.linalg.norm(st.sentence_vectors, axis=1), 1.0, atol=1e-3)  # unit vectors: cosines


def test_without_sentence_vectors_the_marks_fall_back_to_question_words(engine: Engine) -> None:
    """A build without the model (or a paragraph without sentence vectors) still points at a sentence: the one
    holding the weightiest question words."""
    st = engine._st
    saved = st.sentence_rows
    try:
        st.sentence_rows = {}
        hit = engine.search("can I play a second terrain if one is already out at this battlefield")[0]
    finally:
        st.sentence_rows = saved
    assert hit.entry.id == "glossary:terrain"
    for a, b in hit.sentence_spans:
        assert any(a <= s and e <= b for s, e in hit.spans)  # a marked sentence holds question words


@pytest.mark.parametrize("question", ["max hand size", "what is maximum hand size"])
def test_a_question_that_only_names_the_entry_marks_no_sentence_by_meaning(engine: Engine, question: str) -> None:
    """The answer to "max hand size" is the whole opening paragraph ("A player starts with a maximum hand size of
    8 ..."); by meaning its second sentence ("A player with no maximum hand size ...") came out closest and was
    marked, which points a skimming judge at the exception."""
    hit = engine.search(question)[0]
    assert hit.entry.id == "obsidian-hand:ii-c-maximum-hand-size" and hit.paragraph == 0
    assert not any(hit.quote[a:b].startswith("A player with no maximum") for a, b in hit.sentence_spans)


def test_opening_a_build_reads_where_its_sentences_stand_and_a_damaged_record_rebuilds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, index_copy: Callable[..., Path]
) -> None:
    """Opening a build does not cut every paragraph again (a quarter of a second at 100x): the spans are read from
    the build; a build whose record of them is damaged is rebuilt, with the same sentences."""
    ixdir = index_copy(tmp_path / "ix")
    eng = Engine.open([SHIPPED_SOURCES], ixdir)
    path, rows = eng._st.index_path, eng._st.sentence_rows
    eng.close()
    assert path is not None and rows
    assert vectors.read_sentences(path, load_corpus()) == vectors.sentences(load_corpus())  # as the cutting says
    (path / vectors.SENTENCES).write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger="index"):
        eng = Engine.open([SHIPPED_SOURCES], ixdir)
    try:
        assert eng.stats()["rebuilt"] and eng._st.index_path != path and "unreadable" in caplog.text
        assert eng._st.sentence_rows == rows
    finally:
        eng.close()

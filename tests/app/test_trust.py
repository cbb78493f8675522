"""Answers a judge can quote as printed: the cases of issue 8, asked through the console as a judge would.

Every /ask answer is also checked line by line: each result's printed dates are exactly those of the quoted
paragraph (whole-entry ones labelled), and its citation gives that paragraph's own line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.console import Console
from bot.app.judge import Judge
from glossary.cli import main as glossary_main
from glossary.model import Entry
from index.engine import Engine
from index.query import parsing

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_HEAD = re.compile(r"^(\d+)\. (?P<label>.+?) — (?P<source>.+)$")
_CITED = re.compile(
    r"(?:, (?:paragraph (?P<p>\d+)|item (?P<item>\d+)\.|the paragraph after item (?P<after>\d+)\.))?"
    r", lines? (?P<first>\d+)(?:-(?P<last>\d+))? · "
)


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open(None, default_index)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def console(engine: Engine) -> Console:
    return Console(Judge(engine))


def blocks(text: str) -> list[list[str]]:
    """The numbered results of an /ask answer, each as its lines."""
    found: list[list[str]] = []
    for line in text.split("\n"):
        if _HEAD.match(line):
            found.append([line])
        elif found and line and not line.startswith(("--- page", "Open: ", "[")):
            found[-1].append(line)
    return found


def check_ask(engine: Engine, text: str) -> list[tuple[Entry, int | None]]:
    """Assert every result quotes its paragraph with only that paragraph's dates and its own lines."""
    by_label = {e.label: e for e in engine.corpus.entries}
    shown = []
    for block in blocks(text):
        head = _HEAD.match(block[0])
        assert head is not None
        entry = by_label[head["label"]]
        # the first quote's own citation stands right under it (and its dates): the first citation of the block
        cited = next((m for m in map(_CITED.search, block[1:]) if m), None)
        assert cited is not None, block
        if not entry.paragraphs:  # a bare heading: it names what is under it instead of quoting nothing
            assert block[1].startswith("(A heading with no text of its own; under it: "), block
            shown.append((entry, None))
            continue
        paragraph = int(cited["p"]) - 1 if cited["p"] else (0 if len(entry.paragraphs) == 1 else None)
        if cited["item"] or cited["after"]:  # the source's own number ("item 3."): the paragraph it starts
            number = f"{cited['item'] or cited['after']}. "
            item = next(k for k, p in enumerate(entry.paragraphs) if p.startswith(number))
            paragraph = item if cited["item"] else item + 1
        assert paragraph is not None, block
        first, last = entry.paragraph_lines(paragraph)
        assert (int(cited["first"]), int(cited["last"] or cited["first"])) == (first, last)
        if entry.kind == "banned":  # "On …'s banned list: banned" comes before the quoted line
            block = [block[0], *block[2:]]
        assert block[1].startswith("> "), block  # never an empty quote
        quote = block[1][2:].replace("▶", "").replace("◀", "")  # the answering sentence's marks are not text
        assert quote.rstrip("…")[:40] in entry.paragraphs[paragraph], (block[1], paragraph)
        amends = ("In ", "Earlier, ", "House ruling ", "The ruleset states", ">")
        dated = [line for line in block[1:-1] if _ISO.search(line) and not line.startswith(amends)]
        own = entry.paragraph_changes(paragraph)
        expected = {c.date for c in own} | {c.probable_date for c in own if c.probable_date}
        assert {d for line in dated for d in _ISO.findall(line)} == expected, (entry.id, paragraph, dated)
        shown.append((entry, paragraph))
    return shown


# -- dates and citations belong to the quoted paragraph ------------------------------------------------------


def test_terrain_already_at_the_battlefield_shows_no_other_paragraphs_dates(console: Console, engine: Engine) -> None:
    text = console.answer("/ask can I play a terrain if there is already one at the battlefield")
    shown = check_ask(engine, text)
    assert (engine.get("glossary:terrain"), 1) in shown
    block = next(b for b in blocks(text) if " Terrain — " in b[0])
    assert not any(d in "\n".join(block) for d in ("2008-03-24", "2008-05-21"))
    assert "Terrain, paragraph 2, line 24 · 000_99c7513ab738c7d1.txt" in block[2]  # right under its quote


@pytest.mark.parametrize(
    ("question", "entry_id", "not_shown"),
    [
        ("what is a ranged attack", "glossary:ranged-attack", "2007-09-22"),
        ("what does enemy mean in a battle", "glossary:enemy", "2008-04-20"),
    ],
)
def test_opening_paragraphs_carry_no_later_paragraphs_stamp(
    console: Console, engine: Engine, question: str, entry_id: str, not_shown: str
) -> None:
    text = console.answer(f"/ask {question}")
    shown = check_ask(engine, text)
    assert (engine.get(entry_id), 0) in shown
    block = next(b for b in blocks(text) if f" {engine.get(entry_id).label} — " in b[0])
    assert not_shown not in "\n".join(block)


def test_guideline_bullets_do_not_carry_the_naval_invasion_change(console: Console, engine: Engine) -> None:
    guideline = engine.get("obsidian-hand:guideline-player-abilities")
    composer = console.judge.composer
    from bot.app.renderers.text import lines_of
    from index.results import Hit

    for p, bullet in ((0, "Cavalry"), (2, "Seppuku")):
        assert guideline.paragraphs[p].lstrip().startswith(f"• {bullet}")
        block = lines_of(composer.hit_group(1, Hit(guideline, 1.0, [], p, list(guideline.changes))))[0]
        assert "2015-10-27" not in block and "Naval Invasion will be changed" not in block
    naval = lines_of(composer.hit_group(1, Hit(guideline, 1.0, [], 1, list(guideline.changes))))[0]
    assert "Changed 2015-10-27: Player ability Naval Invasion will be changed." in naval


def test_full_entry_history_names_each_paragraph(console: Console) -> None:
    text = console.answer("/define terrain")
    assert "History: Added 2008-03-24 (paragraph 9) · Changed 2008-05-21 (paragraph 3): a Terrain's" in text
    text = console.answer("/define resolve")
    assert "Added 2007-09-22 (whole entry)" in text and "Changed 3008-05-30 (as printed; probably" in text


# -- lookups that answered wrongly -----------------------------------------------------------------------------


def test_same_named_entries_are_all_answered_and_told_apart(console: Console, engine: Engine) -> None:
    text = console.answer("/define ninjitsu")
    assert text.startswith("Ninjitsu — 3 entries\n")
    for label in ("Ninjitsu (Open)", "Ninjitsu (Reaction)", "Ninjitsu (Battle)"):
        assert f"\n{label} — The Obsidian Hand Ruleset\n" in text
    assert "No entry" not in text and "Did you mean" not in text
    assert [name for name, _id in engine.complete("ninj")] == [
        "Ninjitsu (Open)",
        "Ninjitsu (Reaction)",
        "Ninjitsu (Battle)",
    ]
    text = console.answer("/define enlightened")
    assert "Enlightened (Open)" in text and "Enlightened (Battle)" in text
    text = console.answer("/define equip")
    assert "Equip (Glossary)" in text and "Equip (Open)" in text


def test_cannot_rise_is_raise_not_fall(console: Console) -> None:
    assert console.answer("/define cannot rise").startswith("Raise/rise\n")
    assert console.answer("/define cannot fall").startswith("Fall\n")


def test_a_banned_card_is_never_answered_not_banned(console: Console, engine: Engine) -> None:
    text = console.answer("/banned Gozoku")
    assert text.startswith("Banned: Gozoku Sensei\n") and "Not on the banned list" not in text
    text = console.answer("/banned sensei")
    assert text.startswith("Banned cards matching “sensei”") and "Gozoku Sensei" in text and "Yodin Sensei" in text
    # Every distinctive word of every banned name: the answer never opens with "not on the list".
    words = {
        w
        for e in engine.corpus.entries
        if e.kind == "banned"
        for w in re.findall(r"[A-Za-z’']{4,}", e.title)
        if w.lower() not in {"with", "from", "cards", "icon", "rank"}
    }
    for word in sorted(words):
        answer = console.answer(f"/banned {word}")
        assert not answer.startswith("Not on the banned list"), word


def test_a_section_number_that_does_not_exist_lists_those_that_do(console: Console) -> None:
    text = console.answer("/rule cardinal rule 5")
    assert text.startswith("No section matches “cardinal rule 5”")
    for n, name in enumerate(("Cards vs. Rules", "Cards vs. Cards", "Oracle vs. Cards", "Oracle vs. Rules"), 1):
        assert f"- Cardinal Rule {n}: {name}" in text


@pytest.mark.parametrize(
    ("ref", "child_text"),
    [
        ("I", "If the text of any card contradicts these Comprehensive Rules"),
        ("II.F", "Only one copy of each Unique card, by card title, may be included in the play deck."),
        ("III.A", "Strongholds do not go into the Dynasty or Fate deck"),
    ],
)
def test_heading_only_sections_show_their_contents(console: Console, ref: str, child_text: str) -> None:
    text = console.answer(f"/rule {ref}")
    assert "This heading has no text of its own; under it:" in text
    assert child_text in text


def test_ask_keeps_words_that_look_like_filters(console: Console) -> None:
    assert console.answer("/ask what does source: mean").startswith("Rules for: what does source: mean")
    assert "Rule changes — L5R Comprehensive Rules" in console.answer("/changes source:glossary")


def test_format_override_is_named_and_shown_latest_first(console: Console) -> None:
    text = console.answer("/ask can I play a terrain if there is already one at the battlefield")
    block = "\n".join(next(b for b in blocks(text) if " Terrain — L5R" in b[0]))
    latest = "In The Obsidian Hand Ruleset, the latest update about this: Update 10/25/2015 (2015-10-25)"
    earlier = "In The Obsidian Hand Ruleset, an earlier update about this: Update 10/20/2015 (2015-10-20)"
    assert latest in block and earlier in block and block.index(latest) < block.index(earlier)
    assert "> One Terrain per battlefield will be returned." in block
    assert "open it to see" not in block


def test_seppuku_shows_both_texts_and_lint_reports_it(console: Console, capsys: pytest.CaptureFixture[str]) -> None:
    text = console.answer("/define seppuku")
    assert "The ruleset states this again in Player Abilities, lines 90-93, and the texts differ." in text
    assert "these effects cannot be negated, delayed, or redirected." in text
    assert "redirected; unless the action explicitly interacts with Seppuku." in text
    glossary_main(["lint"])
    assert "004_f05ef39847fd66e3.txt:90: warning: divergent-restatement: Seppuku:" in capsys.readouterr().out


def test_changes_rows_say_which_paragraph_they_date(console: Console) -> None:
    text = console.answer("/changes source:glossary")
    assert "2007-09-20 · Added · Glossary T › Target (paragraph 2)" in text
    assert "2007-09-20 · Added · Glossary T › Target (paragraph 3)" in text


# -- a fresh set of judge lookups: right entry, right paragraph, right dates and lines ------------------------

FRESH = [
    ("does a token count as a card", "glossary:token", 0),
    ("who chooses the target when a change to targeting happens", "glossary:target", 3),
    ("does a terrain get discarded after its effects", "glossary:terrain", 5),
    ("when does a duel stop resolving", "glossary:resolve", 4),
    ("can a Terrain's Terrain Battle action be used while it is in play", "glossary:terrain", 4),
    ("is a region an enemy card", "glossary:region", 0),
    ("how many copies of a non-unique card can be in my deck", "obsidian-hand:ii-f-deck-restrictions", 0),
    ("what is my maximum hand size", "obsidian-hand:ii-c-maximum-hand-size", 0),
]


@pytest.mark.parametrize(("question", "entry_id", "paragraph"), FRESH)
def test_fresh_judge_lookups(console: Console, engine: Engine, question: str, entry_id: str, paragraph: int) -> None:
    shown = check_ask(engine, console.answer(f"/ask {question}"))
    assert shown[0] == (engine.get(entry_id), paragraph), (question, [(e.id, p) for e, p in shown[:3]])


def test_citation_leads_with_document_and_entry(console: Console) -> None:
    text = console.answer("/define tactician")
    assert "Citation: L5R Comprehensive Rules — Glossary T › Tactician, lines 9-10 · 000_99c7513ab738c7d1.txt" in text





def test_naming_the_obsidian_hand_does_not_pull_up_hand_size(engine: Engine) -> None:

    terms, _raw = parsing.query_terms(engine._st, "what are the dishonor rules in the Obsidian Hand ruleset")
    assert "hand" not in terms and "obsidian" not in terms
    hits = engine.search("what are the dishonor rules in the obsidian hand")
    assert hits[0].entry.id == "obsidian-hand:ii-e-dishonor"
    assert "obsidian-hand:ii-c-maximum-hand-size" not in [h.entry.id for h in hits]


def test_a_stamp_on_its_own_line_says_it_may_date_more_than_the_paragraph_above(console: Console) -> None:
    """"[ADDED March 16 2008]" stands alone under Targeting paradoxes' example: the parser dates the example, but
    the page does not say the rule above it is older; the date says so (fresh judge review). A stamp with a note
    (Terrain's 2008-05-21 change) says what it changed and needs no such words."""
    text = console.answer("/ask i picked an attachment while targeting, then a reaction destroyed it. "
                          "can i just pick a different attachment?")
    assert "Added 2008-03-16 (its stamp stands on a line of its own below: it may date more of the entry)" in text
    terrain = console.answer("/define terrain")
    assert "Changed 2008-05-21 (paragraph 3): a Terrain's entering play" in terrain and "may date more" not in terrain

"""Rules as of a date and /history in the console: the same Judge and answer model Discord uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.console import Console
from bot.app.judge import Judge
from index.engine import Engine

OLD_NAVAL = (
    "Engage: Once per battle, target your performing unbowed Naval Personality at the current battlefield: You have "
    "the first opportunity to take a Battle action. This action must come from that Naval Personality’s unit."
)
NEW_NAVAL = (
    "Engage: Once per battle, target your performing Naval Unit led by an unbowed Naval Personality at the current "
    "battlefield: You have the first opportunity to take a Battle action. This action must be performed by a card in "
    "that Naval Personality’s unit."
)


@pytest.fixture(scope="module")
def console(default_index: Path) -> Iterator[Console]:
    engine = Engine.open(None, default_index)
    yield Console(Judge(engine))
    engine.close()


def test_an_entry_added_later_is_not_quoted_as_in_force(console: Console) -> None:
    out = console.answer("/define facing as_of:2008-01-01")
    assert out.startswith("Facing — not yet on 2008-01-01\n")
    assert "Facing did not exist yet on 2008-01-01: it was added on 2008-02-12 ([ADDED February 12 2008])." in out
    assert "is \"facing\" another Personality" not in out  # its text is not quoted
    assert "A Personality is \"facing\"" in console.answer("/define facing as_of:2008-02-12")


def test_paragraphs_added_later_are_left_out_and_said(console: Console) -> None:
    out = console.answer("/define terrain as_of:2008-01-01")
    assert out.startswith("Terrain — as of 2008-01-01\n")
    assert "1 paragraph of this entry was added later: 2008-03-24 (paragraph 9); left out here." in out
    assert "Circle of Steel" not in out  # the example paragraph [ADDED March 24 2008]
    assert ("Changed on 2008-05-21; the earlier wording is not in the sources: this is the text after that."
            in out)
    assert "Circle of Steel" in console.answer("/define terrain")  # as loaded: all of it


def test_the_old_wording_of_the_update_log_stands_before_its_date(console: Console) -> None:
    before = console.answer("/define naval invasion as_of:2015-10-20")
    assert OLD_NAVAL in before and NEW_NAVAL not in before
    assert "As it read before 2015-10-27: the Old wording kept by Update 10/27/2015" in before
    assert "The Obsidian Hand Ruleset › Updates › Update 10/27/2015, paragraph 3, line 22" in before
    after = console.answer("/define naval invasion as_of:2015-10-27")
    assert NEW_NAVAL in after and OLD_NAVAL not in after


def test_the_update_log_applies_by_date(console: Console) -> None:
    withdrawn = console.answer("/define terrain as_of:2015-10-22")
    assert "the clause on how old Terrains destroy other Terrains in play will be withdrawn" in withdrawn
    assert "One Terrain per battlefield will be returned" not in withdrawn
    assert "Made after 2015-10-22, so left out: Update 10/25/2015 (2015-10-25)." in withdrawn
    back = console.answer("/define terrain as_of:2015-10-26")
    assert "One Terrain per battlefield will be returned" in back
    assert back.index("Update 10/25/2015 (2015-10-25)") < back.index("Update 10/20/2015 (2015-10-20)")  # latest first
    assert "Made after" not in back


def test_bans_by_date(console: Console) -> None:
    before = console.answer("/banned moshi eihime as_of:2016-01-01")
    assert before.startswith("Not yet banned on 2016-01-01: Moshi Eihime\n")
    assert ("Moshi Eihime was not yet banned on 2016-01-01: it was added to The Obsidian Hand Ruleset's banned list "
            "on 2016-02-15.") in before
    after = console.answer("/banned moshi eihime as_of:2016-03-01")
    assert after.startswith("Banned: Moshi Eihime — as of 2016-03-01\n") and "Already banned on 2016-03-01." in after
    kotei = console.answer("/banned house of black lion as_of:2015-11-01")  # banned 10/05/2015
    assert "Already banned on 2015-11-01." in kotei
    undated = console.answer("/banned hantei as_of:2015-11-01")
    assert "The list does not date this ban, so whether it stood on 2015-11-01 cannot be told" in undated
    listing = console.answer("/banned as_of:2015-10-01")
    assert ("Added to the list after 2015-10-01, so left out: House of the Black Lion (2015-10-05); Moshi Eihime "
            "(2016-02-15); Unreleased Cards/Promos (2015-11-12).") in listing


def test_an_impossible_date_is_read_as_its_probable_date_and_said(console: Console) -> None:
    out = console.answer("/define resolve as_of:2008-05-01")
    assert "The printed date 3008-05-30 cannot be right; it is read as its probable date 2008-05-30" in out
    assert "Changed on 3008-05-30 (as printed; read as 2008-05-30); the earlier wording is not in the sources" in out
    assert "Changed on" not in console.answer("/define resolve as_of:2008-06-01")  # not "later" than 2008


def test_ask_and_rule_as_of(console: Console) -> None:
    ask = console.answer("/ask what does facing mean in a duel as_of:2008-01-01")
    assert "Left out, not yet in the rules on 2008-01-01: Facing (added 2008-02-12)." in ask
    rule = console.answer("/rule cardinal rule 2 as_of:2015-11-01")
    assert rule.startswith("Cardinal Rule 2: Cards vs. Cards — as of 2015-11-01\n")
    assert "As the loaded sources stood on 2015-11-01. Nothing in this entry is dated after that day." in rule


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("yesterday", "Error: as_of must be a date like 2008-01-31 (or 2008-01, or 2008); got “yesterday”."),
        ("2008-13-01", "Error: as_of: 2008-13-01 is not a real date."),
        ("2015-02-30", "Error: as_of: 2015-02-30 is not a real date."),
    ],
)
def test_a_bad_date_gets_one_short_message(console: Console, value: str, message: str) -> None:
    assert console.answer(f"/define target as_of:{value}") == message
    assert console.answer(f"/banned moshi as_of:{value}") == message


def test_open_links_of_an_as_of_answer_stay_on_that_day(console: Console) -> None:
    out = console.answer("/define terrain as_of:2015-10-22")
    assert "(/open obsidian-hand:update-2015-10-20@2015-10-22)" in out
    assert console.answer("/open 1").startswith("Update 10/20/2015 — as of 2015-10-22\n")


def test_history_lists_every_dated_change_oldest_first_with_its_text(console: Console) -> None:
    out = console.answer("/history terrain")
    assert out.startswith("History — Terrain\n")
    rows = [line for line in out.splitlines() if line[:4].isdigit() and " · " in line]
    assert [r.split(" · ")[0] for r in rows] == ["2008-03-24", "2008-05-21", "2015-10-20", "2015-10-25"]
    assert rows[0] == "2008-03-24 · Added · paragraph 9"
    assert "> Example: One of the effects of the Terrain \"Circle of Steel\" reads" in out  # the paragraph it dates
    assert "L5R Comprehensive Rules — Glossary T › Terrain, paragraph 9, line 31 · 000_99c7513ab738c7d1.txt" in out
    assert rows[2] == "2015-10-20 · The Obsidian Hand Ruleset update · Update 10/20/2015 (concerns Terrain)"
    assert "The Obsidian Hand Ruleset › Updates › Update 10/25/2015, lines 14-15" in out
    naval = console.answer("/history naval invasion")
    assert OLD_NAVAL in naval and NEW_NAVAL in naval  # the update record quoted whole, Old and New
    assert "No entry for “zzqqxx”" in console.answer("/history zzqqxx")
    assert console.answer("/history") == "Error: Please give a term."


def test_history_marks_the_line_of_a_record_that_concerns_the_entry(console: Console) -> None:
    """Update 01/11/2016 has four lines; Proclaim's history quotes it whole (verbatim) and marks the one line
    about Proclaim, where a judge would otherwise read the Starting Holdings line first."""
    out = console.answer("/history proclaim")
    assert "> ▶Proclaim – limited its use to the player’s turn◀" in out
    assert out.count("▶") == 1
    assert "> Starting Holdings – clarified how they will not be put into the dynasty deck." in out
    assert "▶" not in console.answer("/history terrain")  # a one-paragraph record: nothing to single out


def test_a_restatement_is_not_said_to_match_lines_that_read_otherwise_now(console: Console) -> None:
    """As of 2015-10-26 Naval Invasion read its Old wording in both places; line 89 reads the New one today,
    so "stated in the same words in Player Abilities, line 89" alone would point a judge at other words."""
    text = console.answer("/rule naval invasion as_of:2015-10-26")
    assert "Stated in the same words in Player Abilities" not in text
    assert "On 2015-10-26 stated in the same words in Player Abilities, line 89 (those lines read otherwise now" in text
    assert "Stated in the same words in Player Abilities, line 89." in console.answer("/rule naval invasion")


def test_asking_whether_a_card_was_banned_before_its_ban_answers_as_banned_does(console: Console) -> None:
    """"/ask is moshi eihime banned as_of:2015-12-01" said only "No rules text answers that question closely"
    (fresh judge review); the banned list does answer it: not yet, and since when."""
    text = console.answer("/ask is moshi eihime banned as_of:2015-12-01")
    assert ("Moshi Eihime was not yet banned on 2015-12-01: it was added to The Obsidian Hand Ruleset's banned "
            "list on 2016-02-15. As far as that list goes, it was legal on that day.") in text
    assert "No rules text answers" not in text
    assert "not yet banned" not in console.answer("/ask is moshi eihime banned as_of:2016-03-01")

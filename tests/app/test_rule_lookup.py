"""/rule says only what the loaded copy supports: a section past where a truncated copy ends is not said
not to exist, and a name that names no section is answered with the closest text, saying so."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.judge import Judge
from index.engine import Engine
from tests.rendering import discord_text, to_text


@pytest.fixture(scope="module")
def judge(default_index: Path) -> Iterator[Judge]:
    engine = Engine.open(None, default_index)
    yield Judge(engine)
    engine.close()


def test_a_section_past_the_end_of_a_truncated_copy_is_not_said_to_be_missing(judge: Judge) -> None:
    cut = [a for a in judge.engine.corpus.anomalies if a.kind == "truncated"]
    assert cut, "premise: the shipped Obsidian Hand copy ends inside III.A (lint: truncated)"
    text = to_text(judge.rule("III.B"))
    assert "There is no" not in text
    assert "The loaded copy of The Obsidian Hand Ruleset is cut short" in text
    assert f"line {cut[0].line}" in text and "would come after where it ends" in text
    assert "III.A Starting Card Types" in text  # what the copy has


def test_a_section_that_would_stand_inside_the_copy_is_said_to_be_missing(judge: Judge) -> None:
    for ref in ("II.G", "cardinal rule 5"):
        text = to_text(judge.rule(ref))
        assert f"There is no “{ref}” in The Obsidian Hand Ruleset" in text
        assert "cut short" not in text


def test_a_name_that_names_no_section_says_so_before_the_closest_text(judge: Judge) -> None:
    answer = judge.rule("personalities")
    for shown in (to_text(answer), discord_text(answer)):
        # which guideline is closest is the ranking's call (Performing with the stock model, Player Abilities with
        # the tuned one); what matters is that the answer says there is no such section before showing it
        assert re.search(r"No section is named “personalities”; the closest by its words is [A-Z]", shown), shown
    named = to_text(judge.rule("deck construction"))  # a real name: no such line
    assert "No section is named" not in named and named.startswith("Deck Construction")


def test_a_section_asked_by_number_lists_only_what_is_under_it(judge: Judge) -> None:
    text = to_text(judge.rule("II.F"))
    assert "The Play Deck and Deck Construction" in text and "Deck Restrictions" in text
    assert "Military" not in text and "Banned Cards" not in text  # words that merely match "II.F"


def test_banned_a_part_of_a_versioned_name_keeps_the_one_version_note(judge: Judge) -> None:
    for typed in ("tadaka", "isawa tadaka"):
        text = to_text(judge.banned(typed))
        assert text.startswith("One version banned: Isawa Tadaka, Seven Thunder (Experienced 2CW)"), typed
        assert "other versions" in text and "not named on it" in text, typed
    exact = to_text(judge.banned("Isawa Tadaka, Seven Thunder (Experienced 2CW)"))
    assert exact.startswith("Banned: Isawa Tadaka, Seven Thunder")  # the very version typed


@pytest.mark.parametrize(
    ("typed", "name"), [("moshi eihime exp", "moshi eihime"), ("Moshi Eihime Experienced", "Moshi Eihime"),
                        ("hantei xp2", "hantei")]
)
def test_banned_an_experienced_version_of_a_name_listed_without_a_level_is_not_named(
    judge: Judge, typed: str, name: str
) -> None:
    """"moshi eihime exp" is one spelling away from "Moshi Eihime" and was answered "Moshi Eihime is banned"; the
    list names no experience level there, and a card's identity is its title and experience level."""
    result = judge.engine.banned(typed)
    assert result.record is None and not result.is_banned and result.how == "other-version"
    listed = result.near[0].title
    assert to_text(judge.banned(typed)).startswith("Not on the banned list")
    for text in (to_text(judge.banned(typed)), discord_text(judge.banned(typed))):
        assert f"“{typed}” is not named on" in text, text
        assert f"The list names {listed} with no experience level" in text.replace("*", ""), text
    assert judge.engine.banned(name).is_banned  # the name as listed still is


@pytest.mark.parametrize("typed", ["isawa tadaka experienced 2cw", "Isawa Tadaka Exp 2CW", "isawa tadaka xp2cw"])
def test_banned_a_listed_version_named_without_its_subtitle_is_that_card(judge: Judge, typed: str) -> None:
    text = to_text(judge.banned(typed))
    assert text.startswith("Banned: Isawa Tadaka, Seven Thunder (Experienced 2CW)"), text


def test_banned_a_kind_of_card_is_not_called_a_card(judge: Judge) -> None:
    text = to_text(judge.banned("kabuto"))
    assert text.startswith("Banned kind of card: Cards with the Rank (Kabuto) icon")
    assert "bans a kind of card" in text and "this card's name" not in text


def test_a_name_that_is_an_ability_not_a_section_is_not_called_the_closest_by_words(judge: Judge) -> None:
    """"No section is named 'cavalry'; the closest by its words is Cavalry" contradicted itself (judge review)."""
    shown = to_text(judge.rule("cavalry"))
    assert "“cavalry” is not a section of The Obsidian Hand Ruleset; it is a player ability, Cavalry:" in shown
    assert "closest by its words" not in shown


def test_define_found_only_by_the_text_says_no_entry_has_that_name(judge: Judge) -> None:
    """/define fear answered with Courage as if it were Fear's definition (judge review): the answer says so."""
    shown = to_text(judge.define("fear"))
    assert "No entry is named “fear”; the text that uses the word most is Courage (The Obsidian Hand Ruleset):" in shown
    assert "No entry is named" not in to_text(judge.define("target"))


def test_a_section_found_by_name_lists_no_entries_found_by_a_word_of_their_text(judge: Judge) -> None:
    """/rule dishonor listed "Also: Performing", "Also: This" (fresh judge review): only sections of that name."""
    answer = judge.rule("dishonor")
    assert answer.title.startswith("Dishonor")
    labels = [link.label for link in answer.links]
    assert "Also: Dishonor Victory" in labels
    assert not [label for label in labels if "Performing" in label or label == "Also: This"], labels


@pytest.mark.parametrize(
    ("ref", "title"),
    [
        ("II.C Maximum Hand Size", "C. Maximum Hand Size"),
        ("II.F Deck Constructions and Restrictions", "F. Deck Constructions and Restrictions"),
        ("II. F - Deck Constructions", "F. Deck Constructions and Restrictions"),
        ("II. THE PLAYER – B. Family Honor", "B. Family Honor"),  # as printed (the seventeenth judge set, 28x)
    ],
)
def test_a_section_given_by_its_number_and_name_is_that_section(judge: Judge, ref: str, title: str) -> None:
    """"/rule II.C Maximum Hand Size" (the sixteenth judge set, 2026-11-28u) showed the section under "No section is
    named “II.C Maximum Hand Size”; the closest by its words is C. Maximum Hand Size"."""
    text = to_text(judge.rule(ref))
    assert text.startswith(title) and "No section is named" not in text
    mixed = to_text(judge.rule("II.C Deck Construction"))  # a number and a name that disagree: said
    assert "No section is named “II.C Deck Construction”" in mixed


def test_a_parts_printed_heading_is_the_part(judge: Judge) -> None:
    """"/rule II. THE PLAYER" answered "No section is named “II. THE PLAYER”; the closest by its words is Turn"."""
    part = [h.entry.id for h in judge.engine.section("II. THE PLAYER")]
    assert part == [h.entry.id for h in judge.engine.section("II")]  # the sections under it, as for "II"
    text = to_text(judge.rule("II. THE PLAYER"))
    assert "No section is named" not in text and text.startswith("A. Clan Alignment")

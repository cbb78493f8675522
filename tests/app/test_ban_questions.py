"""An ``/ask`` that asks whether a card is banned opens with ``/banned``'s verdict.

Noticed at the table (session 32): "is hida kisada banned in obsidian hand" quoted Hida Kisada's two lines in
*Deck Restrictions* (lines 379-380 of the Obsidian Hand file) and said nothing of the ban, while ``/banned hida
kisada`` says the card is not named on the list. "is doji hoturi banned" (a card the sources never mention) quoted
Moshi Eihime's update and Hantei's and Nanashi Mura's banned lines under "no rule stands out". "is tadaka banned"
quoted the banned line without saying that it names one version only, which ``/banned tadaka`` says.

Premises, from the shipped Obsidian Hand Ruleset: its banned list names Moshi Eihime (added 02/15/2016), Isawa
Tadaka, Seven Thunder (Experienced 2CW), Hantei and Nanashi Mura, and bans two kinds of card; it names neither
Hida Kisada nor Doji Hoturi.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.answer import Answer, Note, plain_text
from bot.app.judge import Judge
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine
from tests.rendering import discord_text, to_discord, to_text

NOT_NAMED = "is not named on The Obsidian Hand Ruleset's banned list."


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def judge(engine: Engine) -> Judge:
    return Judge(engine)


def verdicts(answer: Answer) -> list[str]:
    """The banned-list notes an answer opens with, as plain text."""
    blocks = answer.items[0].blocks if answer.items else answer.body
    return [plain_text(b.parts) for b in blocks if isinstance(b, Note) and b.kind == "banned"]


def test_a_card_the_list_does_not_name_is_said_not_named_above_the_text_that_mentions_it(judge: Judge) -> None:
    answer = judge.ask("is hida kisada banned in obsidian hand")
    assert verdicts(answer) == [
        f"“hida kisada” {NOT_NAMED} It also bans by kind of card: Cards with the Rank (Kabuto) icon; "
        "Unreleased Cards/Promos."
    ]
    text = to_text(answer)
    assert text.index(NOT_NAMED) < text.index("Hida Kisada (Obsidian Edition, Emperor Edition).")  # still quoted
    assert to_text(judge.banned("hida kisada")).startswith("Not on the banned list")  # what /banned says
    assert NOT_NAMED in discord_text(answer)


def test_other_cards_banned_lines_are_not_offered_for_a_card_the_list_does_not_name(
    judge: Judge, engine: Engine
) -> None:
    before = engine.ask("is doji hoturi banned in obsidian hand", limit=5)[0]
    assert any(h.entry.kind == "banned" for h in before)  # what the search alone offers: Hantei's line...
    answer = judge.ask("is doji hoturi banned in obsidian hand")
    assert verdicts(answer)[0].startswith(f"“doji hoturi” {NOT_NAMED}")
    assert not [i for i in answer.hit_ids if engine.get(i).kind in ("banned", "update")]
    assert "Hantei" not in to_text(answer) and "Moshi Eihime" not in to_text(answer)
    assert "Nothing else in the rules answers it closely." in to_text(answer)


def test_a_ban_on_one_version_is_said_so(judge: Judge) -> None:
    (said,) = verdicts(judge.ask("is tadaka banned"))
    assert said == (
        "The Obsidian Hand Ruleset's banned list names one version of “tadaka”: Isawa Tadaka, Seven Thunder "
        "(Experienced 2CW) is banned; other versions (another subtitle or experience level) are not named on it."
    )


def test_a_misspelt_banned_card_is_said_banned_with_its_date(judge: Judge) -> None:
    assert verdicts(judge.ask("is moshi eihme banned")) == [
        "Moshi Eihime is banned in The Obsidian Hand Ruleset (on the list since 2016-02-15)."
    ]


def test_an_experienced_version_of_a_card_listed_with_no_level(judge: Judge) -> None:
    (said,) = verdicts(judge.ask("is moshi eihime exp banned"))
    assert said.startswith(f"“moshi eihime exp” {NOT_NAMED} The list names Moshi Eihime with no experience level")
    assert judge.ask("is moshi eihime exp banned").hit_ids[0] == "obsidian-hand:banned-moshi-eihime"  # kept


@pytest.mark.parametrize(
    "question",
    [
        "is moshi eihime banned",  # the first result is its banned line, which says "banned"
        "Is the Hantei emperor personality banned?",  # Hantei, named whole, is on the list
        "is it legal to run 4 copies of a card",
        "is attacking with a bowed personality legal",
        "can i play a second terrain in obsidian hand",
        "are experienced personalities legal",
        "is terrain banned",
        "phoenix alignment legal?",
        "Is the Black Lion stronghold allowed?",  # House of the Black Lion, in other words
        "Is the Nanashi village stronghold banned?",  # Nanashi Mura
        "Is Koans hat legal?",  # Koan's Jingasa
        "Is gold splitting allowed in Obsidian Hand?",  # a practice the guidelines forbid, not a card
        "what does target mean",
    ],
)
def test_no_verdict_where_the_results_say_it_or_no_card_is_asked_about(judge: Judge, question: str) -> None:
    assert verdicts(judge.ask(question)) == []


def test_a_server_playing_no_format_with_a_banned_list_gets_no_verdict(judge: Judge) -> None:
    answer = judge.playing(frozenset()).ask("is hida kisada banned in obsidian hand")
    assert verdicts(answer) == [] and NOT_NAMED not in to_text(answer)


def test_as_of_a_day_before_a_ban_the_card_is_said_not_yet_banned_once(judge: Judge) -> None:
    text = to_text(judge.ask("is moshi eihme banned", as_of="2015-12-01"))
    assert text.count("Moshi Eihime was not yet banned on 2015-12-01") == 1
    assert f"“hida kisada” {NOT_NAMED}" in to_text(judge.ask("is hida kisada banned", as_of="2015-12-01"))


def test_a_mention_typed_as_the_card_is_echoed_without_pinging(judge: Judge) -> None:
    answer = judge.ask("is @everyone banned in obsidian hand")
    assert verdicts(answer)[0].startswith(f"“@everyone” {NOT_NAMED}")  # echoed as typed...
    page = to_discord(answer).pages[0].description
    assert "“@\u200beveryone”" in page and "@everyone" not in page  # ...and inert on Discord


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("is hida kisada banned in obsidian hand", "hida kisada"),
        ("did they ban Hida Kisada?", "Hida Kisada"),
        ("has hida kisada ever been banned", "hida kisada"),
        ("hida kisada banned?", "hida kisada"),
        ("Hida Kisada legal in OH?", "Hida Kisada"),
        ("why was hida kisada banned", "hida kisada"),
        ("can i play the hida kisada card in obsidian hand", "hida kisada"),
        ("judge, is Doji Hoturi on the banned list?", "Doji Hoturi"),
        ("is gozoku still banned in OH?", "gozoku"),
        # a second sentence after the ban question (the sixteenth judge set, 2026-11-28u, missed it)
        ("is block supply lines banned in obsidian hand? can i run it", "block supply lines"),
        ("quick q. is Hida Kisada banned", "Hida Kisada"),
        # half the words the rules use too ("Tactical"): still a card's name (2026-11-28x)
        ("superior tactics legal in OH? wanna slot 3", "superior tactics"),
        # "too" after the ban word; "house" is a plain word of House of the Black Lion, not its name (2026-11-28y)
        ("is House of Tao banned too? i know a couple of the 'house of' strongholds are out", "House of Tao"),
        ("is Charge of the Lion on the banned list", "Charge of the Lion"),
        # "ok to play in OH", a remark in brackets left out (the nineteenth judge set, 2026-11-28z)
        ("house of tao (the dragon SH from diamond) ok to play in OH?", "house of tao"),
        ("is moshi eihime (exp) banned", "moshi eihime (exp)"),  # a level in brackets is part of the name
        # an alternative or an aside after the format (the twentieth judge set, 2026-11-28za, missed it)
        ("can i play Block Supply Lines in obsidian hand or did they ban that one", "Block Supply Lines"),
        ("is doji hoturi legal in OH, wanna run him", "doji hoturi"),
        # ways the blind ban set (2026-11-28) asked that no shape read
        ("did Counterattack get banned? also is it 3 copies max for non-uniques", "Counterattack"),
        ("has Superior Tactics been hit by the ban list", "Superior Tactics"),
        ("Block Suply Lines got banned or nah?", "Block Suply Lines"),
        ("Doji Hoturi still legal", "Doji Hoturi"),
        ("can I run Togashi Yokuni or is he banned", "Togashi Yokuni"),
        ("can i play rallying cry in OH", "rallying cry"),  # a card's "-ing" word, not a practice's
        ("House of Tao banned in OH? i know house of the black lion is", "House of Tao"),  # another sentence's card
        ("r pearl divers allowed in OH", "pearl divers"),
    ],
)
def test_the_card_is_read_from_the_ways_players_ask_about_a_ban(engine: Engine, question: str, name: str) -> None:
    result = engine.banned_asked(question)
    assert result is not None and result.query == name
    assert engine.banned_asked(f"what does {name} do in a battle") is None  # not a ban question


def test_the_lists_heading_found_by_ask_points_at_the_whole_list(judge: Judge) -> None:
    """"what cards are banned in OH" quoted only the heading's "The following cards are not allowed to be included
    in the Play Deck:", naming no card."""
    text = to_text(judge.ask("what cards are banned in OH"))
    whole = to_text(judge.banned())
    assert "The list under it has 25 lines; /banned shows them all" in text
    assert sum(line.startswith("- ") for line in whole.splitlines()) == 25  # the count /banned lists
    earlier = to_text(judge.ask("what cards are banned in OH", as_of="2015-10-10"))  # two came later
    assert "The list under it has 23 lines" in earlier


def test_a_banned_cards_initials_are_that_card_never_not_named(judge: Judge) -> None:
    """"HHoL legal in obsidian hand?" (the blind ban set, 2026-11-28) was told “HHoL” is not named on the list: a
    player's abbreviation of The High House of Light, which is banned."""
    (said,) = verdicts(judge.ask("HHoL legal in obsidian hand? thinking of going dragon"))
    assert said.startswith("The High House of Light is banned in The Obsidian Hand Ruleset")
    assert "“HHoL” is read as the initials of its name." in said
    answer = judge.ask("HHoL legal in OH?")
    assert not answer.hit_ids  # nothing quoted: the verdict's list line is cited under it (line 120 of the file)
    for shown in (to_text(answer), discord_text(answer)):
        assert "Banned Cards › Strongholds › The High House of Light, line 120 · 004_f05ef39847fd66e3.txt" in shown
    banned = to_text(judge.banned("hhol"))
    assert banned.startswith("Banned: The High House of Light") and "read as the initials" in banned
    assert to_text(judge.banned("dog")).startswith("Not on the banned list")  # three letters that are no initials

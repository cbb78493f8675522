"""Tests for the Obsidian Hand ruleset parser, on the shipped copy and on mutated/random input."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glossary.model import Entry, ParsedDocument, SourceError
from glossary.obsidian import _extends, is_heading, is_topic_heading, parse_obsidian

SOURCE = Path(__file__).resolve().parents[2] / "glossary" / "sources" / "004_f05ef39847fd66e3.txt"
TEXT = SOURCE.read_text(encoding="utf-8")
LINES = TEXT.split("\n")
P = "obsidian-hand:"
ABILITY_PATH = ["II. THE PLAYER", "D. Player Abilities and Traits"]


@pytest.fixture(scope="module")
def doc() -> ParsedDocument:
    return parse_obsidian(TEXT, "004_f05ef39847fd66e3.txt")


@pytest.fixture(scope="module")
def by_id(doc: ParsedDocument) -> dict[str, Entry]:
    return {e.id: e for e in doc.entries}


# --- document-wide invariants ------------------------------------------------------------------


def test_document_fields(doc: ParsedDocument) -> None:
    assert doc.source == "obsidian-hand"
    assert doc.document == "The Obsidian Hand Ruleset"
    assert {e.source for e in doc.entries} == {"obsidian-hand"}
    assert {e.document for e in doc.entries} == {"The Obsidian Hand Ruleset"}
    assert {e.location.file for e in doc.entries} == {"004_f05ef39847fd66e3.txt"}


def test_ids_are_unique(doc: ParsedDocument) -> None:
    ids = [e.id for e in doc.entries]
    assert len(ids) == len(set(ids))
    assert all(i.startswith(P) for i in ids)


def test_every_paragraph_is_a_source_line_verbatim(doc: ParsedDocument) -> None:
    for e in doc.entries:
        for para in e.paragraphs:
            assert para in LINES, (e.id, para)
        # and the paragraphs lie inside the entry's own line range, in order
        numbers = [LINES.index(p, e.location.first_line - 1) + 1 for p in e.paragraphs]
        assert numbers == sorted(numbers)
        assert all(e.location.first_line <= n <= e.location.last_line for n in numbers), e.id


def test_bullets_and_indentation_kept(by_id: dict[str, Entry]) -> None:
    deck = by_id[P + "guideline-deck-construction"]
    assert (
        deck.paragraphs[0]
        == "  • Only available Starting Holdings are BK & BH (MRPs); Legacy rulebook ability available."
    )
    clan = by_id[P + "ii-a-clan-alignment"]
    assert "– Brotherhood of Shinsei" in clan.paragraphs
    recruit = by_id[P + "ability-recruit"]
    assert recruit.paragraphs[1].startswith("* Personalities with your Clan Alignment")
    assert recruit.paragraphs[2].startswith("** Personalities with a Clan Alignment")


def test_truncation_anomaly(doc: ParsedDocument) -> None:
    truncated = [a for a in doc.anomalies if a.kind == "truncated"]
    assert len(truncated) == 1
    assert truncated[0].line == 440
    assert truncated[0].file == "004_f05ef39847fd66e3.txt"
    assert "III. CARD TYPES" in truncated[0].message
    assert [a.kind for a in doc.anomalies] == ["update-log-order", "divergent-restatement", "truncated"]


def test_seppuku_stated_twice_with_different_words(doc: ParsedDocument) -> None:
    by_id = {e.id: e for e in doc.entries}
    ability, guideline = by_id[P + "ability-seppuku"], by_id[P + "guideline-player-abilities"]
    assert [(r.entry, r.paragraphs, r.other_paragraphs, r.differs) for r in ability.restated] == [
        (guideline.id, [0, 1, 2], [2, 3, 4], True)
    ]
    assert [(r.entry, r.paragraphs, r.differs) for r in guideline.restated] == [
        (P + "ability-cavalry", [0], False),
        (P + "ability-naval-invasion", [1], False),
        (ability.id, [2, 3, 4], True),
    ]
    # only the line on negation differs ("; unless the action explicitly interacts with Seppuku")
    assert ability.restated[0].differing == guideline.restated[2].differing == [1]
    assert [r.differing for r in guideline.restated[:2]] == [[], []]
    # the guideline's copy of that line adds "; unless the action explicitly interacts with Seppuku": it is fuller
    assert ability.restated[0].fuller == [1] and guideline.restated[2].fuller == []
    (divergent,) = [a for a in doc.anomalies if a.kind == "divergent-restatement"]
    assert divergent.line == 90 and "lines 90-93" in divergent.message and "lines 284-287" in divergent.message


def test_extends_reads_words_in_order() -> None:
    short = "* Seppuku: these effects cannot be negated, delayed, or redirected."
    assert _extends(short, short[:-1] + "; unless the action explicitly interacts with Seppuku.")
    assert not _extends(short, short)
    assert not _extends(short, "these effects can be negated, delayed, or redirected; or not.")
    assert not _extends(short, "redirected, delayed, or negated: these effects cannot be, * Seppuku, ever")


def test_complete_copy_has_no_truncation_anomaly() -> None:
    doc = parse_obsidian(TEXT + "\n", "x.txt")
    assert not [a for a in doc.anomalies if a.kind == "truncated"]


def test_cut_mid_sentence_is_truncated() -> None:
    doc = parse_obsidian(TEXT[: TEXT.index("ignoring costs; for the player")] + "\n", "x.txt")
    assert [(a.kind, a.line) for a in doc.anomalies if a.kind != "update-log-order"] == [
        ("divergent-restatement", 90),
        ("truncated", 438),
    ]


def test_crlf_gives_same_entries(doc: ParsedDocument) -> None:
    crlf = parse_obsidian(TEXT.replace("\n", "\r\n"), "004_f05ef39847fd66e3.txt")
    assert [e.to_dict() for e in crlf.entries] == [e.to_dict() for e in doc.entries]


# --- update log --------------------------------------------------------------------------------

UPDATES = {
    # id suffix: (title, change kind, linked ids)
    "update-2016-02-15": ("Update 02/15/2016", "added", ["banned-moshi-eihime"]),
    "update-2015-10-05": ("Update 10/05/2015", "added", ["banned-house-of-the-black-lion"]),
    "update-2015-10-20": ("Update 10/20/2015", "changed", []),
    "update-2015-10-25": ("Update 10/25/2015", "changed", []),
    "update-2015-10-27": (
        "Update 10/27/2015",
        "changed",
        ["ability-naval-invasion", "guideline-player-abilities"],
    ),
    "update-2015-11-12": ("Update 11/12/2015", "added", ["banned-unreleased-cards-promos"]),
    "update-2015-12-18": ("Update 12/18/2015", "changed", ["ability-favor-cycle"]),
    "update-2016-01-11": (
        "Update 01/11/2016",
        "changed",
        [
            "iii-a-starting-holdings",
            "ability-ninjitsu-open",
            "ability-enlightened-open",
            "ability-lobby",
            "ability-ninjitsu-reaction",  # first named by the "reworded to cite Targeting" line
            "ability-favor-battle",
            "ability-proclaim",
        ],
    ),
}


def test_update_records(doc: ParsedDocument) -> None:
    updates = [e for e in doc.entries if e.kind == "update"]
    assert [e.id.removeprefix(P) for e in updates] == list(UPDATES)  # document order, not date order
    for e in updates:
        title, kind, linked = UPDATES[e.id.removeprefix(P)]
        assert e.title == title
        assert e.section == ["Updates"]
        assert len(e.changes) == 1
        change = e.changes[0]
        month, day, year = title.split()[1].split("/")
        assert change.date == f"{year}-{month}-{day}"
        assert change.raw == f"[{month}/{day}/{year}]"
        assert change.kind == kind
        assert change.update_id == e.id
        assert [r.target for r in e.see_also if r.target] == [P + i for i in linked]


def test_update_text_and_wording(by_id: dict[str, Entry]) -> None:
    naval = by_id[P + "update-2015-10-27"]
    assert naval.location.first_line == 17 and naval.location.last_line == 26
    assert naval.paragraphs[1:4:2] == ["Old", "New"]
    assert naval.old_wording == LINES[21]
    assert naval.old_wording.startswith(
        "Engage: Once per battle, target your performing unbowed Naval Personality"
    )
    assert naval.new_wording == LINES[25]
    assert naval.changes[0].note == "Player ability Naval Invasion will be changed."
    assert by_id[P + "update-2016-02-15"].paragraphs == ["Moshi Eihime added to Banned List"]
    assert by_id[P + "update-2016-02-15"].old_wording is None
    jan = by_id[P + "update-2016-01-11"]
    assert jan.paragraphs == [LINES[36], LINES[37], LINES[39], LINES[41]]
    assert (
        jan.changes[0].note == "Starting Holdings – clarified how they will not be put into the dynasty deck."
    )


def test_terrain_updates_link_to_topic_only(by_id: dict[str, Entry]) -> None:
    for key in ("update-2015-10-20", "update-2015-10-25"):
        refs = by_id[P + key].see_also
        assert [(r.text, r.target) for r in refs] == [("Terrain", None)]


def test_banned_updates_resolve_fuzzy_names(by_id: dict[str, Entry]) -> None:
    lion = by_id[P + "update-2015-10-05"]
    assert lion.paragraphs == ["House of Black Lion added to Banned List"]
    assert lion.see_also[0].text == "House of the Black Lion"


def test_changed_entries_carry_the_update(by_id: dict[str, Entry]) -> None:
    def stamps(suffix: str) -> list[tuple[str, str | None, str, str | None]]:
        return [(c.kind, c.date, c.raw, c.update_id) for c in by_id[P + suffix].changes]

    assert stamps("ability-naval-invasion") == [
        ("changed", "2015-10-27", "[10/27/2015]", P + "update-2015-10-27")
    ]
    assert (
        by_id[P + "ability-naval-invasion"].changes[0].note
        == "Player ability Naval Invasion will be changed."
    )
    assert stamps("banned-moshi-eihime") == [("added", "2016-02-15", "[02/15/2016]", P + "update-2016-02-15")]
    assert stamps("banned-house-of-the-black-lion") == [
        ("added", "2015-10-05", "[10/05/2015]", P + "update-2015-10-05")
    ]
    assert stamps("banned-unreleased-cards-promos") == [
        ("added", "2015-11-12", "[11/12/2015]", P + "update-2015-11-12")
    ]
    assert by_id[P + "ability-favor-cycle"].changes[0].note == "Fixed Favor Cycle ability."
    assert stamps("iii-a-starting-holdings") == [
        ("changed", "2016-01-11", "[01/11/2016]", P + "update-2016-01-11")
    ]
    assert [c.note for c in by_id[P + "ability-ninjitsu-open"].changes] == [LINES[37], LINES[39]]
    # "Ninjitsu – added Performing": only the Ninjitsu whose text says "performing" (Open, not Reaction);
    # "Ninjitsu – reworded to explicitly cite Targeting": both name a target, so both.
    assert "performing" not in by_id[P + "ability-ninjitsu-reaction"].text
    assert [c.note for c in by_id[P + "ability-ninjitsu-reaction"].changes] == [LINES[39]]
    assert [c.note for c in by_id[P + "ability-proclaim"].changes] == [
        "Proclaim – limited its use to the player’s turn"
    ]
    # untouched entries carry nothing
    assert by_id[P + "banned-hantei"].changes == []
    assert by_id[P + "ability-cavalry"].changes == []
    assert by_id[P + "ability-ninjitsu-battle"].changes == []


# --- banned list -------------------------------------------------------------------------------

BANNED = [
    ("Strongholds", "Gates of the Second City"),
    ("Strongholds", "House of the Black Lion"),
    ("Strongholds", "Nanashi Mura"),
    ("Strongholds", "Shrine of the Spirits"),
    ("Strongholds", "The Governor’s Estate"),
    ("Strongholds", "The High House of Light"),
    ("Strongholds", "The Shrine of Lady Sun"),
    ("Sensei", "Gozoku Sensei"),
    ("Sensei", "Yodin Sensei"),
    ("Events", "The Master of Five"),
    ("Personalities", "Hantei"),
    ("Personalities", "Isawa Tadaka, Seven Thunder (Experienced 2CW)"),
    ("Personalities", "Moshi Eihime"),
    ("Strategies", "Breach of Etiquette"),
    ("Strategies", "Final Wave"),
    ("Strategies", "Lies, Lies, Lies"),
    ("Strategies", "Recruiting Drive"),
    ("Strategies", "Take the Initiative"),
    ("Attachments", "Gaijin Merchant"),
    ("Attachments", "Koan’s Jingasa"),
    ("Attachments", "Koan’s Robes"),
    ("Attachments", "Minor Oni Servant"),
    ("Attachments", "Rise from the Ashes"),
    ("Miscellaneous", "Cards with the Rank (Kabuto) icon"),
    ("Miscellaneous", "Unreleased Cards/Promos"),
]


def test_banned_list(doc: ParsedDocument) -> None:
    banned = [e for e in doc.entries if e.kind == "banned"]
    assert [(e.group, e.title) for e in banned] == BANNED
    for e in banned:
        assert e.section == ["Banned Cards", e.group]
        assert e.paragraphs == [e.title]
        assert e.location.first_line == e.location.last_line
    assert banned[0].location.first_line == 115
    assert banned[-1].location.first_line == 151


def test_banned_ids_and_aliases(by_id: dict[str, Entry]) -> None:
    koan = by_id[P + "banned-koans-jingasa"]
    assert koan.title == "Koan’s Jingasa"
    assert "koan's jingasa" in koan.aliases
    assert by_id[P + "banned-isawa-tadaka-seven-thunder-experienced-2cw"].group == "Personalities"


def test_banned_section_intro(by_id: dict[str, Entry]) -> None:
    intro = by_id[P + "banned-cards"]
    assert intro.kind == "section"
    assert intro.section == ["Banned Cards"]
    assert intro.paragraphs == ["The following cards are not allowed to be included in the Play Deck:"]


# --- initial guidelines ------------------------------------------------------------------------

GUIDELINES = [
    ("initial-guidelines", "Initial Guidelines", 44),
    ("guideline-deck-construction", "Deck Construction", 48),
    ("guideline-dishonor-victory", "Dishonor Victory", 61),
    ("guideline-turn-structure", "Turn Structure", 67),
    ("guideline-maneuvers-segment-is-retained", "Maneuvers Segment is retained", 73),
    ("guideline-action-sequence", "Action Sequence", 77),
    ("guideline-battle-related", "Battle Related", 81),
    ("guideline-player-abilities", "Player Abilities", 86),
    ("guideline-performing", "Performing", 95),
]


def test_guidelines(doc: ParsedDocument, by_id: dict[str, Entry]) -> None:
    found = [
        (e.id.removeprefix(P), e.title, e.location.first_line) for e in doc.entries if e.kind == "guideline"
    ]
    assert found == GUIDELINES
    assert all(e.section == ["Initial Guidelines"] for e in doc.entries if e.kind == "guideline")
    assert by_id[P + "initial-guidelines"].paragraphs == [
        "Major Changes from the last Jade Hand Legacy (post Ivory Edition) votings:"
    ]
    assert by_id[P + "guideline-performing"].location.last_line == 108
    assert by_id[P + "guideline-dishonor-victory"].paragraphs[-1].startswith("***If a player reaches -20")


# --- cardinal rules ----------------------------------------------------------------------------


def test_cardinal_rules(doc: ParsedDocument, by_id: dict[str, Entry]) -> None:
    rules = [e for e in doc.entries if e.kind == "cardinal-rule"]
    assert [(e.id, e.title) for e in rules] == [
        (P + "cardinal-rule-1", "Cardinal Rule 1: Cards vs. Rules"),
        (P + "cardinal-rule-2", "Cardinal Rule 2: Cards vs. Cards"),
        (P + "cardinal-rule-3", "Cardinal Rule 3: Oracle vs. Cards"),
        (P + "cardinal-rule-4", "Cardinal Rule 4: Oracle vs. Rules"),
    ]
    assert all(e.section == ["I. CARDINAL RULES"] for e in rules)
    two = by_id[P + "cardinal-rule-2"]
    assert two.aliases == ["cardinal rule 2", "cards vs. cards", "cards vs cards"]
    assert two.paragraphs == [LINES[160]]
    assert by_id[P + "cardinal-rule-1"].paragraphs[1].startswith("Example: An effect that lets you")
    assert (
        by_id[P + "cardinal-rule-4"].location.first_line,
        by_id[P + "cardinal-rule-4"].location.last_line,
    ) == (
        166,
        169,
    )
    part = by_id[P + "i-cardinal-rules"]
    assert (part.kind, part.title, part.section) == ("section", "I. CARDINAL RULES", ["I. CARDINAL RULES"])


# --- numbered sections and sub-headings --------------------------------------------------------

SECTIONS = [
    ("i-cardinal-rules", ["I. CARDINAL RULES"]),
    ("ii-a-clan-alignment", ["II. THE PLAYER", "A. Clan Alignment"]),
    ("ii-b-family-honor", ["II. THE PLAYER", "B. Family Honor"]),
    ("ii-b-honor-gains-and-losses", ["II. THE PLAYER", "B. Family Honor", "Honor gains and losses"]),
    ("ii-b-points-of-family-honor", ["II. THE PLAYER", "B. Family Honor", "Points of Family Honor"]),
    ("ii-c-maximum-hand-size", ["II. THE PLAYER", "C. Maximum Hand Size"]),
    ("ii-d-player-abilities-and-traits", ["II. THE PLAYER", "D. Player Abilities and Traits"]),
    ("ii-e-victory-conditions", ["II. THE PLAYER", "E. Victory Conditions"]),
    ("ii-e-military", ["II. THE PLAYER", "E. Victory Conditions", "Military"]),
    ("ii-e-dishonor", ["II. THE PLAYER", "E. Victory Conditions", "Dishonor"]),
    ("ii-e-honor", ["II. THE PLAYER", "E. Victory Conditions", "Honor"]),
    ("ii-e-enlightenment", ["II. THE PLAYER", "E. Victory Conditions", "Enlightenment"]),
    (
        "ii-e-special-victory-conditions",
        ["II. THE PLAYER", "E. Victory Conditions", "Special victory conditions"],
    ),
    (
        "ii-f-deck-constructions-and-restrictions",
        ["II. THE PLAYER", "F. Deck Constructions and Restrictions"],
    ),
    (
        "ii-f-the-play-deck-and-deck-construction",
        ["II. THE PLAYER", "F. Deck Constructions and Restrictions", "The Play Deck and Deck Construction"],
    ),
    (
        "ii-f-deck-restrictions",
        ["II. THE PLAYER", "F. Deck Constructions and Restrictions", "Deck Restrictions"],
    ),
    ("iii-a-starting-card-types", ["III. CARD TYPES", "A. Starting Card Types"]),
    ("iii-a-strongholds", ["III. CARD TYPES", "A. Starting Card Types", "Strongholds"]),
    (
        "iii-a-strongholds-a-clan-alignment",
        ["III. CARD TYPES", "A. Starting Card Types", "Strongholds", "A. Clan Alignment"],
    ),
    (
        "iii-a-strongholds-b-province-strength",
        ["III. CARD TYPES", "A. Starting Card Types", "Strongholds", "B. Province Strength"],
    ),
    (
        "iii-a-strongholds-c-gold-production",
        ["III. CARD TYPES", "A. Starting Card Types", "Strongholds", "C. Gold Production"],
    ),
    (
        "iii-a-strongholds-d-starting-family-honor",
        ["III. CARD TYPES", "A. Starting Card Types", "Strongholds", "D. Starting Family Honor"],
    ),
    ("iii-a-senseis", ["III. CARD TYPES", "A. Starting Card Types", "Senseis"]),
    ("iii-a-winds", ["III. CARD TYPES", "A. Starting Card Types", "Winds"]),
    ("iii-a-starting-holdings", ["III. CARD TYPES", "A. Starting Card Types", "Starting Holdings"]),
]


def test_sections_and_subheadings(doc: ParsedDocument) -> None:
    sections = [
        (e.id.removeprefix(P), e.section)
        for e in doc.entries
        if e.kind == "section" and e.section[0] != "Banned Cards"
    ]
    assert sections == SECTIONS
    for e in doc.entries:
        if e.kind == "section":
            assert e.title == e.section[-1]


def test_section_entry_details(by_id: dict[str, Entry]) -> None:
    clan = by_id[P + "ii-a-clan-alignment"]
    assert clan.title == "A. Clan Alignment"
    assert clan.aliases == ["clan alignment", "II.A"]
    assert (clan.location.first_line, clan.location.last_line) == (171, 206)
    assert clan.paragraphs[0].startswith("A player’s Clan Alignment derives")
    restrictions = by_id[P + "ii-f-deck-restrictions"]
    assert (restrictions.location.first_line, restrictions.location.last_line) == (357, 387)
    assert restrictions.paragraphs[0] == LINES[358]
    province = by_id[P + "iii-a-strongholds-b-province-strength"]
    assert province.paragraphs == [LINES[402]]
    assert "province strength" in province.aliases
    military = by_id[P + "ii-e-military"]
    assert military.paragraphs == ["A player loses immediately when he/she has no Provinces remaining."]


def test_in_document_see_references(by_id: dict[str, Entry]) -> None:
    winds = by_id[P + "iii-a-winds"]
    assert [(r.text, r.target) for r in winds.see_also] == [
        ("Player Abilities and Traits", P + "ii-d-player-abilities-and-traits")
    ]
    # references to the comprehensive rules stay open for the corpus linker
    assert [(r.text, r.target) for r in by_id[P + "ii-b-honor-gains-and-losses"].see_also] == [
        ("Timing Conflicts", None)
    ]


@pytest.mark.parametrize(
    ("line", "following", "expected"),
    [
        ("Deck Restrictions", "Only one copy of each Unique card, by card title, may be included.", True),
        ("Military", "A player loses immediately when he/she has no Provinces remaining.", True),
        ("B. Province Strength", "The topmost of three icons at the right of the Stronghold shows it.", True),
        ("Special victory conditions", "Cards in the game may give other conditions of winning.", True),
        ("– Crab Clan", "– Crane Clan", False),
        ("Example: Badger Clan, Sparrow Clan, etc.", "The following Keywords are considered", False),
        ("This consists of:", "  • 2 decks, each containing at least 40 cards each (40/40)", False),
        ("i.e. you may only include 3 copies", "However, some cards share a name.", False),
        ("  • 1 Stronghold card", "  • 1 Border Keep", False),
        ("Strongholds", None, False),
        ("Strongholds", "Senseis", False),
        ("Strongholds", "", False),
        ("Maximum hand size is a stat of the player and follows the rules about stats.", "More text.", False),
        ("** Limited **", "Lobby", False),
        ("lowercase heading", "A body sentence follows here.", False),
        ("A heading that is far too long to be one", "Body text follows here.", False),
    ],
)
def test_is_heading(line: str, following: str | None, expected: bool) -> None:
    assert is_heading(line, following) is expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Deck Construction:", True),
        ("Maneuvers Segment is retained:", True),
        ("Major Changes from the last Jade Hand Legacy (post Ivory Edition) votings:", False),
        ("Personalities and Followers may perform actions. They are considered performing if:", False),
        ("  • Cavalry – Absent Engage:", False),
        ("Deck Construction", False),
    ],
)
def test_is_topic_heading(line: str, expected: bool) -> None:
    assert is_topic_heading(line) is expected


# --- player abilities --------------------------------------------------------------------------

ABILITIES = [
    ("ability-lobby", "Lobby", "Limited"),
    ("ability-favor-cycle", "Favor Cycle", "Limited"),
    ("ability-kharmic", "Kharmic", "Limited"),
    ("ability-enlightened-open", "Enlightened", "Open"),
    ("ability-equip", "Equip", "Open"),
    ("ability-ninjitsu-open", "Ninjitsu", "Open"),
    ("ability-cavalry", "Cavalry", "Engage"),
    ("ability-naval-invasion", "Naval Invasion", "Engage"),
    ("ability-proclaim", "Proclaim", "Interrupt"),
    ("ability-courage", "Courage", "Interrupt"),
    ("ability-honor", "Honor", "Interrupt"),
    ("ability-ancestral-guidance", "Ancestral Guidance", "Reaction"),
    ("ability-ninjitsu-reaction", "Ninjitsu", "Reaction"),
    ("ability-seppuku", "Seppuku", "Reaction"),
    ("ability-enlightened-battle", "Enlightened", "Battle"),
    ("ability-ninjitsu-battle", "Ninjitsu", "Battle"),
    ("ability-favor-battle", "Favor Battle", "Battle"),
    ("ability-reserve", "Reserve", "Battle"),
    ("ability-tactical-advantage", "Tactical Advantage", "Battle"),
    ("ability-legacy", "Legacy", "Dynasty"),
    ("ability-recruit", "Recruit", "Dynasty"),
]


def test_abilities(doc: ParsedDocument) -> None:
    abilities = [e for e in doc.entries if e.kind == "ability"]
    assert [(e.id.removeprefix(P), e.title, e.group) for e in abilities] == ABILITIES
    for e in abilities:
        assert e.section == [*ABILITY_PATH, e.group]
        assert e.paragraphs, e.id


def test_ability_text(by_id: dict[str, Entry]) -> None:
    naval = by_id[P + "ability-naval-invasion"]
    assert naval.paragraphs == [LINES[264]]
    assert (naval.location.first_line, naval.location.last_line) == (264, 265)
    reserve = by_id[P + "ability-reserve"]
    assert [p[:25] for p in reserve.paragraphs] == ["Absent Repeatable Battle,", "Repeatable Battle, [* Gol"]
    seppuku = by_id[P + "ability-seppuku"]
    assert len(seppuku.paragraphs) == 3 and seppuku.paragraphs[2] == LINES[286]
    assert by_id[P + "ability-ninjitsu-open"].aliases == ["ninjitsu", "ninjitsu open"]


def test_see_stubs_point_to_the_referenced_ability(by_id: dict[str, Entry]) -> None:
    stub = by_id[P + "ability-enlightened-battle"]
    assert stub.paragraphs == ["* see Enlightened Open"]
    assert [(r.text, r.target) for r in stub.see_also] == [
        ("Enlightened Open", P + "ability-enlightened-open")
    ]
    ninja = by_id[P + "ability-ninjitsu-battle"]
    assert [(r.text, r.target) for r in ninja.see_also] == [("Ninjitsu Open", P + "ability-ninjitsu-open")]


# --- bad and odd input -------------------------------------------------------------------------


def test_not_this_document() -> None:
    with pytest.raises(SourceError) as err:
        parse_obsidian("[edit] Tap\nTo tap a card...\n", "g.txt")
    assert err.value.file == "g.txt"
    assert err.value.line == 1
    assert "not the Obsidian Hand ruleset" in str(err.value)


@pytest.mark.parametrize("text", ["", "\n\n  \n", "The Obsidian Hand Ruleset\n\nJust some prose.\n"])
def test_no_structure(text: str) -> None:
    with pytest.raises(SourceError):
        parse_obsidian(text, "o.txt")


def test_duplicate_and_impossible_update_dates() -> None:
    text = (
        "The Obsidian Hand Ruleset\nUpdates\n[02/15/2016]\nMoshi Eihime added to Banned List\n"
        "[02/15/2016]\nSomething else changed.\n[13/40/2015]\nOdd date.\n[Oct 2015]\n"
        "Banned Cards\n*** Personalities ***\nMoshi Eihime\n"
    )
    doc = parse_obsidian(text, "o.txt")
    ids = [e.id for e in doc.entries]
    assert ids[:3] == [P + "update-2016-02-15", P + "update-2016-02-15-2", P + "update-2015-13-40"]
    assert len(ids) == len(set(ids))
    kinds = [(a.kind, a.line) for a in doc.anomalies]
    assert ("duplicate-id", 5) in kinds
    assert ("impossible-date", 7) in kinds
    assert ("unparsed-stamp", 9) in kinds
    odd = doc.entries[2].changes[0]
    assert odd.date == "2015-13-40" and odd.anomaly is not None
    moshi = doc.entries[-1]
    assert moshi.id == P + "banned-moshi-eihime"
    assert [c.update_id for c in moshi.changes] == [P + "update-2016-02-15"]


def test_dangling_stub_is_reported() -> None:
    text = (
        "The Obsidian Hand Ruleset\nII. THE PLAYER – D. Abilities\n** Battle **\nShadow\n* see Nothing Here\n"
    )
    doc = parse_obsidian(text, "o.txt")
    stub = doc.entries[-1]
    assert [(r.text, r.target, r.line) for r in stub.see_also] == [("Nothing Here", None, 5)]
    # reported on the line that holds the reference, not on the ability's name line
    assert ("dangling-reference", 5) in [(a.kind, a.line) for a in doc.anomalies]


def _safe_parse(text: str) -> None:
    try:
        doc = parse_obsidian(text, "fuzz.txt")
    except SourceError as exc:
        assert exc.file == "fuzz.txt"
        return
    ids = [e.id for e in doc.entries]
    assert len(ids) == len(set(ids))
    lines = text.replace("\r\n", "\n").split("\n")
    for e in doc.entries:
        assert all(p in lines or p + "\r" in text.split("\n") for p in e.paragraphs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_random_text_never_escapes(text: str) -> None:
    _safe_parse(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["drop", "dup", "swap", "insert", "truncate"]),
            st.integers(min_value=0, max_value=len(LINES) - 1),
            st.text(max_size=40),
        ),
        max_size=12,
    )
)
def test_mutated_document_never_escapes(ops: list[tuple[str, int, str]]) -> None:
    lines = list(LINES)
    for op, i, junk in ops:
        if not lines:
            break
        i %= len(lines)
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "insert":
            lines.insert(i, junk)
        elif op == "truncate":
            lines = lines[: i + 1]
    _safe_parse("\n".join(lines))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["[", "]", "***", "** X **", "Cardinal Rule 9:", "II. THE PLAYER – Z. ", "* see ", "Old"])
)
def test_structural_junk_lines_never_escape(junk: str) -> None:
    for i in range(0, len(LINES), 37):
        _safe_parse("\n".join([*LINES[:i], junk, *LINES[i:]]))


def test_future_update_date_is_kept_and_reported_with_the_probable_date() -> None:
    text = (
        "The Obsidian Hand Ruleset\nUpdates\n[02/15/3016]\nMoshi Eihime added to Banned List\n"
        "Banned Cards\n*** Personalities ***\nMoshi Eihime\n"
    )
    doc = parse_obsidian(text, "o.txt", today=date(2026, 1, 1))
    update, moshi = doc.entries[0], doc.entries[-1]
    expected = "impossible date [02/15/3016] (3016-02-15 is in the future); probably 2016-02-15"
    assert [(c.date, c.probable_date, c.anomaly) for c in update.changes] == [
        ("3016-02-15", "2016-02-15", expected)
    ]
    # the banned card carries the same change, still dated as written
    assert [(c.kind, c.date, c.probable_date) for c in moshi.changes] == [("added", "3016-02-15", "2016-02-15")]
    assert ("impossible-date", 3) in [(a.kind, a.line) for a in doc.anomalies]


@pytest.mark.parametrize(
    ("stamp", "today", "anomaly"),
    [
        (
            "[02/15/1016]",
            date(2026, 1, 1),
            "impossible date [02/15/1016] (1016-02-15 is before 1995); probably 2016-02-15",
        ),
        ("[02/30/2016]", date(2026, 1, 1), "impossible date [02/30/2016]: no such day"),
        ("[02/15/2016]", date(2016, 2, 14), "impossible date [02/15/2016] (2016-02-15 is in the future)"),
        ("[02/15/2016]", date(2016, 2, 15), None),
    ],
)
def test_update_dates_are_checked_like_glossary_stamps(stamp: str, today: date, anomaly: str | None) -> None:
    text = f"The Obsidian Hand Ruleset\nUpdates\n{stamp}\nSomething changed.\n"
    doc = parse_obsidian(text, "o.txt", today=today)
    assert [c.anomaly for c in doc.entries[0].changes] == [anomaly]
    assert [a.message for a in doc.anomalies if a.kind == "impossible-date"] == ([anomaly] if anomaly else [])

"""Relations in the answer model: each kind is said only where the sources support it, at the level where
it is true (a paragraph or the whole entry), and every related text carries its own citation.

The premises come from the shipped sources: the Obsidian Hand updates of 10/20/2015 and 10/25/2015 concern
Terrain's second paragraph (one Terrain per battlefield), not its third (a Terrain is never an enemy card);
the Obsidian Hand's B. Family Honor states the glossary's Family Honor in its own words; the ruleset gives
Seppuku twice in different words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.app.answer import Answer, Block, Citation, Group, Quote, Relation, plain_text
from bot.app.compose import Composer
from bot.app.judge import Judge
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine
from tests.rendering import discord_text, to_text

EXAMPLES = Path(__file__).resolve().parents[2] / "glossary" / "house_examples"


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open([SHIPPED_SOURCES], default_index)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def with_house(index_copy: Callable[..., Path]) -> Iterator[Judge]:
    eng = Engine.open([SHIPPED_SOURCES, EXAMPLES], index_copy("index"))  # embeds only the house rulings
    yield Judge(eng)
    eng.close()


@pytest.fixture(scope="module")
def judge(engine: Engine) -> Judge:
    return Judge(engine)


def walk(blocks: list[Block]) -> Iterator[Block]:
    for block in blocks:
        yield block
        if isinstance(block, Group):
            yield from walk(block.blocks)


def first_result(answer: Answer, entry_id: str) -> list[Block]:
    """The blocks of the result that quotes ``entry_id``."""
    for item in answer.items:
        blocks = list(walk(item.blocks))
        if any(isinstance(b, Quote) and b.entry.id == entry_id and b.role == "hit" for b in blocks):
            return blocks
    raise AssertionError(f"{entry_id} is not among the results of {answer.title!r}")


def relations(blocks: list[Block]) -> list[Relation]:
    return [b for b in blocks if isinstance(b, Relation)]


def quoted_paragraph(blocks: list[Block], entry_id: str) -> int | None:
    return next(b.paragraph for b in blocks if isinstance(b, Quote) and b.entry.id == entry_id and b.role == "hit")


def test_terrain_paragraph_3_is_amended_by_nothing(judge: Judge) -> None:
    answer = judge.ask("does a terrain count as an enemy card")
    blocks = first_result(answer, "glossary:terrain")
    assert quoted_paragraph(blocks, "glossary:terrain") == 2
    assert relations(blocks) == []
    shown = to_text(answer) + discord_text(answer)
    assert "amends" not in shown and "10/25/2015" not in shown and "10/20/2015" not in shown


def test_terrain_paragraph_2_carries_both_updates_latest_first_never_called_amendments(judge: Judge) -> None:
    """Neither Terrain update gives Old/New wording: each is an update about the paragraph, and the answer
    does not claim it changed the glossary's text (issue 17: say only what the sources say)."""
    answer = judge.ask("can I play a second terrain if one is already out at this battlefield")
    blocks = first_result(answer, "glossary:terrain")
    assert quoted_paragraph(blocks, "glossary:terrain") == 1
    found = [r for r in relations(blocks) if r.kind != "house-ruling"]
    assert [(r.kind, r.entry.id, r.scope, r.earlier) for r in found] == [
        ("updates", "obsidian-hand:update-2015-10-25", (1,), False),
        ("updates", "obsidian-hand:update-2015-10-20", (1,), True),
    ]
    for r in found:  # each related text is quoted verbatim with its own citation
        assert r.quote is not None and r.quote.text == r.entry.text
        assert isinstance(r.citation, Citation) and r.citation.entry is r.entry
    text = to_text(answer)
    latest = text.index("the latest update about this: Update 10/25/2015")
    earlier = text.index("an earlier update about this: Update 10/20/2015")
    assert "amends" not in text
    assert latest < earlier
    assert "Updates › Update 10/25/2015, lines 14-15" in text  # the update's own lines, not Terrain's


def test_terrain_shown_whole_names_the_paragraph_the_updates_amend(judge: Judge) -> None:
    answer = judge.define("terrain")
    found = [r for r in relations(list(walk(answer.body))) if r.kind != "house-ruling"]
    assert {(r.kind, r.scope) for r in found} == {("updates", (1,))}
    text = to_text(answer)
    assert "the latest update about paragraph 2: Update 10/25/2015" in text
    assert "about this" not in text  # "this" would be the whole entry: not true


def test_family_honor_is_covered_by_the_obsidian_hand_not_amended_nor_restated(judge: Judge) -> None:
    """Linked by name only (no run of words in common): "also has a rule on this", not "in its own words"."""
    for answer in (judge.ask("family honor"), judge.define("family honor")):
        blocks = list(walk([b for item in answer.items for b in item.blocks] + answer.body))
        found = [r for r in relations(blocks) if r.of.id == "glossary:family-honor"]
        assert [(r.kind, r.entry.id) for r in found] == [("covers", "obsidian-hand:ii-b-family-honor")]
        shown = to_text(answer) + discord_text(answer)
        assert "also has a rule on this" in shown and "in its own words" not in shown
        assert "amends" not in shown and "Overridden" not in shown


def test_a_rule_stated_twice_in_other_words_is_quoted_with_its_own_citation(judge: Judge) -> None:
    answer = judge.ask("what is seppuku")
    blocks = first_result(answer, "obsidian-hand:ability-seppuku")
    found = [r for r in relations(blocks) if r.kind == "restated-elsewhere"]
    assert len(found) == 1 and found[0].differs
    other = found[0].entry
    assert other.id == "obsidian-hand:guideline-player-abilities"
    assert found[0].quote is not None and found[0].quote.text in other.text  # verbatim, from the other entry
    assert found[0].citation is not None and found[0].citation.entry is other
    assert "The ruleset states this again in" in to_text(answer)


def test_both_copies_of_a_rule_stated_twice_among_the_results_are_each_quoted_once(judge: Judge) -> None:
    """"can opp negate my seppuku?" has both copies as results (the fuller first): each result names the other
    as the restatement, by its number, instead of quoting it a second time."""
    answer = judge.ask("can opp negate my seppuku?")
    text = to_text(answer)
    assert "The ruleset states this again in Seppuku, in other words; it is result 2." in text
    assert "The ruleset states this again in Player Abilities, in other words; it is result 1." in text
    fuller = "these effects cannot be negated, delayed, or redirected; unless the action explicitly interacts"
    assert text.count(fuller) == 1
    assert text.count("these effects cannot be negated, delayed, or redirected.") == 1


def test_a_house_ruling_is_labelled_as_a_ruling_never_as_the_formats_rule(with_house: Judge) -> None:
    answer = with_house.define("terrain")
    found = [r for r in relations(list(walk(answer.body))) if r.entry.source == "house"]
    assert found and all(r.kind == "house-ruling" and r.scope is None for r in found)
    text = to_text(answer)
    for r in found:
        assert f"House ruling — {r.entry.label}" in text
        assert f"In The Obsidian Hand Ruleset, {r.entry.label}" not in text


def test_an_update_whose_paragraph_is_unclear_concerns_the_entry_not_this_paragraph(engine: Engine) -> None:
    """Where the texts do not say which paragraph an update concerns, a quoted paragraph is never said to be
    amended by it: the answer says the update concerns the entry and that which paragraph is not clear."""
    composer = Composer(engine.get, scope=lambda _rule, _entry: None)
    terrain = engine.get("glossary:terrain")
    assert terrain is not None
    found = composer.relations(terrain, paragraph=2)
    assert {r.kind for r in found} == {"concerns-entry"}
    words = " ".join(plain_text(r.heading) for r in found)
    assert "which paragraph it concerns is not clear" in words and "amends" not in words


def test_a_servers_ruling_is_its_own_relation_under_the_entry_and_under_a_result(engine: Engine) -> None:
    """A server's ruling applies to the entry its judge named (never a paragraph of it), labelled as this
    server's, quoted in full where the entry is shown whole and named under a search result."""
    from glossary.model import Change, CrossRef, Entry, Location
    from index.query.overlay import scoped_id

    ruling = Entry(
        id=scoped_id(41),
        source="house",
        document="Server rulings",
        kind="ruling",
        title="Terrain during a duel",
        section=["Server rulings"],
        paragraphs=["No Terrain may be played while a duel is being resolved."],
        location=Location("ruling 41", 1, 1),
        changes=[Change(kind="added", date="2026-11-21", raw="Date: 2026-11-21")],
        see_also=[CrossRef(text="glossary:terrain", target="glossary:terrain")],
        judge="Ann",
    )
    judge = Judge(engine).scoped(engine.build_overlay("guild:7", [ruling], 1))
    whole = [r for r in relations(list(walk(judge.define("terrain").body))) if r.kind == "server-ruling"]
    assert [(r.entry.id, r.scope) for r in whole] == [(ruling.id, None)]
    assert whole[0].quote is not None and whole[0].quote.text == ruling.text
    assert "Server ruling — Terrain during a duel (Ann, 2026-11-21):" in plain_text(whole[0].heading)
    result = first_result(judge.ask("does a terrain count as an enemy card"), "glossary:terrain")
    named = [r for r in relations(result) if r.kind == "server-ruling"]
    assert [r.entry.id for r in named] == [ruling.id]
    assert plain_text(named[0].heading).startswith("This server's ruling applies: Terrain during a duel")
    assert not [r for r in relations(result) if r.kind in ("amends", "concerns-entry")]  # still ¶3


def test_tactical_advantage_repeats_tacticals_words_so_it_restates_it(judge: Judge) -> None:
    """The one format rule that repeats a run of a glossary entry's words is worded as a restatement."""
    answer = judge.define("tactical")
    found = [r for r in relations(list(walk(answer.body))) if r.entry.id == "obsidian-hand:ability-tactical-advantage"]
    assert [r.kind for r in found] == ["restates"]
    assert "in its own words in Tactical Advantage" in to_text(answer)


def test_a_log_record_is_dated_under_the_paragraph_its_words_name_not_under_the_rest(judge: Judge) -> None:
    """"Starting Holdings – clarified how they will not be put into the dynasty deck" concerns the paragraph
    saying they do not go into the Dynasty deck; Border Keep's first-turn immunity never changed (issue 17)."""
    holdings = judge.lookup("obsidian-hand:iii-a-starting-holdings")
    assert holdings is not None
    record = [c for c in holdings.changes if c.update_id == "obsidian-hand:update-2016-01-11"]
    assert [c.paragraph for c in record] == [0] and "Dynasty deck" in holdings.paragraphs[0]
    answer = judge.ask("my border keep on turn 1, can my opponent's cards affect it")
    text = to_text(answer)
    immunity = text.index("Border Keep will not be affected by other player’s cards until the end")
    ends = [k for k in (text.find("\n\n", immunity), text.find("\nOpen:", immunity)) if k > 0]
    shown = text[immunity: min(ends)]  # that result, up to the next one or the Open line
    assert "2016-01-11" not in shown and "dynasty deck" not in shown


def test_an_update_line_brings_the_rule_it_changed_and_no_other_items_note(judge: Judge) -> None:
    """"can i use Proclaim on my opponent's turn?" ranks the update-log line first; a judge quotes the rule it
    changed, and the record's stamp must not carry its first item's note (Starting Holdings) under Proclaim's."""
    answer = judge.ask("can i use Proclaim on my opponent's turn?")
    blocks = first_result(answer, "obsidian-hand:update-2016-01-11")
    changed = [r for r in relations(blocks) if r.kind == "changed-rule"]
    assert [r.entry.id for r in changed] == ["obsidian-hand:ability-proclaim"]
    assert changed[0].quote is not None and changed[0].quote.text.startswith("Interrupt: During your turn")
    cited = changed[0].citation
    assert isinstance(cited, Citation) and cited.entry.id == "obsidian-hand:ability-proclaim"
    text = to_text(answer)
    assert "It changed Proclaim, which the loaded sources now read:" in text
    assert "Starting Holdings" not in text


def test_an_update_that_changed_no_loaded_text_is_not_said_to_have_changed_it(judge: Judge) -> None:
    """The 10/20/2015 record withdraws the format's own clause on old Terrains destroying new ones; the glossary's
    Terrain it names was not changed by it (no change of it is recorded), so it is not "It changed Terrain"."""
    answer = judge.ask("what was the 10/20/2015 change about terrains?")
    blocks = first_result(answer, "obsidian-hand:update-2015-10-20")
    named = [r for r in relations(blocks) if r.kind == "changed-rule"]
    assert [r.entry.id for r in named] == ["glossary:terrain"]
    text = to_text(answer)
    assert "It changed Terrain" not in text
    assert "It concerns Terrain, but no change to that text is recorded; the loaded sources read:" in text
    # where the record did change the rule, it still says so
    assert "It changed Proclaim, which the loaded sources now read:" in to_text(
        judge.ask("can i use Proclaim on my opponent's turn?"))

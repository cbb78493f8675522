"""Formats per server in answers (bot.app.formats): a server that does not play the Obsidian Hand Ruleset gets the
same answers without its rules, bans and amendments, and one line saying so when the format would have answered;
a server that chose nothing, or plays it, gets what direct messages get."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.app.formats import FormatChoiceError, complete, describe, left_out_line, loaded, parse_choice
from bot.app.judge import Judge
from bot.app.renderers.discord_markdown import render as render_discord
from bot.app.renderers.text import render
from glossary.formats import Format, formats, plays
from glossary.loader import default_sources, load_corpus
from index.engine import Engine

OH = "the-obsidian-hand-ruleset"
LEFT_OUT = "The Obsidian Hand Ruleset also has a rule on this; this server does not play it."


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    return index_copy("formats")  # the session's default index, copied


@pytest.fixture(scope="module")
def engine(index_dir: Path) -> Iterator[Engine]:
    eng = Engine.open(None, index_dir)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def judges(engine: Engine) -> dict[str, Judge]:
    base = Judge(engine)
    return {"dm": base, "none": base.playing(frozenset()), "oh": base.playing(frozenset({OH}))}


def text(answer) -> str:  # noqa: ANN001 (an Answer)
    return render(answer)


def test_the_loaded_formats_come_from_the_corpus(engine: Engine) -> None:
    assert loaded(engine.corpus) == [Format(OH, "The Obsidian Hand Ruleset", "obsidian-hand", banned_list=True)]


def test_a_second_document_of_the_format_kind_is_a_second_format() -> None:
    entries = load_corpus(default_sources()).entries
    ruleset = [e for e in entries if e.source == "obsidian-hand"]
    other = [dataclasses.replace(e, document="The Emerald Ruleset", id=e.id + "-emerald") for e in ruleset[:5]]
    found = formats([*entries, *other])
    assert [f.id for f in found] == [OH, "the-emerald-ruleset"]
    assert [f.banned_list for f in found] == [True, any(e.kind == "banned" for e in ruleset[:5])]
    emerald = frozenset({"the-emerald-ruleset"})
    assert plays(other[0], emerald) and not plays(ruleset[0], emerald)
    glossary = next(e for e in entries if e.source == "glossary")
    assert plays(glossary, frozenset()) and plays(ruleset[0], None)  # no format: always; chose nothing: all
    two = [*loaded_formats(), Format("the-emerald-ruleset", "The Emerald Ruleset", "obsidian-hand")]
    assert parse_choice("emerald, obsidian hand", two) == ("the-emerald-ruleset", OH)
    assert parse_choice("the-emerald-ruleset", two) == ("the-emerald-ruleset",)
    with pytest.raises(FormatChoiceError, match="names several formats"):
        parse_choice("ruleset", two)
    assert left_out_line(["The Obsidian Hand Ruleset", "The Emerald Ruleset"]) == (
        "The Obsidian Hand Ruleset and The Emerald Ruleset also have rules on this; this server does not play them."
    )


def loaded_formats() -> list[Format]:
    return [Format(OH, "The Obsidian Hand Ruleset", "obsidian-hand", banned_list=True)]


def test_a_typed_choice_is_read_or_refused_with_the_loaded_formats() -> None:
    known = loaded_formats()
    assert parse_choice("Obsidian Hand", known) == (OH,)
    assert parse_choice("the-obsidian-hand-ruleset", known) == (OH,)
    assert parse_choice(" none ", known) == ()
    assert parse_choice("all", known) is None and parse_choice("", known) is None
    with pytest.raises(FormatChoiceError) as refused:
        parse_choice("obsidian hand, @everyone", known)
    assert "“@everyone” is not a loaded format" in str(refused.value)
    assert "The Obsidian Hand Ruleset (the-obsidian-hand-ruleset)" in str(refused.value)
    assert describe(None, known).startswith("This server has not chosen its formats: answers show every format")
    assert describe((), known) == ("This server plays no format: answers show the glossary and house rulings, and "
                                   "leave out The Obsidian Hand Ruleset.")  # fmt: skip
    assert describe((OH,), known) == (
        "This server plays The Obsidian Hand Ruleset: answers show its rules, bans and amendments."
    )
    assert "Chosen but not loaded now: gone-ruleset" in describe(("gone-ruleset",), known)
    assert [v for _n, v in complete("", known)] == ["all", "none", OH]
    assert [v for _n, v in complete("obsid", known)] == [OH]
    assert [v for _n, v in complete(f"{OH}, emer", known)] == []


def test_ask_leaves_the_format_out_and_says_so_once(judges: dict[str, Judge]) -> None:
    question = "how many terrains can be in play"
    shown = text(judges["dm"].ask(question))
    assert "In The Obsidian Hand Ruleset" in shown and "— The Obsidian Hand Ruleset" in shown  # as today
    assert LEFT_OUT not in shown
    assert text(judges["oh"].ask(question)) == shown  # a server that plays it: the same answer
    none = judges["none"].ask(question)
    said = text(none)
    assert said.count(LEFT_OUT) == 1
    assert "Obsidian Hand" not in said.replace(LEFT_OUT, "")
    assert "1. Terrain — L5R Comprehensive Rules" in said
    assert all(not h.startswith("obsidian-hand:") for h in none.hit_ids)
    assert render_discord(none).pages[0].description.count("does not play it") == 1


def test_define_keeps_the_glossary_text_without_the_formats_amendments(judges: dict[str, Judge]) -> None:
    full = text(judges["dm"].define("terrain"))
    assert "In The Obsidian Hand Ruleset" in full and LEFT_OUT not in full
    none = text(judges["none"].define("terrain"))
    assert none.count(LEFT_OUT) == 1 and "In The Obsidian Hand Ruleset" not in none
    assert "If a Terrain is already in play at the current battlefield" in none
    assert "Format rule:" not in none  # no link to the left-out rules either
    assert text(judges["oh"].define("terrain")) == full


def test_a_format_entry_asked_for_by_name_or_id_is_not_shown(judges: dict[str, Judge]) -> None:
    assert "Tactical Advantage" in text(judges["dm"].define("tactical advantage")).splitlines()[0]
    for asked in ("tactical advantage", "obsidian-hand:ability-tactical-advantage"):
        said = text(judges["none"].define(asked))
        assert LEFT_OUT in said and not said.startswith("Tactical Advantage")
    opened = text(judges["none"].open("obsidian-hand:ability-tactical-advantage"))
    assert opened.startswith("Entry not shown in this server") and LEFT_OUT in opened


def test_rule_of_a_format_the_server_does_not_play(judges: dict[str, Judge]) -> None:
    assert text(judges["oh"].rule("cardinal rule 2")).startswith("Cardinal Rule 2: Cards vs. Cards")
    said = text(judges["none"].rule("cardinal rule 2"))
    assert said.startswith("No section matches “cardinal rule 2”") and said.count(LEFT_OUT) == 1


def test_banned_in_a_server_playing_no_format_with_a_banned_list(judges: dict[str, Judge]) -> None:
    assert text(judges["oh"].banned("moshi eihime")).startswith("Banned: Moshi Eihime")
    card = text(judges["none"].banned("moshi eihime"))
    assert card.startswith("No banned list in this server's formats")
    assert "This server plays no format with a banned list, so no format bans “moshi eihime” here." in card
    assert "The Obsidian Hand Ruleset also has a banned list naming it; this server does not play it." in card
    assert "Moshi Eihime is banned" not in card
    whole = text(judges["none"].banned())
    assert "This server plays no format with a banned list, so no format bans a card here." in whole
    assert "The Obsidian Hand Ruleset also has a banned list; this server does not play it." in whole
    assert "Gozoku Sensei" not in whole and "Gozoku Sensei" in text(judges["oh"].banned())
    unknown = text(judges["none"].banned("not a real card"))  # nothing of the format names it: no left-out line
    assert "plays no format with a banned list" in unknown and "also has" not in unknown


def test_changes_leave_out_the_formats_update_log(judges: dict[str, Judge]) -> None:
    full = text(judges["dm"].changes("2015-10-01", "2015-10-31"))
    assert "Update 10/25/2015" in full or "Terrain" in full
    none = judges["none"].changes("2015-10-01", "2015-10-31")
    said = text(none)
    assert "The Obsidian Hand Ruleset also has changes in this range; this server does not play it." in said
    assert all(not h.startswith("obsidian-hand:") for h in none.hit_ids)


def test_a_servers_overlay_carries_its_choice(engine: Engine, judges: dict[str, Judge]) -> None:
    plays_none = engine.build_overlay("guild:1", [], formats=[])
    chose_nothing = engine.build_overlay("guild:2", [])
    assert LEFT_OUT in text(judges["dm"].scoped(plays_none).define("terrain"))
    assert LEFT_OUT not in text(judges["dm"].scoped(chose_nothing).define("terrain"))
    about = text(judges["dm"].scoped(plays_none).about())
    assert "Formats played here none" in about


def test_the_console_plays_the_formats_it_is_given(engine: Engine, index_dir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.setenv("L5R_INDEX_DIR", str(index_dir))
    assert main(["ask", "--formats", "none", "/banned moshi eihime"]) == 0
    assert "This server plays no format with a banned list" in capsys.readouterr().out
    monkeypatch.setenv("L5R_FORMATS", "obsidian hand")
    assert main(["ask", "/banned moshi eihime"]) == 0
    assert capsys.readouterr().out.startswith("Banned: Moshi Eihime")
    assert main(["ask", "--formats", "emerald", "/banned"]) == 2
    err = capsys.readouterr().err
    assert "error: --formats / L5R_FORMATS: “emerald” is not a loaded format" in err and "Traceback" not in err


def test_history_leaves_out_the_updates_of_a_format_the_server_does_not_play(judges: dict[str, Judge]) -> None:
    full = text(judges["dm"].history("terrain"))
    assert "Update 10/25/2015" in full and LEFT_OUT not in full
    none = text(judges["none"].history("terrain"))
    assert "Update 10/25/2015" not in none and "2015-10-25" not in none and none.count(LEFT_OUT) == 1
    assert "2008-05-21" in none  # the glossary's own stamps stay
    assert text(judges["none"].history("obsidian-hand:ability-naval-invasion")).startswith("Entry not shown")

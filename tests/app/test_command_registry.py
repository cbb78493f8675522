"""The command registry is the one list: the console accepts exactly the commands its /help lists, and
every button letter rebuilds through the judge method the registry names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import commands
from bot.app.console import Console
from bot.app.judge import Judge
from index.engine import Engine


@pytest.fixture(scope="module")
def console(default_index: Path) -> Iterator[Console]:
    engine = Engine.open(None, default_index)
    yield Console(Judge(engine))
    engine.close()


def test_console_help_lists_exactly_the_commands_it_accepts(console: Console) -> None:
    listed = re.findall(r"^/(\w+)", console.answer("/help"), re.MULTILINE)
    listed = list(dict.fromkeys(listed))
    assert listed == [c.name for c in commands.for_front("console")]
    for name in listed:
        assert not console.answer(f"/{name} x").startswith("Unknown command"), name
    for command in commands.COMMANDS:
        if "console" not in command.fronts:  # /reload, /ruling, the message menu: Discord only
            reply = console.answer(f"/{command.name.split()[0].lower()}")
            assert reply.startswith("Unknown command"), command.name
            assert f"/{command.name}" not in console.answer("/help")


def test_every_answer_letter_rebuilds_through_its_registered_method(console: Console) -> None:
    judge = console.judge
    args = {"define": "target", "ask": "is a terrain an enemy card", "rule": "II.F", "banned": "moshi eihime",
            "open": "glossary:target", "changes": "2008-01-01||", "about": "", "help": "", "history": "terrain"}
    for command in commands.COMMANDS:
        if command.letter is None:
            continue
        answer = judge.rebuild(command.letter, args[command.name])
        # /define of a term it finds is that entry's answer (rebuilt as an entry); every other kind is its own
        expected = {command.letter, commands.ENTRY} if command.name == "define" else {command.letter}
        assert answer.kind in expected, command.name


def test_an_answer_as_of_a_day_rebuilds_on_that_day(console: Console) -> None:
    """Buttons carry only (kind, arg): the day travels in arg, so paging or opening stays on that day."""
    judge = console.judge
    answer = judge.define("facing", "2008-01-01")
    assert answer.arg.endswith("@2008-01-01")
    again = judge.rebuild(answer.kind, answer.arg)
    assert again.title == answer.title == "Facing — not yet on 2008-01-01"
    terrain = judge.define("terrain", "2015-10-22")
    assert [ln.entry_id for ln in terrain.links] == ["obsidian-hand:update-2015-10-20@2015-10-22"]
    opened = judge.rebuild(commands.ENTRY, terrain.links[0].entry_id)  # "Open" under the as-of answer
    assert opened.title == "Update 10/20/2015 — as of 2015-10-22"
    later = judge.open("obsidian-hand:update-2015-10-25@2015-10-22")
    assert later.title == "Update 10/25/2015 — not yet on 2015-10-22"
    for letter in (commands.DEFINE, commands.ASK, commands.RULE, commands.BANNED):  # 100-character custom ids
        built = judge.rebuild(letter, "moshi eihime@2016-01-01")
        assert "2016-01-01" in built.title, letter


def test_extensions_are_derived_once_from_the_registry() -> None:
    names = commands.extensions()
    assert len(names) == len(set(names))
    assert all(n.startswith("bot.discord_bot.cogs.") for n in names)
    assert {c.extension for c in commands.COMMANDS if c.extension} == set(names)


def test_open_by_number_opens_what_the_last_answer_listed(console: Console) -> None:
    assert console.answer("/open 1").startswith("Error: there is no entry 1 to open")
    listed = console.answer("/ask is a terrain an enemy card")
    assert "Open: 1. Terrain (/open glossary:terrain); 2. Enemy (/open glossary:enemy)" in listed
    assert console.answer("/open 2").startswith("Enemy\n")
    assert console.answer("/open glossary:terrain").startswith("Terrain\n")  # ids still work
    # the Terrain answer lists the two updates, numbered: "/open 2" is now the second of those
    assert console.answer("/open 2").startswith("Update 10/20/2015\n")
    assert console.answer("/open 7").startswith("Error: there is no entry 7 to open (the last answer listed 1 to")

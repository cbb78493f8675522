"""The terminal console's completion and history, without a terminal: prompt_toolkit Documents in, the
completions a person would be offered out; the history folder and what happens when it cannot be written."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory

from bot.app import commands
from bot.app.console import Console
from bot.app.console_prompt import (
    COMPLETES,
    HISTORY_FILE,
    CommandCompleter,
    configured_state_dir,
    history_dir,
    open_history,
)
from bot.app.judge import Judge
from bot.app.renderers.text import render
from index.engine import Engine


@pytest.fixture(scope="module")
def console(words_only_index: Path) -> Iterator[Console]:
    engine = Engine.open(None, words_only_index, model=None)  # names only: no model needed
    yield Console(Judge(engine))
    engine.close()


@pytest.fixture(scope="module")
def completer(console: Console) -> CommandCompleter:
    return CommandCompleter(console.judge, console.commands)


def complete(completer: CommandCompleter, line: str) -> list[Completion]:
    return list(completer.get_completions(Document(line), CompleteEvent(completion_requested=True)))


def applied(line: str, completion: Completion) -> str:
    """The line after the completion is taken, as prompt_toolkit applies it."""
    return Document(line).text[: len(line) + completion.start_position] + completion.text


def test_command_names_come_from_the_registry(completer: CommandCompleter) -> None:
    offered = [c.display_text for c in complete(completer, "")]
    assert offered == ["/" + c.name for c in commands.for_front("console")]
    (only,) = complete(completer, "/def")
    assert applied("/def", only) == "/define "  # a command that takes an argument: the space is typed too
    assert [applied("/AB", c) for c in complete(completer, "/AB")] == ["/about"]  # takes nothing: no space
    assert complete(completer, "/frob") == []
    assert complete(completer, "def") == []  # a bare word starts a question, it is not a command


def test_a_term_is_completed_as_discord_suggests_it(console: Console, completer: CommandCompleter) -> None:
    found = complete(completer, "/define targ")
    discord = console.judge.engine.complete("targ", 25)  # what the /define cog sends for "targ"
    assert [(c.display_text, c.display_meta_text) for c in found] == discord
    assert [applied("/define targ", c) for c in found[:2]] == ["/define Target", "/define Targeting paradoxes"]
    assert complete(completer, "/define targt")[0].text == "Target"  # a typo, as on Discord
    # the line the completion makes answers what Discord answers for the chosen suggestion (its id)
    assert console.answer("/define Target") == render(console.judge.define("glossary:target"))


def test_a_name_shared_by_entries_completes_to_the_entry_id(console: Console, completer: CommandCompleter) -> None:
    found = {c.display_text: c for c in complete(completer, "/define equip")}
    assert found["Equip (Glossary)"].text == "glossary:equip"  # a name told apart by its group: the id is exact
    line = applied("/define equip", found["Equip (Glossary)"])
    assert console.answer(line) == render(console.judge.define("glossary:equip"))
    assert console.answer(line).startswith("Equip (Glossary)\n")


def test_sections_cards_and_ids(completer: CommandCompleter) -> None:
    rules = complete(completer, "/rule cardinal rule")
    assert "Cardinal Rule 2: Cards vs. Cards" in [c.display_text for c in rules]
    assert [applied("/banned moshi", c) for c in complete(completer, "/banned moshi")] == ["/banned Moshi Eihime"]
    opened = complete(completer, "/open targ")
    assert applied("/open targ", opened[0]) == "/open glossary:target"  # /open takes ids
    assert [c.text for c in complete(completer, "/define term:targ")][:1] == ["Target"]  # Discord's option name


def test_options_of_the_command(completer: CommandCompleter) -> None:
    assert [c.text for c in complete(completer, "/changes ")] == ["since:", "until:", "source:"]
    assert [c.text for c in complete(completer, "/changes s")] == ["since:", "source:"]
    assert [c.text for c in complete(completer, "/changes since:2008 s")] == ["source:"]  # since: is taken
    assert complete(completer, "/changes since:20") == []  # a value is being typed
    assert complete(completer, "/ask targ") == []  # free text: nothing to suggest
    assert [c.text for c in complete(completer, "/ask is a terrain an enemy card as")] == ["as_of:"]
    assert "as_of:" in [c.text for c in complete(completer, "/define facing as")]  # names and the option
    assert "Facing" in [c.text for c in complete(completer, "/define facing")]
    assert complete(completer, "/define facing as_of:20") == []  # a value is being typed
    assert complete(completer, "is a terrain an enemy card") == []


def test_a_failing_lookup_offers_nothing_and_raises_nothing(console: Console) -> None:
    class Broken:
        def complete(self, prefix: str, limit: int) -> list[tuple[str, str]]:
            raise RuntimeError("index gone")

    judge = Judge.__new__(Judge)
    judge.engine = Broken()  # type: ignore[assignment]
    assert complete(CommandCompleter(judge, console.commands), "/define targ") == []


def test_the_console_completes_what_the_discord_cogs_autocomplete() -> None:
    """``COMPLETES`` names, per command, the engine method the command's cog passes to ``completer``."""
    from discord import app_commands
    from discord.ext import commands as ext

    cogs: dict[str, str] = {}
    for command in commands.for_front("discord"):
        if not command.extension:
            continue
        module = importlib.import_module(command.extension)
        for cog in [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, ext.Cog)]:
            for slash in cog.__cog_app_commands__:
                if isinstance(slash, app_commands.Command) and slash.name == command.name:
                    for param in slash._params.values():
                        if param.autocomplete is not None:
                            cogs[command.name] = inspect.getclosurevars(param.autocomplete).nonlocals["method"]
    assert cogs == {"define": "complete", "rule": "complete_section", "banned": "complete_banned",
                    "history": "complete"}
    assert {k: v for k, v in COMPLETES.items() if k in cogs} == cogs


def test_history_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert history_dir(tmp_path / "mine", {"XDG_STATE_HOME": "/x"}) == tmp_path / "mine"
    assert history_dir(None, {"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "l5r-judge"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history_dir(None, {"XDG_STATE_HOME": " "}) == tmp_path / ".local" / "state" / "l5r-judge"
    assert configured_state_dir({"L5R_STATE_DIR": str(tmp_path / "s")}) == tmp_path / "s"
    assert configured_state_dir({}) is None


def test_history_file_is_created_and_kept(tmp_path: Path) -> None:
    history, problem = open_history(tmp_path / "new" / "dir")
    assert problem is None and isinstance(history, FileHistory)
    history.append_string("/define target")
    again, _ = open_history(tmp_path / "new" / "dir")
    assert list(again.load_history_strings()) == ["/define target"]
    assert (tmp_path / "new" / "dir" / HISTORY_FILE).is_file()


def test_history_that_cannot_be_written_is_kept_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    history, problem = open_history(blocker / "state")
    assert isinstance(history, InMemoryHistory)
    assert problem is not None and problem.startswith("Note: history is kept for this session only")
    assert "\n" not in problem


def test_history_file_lost_mid_session_does_not_stop_the_console(tmp_path: Path) -> None:
    history, _ = open_history(tmp_path / "state")
    (tmp_path / "state" / HISTORY_FILE).unlink()
    (tmp_path / "state").rmdir()
    history.append_string("/about")  # the file cannot be written now: history only, no exception
    assert list(history.load_history_strings()) == []

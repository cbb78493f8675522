"""The console at a terminal: prompt_toolkit line editing, Tab completion and a history kept between sessions.

Used only when stdin and stdout are both a terminal; pipes and scripts keep the plain line loop of
``bot.app.console``, so their output does not change. Completion offers what Discord's autocomplete
offers: the same engine methods, with the same arguments, for the same commands.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from bot.app.commands import Command
from bot.app.judge import Judge
from bot.app.settings import Settings, SettingsError

log = logging.getLogger("bot")

HISTORY_FILE = "console-history"
# The engine method each command's argument is completed with: the one its cog hands to ``completer(...)``
# (bot/discord_bot/cogs; tests/app/test_console_completion.py checks they agree). ``/open`` exists only
# in the console and takes an entry id, so it completes names to ids.
COMPLETES = {
    "define": "complete", "rule": "complete_section", "banned": "complete_banned", "open": "complete",
    "history": "complete",
}
LIMIT = 25  # as many suggestions as Discord shows


def history_dir(configured: Path | None, env: Mapping[str, str]) -> Path:
    """Where the history file lives: ``L5R_STATE_DIR`` (``configured``, from Settings), else
    ``$XDG_STATE_HOME/l5r-judge``, else ``~/.local/state/l5r-judge``: state, not cache or config."""
    if configured is not None:
        return configured
    xdg = env.get("XDG_STATE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state") / "l5r-judge"


def configured_state_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """``L5R_STATE_DIR`` as Settings reads it (the entry point has already loaded ``.env`` and refused bad
    settings, so a SettingsError here cannot stop the console: it only means no configured folder)."""
    try:
        return Settings.from_env(os.environ if env is None else env, dotenv=False).state_dir
    except SettingsError:
        return None


class _KeptHistory(FileHistory):
    """A FileHistory that never stops the console: a file that turns unreadable or full loses history only."""

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except OSError:
            return []

    def store_string(self, string: str) -> None:
        with contextlib.suppress(OSError):
            super().store_string(string)


def open_history(folder: Path) -> tuple[History, str | None]:
    """The history file in ``folder`` (created), or in-memory history and a one-line reason why not."""
    path = folder / HISTORY_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
        with open(path, "rb"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return InMemoryHistory(), f"Note: history is kept for this session only ({path}: {reason})."
    return _KeptHistory(path), None


class CommandCompleter(Completer):
    """Command names at the start of the line; after a command, its argument (names from the index, as
    Discord's autocomplete suggests them) or its ``name:`` options, all from the command registry."""

    def __init__(self, judge: Judge, commands: Mapping[str, Command]) -> None:
        self.judge = judge
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        line = document.text_before_cursor.lstrip()
        first, space, rest = line.partition(" ")
        if not space:
            yield from self._command_names(first)
            return
        command = self.commands.get(first[1:].lower()) if first.startswith("/") else None
        if command is None:
            return
        last = "" if rest[-1:].isspace() else (rest.split() or [""])[-1]
        option_typed = any(last.lower().startswith(o.name + ":") for o in command.options)
        if command.argument and command.name in COMPLETES and not option_typed:
            yield from self._argument(command, rest)  # "/define fac": names; "/define facing as": as_of: too
        if command.options and (not command.argument or len(last) >= 2):
            yield from self._options(command, rest)

    def _command_names(self, word: str) -> Iterator[Completion]:
        if word and not word.startswith("/"):
            return  # a bare word starts a question
        for command in self.commands.values():
            name = "/" + command.name
            if name.startswith(word.lower()):
                takes = command.argument or command.options
                yield Completion(name + (" " if takes else ""), -len(word), display=name, display_meta=command.summary)

    def _options(self, command: Command, rest: str) -> Iterator[Completion]:
        word = "" if rest[-1:].isspace() else (rest.split() or [""])[-1]
        if ":" in word:
            return  # a value is being typed
        used = {w.split(":", 1)[0].lower() for w in rest.split() if ":" in w}
        for option in command.options:
            if option.name.startswith(word.lower()) and option.name not in used:
                yield Completion(option.name + ":", -len(word), display_meta=option.description)

    def _argument(self, command: Command, rest: str) -> Iterator[Completion]:
        typed = rest.lstrip()
        if command.argument and typed.lower().startswith(command.argument + ":"):
            typed = typed[len(command.argument) + 1 :].lstrip()
        try:
            found = getattr(self.judge.engine, COMPLETES[command.name])(typed, LIMIT)
        except Exception:  # a suggestion failing must never break the line being typed
            log.debug("console completion failed for /%s", command.name, exc_info=True)
            return
        for shown, entry_id in found:
            text = entry_id if command.name == "open" or not self._by_name(shown, entry_id) else shown
            yield Completion(text, -len(typed), display=shown, display_meta=entry_id)

    def _by_name(self, shown: str, entry_id: str) -> bool:
        """Whether the shown name is the entry's own title, which the judge looks up by name; a name told
        apart by its group ("Equip (Glossary)") is inserted as the entry id, the value Discord sends."""
        entry = self.judge.lookup(entry_id)
        return entry is not None and entry.title == shown


def prompt_loop(
    answer: Callable[[str], str],
    quits: frozenset[str],
    session: PromptSession[str],
    stdout: TextIO,
) -> int:
    """Ctrl-C drops the line being typed (or the answer being looked up) and the console stays;
    Ctrl-D on an empty line or ``quit`` ends it with status 0."""
    while True:
        try:
            line = session.prompt()
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        if line.strip().lower() in quits:
            return 0
        try:
            text = answer(line)
        except KeyboardInterrupt:
            print("Interrupted.\n", file=stdout, flush=True)
            continue
        if text:
            print(text + "\n", file=stdout, flush=True)


def make_session(prompt: str, completer: Completer, history: History) -> PromptSession[str]:
    """The prompt: Tab completes (as in a shell: the menu opens on Tab, not under every keystroke, so a
    question is typed undisturbed), Up recalls earlier lines, and the rest of a remembered line is offered
    in grey (Right arrow takes it)."""
    return PromptSession(
        prompt,
        completer=completer,
        complete_while_typing=False,
        history=history,
        auto_suggest=AutoSuggestFromHistory(),
    )

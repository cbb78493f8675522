"""The console front end: the bot's slash commands typed at a prompt, answered as text.

It goes through the same ``Judge`` and renderer as Discord, so a judge without a server (or
a test) sees exactly the answers the bot would post.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import TextIO

from bot.app import commands
from bot.app.answer import Answer, Link
from bot.app.compose import echo
from bot.app.judge import Judge, UserError
from bot.app.renderers.text import openable, render

PROMPT = "l5r> "
QUIT = frozenset({"quit", "exit", "q", ":q"})
_OPTION = re.compile(r"(?:^|\s)(\w+):(\S*)")
# ``private:`` is accepted by every command, as on Discord, and has no effect in a console.
_ALWAYS = {"private"}
_TRAILING_DATE = re.compile(r"^(?:(.*\S)\s+)?(\d{4}-\d{2}-\d{2})$")


class Console:
    """Parses one command line (``/define target``, ``/changes since:2008-01-01``) into a Judge call; the
    commands, their argument names and options all come from the registry (``bot.app.commands``)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.commands = {c.name: c for c in commands.for_front("console")}
        self.last: list[Link] = []  # what the previous answer could open, as its ``Open:`` line numbers them

    def answer(self, line: str) -> str:
        """The text answer to one command line; bad input gives a one-line message, never a traceback."""
        line = line.strip()
        if not line:
            return ""
        first, _, rest = line.partition(" ")
        name = first.lstrip("/").lower()
        if name == "look" and rest.lower().startswith("up rules"):
            name, rest = "ask", rest[len("up rules") :]
        if name not in self.commands:
            if first.startswith("/"):
                known = ", ".join("/" + c for c in self.commands)
                return f"Unknown command {echo(first, 40)}. Commands: {known}."
            name, rest = "ask", line  # a bare question is a question
        command = self.commands[name]
        # Which ``name:value`` options this command takes, as on Discord; in any other command the words are
        # text ("/ask what does source: mean" keeps "source:").
        accepted = command.option_names() | _ALWAYS

        def take(match: re.Match[str]) -> str:
            return " " if match.group(1).lower() in accepted else match.group(0)

        options = {k.lower(): v for k, v in _OPTION.findall(rest) if k.lower() in accepted}
        text = _OPTION.sub(take, rest).strip()
        arg_name = command.argument
        if arg_name and text.lower().startswith(arg_name + ":"):
            text = text[len(arg_name) + 1 :].strip()
        # "/banned moshi eihime 2016-01-01" (or "/banned 2016-01-01"), as the usage line reads: a trailing date is the
        # day asked about; not in /ask, where a question may end with a date ("what changed after 2008-05-01").
        dated = _TRAILING_DATE.match(text)
        if dated and "as_of" in accepted and "as_of" not in options and command.name != "ask":
            text, options["as_of"] = dated.group(1) or "", dated.group(2)
        if command.name == "open" and text.isdigit():  # "/open 2": the second entry the last answer listed
            n = int(text)
            if not 1 <= n <= len(self.last):
                listed = f"listed 1 to {len(self.last)}" if self.last else "listed none"
                return f"Error: there is no entry {n} to open (the last answer {listed})."
            text = self.last[n - 1].entry_id
        try:
            answer = self.call(command, text, options)
        except UserError as exc:
            return f"Error: {exc}"  # the same message Discord shows
        self.last = openable(answer)
        return render(answer)

    def call(self, command: commands.Command, text: str, options: dict[str, str]) -> Answer:
        """The judge method the registry names, with the command's argument and options."""
        method = getattr(self.judge, command.method or "")
        if command.name == "help":
            return method("console")
        values = [options.get(o.name) for o in command.options]
        return method(text, *values) if command.argument else method(*values)

    def loop(self, stdin: TextIO, stdout: TextIO, interactive: bool) -> int:
        """Read commands until ``quit`` or end of input; a prompt only when a person is typing."""
        if interactive:
            print("L5R rules judge console. Try /define target, /help, or quit.", file=stdout)
        while True:
            if interactive:
                try:
                    line = input(PROMPT)
                except EOFError:
                    print(file=stdout)
                    return 0
            else:
                line = stdin.readline()
                if not line:
                    return 0
            if line.strip().lower() in QUIT:
                return 0
            text = self.answer(line)
            if text:
                print(text + ("\n" if interactive else ""), file=stdout, flush=True)


def run_console(judge: Judge, once: str | None = None) -> int:
    """A terminal gets the prompt of ``run_terminal``; otherwise commands are read line by line. Ctrl-C
    outside that prompt and a closed output pipe (``| head``) end the console quietly, never with a traceback."""
    console = Console(judge)
    try:
        if once is not None:
            text = console.answer(once)
            if not text:
                print("Error: give a command, e.g. python -m bot ask \"/define target\"", file=sys.stderr)
                return 2
            print(text)
            return 1 if text.startswith(("Error:", "Unknown command")) else 0
        if sys.stdin.isatty() and sys.stdout.isatty():
            return run_terminal(console)
        interactive = sys.stdin.isatty()
        if interactive:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401  (line editing and history at the prompt)
        return console.loop(sys.stdin, sys.stdout, interactive)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away; point stdout at devnull so the interpreter's final flush is silent too.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run_terminal(console: Console) -> int:
    """A person at a terminal: line editing, completion and a history file (``bot.app.console_prompt``);
    the replies are the same text the plain loop prints."""
    from bot.app import console_prompt as terminal

    history, problem = terminal.open_history(terminal.history_dir(terminal.configured_state_dir(), os.environ))
    print("L5R rules judge console. Try /define target, /help, or quit.", file=sys.stdout)
    print("Tab completes, Up recalls earlier lines, Ctrl-C clears the line, Ctrl-D quits.", file=sys.stdout)
    if problem:
        print(problem, file=sys.stderr)
    completer = terminal.CommandCompleter(console.judge, console.commands)
    session = terminal.make_session(PROMPT, completer, history)
    return terminal.prompt_loop(console.answer, QUIT, session, sys.stdout)

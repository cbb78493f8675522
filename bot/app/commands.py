"""The command registry: every command once, with what each front end derives from it.

A command's name, its options, the judge method that answers it, its help text and the letter that
rebuilds its answer (buttons carry ``kind``/``arg`` only) live here and nowhere else. From this table:
the discord.py extensions to load (``extensions``), the slash commands' descriptions (the cogs read them),
the console's commands and options (``bot.app.console``), ``/help`` for each front end (``Judge.help``) and
button rebuilding (``Judge.rebuild``). Adding a command is one entry here plus its cog module (and a
judge method when it answers a lookup); see the development guide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Answer kinds: one letter each, because they travel inside 100-character button ids.
ENTRY, DEFINE, ASK, RULE, CHANGES, BANNED, ABOUT, HELP = "e", "d", "a", "r", "c", "b", "i", "h"
DIGEST = "g"  # a digest between two versions of the sources (bot.app.digest): paged by its own button, never rebuilt
HISTORY = "t"  # /history: an entry's dated changes (a time line)


@dataclass(frozen=True)
class Option:
    """A named option (``since:2008-01-01``), as Discord and the console both take it."""

    name: str
    description: str


@dataclass(frozen=True)
class Command:
    """One command. ``argument`` names its free-text argument (``None``: it takes none); ``method`` is the
    ``Judge`` method that answers it (``None``: a Discord-only command answered by its cog); ``letter`` the
    answer kind a button rebuilds it by; ``fronts`` where it exists ("discord", "console")."""

    name: str
    summary: str  # the slash command's description (at most 100 characters)
    help: str  # what /help says of it
    example: str = ""
    argument: str | None = None
    argument_help: str = ""
    options: tuple[Option, ...] = ()
    method: str | None = None
    letter: str | None = None
    extension: str | None = None  # the discord.py extension (cog module) that serves it
    fronts: frozenset[str] = field(default_factory=lambda: frozenset({"discord", "console"}))
    usage: str = ""  # how /help writes it, when not just "/name argument [options]"
    # On Discord, when it differs from the console (a group there, /changes): how /help writes it, and what it says.
    discord_usage: str = ""
    discord_help: str = ""

    def synopsis_on(self, front: str) -> str:
        """``synopsis`` as ``front`` ("discord" or "console") takes the command."""
        return self.discord_usage if front == "discord" and self.discord_usage else self.synopsis

    def help_on(self, front: str) -> str:
        return self.discord_help if front == "discord" and self.discord_help else self.help

    @property
    def synopsis(self) -> str:
        if self.usage:
            return self.usage
        parts = [f"/{self.name}"]
        if self.argument:
            parts.append(self.argument)
        parts += [f"[{o.name}]" for o in self.options]
        return " ".join(parts)

    def option_names(self) -> set[str]:
        return {o.name for o in self.options}


PRIVATE = Option("private", "Only you see the answer (you can still post it in the channel)")
# The rules as the loaded sources stood on a day (the judge's bot.app.dated words what came later).
AS_OF = Option("as_of", "The rules as they stood on this date, e.g. 2015-11-01")

COMMANDS: tuple[Command, ...] = (
    Command(
        "define",
        "Look up a glossary term",
        "A glossary term in full: verbatim text, change dates, citation.",
        "/define target",
        argument="term",
        argument_help="The term, e.g. Target or Terrain",
        options=(AS_OF,),
        method="define",
        letter=DEFINE,
        extension="bot.discord_bot.cogs.define",
    ),
    Command(
        "ask",
        "Search the rules for a ruling question",
        "Search the rules for a ruling question; open any result in full.",
        "/ask is a terrain an enemy card",
        argument="question",
        argument_help="e.g. is a terrain an enemy card?",
        options=(AS_OF,),
        method="ask",
        letter=ASK,
        extension="bot.discord_bot.cogs.ask",
    ),
    Command(
        "rule",
        "Look up a rule section by number or name",
        "A rule section by number or name.",
        "/rule cardinal rule 2",
        argument="section",
        argument_help="e.g. Cardinal Rule 2, II.F, Deck Construction",
        options=(AS_OF,),
        method="rule",
        letter=RULE,
        extension="bot.discord_bot.cogs.rule",
    ),
    Command(
        "changes",
        "Rule changes, newest first",
        "Dated rule changes, newest first.",
        "/changes since:2008-01-01",
        options=(
            Option("since", "From this date, e.g. 2008-01-01 (or 2008-01, 2008)"),
            Option("until", "Up to this date, e.g. 2008-12-31"),
            Option("source", "Only this document: glossary, obsidian-hand or house (or a word of its name)"),
        ),
        method="changes",
        letter=CHANGES,
        extension="bot.discord_bot.cogs.changes",
        # Discord cannot have a command that is both callable and a group: there the listing is /changes list.
        discord_usage="/changes list [since] [until] [source] · /changes subscribe channel · … unsubscribe channel",
        discord_help="Dated rule changes, newest first (`list`); admins (Manage Server): `subscribe` a channel to a "
        "digest of what changed, posted whenever the rule sources change, or `unsubscribe` it.",
    ),
    Command(
        "banned",
        "Is a card banned in the Obsidian Hand format?",
        "Is a card banned in the Obsidian Hand format, since when, in which category; no card: the whole list.",
        "/banned moshi eihime",
        argument="card",
        argument_help="Card name (leave empty for the whole list)",
        options=(AS_OF,),
        method="banned",
        letter=BANNED,
        extension="bot.discord_bot.cogs.banned",
        usage="/banned [card] [as_of]",
    ),
    Command(
        "history",
        "Every dated change of an entry, oldest first",
        "Every dated change of an entry, oldest first, each with the text it dates, and the format updates on it.",
        "/history terrain",
        argument="term",
        argument_help="The term or entry, e.g. Terrain",
        method="history",
        letter=HISTORY,
        extension="bot.discord_bot.cogs.history",
    ),
    Command(
        "open",
        "Open an entry by its id",
        "An entry in full by its id (the ids the other answers list under Open).",
        "/open glossary:target",
        argument="id",
        method="open",
        letter=ENTRY,
        fronts=frozenset({"console"}),  # on Discord, the buttons under an answer open entries
    ),
    Command(
        "about",
        "Loaded sources, entry counts, index build time, version",
        "Loaded sources, entry counts, index build time, version.",
        "/about",
        method="about",
        letter=ABOUT,
        extension="bot.discord_bot.cogs.meta",
    ),
    Command(
        "help",
        "How to use the rules judge",
        "These commands.",
        "/help",
        method="help",
        letter=HELP,
        extension="bot.discord_bot.cogs.meta",
    ),
    Command(
        "Look up rules",
        "Runs /ask on a message's text",
        "Message menu (Apps › Look up rules): runs /ask on that message's text.",
        extension="bot.discord_bot.cogs.lookup_menu",
        fronts=frozenset({"discord"}),
        usage="Look up rules",
    ),
    Command(
        "reload",
        "Rebuild the index from the sources (owner or Manage Server)",
        "Owner or Manage Server only: rebuild the index from the sources.",
        "/reload",
        extension="bot.discord_bot.cogs.admin",
        fronts=frozenset({"discord"}),
    ),
    Command(
        "ruling",
        "This server's own rulings",
        "This server's own rulings: `list`, `history`, `export` for everyone; `add`, `edit`, `retire`, "
        "`restore`, `import`, `stands` (a ruling whose rule changed still stands), "
        "`feedback` (members' \"Not the answer?\" reports) for its judges; `config` (judge "
        "role, audit channel, the formats it plays) for its admins.",
        "/ruling list",
        extension="bot.discord_bot.cogs.rulings",
        fronts=frozenset({"discord"}),
        usage="/ruling …",
    ),
)

BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}
BY_LETTER: dict[str, Command] = {c.letter: c for c in COMMANDS if c.letter}


def for_front(front: str) -> list[Command]:
    """The commands a front end ("discord" or "console") offers, in registry order."""
    return [c for c in COMMANDS if front in c.fronts]


def extensions() -> list[str]:
    """The discord.py extensions to load, each once, in registry order."""
    return list(dict.fromkeys(c.extension for c in COMMANDS if c.extension))


def command(name: str) -> Command:
    return BY_NAME[name]

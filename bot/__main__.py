"""``python -m bot``: the Discord bot when DISCORD_TOKEN is set, else the interactive console.

python -m bot                      # bot (token set) or console (no token)
python -m bot console              # console even with a token
python -m bot ask "/define target" # answer one command and exit
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING

from .settings import Settings, SettingsError

if TYPE_CHECKING:
    from .client import JudgeBot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description="L5R rules judge: Discord bot and console")
    sub = parser.add_subparsers(dest="mode")
    sub.add_parser("console", help="interactive console (reads commands line by line when not a terminal)")
    ask = sub.add_parser("ask", help="answer one command, e.g. '/define target', and exit")
    ask.add_argument("command", nargs="+", help="a command line such as /banned moshi eihime")
    sub.add_parser("run", help="run the Discord bot (needs DISCORD_TOKEN)")
    args = parser.parse_args(argv)

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    mode = args.mode or ("run" if settings.token else "console")
    if mode == "run" and not settings.token:
        print("error: DISCORD_TOKEN is not set (set it, or use `python -m bot console`)", file=sys.stderr)
        return 2
    problem = unreadable_sources_problem(settings)
    if problem:  # never serve a silently smaller rulebook: a missing or unreadable source stops the start
        print(f"error: {problem}", file=sys.stderr)
        return 1
    if mode == "run":
        return run_bot(settings)

    logging.basicConfig(level=max(settings.log_level_number, logging.WARNING), format="%(levelname)s %(message)s")
    from .console import run_console
    from .service import Judge
    from .startup import open_engine

    try:
        engine = open_engine(settings)
    except Exception as exc:  # a broken source folder or index dir: one line, not a traceback
        print(f"error: could not open the rules index: {exc}", file=sys.stderr)
        return 1
    judge = Judge(engine, settings.rulebook_url)
    once = " ".join(args.command) if mode == "ask" else None
    return run_console(judge, once)


def unreadable_sources_problem(settings: Settings) -> str | None:
    """One line naming the configured sources that cannot be read at all, or None."""
    from glossary.loader import unreadable_message, unreadable_sources

    from .startup import source_paths

    errors = unreadable_sources(source_paths(settings))
    return unreadable_message(errors) if errors else None


def run_bot(settings: Settings) -> int:
    """Run until stopped; a failure to start is one clear line (the traceback only at DEBUG)."""
    import aiohttp
    import discord

    from .client import JudgeBot

    discord.utils.setup_logging(level=settings.log_level_number)
    log = logging.getLogger("bot")
    bot = JudgeBot(settings)
    try:
        asyncio.run(_start(bot, settings.token or ""))
    except KeyboardInterrupt:
        return 0
    except discord.LoginFailure:
        log.error("Discord rejected the token (DISCORD_TOKEN); check it and try again")
        return 1
    except discord.PrivilegedIntentsRequired:
        log.error("Discord refused the gateway intents; this bot needs no privileged intents, check the app")
        return 1
    except (aiohttp.ClientError, OSError, discord.GatewayNotFound) as exc:
        where = settings.api_base or "Discord"
        log.debug("connection failure", exc_info=True)
        log.error("could not reach %s: %s", where, exc or type(exc).__name__)
        return 1
    except Exception as exc:  # e.g. the sources could not be loaded in setup_hook
        log.debug("startup failure", exc_info=True)
        log.error("the bot stopped: %s: %s", type(exc).__name__, exc)
        return 1
    return 0


async def _start(bot: JudgeBot, token: str) -> None:
    async with bot:
        await bot.start(token)


if __name__ == "__main__":
    sys.exit(main())

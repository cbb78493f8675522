"""``python -m bot``: the Discord bot when DISCORD_TOKEN is set, else the interactive console.

python -m bot                      # bot (token set) or console (no token)
python -m bot run                  # the bot, or exit 2 with one line when DISCORD_TOKEN is not set
python -m bot console              # console even with a token
python -m bot ask "/define target" # answer one command and exit
python -m bot health               # ask the running bot's /healthz (HEALTH_PORT): exit 0 healthy, 1 not
python -m bot export site/         # write the browsable HTML rulebook into site/ (--sources, --title)
python -m bot diff --old A --new B # the digest between two versions of the sources, as the bot posts it

The bot stops cleanly on SIGTERM or SIGINT (gateway closed with 1000, answers in flight
finished, exit 0); a second signal stops waiting for them.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.app.settings import Settings, SettingsError

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot


def main(argv: list[str] | None = None) -> int:
    from bot.app.judge import version

    prog = "l5r-judge" if Path(sys.argv[0]).name == "l5r-judge" else "python -m bot"
    parser = argparse.ArgumentParser(prog=prog, description="L5R rules judge: Discord bot and console")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="mode")
    console = sub.add_parser("console", help="interactive console (reads commands line by line when not a terminal)")
    ask = sub.add_parser("ask", help="answer one command, e.g. '/define target', and exit")
    for front in (console, ask):
        front.add_argument(
            "--formats", default=None, metavar="CHOICE",
            help="answer as a server playing these formats: 'none', 'all', or names separated by commas "
            "(default: L5R_FORMATS, else all)",
        )
    ask.add_argument("command", nargs="+", help="a command line such as /banned moshi eihime")
    sub.add_parser("run", help="run the Discord bot (needs DISCORD_TOKEN)")
    sub.add_parser("health", help="ask the running bot's health endpoint (HEALTH_PORT); exit 0 when healthy")
    export = sub.add_parser("export", help="write the browsable HTML rulebook (a static site) into OUT_DIR")
    export.add_argument("out_dir", metavar="OUT_DIR", help="folder to write the site into (created if needed)")
    export.add_argument(
        "--sources",
        action="append",
        metavar="PATH",
        help="a source file or folder (repeatable; default: L5R_SOURCES and L5R_HOUSE_RULINGS, else the shipped rules)",
    )
    export.add_argument("--title", default=None, help="the title on every page (default: L5R rules judge: rulebook)")
    diff = sub.add_parser("diff", help="the digest between two versions of the sources, as the bot posts it")
    diff.add_argument("--old", nargs="+", required=True, metavar="PATH", help="the earlier source files or folders")
    diff.add_argument("--new", nargs="+", required=True, metavar="PATH", help="the later source files or folders")
    args = parser.parse_args(argv)
    if args.mode == "diff":
        return print_digest(args.old, args.new)

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    mode = args.mode or ("run" if settings.token else "console")
    if mode == "health":
        return check_health(settings)
    if mode == "export":
        return export_rulebook(settings, args.out_dir, args.sources, args.title)
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
    from bot.app.console import run_console
    from bot.app.judge import Judge
    from bot.app.startup import open_engine
    from index.cli_progress import StderrProgress

    try:
        with StderrProgress() as progress:  # a first start builds the index: its stages on stderr, never stdout
            engine = open_engine(settings, progress)
    except Exception as exc:  # a broken source folder or index dir: one line, not a traceback
        print(f"error: could not open the rules index: {exc}", file=sys.stderr)
        return 1
    judge = Judge.from_settings(engine, settings)
    chosen = getattr(args, "formats", None) or settings.formats
    if chosen is not None:  # the console as a server that chose its formats sees it (bot.app.formats)
        from bot.app.formats import FormatChoiceError, loaded, parse_choice

        try:
            picked = parse_choice(chosen, loaded(engine.corpus))
        except FormatChoiceError as exc:
            print(f"error: --formats / L5R_FORMATS: {exc}", file=sys.stderr)
            return 2
        judge = judge.playing(None if picked is None else frozenset(picked))
    once = " ".join(args.command) if mode == "ask" else None
    return run_console(judge, once)


def print_digest(old: list[str], new: list[str]) -> int:
    """The digest between two versions of the sources, composed as the bot posts it, as plain text."""
    from bot.app.digest import digest
    from bot.app.renderers.text import render
    from glossary.diff import diff
    from glossary.loader import load_corpus, unreadable_message, unreadable_sources

    versions = []
    for name, paths in (("old", old), ("new", new)):
        unreadable = unreadable_sources([Path(p) for p in paths])
        if unreadable:
            print(f"error: --{name}: {unreadable_message(unreadable)}", file=sys.stderr)
            return 1
        corpus = load_corpus([Path(p) for p in paths])
        for err in corpus.errors:
            print(f"warning: --{name}: {err}", file=sys.stderr)
        versions.append(corpus.entries)
    print(render(digest(diff(versions[0], versions[1]))))
    return 0


def check_health(settings: Settings) -> int:
    """``python -m bot health``: the container's HEALTHCHECK; one line, exit 0 when healthy."""
    from bot.discord_bot.health import probe

    if settings.health_port is None:
        print("error: HEALTH_PORT is not set, so the bot serves no health endpoint", file=sys.stderr)
        return 2
    status, line = probe(settings.health_port, settings.health_host)
    print(line, file=sys.stdout if status == 0 else sys.stderr)
    return status


def export_rulebook(settings: Settings, out_dir: str, sources: list[str] | None, title: str | None) -> int:
    """``python -m bot export``: the rulebook as the judge answers (``bot.app.rulebook``), with the paragraph
    scopes of the search index, so an amendment stands under the paragraph it amends. The index is opened
    (built if needed) in the configured folder, as the console does. Exit 1 when a source cannot be read."""
    from bot.app.rulebook import DEFAULT_TITLE
    from bot.app.rulebook import export_rulebook as write_site
    from bot.app.startup import source_paths
    from glossary.loader import unreadable_message, unreadable_sources
    from index.cli_progress import StderrProgress
    from index.engine import Engine

    paths = [Path(p) for p in sources] if sources else source_paths(settings)
    unreadable = unreadable_sources(paths)
    if unreadable:  # never publish a silently smaller rulebook
        print(f"error: {unreadable_message(unreadable)}", file=sys.stderr)
        return 1
    logging.basicConfig(level=max(settings.log_level_number, logging.WARNING), format="%(levelname)s %(message)s")
    try:
        with StderrProgress() as progress:  # stdout keeps its one "wrote N file(s)" line
            engine = Engine.open(paths, settings.index_dir, model=settings.model, progress=progress)
    except Exception as exc:  # a broken source folder or index dir: one line, not a traceback
        print(f"error: could not open the rules index: {exc}", file=sys.stderr)
        return 1
    try:
        corpus = engine.corpus
        for error in corpus.errors:
            print(f"error: {error}", file=sys.stderr)
        written = write_site(corpus.entries, Path(out_dir), title or DEFAULT_TITLE, scope=engine.scope)
    except (OSError, ValueError) as exc:  # a folder that cannot be written; duplicate ids (a linker bug)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.close()
    print(f"wrote {len(written)} file(s) to {out_dir}")
    return 1 if corpus.errors else 0


def unreadable_sources_problem(settings: Settings) -> str | None:
    """One line naming the configured sources that cannot be read at all, or None."""
    from bot.app.startup import source_paths
    from glossary.loader import unreadable_message, unreadable_sources

    errors = unreadable_sources(source_paths(settings))
    return unreadable_message(errors) if errors else None


def run_bot(settings: Settings) -> int:
    """Run until stopped; a failure to start is one clear line (the traceback only at DEBUG)."""
    import aiohttp
    import discord

    from bot.discord_bot.client import JudgeBot
    from bot.discord_bot.health import HealthPortError
    from bot.discord_bot.logs import setup_logging

    setup_logging(settings)
    log = logging.getLogger("bot")
    bot = JudgeBot(settings)
    try:
        asyncio.run(_start(bot, settings.token or ""))
    except KeyboardInterrupt:  # a signal before the handlers were installed
        return 0
    except HealthPortError as exc:
        log.error("could not serve the health endpoint: %s", exc)
        return 1
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
    loop = asyncio.get_running_loop()
    log = logging.getLogger("bot")
    stops: list[asyncio.Task[None]] = []

    def stop(signum: signal.Signals) -> None:
        if stops:  # a second signal: stop waiting for answers in flight
            log.warning("%s again: not waiting for answers in flight", signum.name)
            for task in bot.interactions_in_flight():
                task.cancel()
            return
        log.info("%s received: closing the gateway and finishing answers in flight", signum.name)
        stops.append(asyncio.create_task(bot.close()))

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signum)
    try:
        async with bot:
            await bot.start(token)
        if stops:
            await stops[0]
            log.info("stopped")
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


if __name__ == "__main__":
    sys.exit(main())

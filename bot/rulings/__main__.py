"""``python -m bot.rulings``: the rulings database from the shell (same settings as the bot).

python -m bot.rulings migrate        # bring the schema up to date (the bot also does this at startup)
python -m bot.rulings backup FILE    # SQLite: an online backup (safe while the bot runs) into FILE
python -m bot.rulings where          # which database the settings select (password hidden)
python -m bot.rulings export-server GUILD_ID   # everything stored for a server, as JSON on stdout
python -m bot.rulings forget-server GUILD_ID   # delete everything stored for a server, now
python -m bot.rulings forget-user USER_ID [--name NAME]...  # a user's deletion request (rulings kept)
python -m bot.rulings export-feedback [--with-server]  # the pairs judges confirmed, as JSON lines on stdout

Exit status: 0 done (also when there was nothing to delete: the line says so), 1 the database failed,
2 bad arguments or settings.

PostgreSQL is backed up with its own tools (``pg_dump``/``pg_restore``, see the README).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import sys
from pathlib import Path

from sqlalchemy.engine import URL

from bot.app.settings import Settings, SettingsError
from bot.app.startup import source_paths
from bot.rulings import feedback, retention
from bot.rulings.db import DatabaseURLError, describe, make_engine, migrate, resolve_url
from glossary.loader import load_corpus
from glossary.model import Corpus
from index.build import asked


def configured_url(settings: Settings) -> URL:
    """The database the bot would open: DATABASE_URL, else the SQLite file in its state folder."""
    from index.build.store import default_index_dir

    state_dir = settings.state_dir or (settings.index_dir or default_index_dir()).parent / "bot-state"
    return resolve_url(settings.database_url, state_dir)


def backup_sqlite(source: Path, dest: Path) -> int:
    """Copy a live SQLite database (WAL included) to ``dest`` in one consistent step; returns its pages."""
    if not source.exists():
        raise FileNotFoundError(f"no database at {source}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        raise FileExistsError(f"{dest} exists; choose a new file name")
    src = sqlite3.connect(source, timeout=10)
    try:
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)  # the whole database in one step: a snapshot, even with writers at work
            pages = dst.execute("PRAGMA page_count").fetchone()[0]
        finally:
            dst.close()
    finally:
        src.close()
    return int(pages)


async def _migrate(url: URL) -> str | None:
    engine = make_engine(url)
    try:
        return await migrate(engine)
    finally:
        await engine.dispose()


def discord_id(value: str) -> str:
    """A Discord id (a snowflake: digits only), for argparse."""
    if not re.fullmatch(r"[1-9][0-9]{0,19}", value.strip()):
        raise argparse.ArgumentTypeError(f"expected a Discord id (digits only, e.g. 123456789012345678), got {value!r}")
    return value.strip()


def feedback_lines(pairs: list[feedback.Report], corpus: Corpus, with_server: bool = False) -> list[str]:
    """One JSON line per confirmed pair, in the form ``index/asked.json`` keeps a question (entry, 0-based
    paragraph, digest of its text) plus where that paragraph stands in the rule documents loaded now; ``current``
    is false when the paragraph is gone or its text changed since it was confirmed (review it before folding
    it in). A question confirmed as not answered by the loaded rules has no entry, paragraph or ``current`` and
    ``not_covered`` true (for ``index/unanswered.json``). The server's id only with ``with_server``; who reported
    or confirmed it, never."""
    by_id = corpus.by_id()
    lines = []
    for pair in pairs:
        entry = by_id.get(pair.entry_id or "")
        p = pair.paragraph
        current = entry is not None and p is not None and 0 <= p < len(entry.paragraphs)
        if current and pair.digest is not None:
            current = asked.digest(entry.paragraphs[p]) == pair.digest  # type: ignore[union-attr, index]
        row: dict[str, object] = {"question": pair.question, "entry_id": pair.entry_id, "paragraph": p,
                                  "digest": pair.digest, "current": current, "source": None}  # fmt: skip
        if pair.entry_id is None:  # confirmed as not answered by the loaded rules (index/unanswered.json's kind)
            row["not_covered"], row["current"] = True, None
        if current and entry is not None and p is not None:
            first, last = entry.paragraph_lines(p)
            row["source"] = {"file": entry.location.file, "lines": [first, last]}
        if with_server:
            row["server"] = pair.scope.removeprefix("guild:")
        lines.append(json.dumps(row, ensure_ascii=False))
    return lines


async def _export_feedback(url: URL, settings: Settings, with_server: bool) -> list[str]:
    engine = make_engine(url)
    try:
        await migrate(engine)
        pairs = await feedback.FeedbackStore(engine).reviewed()
    finally:
        await engine.dispose()
    corpus = await asyncio.to_thread(load_corpus, source_paths(settings)) if pairs else Corpus([])
    return feedback_lines(pairs, corpus, with_server)


async def _data_command(url: URL, args: argparse.Namespace) -> str:
    """export-server, forget-server, forget-user on the configured database (migrated first)."""
    engine = make_engine(url)
    try:
        await migrate(engine)
        if args.command == "export-server":
            data = await retention.export_scope(engine, retention.guild_scope(args.id))
            return json.dumps(data, ensure_ascii=False, indent=2)
        if args.command == "forget-server":
            deleted = await retention.delete_scope(engine, retention.guild_scope(args.id))
            if deleted.empty:
                return f"nothing stored for server {args.id}: nothing deleted"
            settings = ", its settings" if deleted.settings else ""
            reports = f", {deleted.reports} answer reports" if deleted.reports else ""
            return (f"deleted everything stored for server {args.id}: {deleted.rulings} rulings, "
                    f"{deleted.versions} versions{reports}{settings}")  # fmt: skip
        forgotten = await retention.forget_user(engine, args.id, args.name or ())
        if not forgotten.changed:
            return f"nothing recorded for user {args.id}: nothing changed"
        names = ", ".join(repr(n) for n in forgotten.names) or "none"
        reports = f", {forgotten.reports} answer reports" if forgotten.reports else ""
        return (
            f"user {args.id} replaced by {retention.DELETED_NAME!r}: {forgotten.versions} history entries, "
            f"{forgotten.judge_names} judge names ({names}), {forgotten.rulings} rulings and "
            f"{forgotten.settings} server settings they had changed{reports}; the rulings' texts are kept"
        )
    finally:
        await engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.rulings", description="The rulings database")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate", help="bring the schema up to date")
    backup = sub.add_parser("backup", help="SQLite: online backup into a new file")
    backup.add_argument("file", type=Path)
    sub.add_parser("where", help="which database the settings select")
    export = sub.add_parser("export-server", help="everything stored for a server (guild id), as JSON on stdout")
    export.add_argument("id", metavar="GUILD_ID", type=discord_id)
    forget = sub.add_parser("forget-server", help="delete everything stored for a server (guild id) now")
    forget.add_argument("id", metavar="GUILD_ID", type=discord_id)
    user = sub.add_parser("forget-user", help="replace a user's id and names in every ruling's history")
    user.add_argument("id", metavar="USER_ID", type=discord_id)
    user.add_argument("--name", action="append", metavar="NAME",
                      help="also replace this name where it is given as a ruling's judge (repeatable)")  # fmt: skip
    pairs = sub.add_parser("export-feedback", help="question -> paragraph pairs judges confirmed, as JSON lines")
    pairs.add_argument("--with-server", action="store_true", help="add each pair's server (guild) id")
    args = parser.parse_args(argv)
    try:
        url = configured_url(Settings.from_env())
    except (SettingsError, DatabaseURLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "where":
        print(describe(url))
        return 0
    if args.command == "export-feedback":
        try:
            lines = asyncio.run(_export_feedback(url, Settings.from_env(), args.with_server))
        except Exception as exc:
            print(f"error: export-feedback failed on {describe(url)}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        for line in lines:
            print(line)
        print(f"{len(lines)} confirmed pair(s)", file=sys.stderr)
        return 0
    if args.command in ("export-server", "forget-server", "forget-user"):
        try:
            print(asyncio.run(_data_command(url, args)))
        except Exception as exc:
            print(f"error: {args.command} failed on {describe(url)}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.command == "migrate":
        try:
            print(f"schema at revision {asyncio.run(_migrate(url))} ({describe(url)})")
        except Exception as exc:
            print(f"error: could not migrate {describe(url)}: {exc}", file=sys.stderr)
            return 1
        return 0
    if url.get_backend_name() != "sqlite":
        print("error: this database is PostgreSQL: back it up with pg_dump (see the README)", file=sys.stderr)
        return 2
    try:
        pages = backup_sqlite(Path(url.database or ""), args.file)
    except (OSError, sqlite3.Error) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"backed up {describe(url)} to {args.file} ({pages} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The rulings database: which one (``DATABASE_URL`` or a SQLite file), the async engine, migrations.

SQLite is the default: one file in the bot's state folder, in WAL mode so several processes on one
machine can read while one writes. ``DATABASE_URL=postgresql://…`` selects PostgreSQL (asyncpg),
which bot processes on several machines share. Both go through the same SQLAlchemy code.
Migrations are Alembic revisions in ``migrations/``, applied at startup under a lock, so processes
starting together never race each other through them.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event, text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

log = logging.getLogger("bot.rulings")

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_FILE = "rulings.sqlite3"
CONNECT_TIMEOUT = 5.0  # seconds: a database that does not answer is "down", not a hung command
_PG_MIGRATION_LOCK = 0x4C35_5255  # pg_advisory_xact_lock key: "L5RU"


class DatabaseURLError(ValueError):
    """DATABASE_URL is not a database this bot can use; the message says what is accepted."""


def resolve_url(database_url: str | None, state_dir: Path) -> URL:
    """The SQLAlchemy URL (async driver) for ``DATABASE_URL``, else the SQLite file in ``state_dir``."""
    if not database_url:
        return URL.create("sqlite+aiosqlite", database=str(Path(state_dir) / SQLITE_FILE))
    try:
        url = make_url(database_url)
    except Exception:
        raise DatabaseURLError("DATABASE_URL: expected e.g. postgresql://user:password@host/dbname") from None
    backend = url.get_backend_name()
    if backend in ("postgresql", "postgres"):
        query = dict(url.query)
        sslmode = query.pop("sslmode", None)  # libpq's name; asyncpg calls it "ssl"
        if sslmode and "ssl" not in query:
            query["ssl"] = sslmode
        return url.set(drivername="postgresql+asyncpg", query=query)
    if backend == "sqlite":
        return url.set(drivername="sqlite+aiosqlite")
    raise DatabaseURLError(f"DATABASE_URL: unsupported database {backend!r} (use postgresql://… or sqlite:///…)")


def describe(url: URL) -> str:
    """The URL for logs and /about: never the password."""
    return url.render_as_string(hide_password=True)


def make_engine(url: URL) -> AsyncEngine:
    """An async engine; SQLite files get WAL, a busy timeout and foreign keys on every connection.

    ``hide_parameters``: a database error's message (logged, or shown by the CLI) names the statement but
    never the values in it, which are ruling texts, names and Discord ids."""
    if url.get_backend_name() == "sqlite":
        engine = create_async_engine(url, hide_parameters=True, connect_args={"timeout": CONNECT_TIMEOUT})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(
        url,
        hide_parameters=True,
        pool_pre_ping=True,  # a restarted server's dead connections are replaced, not handed out
        pool_size=5,
        max_overflow=5,
        connect_args={"timeout": CONNECT_TIMEOUT, "command_timeout": CONNECT_TIMEOUT * 2},
    )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _upgrade(connection: Connection, target: str) -> str | None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, target)
    return MigrationContext.configure(connection).get_current_revision()


async def migrate(engine: AsyncEngine, target: str = "head") -> str | None:
    """Bring the schema to ``target`` (default: the newest revision); returns the revision now in place."""
    async with _file_lock(engine.url), engine.begin() as conn:
        revision = await conn.run_sync(_upgrade, target)
    log.info("rulings database at schema revision %s (%s)", revision, describe(engine.url))
    return revision


@contextlib.asynccontextmanager
async def _file_lock(url: URL) -> AsyncIterator[None]:
    """SQLite: an exclusive lock file beside the database while migrating (PostgreSQL locks in SQL).

    The lock is taken in a worker thread: waiting for another migration must not stop the event loop.
    """
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        yield
        return
    path = Path(url.database).with_suffix(".migrate.lock")
    path.parent.mkdir(parents=True, exist_ok=True)  # the state folder, on first start (OSError: "down")
    with open(path, "a+") as handle:
        await asyncio.to_thread(fcntl.flock, handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

"""All bot settings in one place, read once from the environment (and a ``.env`` file in the working folder).

Everything else receives a ``Settings`` object, so tests build one directly instead of
patching the environment, and a bad value fails at startup with one clear line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from index.text.embedding import DEFAULT_MODEL, ENV_MODEL, OFF, check_model_setting

T = TypeVar("T")

_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
_LOG_FORMATS = ("text", "json")


class SettingsError(ValueError):
    """A setting has a value the bot cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    """The bot's configuration. ``token`` is excluded from ``repr`` so it never reaches a log."""

    token: str | None = field(default=None, repr=False)
    guild_ids: tuple[int, ...] = ()
    api_base: str | None = None
    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None
    sources: tuple[Path, ...] | None = None
    index_dir: Path | None = None
    house_rulings: Path | None = None
    log_level: str = "INFO"
    cooldown_rate: int = 5
    cooldown_seconds: float = 10.0
    rulebook_url: str | None = None
    privacy_url: str | None = None  # where the host published the privacy statement; /about links it
    owner_ids: frozenset[int] = frozenset()
    state_dir: Path | None = None  # the synced-commands hash; default: beside the index folder
    embedding_model: str | None = None  # L5R_EMBEDDING_MODEL as given (a model folder or "off"); see ``model``
    database_url: str | None = field(default=None, repr=False)  # rulings database; default: SQLite in state_dir
    rulings_poll_seconds: float = 2.0  # how often other processes' ruling changes and /reloads are looked for
    # seconds one rulings database call may take: past it a hung database counts as unreachable (commands defer
    # first, so the judge's reply, or draft handed back, arrives well inside Discord's 15 minutes)
    rulings_db_timeout: float = 8.0
    # /ruling import: the largest file accepted (bytes; refused before it is downloaded) and the most rulings in it
    rulings_import_max_bytes: int = 512 * 1024
    rulings_import_max_rulings: int = 5_000
    data_grace_days: int = 30  # days a server's rulings are kept after it removed the bot (a re-invite keeps them)
    formats: str | None = None  # L5R_FORMATS: the formats the console plays, as typed ("none", "obsidian hand")
    # Running as a service (bot/discord_bot/logs.py, bot/discord_bot/health.py, bot/discord_bot/admission.py):
    log_format: str = "text"  # "json": one JSON object per log line
    health_port: int | None = None  # /healthz and /metrics on this port; None: no endpoint
    health_host: str = "127.0.0.1"
    health_max_connections: int = 64  # open connections to the health endpoint; a new one closes the oldest idle
    health_header_timeout: float = 5.0  # seconds a new health connection has to send its request head
    lookup_workers: int = 2  # lookups computed at once (threads; the GIL makes more of them no faster)
    max_wait: float = 10.0  # seconds a lookup may expect to wait for a worker; past that: the busy reply
    shutdown_grace: float = 5.0  # seconds a stop waits for answers in flight
    reload_cooldown: float = 60.0  # seconds between two /reload in one server (the bot's owners: no limit)
    reload_cooldown_global: float = 15.0  # seconds between two /reload by server admins across all servers

    @property
    def model(self) -> Path | None:
        """The embedding model folder the engine uses (None: off, words only), passed down to it so the index
        never reads the environment on the bot's behalf."""
        if self.embedding_model is None:
            return DEFAULT_MODEL
        if self.embedding_model.lower() == OFF:
            return None
        return Path(self.embedding_model).expanduser()

    @property
    def log_level_number(self) -> int:
        return logging.getLevelName(self.log_level)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, dotenv: bool = True) -> Settings:
        """Parse settings from ``env`` (default: ``os.environ`` after loading ``.env``)."""
        if env is None:
            if dotenv:
                from dotenv import load_dotenv

                # Only the .env of the folder the bot is started from (never a parent folder's, which
                # find_dotenv would walk up to); real environment variables win.
                dotenv_file = Path.cwd() / ".env"
                if dotenv_file.is_file():
                    load_dotenv(dotenv_file, override=False)
            env = os.environ
        get = _Getter(env)
        sources = get.text("L5R_SOURCES")
        shard_count = get.integer("SHARD_COUNT", minimum=1)
        shard_ids = get.int_list("SHARD_IDS")
        if shard_ids and shard_count is None:
            raise SettingsError("SHARD_IDS needs SHARD_COUNT (the total number of shards) to be set too")
        if shard_ids and shard_count is not None and any(s >= shard_count for s in shard_ids):
            raise SettingsError(f"SHARD_IDS: every shard id must be below SHARD_COUNT={shard_count}")
        model = get.text(ENV_MODEL)
        if model is not None and (problem := check_model_setting(model)):
            raise SettingsError(f"{ENV_MODEL}: {problem}")
        level = (get.text("LOG_LEVEL") or "INFO").upper()
        if level not in _LEVELS:
            raise SettingsError(f"LOG_LEVEL: expected one of {', '.join(_LEVELS)}, got {level!r}")
        log_format = (get.text("LOG_FORMAT") or "text").lower()
        if log_format not in _LOG_FORMATS:
            raise SettingsError(f"LOG_FORMAT: expected one of {', '.join(_LOG_FORMATS)}, got {log_format!r}")
        health_port = get.integer("HEALTH_PORT")
        if health_port is not None and health_port > 65535:
            raise SettingsError(f"HEALTH_PORT: expected a TCP port (1-65535, or 0 for off), got {health_port}")
        header_timeout = get.positive("HEALTH_HEADER_TIMEOUT", default=5.0)
        return cls(
            token=get.text("DISCORD_TOKEN"),
            guild_ids=tuple(get.int_list("DISCORD_GUILD_IDS") or ()),
            api_base=get.url("DISCORD_API_BASE"),
            shard_count=shard_count,
            shard_ids=tuple(shard_ids) if shard_ids else None,
            sources=tuple(Path(p) for p in sources.split(os.pathsep) if p) if sources else None,
            index_dir=get.path("L5R_INDEX_DIR"),
            house_rulings=get.path("L5R_HOUSE_RULINGS"),
            log_level=level,
            cooldown_rate=get.integer("COOLDOWN_RATE", minimum=1) or 5,
            cooldown_seconds=get.number("COOLDOWN_SECONDS", default=10.0),
            rulebook_url=get.url("RULEBOOK_URL"),
            privacy_url=get.url("PRIVACY_URL"),
            owner_ids=frozenset(get.int_list("OWNER_IDS") or ()),
            state_dir=get.path("L5R_STATE_DIR"),
            embedding_model=model,
            database_url=get.database_url("DATABASE_URL"),
            rulings_poll_seconds=get.number("RULINGS_POLL_SECONDS", default=2.0) or 2.0,
            rulings_db_timeout=get.positive("RULINGS_DB_TIMEOUT", default=8.0),
            rulings_import_max_bytes=get.integer("RULINGS_IMPORT_MAX_BYTES", minimum=1) or 512 * 1024,
            rulings_import_max_rulings=get.integer("RULINGS_IMPORT_MAX_RULINGS", minimum=1) or 5_000,
            data_grace_days=_default(get.integer("L5R_DATA_GRACE_DAYS"), 30),
            formats=get.text("L5R_FORMATS"),
            log_format=log_format,
            health_port=health_port or None,
            health_host=get.text("HEALTH_HOST") or "127.0.0.1",
            health_max_connections=get.integer("HEALTH_MAX_CONNECTIONS", minimum=1) or 64,
            health_header_timeout=header_timeout,
            lookup_workers=get.integer("LOOKUP_WORKERS", minimum=1) or 2,
            max_wait=get.number("MAX_WAIT", default=10.0),
            shutdown_grace=get.number("SHUTDOWN_GRACE", default=5.0),
            reload_cooldown=get.number("RELOAD_COOLDOWN", default=60.0),
            reload_cooldown_global=get.number("RELOAD_COOLDOWN_GLOBAL", default=15.0),
        )


def _default(value: int | None, default: int) -> int:
    """``value`` unless it was not set (0 is a value: e.g. no grace period at all)."""
    return default if value is None else value


class _Getter:
    """Typed reads of optional variables; each failure names the variable and the expected form."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str) -> str | None:
        value = self.env.get(name, "").strip()
        return value or None

    def _convert(self, name: str, cast: Callable[[str], T], what: str) -> T | None:
        value = self.text(name)
        if value is None:
            return None
        try:
            return cast(value)
        except ValueError:
            raise SettingsError(f"{name}: expected {what}, got {value!r}") from None

    def integer(self, name: str, minimum: int = 0) -> int | None:
        number = self._convert(name, int, "a whole number")
        if number is not None and number < minimum:
            raise SettingsError(f"{name}: must be at least {minimum}, got {number}")
        return number

    def number(self, name: str, default: float) -> float:
        number = self._convert(name, float, "a number of seconds")
        if number is None:
            return default
        if not 0 <= number < float("inf"):  # also refuses NaN
            raise SettingsError(f"{name}: must be zero or a positive number of seconds, got {self.text(name)!r}")
        return number

    def positive(self, name: str, default: float) -> float:
        """A number of seconds that must be above zero (a timeout of 0 would close everything at once)."""
        number = self._convert(name, float, "a number of seconds")
        if number is None:
            return default
        if not 0 < number < float("inf"):
            raise SettingsError(f"{name}: must be a positive number of seconds, got {self.text(name)!r}")
        return number

    def int_list(self, name: str) -> list[int] | None:
        value = self.text(name)
        if value is None:
            return None
        items = [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
        try:
            numbers = [int(p) for p in items]
        except ValueError:
            raise SettingsError(f"{name}: expected comma-separated whole numbers, got {value!r}") from None
        if any(n < 0 for n in numbers):
            raise SettingsError(f"{name}: numbers must not be negative, got {value!r}")
        return numbers

    def url(self, name: str) -> str | None:
        value = self.text(name)
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise SettingsError(f"{name}: expected an http:// or https:// URL, got {value!r}")
        return value.rstrip("/")

    def database_url(self, name: str) -> str | None:
        value = self.text(name)
        if value is None:
            return None
        if not value.startswith(("postgresql://", "postgres://", "postgresql+asyncpg://", "sqlite:///")):
            # never echo the value: it may hold a password
            raise SettingsError(f"{name}: expected postgresql://user:password@host/dbname or sqlite:///path")
        return value

    def path(self, name: str) -> Path | None:
        value = self.text(name)
        return Path(value) if value else None

"""Logging for the bot process, and the one structured line written per answer.

``LOG_FORMAT=text`` (default) writes discord.py's usual ``[time] [LEVEL] logger: message`` lines;
``LOG_FORMAT=json`` writes one JSON object per line (python-json-logger). Either way the token is
replaced in every formatted line, whatever logged it, and the per-answer line carries ids,
outcome and timings, never what the user typed.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import discord
from pythonjsonlogger.json import JsonFormatter

from bot.discord_bot.admission import age

if TYPE_CHECKING:
    from bot.app.settings import Settings

log = logging.getLogger("bot")

TEXT_FORMAT = "[{asctime}] [{levelname:<8}] {name}: {message}"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
REDACTED = "[redacted]"


class TextFormatter(logging.Formatter):
    """discord.py's plain format, with a record's ``fields`` appended as ``key=value``."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT, DATE_FORMAT, style="{")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        text = super().formatMessage(record)
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            text += "".join(f" {key}={_plain(value)}" for key, value in fields.items())
        return text


class JsonLineFormatter(JsonFormatter):
    """One JSON object per record: time, level, logger, message, and a record's ``fields`` as keys."""

    def __init__(self) -> None:
        super().__init__(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_data, record, message_dict)
        fields = log_data.pop("fields", None)
        if isinstance(fields, dict):
            log_data.update(fields)


class RedactingFormatter(logging.Formatter):
    """Wraps a formatter and removes secrets from the finished line (message, arguments, traceback)."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str | None]) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = [s for s in secrets if s and len(s) >= 8]

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record)
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


def setup_logging(settings: Settings, stream: Any = None) -> logging.Handler:
    """Install the process's one log handler on the root logger (as discord.py's setup would)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    inner: logging.Formatter = JsonLineFormatter() if settings.log_format == "json" else TextFormatter()
    formatter = RedactingFormatter(inner, [settings.token])
    discord.utils.setup_logging(handler=handler, formatter=formatter, level=settings.log_level_number, root=True)
    return handler


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "-"
    return "-" if value is None else str(value)


def note_first_response(interaction: discord.Interaction, deferred: bool = False) -> None:
    """Remember how old the interaction was when its first response went out (once)."""
    if "response_age" not in interaction.extras:
        interaction.extras["response_age"] = age(interaction)
        interaction.extras["deferred"] = deferred


def raw_command_name(data: dict[str, Any]) -> str:
    """The name ``log_answer`` would give an interaction, from its raw gateway payload (no ``Interaction``
    is built for one dropped unread): ``ruling add``, ``define:autocomplete``, ``button:open``, ``modal``.
    Never the user's text (a button's custom id can hold a question: only its action is kept)."""
    inner = data.get("data") or {}
    kind = data.get("type")
    if kind == 3:
        action = str(inner.get("custom_id", "")).split(":")
        return f"button:{action[1]}" if len(action) > 2 and action[1].isalpha() and len(action[1]) <= 20 else "button"
    if kind == 5:
        return "modal"
    parts = [str(inner.get("name") or "?")[:40]]
    options = inner.get("options") or []
    while options and isinstance(options[0], dict) and options[0].get("type") in (1, 2):  # group, subcommand
        parts.append(str(options[0].get("name"))[:40])
        options = options[0].get("options") or []
    return " ".join(parts) + (":autocomplete" if kind == 4 else "")


def log_dropped(data: dict[str, Any], metrics: Any = None) -> None:
    """The ``expired`` line of an interaction dropped unread (``bot.discord_bot.intake``): the same fields as
    ``log_answer``'s, taken from the raw payload; autocomplete at DEBUG, as when it expires later."""
    command = raw_command_name(data)
    user = (data.get("member") or {}).get("user") or data.get("user") or {}
    fields: dict[str, Any] = {
        "command": command,
        "outcome": "expired",
        "latency_ms": None,
        "response_age_ms": None,
        "deferred": False,
        "hits": [],
        "user": int(user["id"]) if str(user.get("id", "")).isdigit() else None,
        "guild": int(data["guild_id"]) if str(data.get("guild_id", "")).isdigit() else None,
        "shard": None,
    }
    log.log(logging.DEBUG if command.endswith(":autocomplete") else logging.INFO, "answer", extra={"fields": fields})
    if metrics is not None:
        metrics.answers.labels(command, "expired").inc()


def log_answer(interaction: discord.Interaction, command: str, outcome: str, *, level: int = logging.INFO) -> None:
    """The one line per answered interaction, and the matching metrics.

    ``outcome``: ok, user_error, cooldown, not_allowed, busy, expired, stopping or error. Only ids,
    timings and the outcome are written: never the user's text.
    """
    extras = interaction.extras
    if extras.get("logged"):
        return
    extras["logged"] = True
    received = extras.get("received")
    latency = time.perf_counter() - received if received is not None else None
    response_age = extras.get("response_age")
    fields: dict[str, Any] = {
        "command": command,
        "outcome": outcome,
        "latency_ms": round(latency * 1000, 1) if latency is not None else None,
        "response_age_ms": round(response_age * 1000, 1) if response_age is not None else None,
        "deferred": bool(extras.get("deferred")),
        "hits": list(extras.get("hits") or []),
        "user": interaction.user.id,
        "guild": interaction.guild_id,
        "shard": getattr(interaction.guild, "shard_id", None),
    }
    log.log(level, "answer", extra={"fields": fields})
    metrics = getattr(interaction.client, "metrics", None)
    if metrics is not None:
        metrics.answers.labels(command, outcome).inc()
        if latency is not None and outcome not in ("expired",):
            metrics.latency.labels(command).observe(latency)
        if response_age is not None:
            metrics.first_response_age.observe(response_age)
        if outcome == "error":
            metrics.errors.labels(command).inc()

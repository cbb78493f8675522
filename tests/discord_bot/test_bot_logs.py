"""Log formats: the token is removed from every line; JSON lines carry the answer's fields as keys."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.app.settings import Settings
from bot.discord_bot.logs import REDACTED, JsonLineFormatter, RedactingFormatter, TextFormatter, setup_logging

TOKEN = "MTA4.secret-token-value.XYZ"


def record(msg: str, *args: object, fields: dict | None = None, exc: BaseException | None = None) -> logging.LogRecord:
    rec = logging.LogRecord("bot", logging.INFO, __file__, 1, msg, args, None)
    if exc is not None:
        rec.exc_info = (type(exc), exc, exc.__traceback__)
    if fields is not None:
        rec.fields = fields
    return rec


@pytest.mark.parametrize("inner", [TextFormatter(), JsonLineFormatter()], ids=["text", "json"])
def test_the_token_is_removed_from_message_arguments_and_tracebacks(inner: logging.Formatter) -> None:
    formatter = RedactingFormatter(inner, [TOKEN])
    try:
        raise RuntimeError(f"login failed for {TOKEN}")
    except RuntimeError as exc:
        line = formatter.format(record("calling with %s", TOKEN, exc=exc))
    assert TOKEN not in line
    assert line.count(REDACTED) >= 2


def test_text_lines_end_with_the_fields() -> None:
    line = TextFormatter().format(
        record("answer", fields={"command": "define", "outcome": "ok", "deferred": False, "hits": ["a", "b"]})
    )
    assert line.endswith("] [INFO    ] bot: answer command=define outcome=ok deferred=false hits=a,b")


def test_json_lines_carry_the_fields_as_keys() -> None:
    data = json.loads(JsonLineFormatter().format(record("answer", fields={"command": "ask", "latency_ms": 3.2})))
    assert data["message"] == "answer" and data["level"] == "INFO" and data["logger"] == "bot"
    assert (data["command"], data["latency_ms"]) == ("ask", 3.2) and "fields" not in data and data["time"]


def test_setup_logging_writes_json_and_redacts(monkeypatch) -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        setup_logging(Settings(token=TOKEN, log_format="json"), stream)
        logging.getLogger("discord.http").warning("sending %s", TOKEN)
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    data = json.loads(stream.getvalue())
    assert data["message"] == f"sending {REDACTED}" and data["logger"] == "discord.http"

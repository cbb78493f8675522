"""Malformed gateway events are logged briefly and skipped, never the end of the process.

discord.py runs an event's parser (``ConnectionState.parse_*``) straight from the gateway loop, without a
guard: an exception there (an ``INTERACTION_CREATE`` whose member has no user, an id of ``"abc"``,
``"d": null``) leaves the connection loop, and ``Client.connect`` re-raises anything that is not a network
error, so one bad event stops the whole bot. Each parser is wrapped here so that the event is skipped with
one warning line (its name and the error, no traceback, nothing of the payload) and the bot goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("bot.gateway")

Parser = Callable[[Any], Any]


def guard_parsers(state: Any) -> None:
    """Wrap every parser of a discord.py ``ConnectionState`` (the websocket reads this very dict)."""
    parsers: dict[str, Parser] = state.parsers
    for name, parse in list(parsers.items()):
        if not getattr(parse, "guarded", False):
            parsers[name] = _guarded(name, parse)


def _guarded(name: str, parse: Parser) -> Parser:
    def run(data: Any) -> Any:
        try:
            return parse(data)
        except Exception as exc:  # noqa: BLE001 - one malformed event must not end the bot
            log.warning("skipped a malformed %s gateway event (%s: %.200s)", name, type(exc).__name__, exc)
            return None

    run.guarded = True  # type: ignore[attr-defined]
    return run

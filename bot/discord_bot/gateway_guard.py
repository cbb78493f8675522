"""Malformed gateway events are logged briefly and skipped, never the end of the process.

discord.py runs an event's parser (``ConnectionState.parse_*``) straight from the gateway loop, without a
guard: an exception there (an ``INTERACTION_CREATE`` whose member has no user, an id of ``"abc"``,
``"d": null``) leaves the connection loop, and ``Client.connect`` re-raises anything that is not a network
error, so one bad event stops the whole bot. Each parser is wrapped here so that the event is skipped with
one warning line (its name and the error, no traceback, nothing of the payload) and the bot goes on.

Frames that cannot be read at all fail earlier, in ``DiscordWebSocket.received_message``, with the same
result (the shard's worker terminates the client): ``guard_frames`` wraps it once for the process. A frame
the inflater rejects (a corrupt zlib frame) leaves the socket's shared zlib context unusable, so the socket
is replaced and the session resumed (Discord replays what was missed); text that is not a JSON object is
skipped. Either way: one warning line, no traceback, nothing of the frame.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Coroutine
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


def guard_frames() -> None:
    """Wrap ``DiscordWebSocket.received_message`` (once per process; every shard's socket uses it)."""
    from discord.gateway import DiscordWebSocket

    if not getattr(DiscordWebSocket.received_message, "guarded", False):
        DiscordWebSocket.received_message = _guarded_frames(DiscordWebSocket.received_message)  # type: ignore[method-assign]


def _guarded_frames(received: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., Coroutine[Any, Any, None]]:
    from discord.gateway import ReconnectWebSocket

    async def received_message(ws: Any, msg: Any, /) -> None:
        try:
            await received(ws, msg)
        except (zlib.error, UnicodeDecodeError) as exc:
            log.warning("shard %s: an unreadable gateway frame (%s); reconnecting to resume the session",
                        ws.shard_id, type(exc).__name__)  # fmt: skip
            raise ReconnectWebSocket(ws.shard_id, resume=True) from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:  # not JSON, or not a JSON object
            log.warning("shard %s: skipped a gateway frame that is not a JSON object (%s: %.200s)",
                        ws.shard_id, type(exc).__name__, exc)  # fmt: skip

    received_message.guarded = True  # type: ignore[attr-defined]
    received_message.gated = getattr(received, "gated", False)  # type: ignore[attr-defined]  # intake.hold_reading
    return received_message

"""Time limits on rulings database calls: a hung database (it accepts connections and never answers) must
cost a command a few seconds, never the whole 15 minutes Discord keeps an interaction's token.

``asyncio.wait_for`` is not enough on its own: on timeout it cancels the call *and waits for the call to
finish cancelling*, and a cancelled SQLAlchemy call rolls back or closes its connection on its way out,
which on a hung server waits again, for as long as the server hangs. ``within`` stops waiting at the
deadline whatever the call does next: the call is cancelled and left to finish in the background (its
outcome, usually an error, is retrieved and dropped there), and the caller gets ``DatabaseTimeout``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

log = logging.getLogger("bot.rulings")

T = TypeVar("T")

DEFAULT_TIMEOUT = 8.0  # seconds (RULINGS_DB_TIMEOUT): well inside the 15 minutes a deferred reply may take


class DatabaseTimeout(TimeoutError):
    """The database did not answer within the time limit; the call was abandoned (cancelled)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the rulings database did not answer within {seconds:g} s")
        self.seconds = seconds


def _drop_outcome(task: asyncio.Future[object]) -> None:
    """An abandoned call's late result or error: nobody waits for it any more (never 'never retrieved')."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.debug("an abandoned rulings database call ended with %s: %s", type(exc).__name__, exc)


async def within(call: Awaitable[T], seconds: float) -> T:
    """``await call``, but for at most ``seconds``; then ``DatabaseTimeout`` (the call is cancelled and
    not waited for). Cancelling the caller cancels the call too."""
    task = asyncio.ensure_future(call)
    try:
        done, _pending = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_drop_outcome)
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_drop_outcome)
        raise DatabaseTimeout(seconds)
    return task.result()

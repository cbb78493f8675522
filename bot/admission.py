"""Whether and when an interaction can still be answered, and how many lookups run at once.

Discord gives every interaction 3 seconds *from its creation* (the time in its snowflake id) to
receive a first response; after that the response is refused and the user sees "the application
did not respond". The clock therefore starts before the bot even reads the event: a gateway
backlog, a RESUME replay or a busy event loop all eat into it. So:

- an interaction already too old for a response to arrive in time is not answered at all
  (``EXPIRE_AT``): answering would only cost a refused request while others wait;
- a lookup not finished ``DEFER_AT`` after creation is deferred ("thinking..."), and one that will
  queue behind other lookups is deferred at once;
- lookups run on a small pool of worker threads (the index is pure Python, so more threads only
  share one core) with a bounded queue; when the queue is full a new interaction gets a short
  "busy" reply straight away instead of being lost.

Buttons get the same per-user rate limit as the slash commands (``UserCooldowns``).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from .settings import Settings

T = TypeVar("T")

WINDOW = 3.0  # seconds from creation in which Discord accepts the first response
DEFER_AT = 1.5  # seconds from creation: a lookup still running then is deferred
EXPIRE_AT = 2.75  # seconds from creation: from here a first response cannot be counted on to arrive in time
REST_TIMEOUT = 10.0  # seconds for a followup or edit (a hung REST base must not hold an answer forever)

BUSY = "The judge is busy right now and could not take your request. Please try again in a few seconds."
STOPPING = "The judge is restarting. Please try again in a few seconds."


def slow_down(retry_after: float) -> str:
    """The one message for a user over the rate limit (commands and buttons alike)."""
    return f"Slow down a little — try again in {max(1, math.ceil(retry_after))} s."


class Expired(Exception):
    """The interaction is too old for a first response to reach Discord in time; nothing is sent."""


class Busy(Exception):
    """The lookup queue is full; the user gets the ``BUSY`` reply."""


def created_at(interaction: discord.Interaction) -> float:
    """When Discord created the interaction (POSIX seconds), from its snowflake id."""
    return discord.utils.snowflake_time(interaction.id).timestamp()


def age(interaction: discord.Interaction, now: float | None = None) -> float:
    """Seconds since Discord created the interaction (never negative: clocks may differ a little)."""
    return max(0.0, (time.time() if now is None else now) - created_at(interaction))


def remaining(interaction: discord.Interaction) -> float:
    """Seconds left of Discord's window for the first response."""
    return WINDOW - age(interaction)


class Lookups:
    """A bounded pool for index lookups: ``workers`` threads, at most ``queue_limit`` jobs waiting.

    Keeps a running average of how long a lookup takes, so a caller can tell whether a new job
    will finish before its interaction has to be deferred.
    """

    def __init__(self, workers: int = 2, queue_limit: int = 500) -> None:
        self.workers = max(1, workers)
        self.queue_limit = max(1, queue_limit)
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="lookup")
        self._lock = threading.Lock()
        self.pending = 0  # submitted and not finished (running + waiting); changed on the event loop only
        self.seconds_per_lookup = 0.01  # exponential moving average, updated by the workers
        self.skipped = 0  # jobs dropped before they started because nobody wanted the answer any more

    @property
    def waiting(self) -> int:
        return max(0, self.pending - self.workers)

    def saturated(self) -> bool:
        return self.waiting >= self.queue_limit

    def expected_seconds(self) -> float:
        """How long a job submitted now would take to finish, from the queue ahead of it."""
        rounds = self.pending // self.workers + 1
        return rounds * self.seconds_per_lookup

    def _timed(self, fn: Callable[[], T], wanted: Callable[[], bool]) -> T:
        if not wanted():
            with self._lock:
                self.skipped += 1
            raise Expired
        started = time.perf_counter()
        try:
            return fn()
        finally:
            took = time.perf_counter() - started
            with self._lock:
                self.seconds_per_lookup += 0.2 * (took - self.seconds_per_lookup)

    async def run(self, fn: Callable[[], T], wanted: Callable[[], bool] = lambda: True) -> T:
        """Run ``fn`` on a worker; ``wanted`` is asked when it starts (a job nobody waits for is skipped).

        Raises ``Busy`` when the queue is full.
        """
        if self.saturated():
            raise Busy
        loop = asyncio.get_running_loop()
        self.pending += 1
        try:
            return await loop.run_in_executor(self._executor, self._timed, fn, wanted)
        finally:
            self.pending -= 1

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class UserCooldowns:
    """``rate`` uses per ``per`` seconds for each user, with discord.py's own ``Cooldown`` buckets.

    The slash commands get theirs from ``app_commands.checks.dynamic_cooldown``; buttons (open,
    paging, post in channel) share one bucket per user from here, with the same settings.
    """

    def __init__(self, rate: int, per: float) -> None:
        self.rate, self.per = rate, per
        self._buckets: dict[int, app_commands.Cooldown] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> UserCooldowns:
        return cls(settings.cooldown_rate, settings.cooldown_seconds)

    def retry_after(self, user_id: int) -> float | None:
        """Take one use for ``user_id``; the seconds to wait when none is left, else None."""
        if self.per <= 0:
            return None
        now = time.time()
        if len(self._buckets) > 10_000:  # forget users whose buckets have refilled
            self._buckets = {k: b for k, b in self._buckets.items() if b.get_tokens(now) < b.rate}
        bucket = self._buckets.setdefault(user_id, app_commands.Cooldown(self.rate, self.per))
        return bucket.update_rate_limit(now)

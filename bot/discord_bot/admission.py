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
  share one core) with a bounded queue: when a new lookup would wait longer than MAX_WAIT seconds
  for a worker, its interaction gets a short "busy" reply straight away instead of being lost;
- responses go out through a fixed number of sender tasks (``Responder``), first responses before
  followups and the oldest interaction first, and one whose window has closed is not sent. With
  thousands of requests started at once they would all progress together and all finish late; in
  this order the early ones make it and the hopeless ones cost nothing;
- while many first responses wait to be sent (a burst), lookups hold back and new interactions are
  deferred at once: the CPU goes to acknowledging everyone in time, the answers follow.

Buttons get the same per-user rate limit as the slash commands (``UserCooldowns``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import threading
import time
from collections.abc import Awaitable, Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from bot.app.settings import Settings

T = TypeVar("T")

WINDOW = 3.0  # seconds from creation in which Discord accepts the first response
DEFER_AT = 1.5  # seconds from creation: a lookup still running then is deferred
EXPIRE_AT = 2.75  # seconds from creation: from here a first response cannot be counted on to arrive in time
REST_TIMEOUT = 10.0  # seconds for a followup or edit (a hung REST base must not hold an answer forever)
BACKLOG = 20  # first responses waiting to be sent: from this many on, lookups wait and answers are deferred
# Seconds a lookup waits at most for the first responses to go out: the whole window. With 1 s, in a burst of
# 10,000 at once the answers' lookups took the GIL from the event loop while acknowledgements were still due
# (959-1,380 in time against 1,825-2,201 with the window; the answers follow a little later, inside their 15 min).
MAX_HOLD = WINDOW

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
    """A bounded pool for index lookups: ``workers`` threads; a job that would wait more than
    ``max_wait`` seconds for one is refused (``Busy``).

    Keeps a running average of how long a lookup takes, so a caller can tell whether a new job
    will finish before its interaction has to be deferred.
    """

    URGENT_LIMIT = 50  # urgent jobs (autocomplete) waiting before new ones are refused

    def __init__(self, workers: int = 2, max_wait: float = 10.0) -> None:
        self.workers = max(1, workers)
        self.max_wait = max_wait
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="lookup")
        # Autocomplete cannot be deferred and is quick: its own worker, never held, never queued
        # behind the answers' lookups.
        self._urgent = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lookup-urgent")
        self.urgent_pending = 0
        self._lock = threading.Lock()
        self.pending = 0  # submitted and not finished (running + waiting); changed on the event loop only
        self.seconds_per_lookup = 0.01  # exponential moving average, updated by the workers
        self.skipped = 0  # jobs dropped before they started because nobody wanted the answer any more
        self.hold: Callable[[], bool] = lambda: False  # while true, a job about to start waits (MAX_HOLD at most)

    @property
    def waiting(self) -> int:
        return max(0, self.pending - self.workers)

    def saturated(self) -> bool:
        return self.expected_seconds() > self.max_wait

    def expected_seconds(self) -> float:
        """How long a job submitted now would take to finish, from the queue ahead of it."""
        rounds = self.pending // self.workers + 1
        return rounds * self.seconds_per_lookup

    def _timed(self, fn: Callable[[], T], wanted: Callable[[], bool], urgent: bool = False) -> T:
        held = 0.0
        while not urgent and held < MAX_HOLD and self.hold():  # sleeping lets the event loop have the GIL
            time.sleep(0.005)
            held += 0.005
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

    async def run(self, fn: Callable[[], T], wanted: Callable[[], bool] = lambda: True, *, urgent: bool = False) -> T:
        """Run ``fn`` on a worker; ``wanted`` is asked when it starts (a job nobody waits for is skipped).
        ``urgent``: a job that cannot wait (autocomplete), on its own worker.

        Raises ``Busy`` when the queue is full.
        """
        loop = asyncio.get_running_loop()
        if urgent:
            if self.urgent_pending >= self.URGENT_LIMIT:
                raise Busy
            self.urgent_pending += 1
            try:
                return await loop.run_in_executor(self._urgent, self._timed, fn, wanted, True)
            finally:
                self.urgent_pending -= 1
        return await self.submit(fn, wanted)

    def submit(self, fn: Callable[[], T], wanted: Callable[[], bool] = lambda: True) -> asyncio.Future[T]:
        """``run`` without the wait: the job takes its place in the queue now, or ``Busy`` is raised now, before
        the caller awaits anything. A reply that defers while its job is still to be queued could otherwise be
        refused after the defer: the busy note would then follow a public "thinking" message, in the channel,
        not to the asker alone (seen on a loaded machine)."""
        if self.saturated():
            raise Busy
        self.pending += 1
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._timed, fn, wanted)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: asyncio.Future[Any]) -> None:
        self.pending -= 1

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._urgent.shutdown(wait=False, cancel_futures=True)


FIRST, LATER = 0, 1  # Responder priorities: a first response, then followups and edits


class Responder:
    """Sends interaction responses through ``senders`` tasks: first responses before later ones,
    and among those the interaction created first goes first (earliest deadline first).

    A first response whose interaction is past ``EXPIRE_AT`` when its turn comes is not sent
    (``Expired``); each call is bounded (a hung REST base must not hold a sender for long).
    """

    def __init__(self, senders: int = 64) -> None:
        self.senders = senders
        self._queue: asyncio.PriorityQueue[tuple[int, float, int, Any]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._seq = itertools.count()
        self.skipped = 0  # first responses not sent because their window had closed
        self.first_pending = 0  # first responses queued or being sent

    def backlogged(self) -> bool:
        return self.first_pending >= BACKLOG

    def _start(self) -> asyncio.PriorityQueue[tuple[int, float, int, Any]]:
        if self._queue is None:
            self._queue = asyncio.PriorityQueue()
            self._tasks = [asyncio.create_task(self._sender(), name=f"responder-{i}") for i in range(self.senders)]
        return self._queue

    async def send(
        self, interaction: discord.Interaction, call: Callable[[], Awaitable[T]], *, first: bool, timeout: float
    ) -> T:
        """Queue ``call()`` (made only when its turn comes) and wait for its result or error."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        job = (call, first, timeout, interaction, future)
        self._start().put_nowait((FIRST if first else LATER, created_at(interaction), next(self._seq), job))
        self.first_pending += first
        try:
            return await future
        finally:
            self.first_pending -= first

    async def _sender(self) -> None:
        assert self._queue is not None
        while True:
            _priority, _created, _seq, (call, first, timeout, interaction, future) = await self._queue.get()
            if future.done():  # the caller gave up
                continue
            if first and age(interaction) >= EXPIRE_AT:
                self.skipped += 1
                future.set_exception(Expired())
                continue
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation that
                # arrives as the call completes, and this loop would then outlive close() (a stop that hangs)
                async with asyncio.timeout(timeout):
                    result = await call()
            except Exception as exc:  # handed to the caller, who knows what it means
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(result)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []


class UserCooldowns:
    """``rate`` uses per ``per`` seconds for each key (a user, or a command and a user), with discord.py's
    own ``Cooldown`` buckets.

    The slash commands share one of these per bot, keyed by command and user (``command_cooldown``); buttons
    (open, paging, post in channel) another, one bucket per user, with the same settings. discord.py's
    ``dynamic_cooldown`` was used for the commands before: it sweeps every bucket on every use, so in a burst
    of 10,000 users at once the check grew with the burst (7% of the event loop's thread in the window).
    Here buckets that have refilled are forgotten when the table has doubled since the last sweep.
    """

    SWEEP_FROM = 1024  # buckets kept before the first sweep

    def __init__(self, rate: int, per: float) -> None:
        self.rate, self.per = rate, per
        self._buckets: dict[Hashable, app_commands.Cooldown] = {}
        self._sweep_at = self.SWEEP_FROM

    @classmethod
    def from_settings(cls, settings: Settings) -> UserCooldowns:
        return cls(settings.cooldown_rate, settings.cooldown_seconds)

    def __len__(self) -> int:
        return len(self._buckets)

    def retry_after(self, key: Hashable, now: float | None = None) -> float | None:
        """Take one use for ``key``; the seconds to wait when none is left, else None."""
        if self.per <= 0:
            return None
        now = time.time() if now is None else now
        if len(self._buckets) >= self._sweep_at:  # forget buckets that have refilled (amortised: O(1) a use)
            self._buckets = {k: b for k, b in self._buckets.items() if b.get_tokens(now) < b.rate}
            self._sweep_at = max(self.SWEEP_FROM, 2 * len(self._buckets))
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = app_commands.Cooldown(self.rate, self.per)
        return bucket.update_rate_limit(now)

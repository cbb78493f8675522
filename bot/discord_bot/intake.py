"""Interactions read from the gateway are started newest first, and expired ones are dropped unparsed.

discord.py turns every ``INTERACTION_CREATE`` into an ``Interaction`` and a task the moment the gateway
loop reads it, and that loop does not give the event loop back while frames are buffered. In a burst of
thousands the bot therefore spent seconds building objects and tasks for the whole backlog before any
first response went out, and by then nearly all of it had expired (4,000 at once lost 82%, 5,000
99.9%). Here the gateway loop only looks at each event's id (a snowflake holding its creation time):

- an interaction already ``EXPIRE_AT`` old is dropped at once, with no further work (no object, no
  task, no REST call); its one ``expired`` log line is written once the backlog is gone;
- the others wait in a heap and are started by one task, newest first, in turns as long as the rest of
  the event loop took since its last one (the gateway reader takes hundreds of events at a time, so
  starting gets about half of the time) and only while the responder's senders have room, so the
  event loop keeps sending the first responses of those already started. Under overload the newest
  have the most time left; the oldest expire in the heap and are dropped when their turn comes,
  having cost nothing. With no backlog an interaction is started straight away, as before.
- from ``HIGH`` waiting until fewer than ``LOW`` wait (``GATE_MAX`` at most), the gateway loop itself waits
  before reading its next frame (``hold_reading``). Pausing the socket alone did not stop the reading:
  aiohttp resumes it whenever its own queue drains, and discord.py drains it as fast as frames come, so a
  burst of 10,000 was still inflated and parsed whole (about 0.1 ms a frame) inside the window, twice the
  reading of 5,000. Held at the gateway loop, a frame costs nothing until there is room for it, and once
  it has expired it is dropped as soon as it is read.

Events that are not interactions keep discord.py's own path and order.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

from bot.discord_bot.admission import EXPIRE_AT

log = logging.getLogger("bot")

DISCORD_EPOCH_MS = 1420070400000
SLICE = 0.004  # seconds of starting interactions at least before the event loop gets a turn
MAX_SLICE = 0.05  # and at most
PAUSE = 0.002  # seconds to wait for room among the senders before looking again
HIGH = 256  # interactions waiting here from which the gateway sockets are not read (TCP holds the rest)
LOW = 64  # ... until fewer than this wait
GATE_MAX = 3.0  # seconds the gateway loop waits at most for room (then it reads on, as discord.py would)
LOG_BATCH = 100  # log lines of dropped interactions written per turn of the event loop
TASK_NAME = "interaction-intake"

Parser = Callable[[Any], Any]
Shed = Callable[[dict[str, Any]], None]


def created_at(data: Any) -> float | None:
    """Creation time (POSIX seconds) from a raw event's ``id``; None when it has no usable id."""
    try:
        return ((int(data["id"]) >> 22) + DISCORD_EPOCH_MS) / 1000
    except (TypeError, KeyError, ValueError):
        return None


class Intake:
    """Stands between the gateway reader and discord.py's ``INTERACTION_CREATE`` parser."""

    def __init__(
        self,
        shed: Shed,
        room: Callable[[], bool] = lambda: True,
        expire_at: float = EXPIRE_AT,
        clock: Callable[[], float] = time.time,
        pause: Callable[[bool], None] = lambda paused: None,
        backlog: Callable[[bool], None] = lambda working: None,
    ) -> None:
        self._shed = shed
        self._room = room  # whether the responses of those already started leave room for more
        self._pause = pause  # stop (True) or resume (False) reading the gateway sockets
        self._backlog = backlog  # a backlog is being worked through (True, each turn) or is gone (False)
        self.paused = False
        self.pauses = 0  # times reading was paused because enough was waiting here
        self.expire_at = expire_at
        self._clock = clock
        self._parse: Parser = lambda data: None
        self._heap: list[tuple[float, int, dict[str, Any]]] = []
        self._seq = itertools.count()
        self._task: asyncio.Task[None] | None = None
        self._tick_busy = False  # an interaction was started directly during this turn of the event loop
        self._idle = asyncio.Event()
        self._idle.set()
        self._open = asyncio.Event()  # set while the gateway loop may read the next frame
        self._open.set()
        self.gate_waits = 0  # times the gateway loop waited for room
        self.shed_count = 0  # dropped because expired, unparsed
        self._dropped: list[dict[str, Any]] = []  # dropped, their log lines not written yet
        self._logger: asyncio.Task[None] | None = None
        self.started_count = 0

    def install(self, state: Any) -> None:
        """Take over ``state.parsers["INTERACTION_CREATE"]`` (the dict the gateway reader looks parsers up in)."""
        self._parse = state.parsers["INTERACTION_CREATE"]

        def receive(data: Any) -> None:
            self.receive(data)

        receive.guarded = True  # type: ignore[attr-defined]  # never raises: gateway_guard leaves it alone
        receive.gate = self.gate  # type: ignore[attr-defined]  # found by hold_reading through this dict
        state.parsers["INTERACTION_CREATE"] = receive
        hold_reading()

    async def gate(self) -> None:
        """Return when the gateway loop may read its next frame: at once unless ``HIGH`` interactions wait
        here, else when fewer than ``LOW`` do, or after ``GATE_MAX`` seconds whatever the backlog."""
        if self._open.is_set():
            return
        self.gate_waits += 1
        with contextlib.suppress(TimeoutError):  # asyncio.timeout: a shard's cancellation is never swallowed
            async with asyncio.timeout(GATE_MAX):
                await self._open.wait()

    @property
    def waiting(self) -> int:
        """Interactions read and not started yet."""
        return len(self._heap)

    def receive(self, data: Any) -> None:
        """Called by the gateway reader for each ``INTERACTION_CREATE`` (synchronously, never raises)."""
        created = created_at(data)
        if created is None:  # malformed: discord.py's (guarded) parser logs and skips it
            self._parse(data)
            return
        if self._clock() - created >= self.expire_at:
            self._drop(data)
            return
        if not self._heap and not self._tick_busy:
            self._start(data)
            self._tick_busy = True
            try:
                asyncio.get_running_loop().call_soon(self._end_tick)
            except RuntimeError:  # no running loop (a test calling in directly): nothing to batch with
                self._tick_busy = False
            return
        heapq.heappush(self._heap, (-created, next(self._seq), data))
        self._idle.clear()
        if len(self._heap) >= HIGH:  # again each time: aiohttp's own flow control may have resumed reading
            self._set_paused(True)
            self._open.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=TASK_NAME)

    def _end_tick(self) -> None:
        self._tick_busy = False

    def _start(self, data: dict[str, Any]) -> None:
        self.started_count += 1
        self._parse(data)

    def _drop(self, data: dict[str, Any]) -> None:
        """Forget an expired interaction; its log line is written later, when no backlog is waiting (a line
        costs about as much as reading the event, and in a burst that time is the live ones')."""
        self.shed_count += 1
        self._dropped.append(data)
        if self._logger is None or self._logger.done():
            self._logger = asyncio.get_running_loop().create_task(self._log_dropped(), name=TASK_NAME + "-log")

    async def _log_dropped(self) -> None:
        while self._dropped:
            if self._heap or not self._room():
                await asyncio.sleep(PAUSE * 10)
                continue
            batch, self._dropped = self._dropped[:LOG_BATCH], self._dropped[LOG_BATCH:]
            for data in batch:
                try:
                    self._shed(data)
                except Exception:  # noqa: BLE001 - a log line must not stop the others
                    log.warning("could not log a dropped interaction", exc_info=True)
            await asyncio.sleep(0)

    async def _run(self) -> None:
        """Start the waiting interactions, newest first, yielding every ``SLICE`` seconds and while the
        first responses of those already started fill the senders (then the backlog waits here, where
        it costs nothing and expires unparsed, not half-built in the responder's queue)."""
        try:
            turn_ended = time.perf_counter()
            while self._heap:
                self._backlog(True)
                # as long as the rest of the event loop took since this task's last turn, within bounds
                began = time.perf_counter()
                until = began + min(MAX_SLICE, max(SLICE, began - turn_ended))
                while self._heap and time.perf_counter() < until and self._room():
                    neg_created, _seq, data = heapq.heappop(self._heap)
                    if self._clock() + neg_created >= self.expire_at:
                        self._drop(data)
                    else:
                        self._start(data)
                if len(self._heap) < LOW:
                    self._open.set()
                    if self.paused:
                        self._set_paused(False)
                turn_ended = time.perf_counter()
                await asyncio.sleep(0 if self._room() else PAUSE)
        finally:
            self._backlog(False)
            self._open.set()
            if self.paused:
                self._set_paused(False)
            if not self._heap:
                self._idle.set()

    def _set_paused(self, paused: bool) -> None:
        self.pauses += paused and not self.paused
        self.paused = paused
        try:
            self._pause(paused)
        except Exception:  # noqa: BLE001 - best effort: reading on is what discord.py would do anyway
            log.warning("could not %s reading the gateway", "pause" if paused else "resume", exc_info=True)

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until every interaction read has been started or dropped and logged (a stop drains this first)."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
            if self._logger is not None:
                await asyncio.wait_for(asyncio.shield(self._logger), timeout)
        except TimeoutError:
            return False
        return True


def hold_reading() -> None:
    """Make every gateway socket wait for its client's intake before it reads a frame (once per process;
    a socket finds its intake through the parsers dict it was given, so clients in one process stay apart)."""
    from discord.gateway import DiscordWebSocket

    received = DiscordWebSocket.received_message
    if getattr(received, "gated", False):
        return

    async def received_message(ws: Any, msg: Any, /) -> None:
        parsers = getattr(ws, "_discord_parsers", None)
        gate = getattr(parsers.get("INTERACTION_CREATE"), "gate", None) if isinstance(parsers, dict) else None
        if gate is not None:
            await gate()
        await received(ws, msg)

    received_message.gated = True  # type: ignore[attr-defined]
    received_message.guarded = getattr(received, "guarded", False)  # type: ignore[attr-defined]
    DiscordWebSocket.received_message = received_message  # type: ignore[method-assign]

"""The objects made at start (the index, discord.py's caches, the libraries) are kept out of the garbage
collector's full passes.

CPython's cyclic collector walks every tracked object in a full (generation 2) pass. The running bot holds
hundreds of thousands of them from start-up that live as long as the process, and a burst of interactions
allocates fast enough to trigger full passes: measured in a burst of 10,000 at once, three passes took 111,
141 and 182 ms of the event loop's thread inside the 3-second window in which every first response is due.
``gc.freeze()`` moves the objects alive at that moment to a permanent generation the collector skips;
objects freed by reference counting are still freed. After a reload the old build's objects are handed back
to the collector first (``unfreeze``), so a cycle among them is still collected, and the new ones are frozen.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger("bot")


def settle() -> int:
    """Collect once, then freeze everything alive; returns the number of objects frozen."""
    started = time.perf_counter()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("heap settled: %d objects kept out of the collector's passes (%.0f ms)", frozen,
             (time.perf_counter() - started) * 1000)  # fmt: skip
    return frozen


HOLD_MAX = 10.0  # seconds full passes may be put off in one go (a burst is acknowledged within 3 s)
LINGER = 3.0  # seconds after a backlog's last turn before full passes resume (a burst drains and refills)
NEVER = 1 << 30  # a generation-2 threshold never reached
DEFAULT_FULL = 10  # CPython's own generation-2 threshold


class FullPasses:
    """Puts off the collector's full passes while a burst is acknowledged.

    Freezing start-up's objects is not enough: a burst's own objects (interactions, members, requests) that
    live through its window grew the collected heap from 72,000 to 261,000 objects, and full passes over them
    took 125 and 153 ms of the window. Young generations are still collected (they are cheap and free most
    cycles). Full passes resume ``LINGER`` seconds after the backlog's last turn (the intake's waiting list
    empties and refills many times within one burst), or after ``HOLD_MAX`` seconds whatever happens.
    """

    def __init__(self, hold_max: float = HOLD_MAX, linger: float = LINGER,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.hold_max = hold_max
        self.linger = linger
        self._clock = clock
        self._since: float | None = None  # when the hold began
        self._last = 0.0  # the backlog's last turn
        self._saved: tuple[int, int, int] | None = None  # the thresholds to restore
        self._timer: asyncio.TimerHandle | None = None
        self.holds = 0  # times full passes were put off

    @property
    def held(self) -> bool:
        return self._saved is not None

    def hold(self) -> None:
        """A backlog is being worked through (called each turn of it)."""
        now = self._clock()
        gap, self._last = now - self._last, now
        if self._saved is not None:
            return
        if self._since is not None and gap < self.linger:
            return  # held for hold_max already: this backlog must be gone linger seconds first
        self._since = now
        current = gc.get_threshold()  # another client of this process may hold already: keep CPython's own 10
        self._saved = current if current[2] != NEVER else (current[0], current[1], DEFAULT_FULL)
        gc.set_threshold(self._saved[0], self._saved[1], NEVER)
        self.holds += 1
        self._schedule(self.linger)

    def check(self) -> None:
        """Resume full passes once the backlog has been gone ``linger`` s or held ``hold_max`` s."""
        self._timer = None
        if self._saved is None:
            return
        now = self._clock()
        quiet = now - self._last >= self.linger
        if quiet or now - (self._since or now) >= self.hold_max:
            self.release()
            if quiet:
                self._since = None
        else:
            self._schedule(min(self.linger - (now - self._last), self.hold_max - (now - (self._since or now))))

    def release(self) -> None:
        """Full passes as before, now (a stop, or the backlog over)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def _schedule(self, delay: float) -> None:
        try:
            self._timer = asyncio.get_running_loop().call_later(max(0.01, delay), self.check)
        except RuntimeError:  # no running loop (a test calling in directly): checked by hand
            self._timer = None

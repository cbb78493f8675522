"""What the fake remembers of the bot's traffic, in the form tests read it: HTTP calls and interactions.

Kept apart from the server so that a test (or the load driver) can judge one interaction's answers (the
accepted callbacks, the refusals, the live message, when the user first saw a final answer) without
knowing about HTTP or the gateway: the server only appends to these records and notifies their waiters.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import validation as v
from .models import FakeGuild, FakeUser

if TYPE_CHECKING:
    from .server import FakeDiscord

# Message flag of a deferred response's "is thinking..." placeholder; the first edit clears it.
LOADING = 1 << 7


@dataclass
class RecordedCall:
    """One HTTP request the bot made, with the fake's answer."""

    method: str
    path: str
    route: str
    query: dict[str, str]
    body: Any
    status: int
    response: Any
    at: float


@dataclass
class InteractionRecord:
    """One interaction the fake dispatched and everything the bot answered to it."""

    fake: FakeDiscord
    id: int
    token: str
    type: int
    payload: dict[str, Any]
    user: FakeUser
    guild: FakeGuild | None
    dispatched_at: float = 0.0
    created_at: float = 0.0  # perf_counter() clock; earlier than dispatched_at when delivered late (``age``)
    callbacks: list[dict[str, Any]] = field(default_factory=list)
    callback_at: float | None = None
    settled_at: float | None = None  # when the user first saw a final answer (see ``settled``)
    rejected: list[RecordedCall] = field(default_factory=list)
    original_message_id: int | None = None
    followup_ids: list[int] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    # -- what tests read -------------------------------------------------------------------------------------
    @property
    def response_type(self) -> int | None:
        """Type of the accepted first callback (4 message, 5 defer, 6/7 component, 8 autocomplete)."""
        return self.callbacks[0]["type"] if self.callbacks else None

    @property
    def latency(self) -> float | None:
        """Seconds from dispatch on the gateway to the accepted first callback."""
        return None if self.callback_at is None else self.callback_at - self.dispatched_at

    @property
    def response_age(self) -> float | None:
        """Seconds from the interaction's creation (its snowflake) to the accepted first callback:
        what Discord's 3-second window is measured on."""
        return None if self.callback_at is None else self.callback_at - self.created_at

    @property
    def message(self) -> dict[str, Any] | None:
        """Current state of the original response message (after edits), if any."""
        return None if self.original_message_id is None else self.fake.messages.get(self.original_message_id)

    @property
    def followups(self) -> list[dict[str, Any]]:
        return [self.fake.messages[i] for i in self.followup_ids if i in self.fake.messages]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Original response then followups, current state."""
        return ([self.message] if self.message else []) + self.followups

    @property
    def choices(self) -> list[dict[str, Any]]:
        """Autocomplete choices sent back (type 8)."""
        for cb in self.callbacks:
            if cb["type"] == 8:
                return list((cb.get("data") or {}).get("choices") or [])
        return []

    @property
    def ephemeral(self) -> bool:
        msg = self.message
        return bool(msg and int(msg.get("flags") or 0) & v.EPHEMERAL)

    @property
    def settled(self) -> bool:
        """True once the user would see a final answer (not a 'thinking...' placeholder)."""
        rtype = self.response_type
        if rtype is None:
            return False
        if rtype == 5:
            msg = self.message
            return bool(msg) and not int(msg.get("flags") or 0) & LOADING
        if rtype == 6:
            return bool(self.followup_ids) or self.fake.edited_after(self.original_message_id, self.callback_at)
        return True  # 4 message, 7 update, 8 choices, 9 modal shown

    @property
    def modal(self) -> dict[str, Any] | None:
        """The modal the bot opened in answer (callback type 9), if it did."""
        for cb in self.callbacks:
            if cb["type"] == 9:
                return cb.get("data")
        return None

    def _notify(self) -> None:
        if self.settled_at is None and self.settled:
            self.settled_at = time.perf_counter()
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_until(self, predicate: Callable[[InteractionRecord], bool], timeout: float = 5.0) -> None:
        """Wait until ``predicate(self)`` holds; on timeout raise with what the bot did (for diagnosis)."""
        deadline = time.perf_counter() + timeout
        while not predicate(self):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(
                    f"interaction {self.describe()} not answered as expected in {timeout}s; "
                    f"callbacks={self.callbacks!r} "
                    f"rejected={[(r.status, r.response) for r in self.rejected]!r}"
                )
            event = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(remaining, 0.25))

    def describe(self) -> str:
        data = self.payload.get("data") or {}
        return f"type={self.type} name={data.get('name') or data.get('custom_id')!r} id={self.id}"

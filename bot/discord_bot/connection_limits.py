"""Limits on the health endpoint's connections, so a flood of idle or broken ones cannot take the bot down.

The endpoint listens on 0.0.0.0 in the image. Unbounded, 1,100 half-open connections used up the
process's 1,024 file descriptors, and with them health checks, ``/reload``, ruling saves and gateway
reconnects. Here each connection is an aiohttp ``RequestHandler`` made by ``ConnectionGuard``, which:

- keeps at most ``limit`` open: a new one first closes the oldest that is not answering a request
  (a scanner's idle socket, a scraper's kept-alive one), so a health check still gets in during a
  flood; only when every slot is mid-request is the newcomer turned away with a 503;
- closes a connection that has not sent a complete request head ``header_timeout`` seconds after
  connecting (later idle keep-alive time is aiohttp's ``keepalive_timeout``, set to the same value);
- logs what it does in short lines, at most one per kind every ``NOTE_EVERY`` seconds with a count
  of the rest, and a malformed request as one line without a traceback (aiohttp logs those at ERROR
  with one, which under a flood wrote tens of thousands of tracebacks in seconds).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

#: Connections asyncio accepts in one go (the listen backlog): each is a descriptor before the guard sees it,
#: so the endpoint holds at most ``limit + ACCEPT_BATCH`` sockets, and only for a moment above ``limit``.
ACCEPT_BATCH = 16
NOTE_EVERY = 30.0  # seconds between two log lines of one kind; the ones in between are counted
REFUSAL = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class BriefNotes:
    """Log lines of one kind at most once per ``every`` seconds; the held-back ones are counted and
    reported by one summary line at the end of the quiet window."""

    def __init__(self, log: logging.Logger, level: int, summary: str, every: float = NOTE_EVERY) -> None:
        self.log, self.level, self.summary, self.every = log, level, summary, every
        self._quiet_until = 0.0
        self._held = 0
        self._flush: asyncio.TimerHandle | None = None

    def note(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now >= self._quiet_until:
            self.log.log(self.level, message, *args)
            self._quiet_until = now + self.every
            return
        self._held += 1
        if self._flush is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on the loop (never the case for a server's callbacks)
                return
            self._flush = loop.call_later(self._quiet_until - now, self._summarise)

    def _summarise(self) -> None:
        self._flush = None
        if self._held:
            self.log.log(self.level, self.summary, self._held, self.every)
            self._held = 0
            self._quiet_until = time.monotonic() + self.every

    def cancel(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None


class _GuardedHandler(web.RequestHandler):
    """aiohttp's connection handler, telling the guard when its connection ends."""

    def __init__(self, guard: ConnectionGuard, manager: web.Server, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guard = guard
        # Prefixed: aiohttp's handler has attributes of its own (``connected`` among them).
        self.guard_requests = 0  # requests whose head arrived complete (they reached the app)
        self.guard_busy = False  # answering one right now
        self.guard_made = False  # its transport was set up (connection_made)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.guard_made = True
        super().connection_made(transport)
        if not self.guard.holds(self):  # given up on before its transport was ready: close it now
            self.force_close()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.guard.forget(self)
        super().connection_lost(exc)


class _Refused(asyncio.Protocol):
    """A connection over the limit while every slot is mid-request: 503 and close."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.WriteTransport):
            transport.write(REFUSAL)
        transport.close()


class _ServerLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """aiohttp's server logger: a malformed request becomes one short note, anything else passes through."""

    def __init__(self, logger: logging.Logger, guard: ConnectionGuard) -> None:
        super().__init__(logger, {})
        self.guard = guard

    def log(self, level: int, msg: object, *args: object, exc_info: Any = None, **kwargs: Any) -> None:
        exc = exc_info[1] if isinstance(exc_info, tuple) else exc_info
        if isinstance(exc, HttpProcessingError):
            remote = args[0] if args else "?"
            self.guard.malformed(str(remote), exc)
            return
        super().log(level, msg, *args, exc_info=exc_info, **kwargs)

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return msg, kwargs


class ConnectionGuard:
    """Makes the endpoint's connection handlers and holds them to ``limit`` and ``header_timeout``."""

    def __init__(self, limit: int, header_timeout: float, log: logging.Logger) -> None:
        self.limit = max(1, limit)
        self.header_timeout = header_timeout
        self.log = log
        self._open: dict[_GuardedHandler, asyncio.TimerHandle | None] = {}  # oldest first
        self.closed: Counter[str] = Counter()  # why the guard closed connections: header_timeout, evicted, ...
        self._evict_notes = BriefNotes(
            log, logging.WARNING, "health endpoint: %d more connections closed or refused at the limit in %g s"
        )
        self._timeout_notes = BriefNotes(
            log, logging.INFO, "health endpoint: %d more connections closed without a request in %g s"
        )
        self._malformed_notes = BriefNotes(log, logging.INFO, "health endpoint: %d more malformed requests in %g s")

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def server_kwargs(self) -> dict[str, Any]:
        """What each ``RequestHandler`` is made with: the keep-alive bound and the quiet logger."""
        return {
            "keepalive_timeout": self.header_timeout,
            "logger": _ServerLog(logging.getLogger("aiohttp.server"), self),
            "access_log": None,
        }

    def factory(self, server: web.Server) -> Callable[[], asyncio.Protocol]:
        """The protocol factory for ``loop.create_server``: one guarded handler per accepted connection."""
        loop = asyncio.get_running_loop()
        kwargs = self.server_kwargs()

        def make() -> asyncio.Protocol:
            if len(self._open) >= self.limit and not self._evict_oldest_idle():
                self.closed["refused"] += 1
                self._evict_notes.note(
                    "health endpoint: %d connections open, all answering; refusing new ones (HEALTH_MAX_CONNECTIONS)",
                    self.limit,
                )
                return _Refused()
            handler = _GuardedHandler(self, server, loop=loop, **kwargs)
            self._open[handler] = loop.call_later(self.header_timeout, self._expire, handler)
            return handler

        return make

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Marks the connection as answering (it is not evicted meanwhile) and past its first request head."""
        conn = request.protocol
        if not isinstance(conn, _GuardedHandler):  # pragma: no cover - every connection is made by ``factory``
            return await handler(request)
        conn.guard_requests += 1
        conn.guard_busy = True
        try:
            return await handler(request)
        finally:
            conn.guard_busy = False

    def holds(self, handler: _GuardedHandler) -> bool:
        return handler in self._open

    def forget(self, handler: _GuardedHandler) -> None:
        timer = self._open.pop(handler, None)
        if timer is not None:
            timer.cancel()

    def _evict_oldest_idle(self) -> bool:
        victim = next((h for h in self._open if not h.guard_busy), None)
        if victim is None:
            return False
        self.forget(victim)
        if victim.guard_made:  # else ``connection_made`` closes it (closing a handler before that would leak)
            victim.force_close()
        self.closed["evicted"] += 1
        self._evict_notes.note(
            "health endpoint: %d connections open; closing the oldest idle ones (HEALTH_MAX_CONNECTIONS)", self.limit
        )
        return True

    def _expire(self, handler: _GuardedHandler) -> None:
        """``header_timeout`` after a connection was accepted: close it if no request head has come."""
        if handler not in self._open:
            return
        self._open[handler] = None
        if handler.guard_requests or handler.guard_busy:
            return  # past its first request: idle keep-alive time is aiohttp's keepalive_timeout
        self.forget(handler)
        if not handler.guard_made:  # its transport is not set up yet: ``connection_made`` will close it
            return
        handler.force_close()
        self.closed["header_timeout"] += 1
        self._timeout_notes.note(
            "health endpoint: closed a connection that sent no complete request in %g s (HEALTH_HEADER_TIMEOUT)",
            self.header_timeout,
        )

    def malformed(self, remote: str, exc: HttpProcessingError) -> None:
        """aiohttp answered 400 and closes the connection; say so in one line, without the traceback."""
        self.closed["malformed"] += 1
        what = " ".join(str(exc.message or type(exc).__name__).split())[:80]
        self._malformed_notes.note("health endpoint: malformed request from %s (%s)", remote, what)

    def close(self) -> None:
        """Stop the timers (the connections themselves are closed by the runner's cleanup)."""
        for timer in self._open.values():
            if timer is not None:
                timer.cancel()
        for notes in (self._evict_notes, self._timeout_notes, self._malformed_notes):
            notes.cancel()

"""The bot's own health and metrics over HTTP: ``/healthz`` and ``/metrics`` on ``HEALTH_PORT``.

Health is what the running process knows, not a second look at the files on disk: every shard
this process runs has an open gateway socket with a session (READY or RESUMED received since it
last closed) whose heartbeats are being acknowledged, and the index is loaded. ``/healthz``
answers 200 with the details as JSON when all hold, 503 otherwise (also while starting and while
stopping). The container's HEALTHCHECK asks it
(``python -m bot health``). Its connections are bounded in number and in the time a request head may
take (``bot.discord_bot.connection_limits``): it listens on 0.0.0.0 in the image.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.discord_bot.connection_limits import ACCEPT_BATCH, ConnectionGuard

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot

log = logging.getLogger("bot.discord_bot.health")

# Discord asks for a heartbeat every ~41 s; discord.py reconnects when one goes unanswered for 60 s.
ACK_GRACE = 90.0


def _keep_alive(bot: JudgeBot, shard_id: int) -> Any:
    """discord.py's heartbeat handler of a shard's socket (its ``_last_ack`` is not public API)."""
    info = bot.get_shard(shard_id)
    ws = getattr(getattr(info, "_parent", None), "ws", None)
    return getattr(ws, "_keep_alive", None)


def gateway_status(bot: JudgeBot) -> dict[int, dict[str, Any]]:
    """Per shard this process runs: socket open, seconds since the last heartbeat ack, latency."""
    wanted = list(bot.shard_ids or range(bot.shard_count or 1))
    out: dict[int, dict[str, Any]] = {}
    now = time.perf_counter()
    for shard_id in wanted:
        info = bot.get_shard(shard_id)
        connected = info is not None and not info.is_closed()
        keep_alive = _keep_alive(bot, shard_id) if info is not None else None
        last_ack = getattr(keep_alive, "_last_ack", None)
        latency = info.latency if info is not None else None
        out[shard_id] = {
            "connected": connected,
            "session": connected and shard_id in bot.sessions_ready,
            "heartbeat_ack_age_s": round(now - last_ack, 3) if connected and last_ack is not None else None,
            "latency_ms": round(latency * 1000, 2) if connected and latency not in (None, float("inf")) else None,
        }
    return out


def health_report(bot: JudgeBot) -> tuple[bool, dict[str, Any]]:
    """(healthy, details) of the running bot."""
    shards = gateway_status(bot)
    engine = bot.engine
    entries = len(engine.corpus.entries) if engine is not None else 0
    problems = []
    if bot.stopping:
        problems.append("stopping")
    for shard_id, info in shards.items():
        if not info["connected"]:
            problems.append(f"shard {shard_id}: gateway not connected")
        elif not info["session"]:
            problems.append(f"shard {shard_id}: gateway open, waiting for READY")
        elif info["heartbeat_ack_age_s"] is None or info["heartbeat_ack_age_s"] > ACK_GRACE:
            problems.append(f"shard {shard_id}: no heartbeat acknowledged for {ACK_GRACE:.0f} s")
    if not entries:
        problems.append("index not loaded")
    status = "stopping" if bot.stopping else ("ok" if not problems else "unhealthy")
    stats = engine.stats() if engine is not None else {}
    details = {
        "status": status,
        "problems": problems,
        "gateway": {"shards": {str(k): v for k, v in shards.items()}, "ready": bot.is_ready()},
        "index": {"loaded": bool(entries), "entries": entries, "built_at": stats.get("built_at")},
        "lookups": {"pending": bot.lookups.pending, "expected_wait_s": round(bot.lookups.expected_seconds(), 3)},
        "uptime_s": round(time.monotonic() - bot.started, 1),
    }
    return not problems, details


class HealthPortError(RuntimeError):
    """The health endpoint could not listen (port taken, address not available)."""


class HealthServer:
    """A small aiohttp server in the bot's own event loop, its connections held by a ``ConnectionGuard``."""

    def __init__(
        self,
        bot: JudgeBot,
        host: str,
        port: int,
        *,
        max_connections: int | None = None,
        header_timeout: float | None = None,
    ) -> None:
        """The limits default to the bot's settings (HEALTH_MAX_CONNECTIONS, HEALTH_HEADER_TIMEOUT)."""
        self.bot, self.host, self.port = bot, host, port
        settings = bot.settings
        self.guard = ConnectionGuard(
            max_connections if max_connections is not None else settings.health_max_connections,
            header_timeout if header_timeout is not None else settings.health_header_timeout,
            log,
        )
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        app = web.Application(middlewares=[self.guard.middleware])
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        self._runner = web.AppRunner(app, handle_signals=False, **self.guard.server_kwargs())
        await self._runner.setup()
        assert self._runner.server is not None
        loop = asyncio.get_running_loop()
        try:
            # Not web.TCPSite: the guard makes every connection's handler (limit, header timeout, quiet log).
            self._listener = await loop.create_server(
                self.guard.factory(self._runner.server), self.host, self.port, backlog=ACCEPT_BATCH
            )
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise HealthPortError(f"HEALTH_PORT {self.port} on {self.host}: {exc.strerror or exc}") from None
        if self.port == 0:  # tests ask for any free port
            self.port = self._listener.sockets[0].getsockname()[1]
        log.info(
            "health endpoint on http://%s:%d/healthz and /metrics (at most %d connections, %g s for a request head)",
            self.host,
            self.port,
            self.guard.limit,
            self.guard.header_timeout,
        )

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self.guard.close()
        if self._runner is not None:
            await self._runner.cleanup()  # closes the open connections
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        ok, details = health_report(self.bot)
        return web.json_response(details, status=200 if ok else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self.bot.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def probe(port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> tuple[int, str]:
    """Ask a running bot's ``/healthz``: (exit status, one line). For ``python -m bot health``."""
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            details = json.loads(resp.read())
            return 0, f"healthy: {details.get('index', {}).get('entries')} entries, gateway connected"
    except urllib.error.HTTPError as exc:
        try:
            details = json.loads(exc.read())
            return 1, f"unhealthy: {'; '.join(details.get('problems') or [details.get('status', '?')])}"
        except ValueError:
            return 1, f"unhealthy: HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return 1, f"unhealthy: no answer from {url} ({exc})"

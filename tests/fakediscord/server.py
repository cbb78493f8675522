"""A fake Discord (REST API v10 + gateway websocket) on 127.0.0.1 for end-to-end tests of discord.py bots.

Point discord.py at it (``discord.http.Route.BASE = fake.api_base``; gateway via ``GET /gateway/bot`` or
``DiscordWebSocket.DEFAULT_GATEWAY``) and drive the bot as a Discord user would: ``invoke_command``,
``autocomplete``, ``click``, ``context_menu``. Every request is recorded; requests that the real Discord would
refuse (limits, late or double interaction responses) get the same status and error JSON as Discord's.

``FakeDiscord`` is composed of one mixin per concern (see the README for the layout); this module holds
the state they share, the server's lifecycle and the waits, and keeps the names tests import from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .commands import CommandsMixin
from .faults import FaultInjectionMixin
from .gateway import GUILDS_INTENT, PRIVILEGED_INTENTS, GatewayMixin, GatewaySession, _Connection
from .guilds import GuildsMixin
from .interactions import ALLOWED_CALLBACKS, InteractionResponsesMixin
from .membership import MembershipMixin
from .messages import MessagesMixin
from .models import (
    BOT_PERMISSIONS,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeGuild,
    FakeUser,
    snowflake,
    snowflake_for_shard,
)
from .payloads import InteractionPayloadsMixin
from .records import LOADING, InteractionRecord, RecordedCall
from .rest import API_PREFIX, RestMixin
from .users import UserActionsMixin

__all__ = [
    "ALLOWED_CALLBACKS",
    "API_PREFIX",
    "GUILDS_INTENT",
    "LOADING",
    "PRIVILEGED_INTENTS",
    "FakeDiscord",
    "GatewaySession",
    "InteractionRecord",
    "RecordedCall",
]

_log = logging.getLogger("fakediscord")


class FakeDiscord(
    RestMixin,
    FaultInjectionMixin,
    CommandsMixin,
    InteractionResponsesMixin,
    MessagesMixin,
    GuildsMixin,
    GatewayMixin,
    MembershipMixin,
    InteractionPayloadsMixin,
    UserActionsMixin,
):
    """The fake API server plus the test-side controls (see module docstring)."""

    def __init__(
        self,
        *,
        shard_count: int = 1,
        heartbeat_interval_ms: int = 41250,
        response_deadline: float = 3.0,
        privileged_intents: int = 0,
        valid_tokens: set[str] | None = None,
    ) -> None:
        self.shard_count = shard_count
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.response_deadline = response_deadline
        self.token_lifetime = 15 * 60.0  # interaction tokens take followups/edits for 15 minutes
        self.privileged_intents = privileged_intents
        self.valid_tokens = valid_tokens
        self.app_id = snowflake()
        self.bot_user = FakeUser(self.app_id, "Judge Bot", bot=True, permissions=BOT_PERMISSIONS)
        self.owner = FakeUser(snowflake(), "owner")
        admin_role = snowflake()
        self.admin = FakeUser(
            snowflake(),
            "tournament_organiser",
            roles=[admin_role],
            permissions=MEMBER_PERMISSIONS | MANAGE_GUILD,
        )
        self.member = FakeUser(snowflake(), "player_one")
        self.other_member = FakeUser(snowflake(), "player_two")
        self.guilds = [
            FakeGuild(
                snowflake_for_shard(i % shard_count, shard_count),
                f"Test Guild {i}",
                self.owner.id,
                snowflake(),
                admin_role,
                [self.owner, self.admin, self.member, self.other_member],
            )
            for i in range(max(1, shard_count))
        ]
        self.guild = self.guilds[0]
        self.calls: list[RecordedCall] = []
        self.unknown_calls: list[RecordedCall] = []
        self.rejected: list[RecordedCall] = []
        self.sync_calls: list[RecordedCall] = []
        self.commands: dict[int | None, dict[int, dict[str, Any]]] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.files: dict[int, bytes] = {}  # attachment id -> bytes (uploaded by the bot or by a test user)
        self.message_meta: dict[int, dict[str, Any]] = {}
        self.interactions: dict[int, InteractionRecord] = {}
        self._by_token: dict[str, InteractionRecord] = {}
        self.sessions: dict[str, GatewaySession] = {}
        self.connections: list[_Connection] = []
        self.identifies: list[dict[str, Any]] = []
        # When set, an IDENTIFY waits for it before READY is sent (a session opened but not yet ready).
        self.identify_hold: asyncio.Event | None = None
        self.resume_requests: list[dict[str, Any]] = []
        self.heartbeats = 0
        self.gateway_queries: list[dict[str, str]] = []
        self._rate_limits: dict[str, list[Any]] = {}
        self._stalls: dict[str, list[float]] = {}
        self._delays: dict[str, list[float]] = {}
        self.stalled: list[str] = []  # "METHOD path" of every request held by inject_stall
        self.delayed: list[str] = []  # ... and by inject_delay
        self.close_codes: list[int | None] = []  # close code of every gateway socket, as the client closed it
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._routes = self._route_table()

    async def start(self) -> FakeDiscord:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_get("/gateway", self._ws_handler)
        app.router.add_get("/resume-gateway", self._ws_handler)
        app.router.add_route("*", API_PREFIX + "/{tail:.*}", self._rest_handler)
        app.router.add_get("/attachments/{aid}/{filename}", self._attachment_handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        for conn in list(self.connections):
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        """What goes into ``DISCORD_API_BASE`` / ``discord.http.Route.BASE``."""
        return self.base_url + API_PREFIX

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
        deadline = time.perf_counter() + timeout
        while not predicate():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"fake discord: timed out after {timeout}s waiting for {what}")
            event = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(remaining, 0.25))

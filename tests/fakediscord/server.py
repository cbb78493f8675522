"""A fake Discord (REST API v10 + gateway websocket) on 127.0.0.1 for end-to-end tests of discord.py bots.

Point discord.py at it (``discord.http.Route.BASE = fake.api_base``; gateway via ``GET /gateway/bot`` or
``DiscordWebSocket.DEFAULT_GATEWAY``) and drive the bot as a Discord user would: ``invoke_command``,
``autocomplete``, ``click``, ``context_menu``. Every request is recorded; requests that the real Discord would
refuse (limits, late or double interaction responses) get the same status and error JSON as Discord's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
import secrets
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from . import validation as v
from .models import (
    BOT_PERMISSIONS,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeGuild,
    FakeUser,
    iso_now,
    shard_of,
    snowflake,
    snowflake_for_shard,
)

_log = logging.getLogger("fakediscord")

API_PREFIX = "/api/v10"
LOADING = 1 << 7
# Callback types allowed per interaction type (PING=1 never reaches a gateway bot).
ALLOWED_CALLBACKS = {2: {4, 5, 9, 12}, 3: {4, 5, 6, 7, 9, 12}, 4: {8}, 5: {4, 5, 6, 7}}
# Gateway intents Discord treats as privileged (GUILD_MEMBERS, GUILD_PRESENCES, MESSAGE_CONTENT).
PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | (1 << 15)
GUILDS_INTENT = 1


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


class _Connection:
    """One gateway websocket; encodes frames as Discord does (zlib-stream shares one context per socket)."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None, path: str) -> None:
        self.ws = ws
        self.path = path
        self.compressor = zlib.compressobj() if compress == "zlib-stream" else None
        self.session: GatewaySession | None = None
        self.lock = asyncio.Lock()

    async def send(self, payload: dict[str, Any]) -> bool:
        if self.ws.closed:
            return False
        raw = json.dumps(payload, separators=(",", ":"))
        async with self.lock:
            try:
                if self.compressor is not None:
                    data = self.compressor.compress(raw.encode()) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
                    await self.ws.send_bytes(data)
                else:
                    await self.ws.send_str(raw)
            except (ConnectionError, RuntimeError):
                return False
        return True


@dataclass
class GatewaySession:
    """A gateway session (survives reconnects; RESUME replays the events after the client's last seq)."""

    session_id: str
    shard_id: int
    shard_count: int
    token: str
    intents: int
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    connection: _Connection | None = None
    resumes: int = 0


class FakeDiscord:
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

    # -- lifecycle -------------------------------------------------------------------------------------------
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

    # -- REST ------------------------------------------------------------------------------------------------
    def _route_table(self) -> list[tuple[set[str], re.Pattern[str], str, Callable[..., Awaitable[Any]]]]:
        app = r"(?P<app>\d+)"
        raw = [
            ("GET", r"/gateway/bot", "gateway_bot", self._gateway_bot),
            ("GET", r"/gateway", "gateway", self._gateway),
            ("GET", r"/users/@me", "me", self._me),
            ("GET", r"/oauth2/applications/@me", "application", self._application),
            ("GET", r"/applications/@me", "application", self._application),
            ("GET PUT POST", rf"/applications/{app}/commands", "commands", self._commands),
            ("GET PATCH DELETE", rf"/applications/{app}/commands/(?P<cmd>\d+)", "command", self._command),
            (
                "GET PUT POST",
                rf"/applications/{app}/guilds/(?P<guild>\d+)/commands",
                "commands",
                self._commands,
            ),
            (
                "GET PATCH DELETE",
                rf"/applications/{app}/guilds/(?P<guild>\d+)/commands/(?P<cmd>\d+)",
                "command",
                self._command,
            ),
            ("POST", r"/interactions/(?P<iid>\d+)/(?P<token>[^/]+)/callback", "callback", self._callback),
            ("POST", rf"/webhooks/{app}/(?P<token>[^/]+)", "followup", self._followup),
            (
                "GET PATCH DELETE",
                rf"/webhooks/{app}/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)",
                "webhook_message",
                self._webhook_message,
            ),
            ("POST", r"/channels/(?P<cid>\d+)/messages", "channel_message", self._channel_message),
            ("GET", r"/channels/(?P<cid>\d+)/messages/(?P<mid>\d+)", "get_message", self._get_message),
            ("GET", r"/channels/(?P<cid>\d+)", "channel", self._channel),
        ]
        return [(set(m.split()), re.compile(p + "$"), name, fn) for m, p, name, fn in raw]

    def _match_route(self, method: str, path: str) -> tuple[str, Callable[..., Awaitable[Any]], re.Match[str]] | None:
        for methods, pattern, name, fn in self._routes:
            match = pattern.match(path)
            if match and method in methods:
                return name, fn, match
        return None

    async def _rest_handler(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body: Any = None
        if request.can_read_body:
            if request.content_type == "multipart/form-data":
                body = await self._read_multipart(request)
            else:
                text = await request.text()
                try:
                    body = json.loads(text) if text else None
                except ValueError:
                    return self._json(400, {"message": "400: Bad Request", "code": 50109})
                if isinstance(body, dict):
                    body.pop("_files", None)  # only the fake's multipart reader may set it
        query = dict(request.query)
        found = self._match_route(request.method, path)
        if found is None:
            status, data, headers = 404, {"message": "404: Not Found", "code": 0}, {}
            call = RecordedCall(request.method, path, "unknown", query, body, status, data, time.perf_counter())
            self.calls.append(call)
            self.unknown_calls.append(call)
            return self._json(status, data, headers)
        name, fn, match = found
        needs_auth = name not in ("callback", "followup", "webhook_message")
        auth = request.headers.get("Authorization", "")
        if needs_auth and (not auth.startswith("Bot ") or not self._token_ok(auth[4:])):
            status, data, headers = 401, {"message": "401: Unauthorized", "code": 0}, {}
        elif (stall := self._take_stall(name)) is not None:
            self.stalled.append(f"{request.method} {path}")
            await asyncio.sleep(stall)  # the base hangs; the client gives up first, or gets a 504
            status, data, headers = 504, {"message": "upstream request timeout", "code": 0}, {}
        elif (limited := self._take_rate_limit(name)) is not None:
            status, data, headers = limited
        else:
            if (delay := self._take(self._delays, name)) is not None:
                self.delayed.append(f"{request.method} {path}")
                await asyncio.sleep(delay)  # a slow network: the request is then carried out as usual
            result = await fn(request, body=body, **match.groupdict())
            status, data = result[0], result[1]
            headers = result[2] if len(result) > 2 else {}
        call = RecordedCall(request.method, path, name, query, body, status, data, time.perf_counter())
        self.calls.append(call)
        if 400 <= status < 500 and status != 429:
            self.rejected.append(call)
            rec = self._record_for(name, match.groupdict())
            if rec is not None:
                rec.rejected.append(call)
                rec._notify()
        if name == "commands" and request.method == "PUT":
            self.sync_calls.append(call)
        self._notify()
        return self._json(status, data, headers)

    def _token_ok(self, token: str) -> bool:
        return bool(token) and (self.valid_tokens is None or token in self.valid_tokens)

    def _record_for(self, route: str, params: dict[str, str]) -> InteractionRecord | None:
        if route == "callback":
            return self.interactions.get(int(params["iid"]))
        if route in ("followup", "webhook_message"):
            return self._by_token.get(params["token"])
        return None

    async def _read_multipart(self, request: web.Request) -> Any:
        """A multipart body as Discord reads it: ``payload_json`` plus ``files[n]`` parts.

        The files are handed to the message they belong to under ``_files`` (the callback's ``data`` or
        the message body itself), which turns them into the message's ``attachments``.
        """
        payload: Any = None
        files: list[tuple[str, bytes, str]] = []
        reader = await request.multipart()
        async for part in reader:
            if part.name == "payload_json":
                payload = json.loads(await part.text())
            elif part.name and part.name.startswith("files["):
                data = await part.read(decode=False)
                files.append((part.filename or "file", bytes(data), part.headers.get("Content-Type", "")))
        if isinstance(payload, dict) and files:
            target = payload["data"] if isinstance(payload.get("type"), int) and isinstance(payload.get("data"), dict) \
                else payload  # fmt: skip
            target["_files"] = files
        return payload

    def _attachment_payload(self, aid: int, filename: str, size: int, content_type: str) -> dict[str, Any]:
        url = f"{self.base_url}/attachments/{aid}/{filename}"
        return {
            "id": str(aid),
            "filename": filename,
            "size": size,
            "url": url,
            "proxy_url": url,
            "content_type": content_type or "application/octet-stream",
        }

    def _store_files(self, files: list[tuple[str, bytes, str]]) -> list[dict[str, Any]]:
        out = []
        for filename, data, content_type in files:
            aid = snowflake()
            self.files[aid] = data
            out.append(self._attachment_payload(aid, filename, len(data), content_type))
        return out

    async def _attachment_handler(self, request: web.Request) -> web.Response:
        data = self.files.get(int(request.match_info["aid"]))
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    @staticmethod
    def _json(status: int, data: Any, headers: dict[str, str] | None = None) -> web.Response:
        if status == 204:
            return web.Response(status=204, headers=headers)
        # Discord sends exactly "application/json" (no charset); discord.py compares the header verbatim.
        return web.Response(
            body=json.dumps(data).encode(),
            status=status,
            headers={**(headers or {}), "Content-Type": "application/json"},
        )

    def inject_rate_limit(
        self, count: int = 1, route: str = "callback", retry_after: float = 0.2, is_global: bool = False
    ) -> None:
        """The next ``count`` requests to ``route`` get a 429 like Discord's (body and headers)."""
        self._rate_limits[route] = [count, retry_after, is_global]

    def inject_stall(self, count: int = 1, route: str = "callback", seconds: float = 10.0) -> None:
        """The next ``count`` requests to ``route`` hang for ``seconds`` and then get a 504 without being
        carried out: a REST base (or a proxy in front of it) that times out."""
        self._stalls[route] = [count, seconds]

    def inject_delay(self, count: int = 1, route: str = "callback", seconds: float = 1.0) -> None:
        """The next ``count`` requests to ``route`` are held ``seconds``, then carried out normally."""
        self._delays[route] = [count, seconds]

    def _take_stall(self, route: str) -> float | None:
        return self._take(self._stalls, route)

    @staticmethod
    def _take(table: dict[str, list[float]], route: str) -> float | None:
        entry = table.get(route)
        if not entry or entry[0] <= 0:
            return None
        entry[0] -= 1
        return entry[1]

    def _take_rate_limit(self, route: str) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        entry = self._rate_limits.get(route)
        if not entry or entry[0] <= 0:
            return None
        entry[0] -= 1
        retry_after, is_global = entry[1], entry[2]
        headers = {
            "Retry-After": str(max(1, int(retry_after + 0.999))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Bucket": "fake-" + route,
            "X-RateLimit-Scope": "global" if is_global else "user",
            "Via": "1.1 google",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
        return 429, body, headers

    # -- REST handlers ---------------------------------------------------------------------------------------
    async def _gateway_bot(self, request: web.Request, **_: Any) -> tuple[int, Any]:
        return 200, {
            "url": self.gateway_url,
            "shards": self.shard_count,
            "session_start_limit": {
                "total": 1000,
                "remaining": 999,
                "reset_after": 14_400_000,
                "max_concurrency": 1,
            },
        }

    async def _gateway(self, request: web.Request, **_: Any) -> tuple[int, Any]:
        return 200, {"url": self.gateway_url}

    async def _me(self, request: web.Request, **_: Any) -> tuple[int, Any]:
        return 200, {
            **self.bot_user.payload(),
            "verified": True,
            "mfa_enabled": False,
            "locale": "en-US",
            "email": None,
            "premium_type": 0,
        }

    def application_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.app_id),
            "name": "L5R Judge (fake)",
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "hook": True,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": 0,
            "owner": self.owner.payload(),
            "team": None,
            "bot": self.bot_user.payload(),
            "rpc_origins": [],
            "tags": [],
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "approximate_guild_count": len(self.guilds),
        }

    async def _application(self, request: web.Request, **_: Any) -> tuple[int, Any]:
        return 200, self.application_payload()

    def registered_commands(self, guild_id: int | None = None) -> list[dict[str, Any]]:
        """Command definitions currently registered globally (None) or for a guild."""
        return list(self.commands.get(guild_id, {}).values())

    def _store_command(
        self, scope: int | None, definition: dict[str, Any], existing: dict[int, dict[str, Any]]
    ) -> dict[str, Any]:
        ctype = definition.get("type", 1)
        keep = next((c for c in existing.values() if c["name"] == definition["name"] and c["type"] == ctype), None)
        cmd_id = int(keep["id"]) if keep else snowflake()
        version = str(snowflake())
        stored = {
            "id": str(cmd_id),
            "application_id": str(self.app_id),
            "version": version,
            "type": ctype,
            "name": definition["name"],
            "description": definition.get("description", ""),
            "options": definition.get("options") or [],
            "default_member_permissions": definition.get("default_member_permissions"),
            "dm_permission": definition.get("dm_permission", True),
            "nsfw": definition.get("nsfw", False),
            "contexts": definition.get("contexts"),
            "integration_types": definition.get("integration_types") or [0],
            "name_localizations": definition.get("name_localizations"),
            "description_localizations": definition.get("description_localizations"),
        }
        if scope is not None:
            stored["guild_id"] = str(scope)
        return stored

    async def _commands(
        self, request: web.Request, *, body: Any, app: str, guild: str | None = None, **_: Any
    ) -> tuple[int, Any]:
        if int(app) != self.app_id:
            return 403, {"message": "Missing Access", "code": 50001}
        scope = int(guild) if guild else None
        if scope is not None and scope not in {g.id for g in self.guilds}:
            return 403, {"message": "Missing Access", "code": 50001}
        current = self.commands.setdefault(scope, {})
        if request.method == "GET":
            return 200, list(current.values())
        definitions = body if request.method == "PUT" else [body]
        if not isinstance(definitions, list):
            return 400, {
                "message": "Invalid Form Body",
                "code": 50035,
                "errors": {"_errors": [{"code": "BASE_TYPE_ARRAY", "message": "Must be an array"}]},
            }
        errors: dict[str, Any] = {}
        for i, definition in enumerate(definitions):
            err = v.check_command(definition)
            if err:
                errors[str(i)] = err
        names = [(d.get("type", 1), d.get("name")) for d in definitions]
        if len(names) != len(set(names)):
            errors.setdefault("_errors", []).append(
                {
                    "code": "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "message": "Application command names must be unique",
                }
            )
        if errors:
            return 400, {
                "message": "Invalid Form Body",
                "code": 50035,
                "errors": errors if request.method == "PUT" else errors["0"],
            }
        stored = [self._store_command(scope, d, current) for d in definitions]
        if request.method == "PUT":
            self.commands[scope] = {int(c["id"]): c for c in stored}
            return 200, stored
        current[int(stored[0]["id"])] = stored[0]
        return 201, stored[0]

    async def _command(
        self, request: web.Request, *, body: Any, app: str, cmd: str, guild: str | None = None, **_: Any
    ) -> tuple[int, Any]:
        scope = int(guild) if guild else None
        current = self.commands.setdefault(scope, {})
        found = current.get(int(cmd))
        if found is None or int(app) != self.app_id:
            return 404, {"message": "Unknown application command", "code": 10063}
        if request.method == "GET":
            return 200, found
        if request.method == "DELETE":
            del current[int(cmd)]
            return 204, None
        merged = {**found, **(body or {})}
        err = v.check_command(merged)
        if err:
            return 400, {"message": "Invalid Form Body", "code": 50035, "errors": err}
        current[int(cmd)] = self._store_command(scope, merged, current)
        return 200, current[int(cmd)]

    # -- messages --------------------------------------------------------------------------------------------
    def _new_message(
        self,
        data: dict[str, Any],
        *,
        channel_id: int,
        guild_id: int | None,
        author: FakeUser,
        msg_type: int = 0,
        rec: InteractionRecord | None = None,
        flags: int | None = None,
        webhook: bool = False,
    ) -> dict[str, Any]:
        msg_id = snowflake()
        msg = {
            "id": str(msg_id),
            "channel_id": str(channel_id),
            "author": author.payload(),
            "content": data.get("content") or "",
            "timestamp": iso_now(),
            "edited_timestamp": None,
            "tts": bool(data.get("tts")),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "mention_channels": [],
            "attachments": self._store_files(data.get("_files") or []),
            "embeds": [self._rich(e) for e in data.get("embeds") or []],
            "reactions": [],
            "pinned": False,
            "type": msg_type,
            "flags": int(data.get("flags") or 0) if flags is None else flags,
            "components": self._with_component_ids(data.get("components") or []),
        }
        if guild_id is not None:
            msg["guild_id"] = str(guild_id)
        if webhook:
            msg["webhook_id"] = str(self.app_id)
            msg["application_id"] = str(self.app_id)
        if rec is not None:
            msg["interaction_metadata"] = {
                "id": str(rec.id),
                "type": rec.type,
                "user": rec.user.payload(),
                "authorizing_integration_owners": {"0": str(rec.guild.id) if rec.guild else "0"},
            }
        self.messages[msg_id] = msg
        self._apply_mentions(msg_id, data, first=True)
        return msg

    @staticmethod
    def _rich(embed: dict[str, Any]) -> dict[str, Any]:
        out = {k: val for k, val in embed.items() if val is not None}
        out.setdefault("type", "rich")
        return out

    @staticmethod
    def _with_component_ids(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counter = itertools.count(1)

        def walk(comp: dict[str, Any]) -> dict[str, Any]:
            out = {**comp, "id": comp.get("id") or next(counter)}
            if "components" in comp:
                out["components"] = [walk(c) for c in comp["components"]]
            return out

        return [walk(c) for c in components]

    def _apply_mentions(self, msg_id: int, data: dict[str, Any], first: bool = False) -> None:
        """Record allowed_mentions and compute who would really be pinged by the (new) content."""
        msg = self.messages[msg_id]
        meta = self.message_meta.setdefault(msg_id, {"allowed_mentions_history": []})
        if "allowed_mentions" in data or first:
            meta["allowed_mentions"] = data.get("allowed_mentions")
            meta["allowed_mentions_history"].append(data.get("allowed_mentions"))
        pings = v.mentions_that_ping(msg["content"], meta.get("allowed_mentions"))
        meta["pings"] = pings
        msg["mention_everyone"] = pings["everyone"]
        members = {m.id: m for g in self.guilds for m in g.members}
        msg["mentions"] = [members[u].payload() for u in pings["users"] if u in members]
        msg["mention_roles"] = [str(r) for r in pings["roles"]]

    def _edit_message(self, msg_id: int, data: dict[str, Any]) -> dict[str, Any]:
        msg = self.messages[msg_id]
        for key in ("content", "embeds", "components", "attachments"):
            if key in data and data[key] is not None:
                if key == "embeds":
                    msg[key] = [self._rich(e) for e in data[key]]
                elif key == "components":
                    msg[key] = self._with_component_ids(data[key])
                elif key == "attachments" and data.get("_files"):
                    msg[key] = self._store_files(data["_files"])
                else:
                    msg[key] = data[key]
        if "flags" in data and data["flags"] is not None:
            # Only SUPPRESS_EMBEDS / IS_COMPONENTS_V2 may change on edit; ephemeral is fixed at creation.
            keep = int(msg["flags"]) & v.EPHEMERAL
            msg["flags"] = keep | (int(data["flags"]) & (v.SUPPRESS_EMBEDS | v.IS_COMPONENTS_V2))
        if int(msg["flags"]) & LOADING:
            msg["flags"] = int(msg["flags"]) & ~LOADING
        else:
            msg["edited_timestamp"] = iso_now()
        self.message_meta.setdefault(msg_id, {"allowed_mentions_history": []})["edited_at"] = time.perf_counter()
        self._apply_mentions(msg_id, data)
        return msg

    def edited_after(self, msg_id: int | None, at: float | None) -> bool:
        meta = self.message_meta.get(msg_id or 0) or {}
        return at is not None and meta.get("edited_at", -1.0) >= at

    def pings(self, message: dict[str, Any]) -> dict[str, Any]:
        """Who the message's content really notifies, given its allowed_mentions (embeds never ping)."""
        return self.message_meta[int(message["id"])]["pings"]

    def allowed_mentions(self, message: dict[str, Any]) -> Any:
        return self.message_meta[int(message["id"])].get("allowed_mentions")

    def _refuse_message(self, data: dict[str, Any]) -> tuple[int, Any] | None:
        """Discord's 400 for a message body it would refuse, or None when the body is acceptable."""
        bad = v.check_message(data)
        return self._invalid(bad[1], bad[0]) if bad else None

    def _refuse_webhook(self, rec: InteractionRecord | None, app: str) -> tuple[int, Any] | None:
        """Discord's answer to a followup/webhook call on an unknown, unanswered or expired interaction."""
        if rec is None or int(app) != self.app_id or not rec.callbacks:
            return 404, {"message": "Unknown Webhook", "code": 10015}
        if time.perf_counter() - rec.created_at > self.token_lifetime:
            return 401, {"message": "Invalid Webhook Token", "code": 50027}
        return None

    @staticmethod
    def _invalid(errors: dict[str, Any], code: int = 50035, nest: str | None = None) -> tuple[int, Any]:
        if code == 50006:
            return 400, {"message": "Cannot send an empty message", "code": 50006}
        return 400, {
            "message": "Invalid Form Body",
            "code": 50035,
            "errors": {nest: errors} if nest else errors,
        }

    # -- interaction responses -------------------------------------------------------------------------------
    async def _callback(self, request: web.Request, *, body: Any, iid: str, token: str, **_: Any) -> tuple[int, Any]:
        rec = self.interactions.get(int(iid))
        if rec is None or rec.token != token:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if rec.callbacks:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        if time.perf_counter() - rec.created_at > self.response_deadline:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if not isinstance(body, dict) or not isinstance(body.get("type"), int):
            return self._invalid(
                {"type": {"_errors": [{"code": "BASE_TYPE_REQUIRED", "message": "This field is required"}]}}
            )
        ctype = body["type"]
        if ctype not in ALLOWED_CALLBACKS.get(rec.type, set()):
            return 400, {
                "message": "Interaction callback type invalid for this interaction",
                "code": 50035,
                "errors": {
                    "type": {
                        "_errors": [
                            {
                                "code": "INTERACTION_CALLBACK_TYPE_INVALID",
                                "message": "Invalid interaction callback type",
                            }
                        ]
                    }
                },
            }
        if ctype in (6, 7) and "message" not in rec.payload:
            return 400, {"message": "Interaction has no message to update", "code": 50035}
        data = body.get("data") or {}
        if ctype in (4, 7):
            bad = v.check_message(data, require_body=ctype == 4)
            if bad:
                return self._invalid(bad[1], bad[0], nest="data")
        elif ctype == 8:
            errors = v.check_choices(data.get("choices"))
            if errors:
                return self._invalid(errors, nest="data")
        elif ctype == 9:
            errors = v.check_modal(data)
            if errors:
                return self._invalid(errors, nest="data")
        rec.callbacks.append(body)
        rec.callback_at = time.perf_counter()
        channel_id = int(rec.payload["channel_id"])
        guild_id = rec.guild.id if rec.guild else None
        msg: dict[str, Any] | None = None
        msg_type = 20 if (rec.payload.get("data") or {}).get("type", 1) == 1 else 23
        msg_type = 19 if rec.type == 3 else msg_type
        if ctype == 4:
            msg = self._new_message(
                data,
                channel_id=channel_id,
                guild_id=guild_id,
                author=self.bot_user,
                msg_type=msg_type,
                rec=rec,
                webhook=True,
            )
        elif ctype == 5:
            flags = (int(data.get("flags") or 0) & v.EPHEMERAL) | LOADING
            msg = self._new_message(
                {},
                channel_id=channel_id,
                guild_id=guild_id,
                author=self.bot_user,
                msg_type=msg_type,
                rec=rec,
                flags=flags,
                webhook=True,
            )
        elif ctype in (6, 7):
            target = int(rec.payload["message"]["id"])
            rec.original_message_id = target
            if ctype == 7:
                msg = self._edit_message(target, data)
                self.message_meta[target]["edited_at"] = rec.callback_at
        if msg is not None and ctype in (4, 5):
            rec.original_message_id = int(msg["id"])
        rec._notify()
        answer: dict[str, Any] = {
            "interaction": {
                "id": str(rec.id),
                "type": rec.type,
                "response_message_id": str(rec.original_message_id) if rec.original_message_id else None,
                "response_message_loading": ctype == 5,
                "response_message_ephemeral": bool(msg and int(msg["flags"]) & v.EPHEMERAL),
            }
        }
        if msg is not None:
            answer["resource"] = {"type": ctype, "message": msg}
        return 200, answer

    async def _followup(self, request: web.Request, *, body: Any, app: str, token: str, **_: Any) -> tuple[int, Any]:
        rec = self._by_token.get(token)
        refused = self._refuse_webhook(rec, app)  # also covers rec is None
        if refused:
            return refused
        data = body or {}
        refused = self._refuse_message(data)
        if refused:
            return refused
        original = rec.message
        if rec.response_type == 5 and original is not None and int(original["flags"]) & LOADING:
            # Discord turns the first followup after a deferred response into the original message.
            edited = self._edit_message(int(original["id"]), data)
            rec._notify()
            return 200, edited
        msg = self._new_message(
            data,
            channel_id=int(rec.payload["channel_id"]),
            guild_id=rec.guild.id if rec.guild else None,
            author=self.bot_user,
            msg_type=0,
            rec=rec,
            flags=int(data.get("flags") or 0) & v.EPHEMERAL,
            webhook=True,
        )
        rec.followup_ids.append(int(msg["id"]))
        rec._notify()
        if request.query.get("wait") in ("true", "1", "True"):
            return 200, msg
        return 204, None

    async def _webhook_message(
        self, request: web.Request, *, body: Any, app: str, token: str, mid: str, **_: Any
    ) -> tuple[int, Any]:
        rec = self._by_token.get(token)
        refused = self._refuse_webhook(rec, app)  # also covers rec is None
        if refused:
            return refused
        msg_id = rec.original_message_id if mid == "@original" else int(mid)
        if (
            msg_id is None
            or msg_id not in self.messages
            or (mid != "@original" and msg_id not in rec.followup_ids and msg_id != rec.original_message_id)
        ):
            return 404, {"message": "Unknown Message", "code": 10008}
        if request.method == "GET":
            return 200, self.messages[msg_id]
        if request.method == "DELETE":
            del self.messages[msg_id]
            rec._notify()
            return 204, None
        data = body or {}
        merged = {**self.messages[msg_id], **{k: val for k, val in data.items() if val is not None}}
        refused = self._refuse_message(merged)
        if refused:
            return refused
        msg = self._edit_message(msg_id, data)
        rec._notify()
        return 200, msg

    def _guild_by_channel(self, channel_id: int) -> FakeGuild | None:
        return next((g for g in self.guilds if g.channel_id == channel_id), None)

    async def _channel_message(self, request: web.Request, *, body: Any, cid: str, **_: Any) -> tuple[int, Any]:
        guild = self._guild_by_channel(int(cid))
        if guild is None:
            return 404, {"message": "Unknown Channel", "code": 10003}
        data = body or {}
        refused = self._refuse_message(data)
        if refused:
            return refused
        if int(data.get("flags") or 0) & v.EPHEMERAL:
            return self._invalid(
                {"flags": {"_errors": [{"code": "MESSAGE_FLAGS_INVALID", "message": "Invalid flags"}]}}
            )
        return 200, self._new_message(data, channel_id=int(cid), guild_id=guild.id, author=self.bot_user)

    async def _get_message(self, request: web.Request, *, cid: str, mid: str, **_: Any) -> tuple[int, Any]:
        msg = self.messages.get(int(mid))
        if msg is None or int(msg["channel_id"]) != int(cid) or int(msg["flags"]) & v.EPHEMERAL:
            return 404, {"message": "Unknown Message", "code": 10008}
        return 200, msg

    async def _channel(self, request: web.Request, *, cid: str, **_: Any) -> tuple[int, Any]:
        guild = self._guild_by_channel(int(cid))
        if guild is None:
            return 404, {"message": "Unknown Channel", "code": 10003}
        return 200, guild.channel_payload()

    def channel_messages(self, guild: FakeGuild | None = None) -> list[dict[str, Any]]:
        """Public messages the bot posted directly in the channel (not interaction responses)."""
        cid = str((guild or self.guild).channel_id)
        return [
            m
            for m in self.messages.values()
            if m["channel_id"] == cid and "interaction_metadata" not in m and m["author"]["bot"]
        ]

    # -- gateway ---------------------------------------------------------------------------------------------
    async def _ws_handler(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self.gateway_queries.append({"path": request.path, **request.query})
        conn = _Connection(ws, request.query.get("compress"), request.path)
        self.connections.append(conn)
        await conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    if msg.type is WSMsgType.BINARY:
                        await ws.close(code=4002, message=b"Error while decoding payload.")
                    break
                try:
                    payload = json.loads(msg.data)
                except ValueError:
                    await ws.close(code=4002, message=b"Error while decoding payload.")
                    break
                await self._gateway_op(conn, payload)
        finally:
            self.close_codes.append(ws.close_code)
            if conn.session is not None and conn.session.connection is conn:
                conn.session.connection = None
            self._notify()
        return ws

    async def _gateway_op(self, conn: _Connection, payload: dict[str, Any]) -> None:
        op, d = payload.get("op"), payload.get("d")
        if op == 1:
            self.heartbeats += 1
            await conn.send({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            await self._identify(conn, d or {})
        elif op == 6:
            await self._resume(conn, d or {})
        elif op in (3, 4):
            pass  # presence / voice state updates: accepted, nothing to do
        elif op == 8:
            await self._request_members(conn, d or {})
        else:
            await conn.ws.close(code=4001, message=b"Unknown opcode.")

    async def _identify(self, conn: _Connection, d: dict[str, Any]) -> None:
        self.identifies.append({k: val for k, val in d.items() if k != "token"})
        if conn.session is not None:
            await conn.ws.close(code=4005, message=b"Already authenticated.")
            return
        token = d.get("token") or ""
        if not self._token_ok(token):
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        intents = int(d.get("intents") or 0)
        if intents & PRIVILEGED_INTENTS & ~self.privileged_intents:
            await conn.ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        shard = d.get("shard") or [0, 1]
        if not (0 <= shard[0] < shard[1]):
            await conn.ws.close(code=4010, message=b"Invalid shard.")
            return
        if shard[1] < self.shard_count and len(self.guilds) > 1 and shard[1] == 1:
            await conn.ws.close(code=4011, message=b"Sharding required.")
            return
        session = GatewaySession(secrets.token_hex(16), shard[0], shard[1], token, intents)
        self.sessions[session.session_id] = session
        session.connection = conn
        conn.session = session
        guilds = [g for g in self.guilds if shard_of(g.id, shard[1]) == shard[0]]
        ready = {
            "v": 10,
            "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "email": None},
            "user_settings": {},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": f"ws://127.0.0.1:{self.port}/resume-gateway",
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["local"],
        }
        if d.get("shard") is not None:
            ready["shard"] = shard
        await self.dispatch_event(session, "READY", ready)
        if intents & GUILDS_INTENT:
            for g in guilds:
                await self.dispatch_event(session, "GUILD_CREATE", g.create_payload(self.bot_user))
        self._notify()

    async def _resume(self, conn: _Connection, d: dict[str, Any]) -> None:
        self.resume_requests.append({"session_id": d.get("session_id"), "seq": d.get("seq"), "path": conn.path})
        session = self.sessions.get(d.get("session_id") or "")
        if session is None or session.token != d.get("token"):
            await conn.send({"op": 9, "d": False, "s": None, "t": None})
            return
        session.connection = conn
        conn.session = session
        last = int(d.get("seq") or 0)
        for event in [e for e in session.events if e["s"] > last]:
            await conn.send(event)
        session.resumes += 1
        await self.dispatch_event(session, "RESUMED", {})
        self._notify()

    async def _request_members(self, conn: _Connection, d: dict[str, Any]) -> None:
        if conn.session is None:
            return
        guild = next((g for g in self.guilds if str(g.id) == str(d.get("guild_id"))), None)
        if guild is None:
            return
        members = [self.bot_user.member_payload()] + [m.member_payload() for m in guild.members]
        chunk = {
            "guild_id": str(guild.id),
            "members": members,
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
            "presences": [],
        }
        if d.get("nonce") is not None:
            chunk["nonce"] = d["nonce"]
        await self.dispatch_event(conn.session, "GUILD_MEMBERS_CHUNK", chunk)

    async def dispatch_event(self, session: GatewaySession, name: str, data: dict[str, Any]) -> None:
        """Send a DISPATCH (op 0) with the session's next sequence number; kept for RESUME replay."""
        session.seq += 1
        event = {"op": 0, "t": name, "s": session.seq, "d": data}
        session.events.append(event)
        if session.connection is not None:
            await session.connection.send(event)

    def live_sessions(self) -> list[GatewaySession]:
        return [s for s in self.sessions.values() if s.connection is not None and not s.connection.ws.closed]

    def session_for_guild(self, guild: FakeGuild | None) -> GatewaySession:
        """The newest session of the shard that owns ``guild`` (connected or awaiting resume)."""
        candidates = [
            s for s in self.sessions.values() if s.shard_id == shard_of(guild.id if guild else None, s.shard_count)
        ]
        if not candidates:
            raise RuntimeError("no gateway session: is the bot connected to the fake?")
        return candidates[-1]

    def session_for_shard(self, shard_id: int) -> GatewaySession:
        candidates = [s for s in self.sessions.values() if s.shard_id == shard_id]
        if not candidates:
            raise RuntimeError(f"no gateway session for shard {shard_id}")
        return candidates[-1]

    async def wait_until_connected(self, shards: int | None = None, timeout: float = 10.0) -> None:
        want = self.shard_count if shards is None else shards
        await self.wait_for(
            lambda: len({s.shard_id for s in self.live_sessions()}) >= want,
            timeout,
            f"{want} connected shard(s)",
        )

    async def force_reconnect(self, mode: str = "reconnect", code: int = 4000, *, expire: bool = False) -> list[str]:
        """Make every connected shard reconnect.

        ``mode``: "reconnect" sends op 7 RECONNECT; "close" closes the socket with ``code`` (4000 is
        resumable); "invalidate" sends op 9 INVALID_SESSION (d=false: the client must IDENTIFY again).
        ``expire`` forgets the sessions first, so a RESUME attempt is answered with op 9 as well.
        """
        affected = []
        for session in self.live_sessions():
            conn = session.connection
            assert conn is not None
            affected.append(session.session_id)
            if expire or mode == "invalidate":
                del self.sessions[session.session_id]
            if mode == "reconnect":
                await conn.send({"op": 7, "d": None, "s": None, "t": None})
            elif mode == "invalidate":
                await conn.send({"op": 9, "d": False, "s": None, "t": None})
            else:
                await conn.ws.close(code=code, message=b"Unknown error.")
        return affected

    async def wait_for_resume(self, count: int = 1, timeout: float = 10.0) -> None:
        await self.wait_for(
            lambda: sum(s.resumes for s in self.sessions.values()) >= count, timeout, f"{count} RESUMED"
        )

    # -- test-side API: act as a Discord user ----------------------------------------------------------------
    def new_member(
        self,
        name: str = "member",
        *,
        manage_guild: bool = False,
        guild: FakeGuild | None = None,
        roles: list[int] | None = None,
    ) -> FakeUser:
        """A fresh guild member (own cooldown bucket); ``manage_guild`` gives the organisers' role;
        ``roles`` adds others (see ``new_role``)."""
        guild = guild or self.guild
        perms = MEMBER_PERMISSIONS | (MANAGE_GUILD if manage_guild else 0)
        member_roles = ([guild.admin_role_id] if manage_guild else []) + list(roles or [])
        user = FakeUser(snowflake(), name, permissions=perms, roles=member_roles)
        guild.members.append(user)
        return user

    def new_role(self, name: str, guild: FakeGuild | None = None) -> int:
        """A role with ordinary member permissions (e.g. "Judges"), in the guild's role list."""
        guild = guild or self.guild
        role_id = snowflake()
        guild.extra_roles.append((role_id, name))
        return role_id

    def upload(self, filename: str, data: bytes, content_type: str = "text/markdown; charset=utf-8") -> dict[str, Any]:
        """A file a user attaches to a command (pass the result as an attachment option's value)."""
        aid = snowflake()
        self.files[aid] = data
        return self._attachment_payload(aid, filename, len(data), content_type)

    def attachment_data(self, message: dict[str, Any], index: int = 0) -> bytes:
        """The bytes of a file the bot attached to ``message``."""
        return self.files[int(message["attachments"][index]["id"])]

    async def submit_modal(
        self,
        rec: InteractionRecord,
        values: dict[str, str] | None = None,
        *,
        user: FakeUser | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
    ) -> InteractionRecord:
        """The user fills in the modal the bot opened for ``rec`` and submits it (interaction type 5).

        Fields not in ``values`` keep the value the bot filled in. As Discord's client does, a submission
        breaking a field's required/min/max rule is refused here (ValueError), never sent.
        """
        modal = rec.modal
        if modal is None:
            raise LookupError(f"the bot opened no modal for {rec.describe()}")
        values = dict(values or {})
        components = []
        for top in modal["components"]:
            inner = top.get("component") if top.get("type") == 18 else (top.get("components") or [None])[0]
            if not inner or inner.get("type") != 4:
                continue
            cid = inner["custom_id"]
            value = str(values.pop(cid, inner.get("value") or ""))
            if inner.get("required", True) and not value:
                raise ValueError(f"modal field {cid!r} is required")
            if inner.get("max_length") is not None and len(value) > int(inner["max_length"]):
                raise ValueError(f"modal field {cid!r} takes at most {inner['max_length']} characters")
            if inner.get("min_length") is not None and value and len(value) < int(inner["min_length"]):
                raise ValueError(f"modal field {cid!r} takes at least {inner['min_length']} characters")
            field_data = {"type": 4, "id": inner.get("id"), "custom_id": cid, "value": value}
            if top.get("type") == 18:
                components.append({"type": 18, "id": top.get("id"), "component": field_data})
            else:
                components.append({"type": 1, "id": top.get("id"), "components": [field_data]})
        if values:
            raise ValueError(f"the modal has no field(s) {sorted(values)}")
        data = {"custom_id": modal["custom_id"], "components": components}
        return await self._dispatch_interaction(
            5, data, user or rec.user, rec.guild, message=rec.payload.get("message"), settle=settle, timeout=timeout,
            shard=shard,
        )

    def _find_command(self, name: str, ctype: int, guild: FakeGuild | None) -> dict[str, Any]:
        scopes: list[int | None] = ([guild.id] if guild else []) + [None]
        for scope in scopes:
            for cmd in self.commands.get(scope, {}).values():
                if cmd["name"] == name and cmd["type"] == ctype:
                    return cmd
        raise LookupError(
            f"command {name!r} (type {ctype}) is not registered with the fake Discord; "
            f"registered: {[c['name'] for s in self.commands.values() for c in s.values()]}"
        )

    @staticmethod
    def _convert(opt: dict[str, Any], value: Any) -> Any:
        otype = opt["type"]
        if otype == 4:
            return int(value)
        if otype == 10:
            return float(value)
        if otype == 5:
            return bool(value)
        if otype in (6, 7, 8, 9):
            return str(value)
        return str(value)

    def _build_options(
        self,
        defs: list[dict[str, Any]],
        given: dict[str, Any],
        focused: str | None,
        resolved: dict[str, dict[str, Any]] | None = None,
        guild: FakeGuild | None = None,
    ) -> list[dict[str, Any]]:
        by_name = {o["name"]: o for o in defs}
        resolved = {} if resolved is None else resolved
        out = []
        for key, value in given.items():
            if key not in by_name:
                raise ValueError(f"option {key!r} does not exist; options: {sorted(by_name)}")
            opt = by_name[key]
            if key == focused:
                out.append({"name": key, "type": opt["type"], "value": str(value), "focused": True})
                continue
            if opt["type"] in (7, 8, 11) and key != focused:
                value = self._resolve_option(opt["type"], value, resolved, guild)
            converted = self._convert(opt, value)
            if opt.get("choices") and converted not in [c["value"] for c in opt["choices"]]:
                raise ValueError(f"{converted!r} is not one of the choices for {key!r}")
            out.append({"name": key, "type": opt["type"], "value": converted})
        if focused is None:
            missing = [o["name"] for o in defs if o.get("required") and o["name"] not in given]
            if missing:
                raise ValueError(f"required option(s) missing: {missing}")
        return out

    def _command_data(
        self, name: str, options: dict[str, Any] | None, guild: FakeGuild | None, focused: str | None = None
    ) -> dict[str, Any]:
        parts = name.split()
        cmd = self._find_command(parts[0], 1, guild)
        data: dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": 1}
        if "guild_id" in cmd:
            data["guild_id"] = cmd["guild_id"]
        defs, container = cmd.get("options") or [], data
        for part in parts[1:]:
            sub = next((o for o in defs if o["name"] == part and o["type"] in (1, 2)), None)
            if sub is None:
                raise LookupError(f"subcommand {part!r} of {name!r} not registered")
            node: dict[str, Any] = {"name": part, "type": sub["type"], "options": []}
            container.setdefault("options", []).append(node)
            container, defs = node, sub.get("options") or []
        resolved: dict[str, dict[str, Any]] = {}
        built = self._build_options(defs, options or {}, focused, resolved, guild)
        container.setdefault("options", []).extend(built)
        if resolved:
            data["resolved"] = resolved
        return data

    def _resolve_option(
        self, otype: int, value: Any, resolved: dict[str, dict[str, Any]], guild: FakeGuild | None
    ) -> str:
        """Channel (7), role (8) and attachment (11) options: the id, with the object in ``resolved``."""
        if otype == 11:
            if not isinstance(value, dict):
                raise ValueError("an attachment option takes fake.upload(...)'s result")
            resolved.setdefault("attachments", {})[value["id"]] = value
            return value["id"]
        if guild is None:
            raise ValueError("role and channel options need a guild")
        if otype == 8:
            role = next((r for r in guild.roles_payload() if int(r["id"]) == int(value)), None)
            if role is None:
                raise ValueError(f"no role {value} in {guild.name}")
            resolved.setdefault("roles", {})[role["id"]] = role
            return role["id"]
        channel = guild.channel_payload() if int(value) == guild.channel_id else None
        if channel is None:
            raise ValueError(f"no channel {value} in {guild.name}")
        resolved.setdefault("channels", {})[channel["id"]] = {**channel, "permissions": str(MEMBER_PERMISSIONS)}
        return channel["id"]

    def _interaction_payload(
        self,
        itype: int,
        data: dict[str, Any] | None,
        user: FakeUser,
        guild: FakeGuild | None,
        message: dict[str, Any] | None = None,
        age: float = 0.0,
    ) -> dict[str, Any]:
        iid = snowflake(int((time.time() - age) * 1000))  # the id carries the creation time, as Discord's do
        token = "aW50ZXJhY3Rpb246" + secrets.token_urlsafe(48)
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": itype,
            "token": token,
            "version": 1,
            "locale": "en-US",
            "app_permissions": str(BOT_PERMISSIONS),
            "entitlements": [],
            "attachment_size_limit": 10_485_760,
            "context": 0 if guild else 1,
            "authorizing_integration_owners": {"0": str(guild.id)} if guild else {"1": str(user.id)},
        }
        if data is not None:
            payload["data"] = data
        if guild is not None:
            payload.update(
                {
                    "guild_id": str(guild.id),
                    "guild": guild.partial_payload(),
                    "guild_locale": "en-US",
                    "channel_id": str(guild.channel_id),
                    "channel": guild.channel_payload(),
                    "member": user.member_payload(with_permissions=True),
                }
            )
        else:
            dm = {
                "id": str(snowflake()),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [user.payload()],
            }
            payload.update({"channel_id": dm["id"], "channel": dm, "user": user.payload()})
        if message is not None:
            payload["message"] = message
        return payload

    def _register(
        self, payload: dict[str, Any], user: FakeUser, guild: FakeGuild | None, age: float = 0.0
    ) -> InteractionRecord:
        rec = InteractionRecord(self, int(payload["id"]), payload["token"], payload["type"], payload, user, guild)
        self.interactions[rec.id] = rec
        self._by_token[rec.token] = rec
        rec.dispatched_at = time.perf_counter()
        rec.created_at = rec.dispatched_at - age
        return rec

    def create_interaction(
        self, itype: int = 2, data: dict[str, Any] | None = None, message: dict[str, Any] | None = None
    ) -> InteractionRecord:
        """An interaction Discord knows about but sends to nobody: for poking the REST endpoints directly."""
        payload = self._interaction_payload(
            itype, data or {"name": "raw", "type": 1}, self.member, self.guild, message=message
        )
        return self._register(payload, self.member, self.guild)

    async def _dispatch_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        user: FakeUser | None,
        guild: FakeGuild | None,
        *,
        message: dict[str, Any] | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
        age: float = 0.0,
    ) -> InteractionRecord:
        """Send an interaction of type ``itype`` to the shard that owns ``guild`` (or, with ``shard``, to
        that shard's session: what a guild's interactions do while it moves to another shard, e.g. when a
        bot is resharded); by default wait until the bot has answered it. ``age``: seconds since Discord
        created it (a late delivery, as after a gateway backlog or a RESUME); its id and its 3-second window
        start that long ago."""
        user = user or self.member
        payload = self._interaction_payload(itype, data, user, guild, message=message, age=age)
        rec = self._register(payload, user, guild, age)
        session = self.session_for_guild(guild) if shard is None else self.session_for_shard(shard)
        await self.dispatch_event(session, "INTERACTION_CREATE", payload)
        if settle:
            await rec.wait_until(lambda r: r.settled, timeout)
        return rec

    async def invoke_command(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        dm: bool = False,
        settle: bool = True,
        timeout: float = 5.0,
        shard: int | None = None,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user runs slash command ``name`` ("group sub" for subcommands); waits for the final answer.

        ``dm=True``: in a direct message with the bot (no guild); a guild-only command is refused, as the
        Discord client would not offer it.
        """
        guild = None if dm else (self.guild if guild is None else guild)
        if dm:
            cmd = self._find_command(name.split()[0], 1, None)
            if 1 not in (cmd.get("contexts") or [0, 1, 2]) or cmd.get("dm_permission") is False:
                raise ValueError(f"/{name} is not available in direct messages")
        data = self._command_data(name, options, guild)
        return await self._dispatch_interaction(
            2, data, user, guild, settle=settle, timeout=timeout, shard=shard, age=age
        )

    async def autocomplete(
        self,
        name: str,
        option: str,
        value: str,
        options: dict[str, Any] | None = None,
        *,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        timeout: float = 5.0,
        settle: bool = True,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user types ``value`` into autocomplete option ``option``; waits for the choices (type 8)."""
        guild = self.guild if guild is None else guild
        data = self._command_data(name, {**(options or {}), option: value}, guild, focused=option)
        return await self._dispatch_interaction(4, data, user, guild, timeout=timeout, settle=settle, age=age)

    @staticmethod
    def text_of(message: dict[str, Any]) -> str:
        """Everything a user reads in a message: content, embed titles/descriptions/fields/footers."""
        parts = [message.get("content") or ""]
        for embed in message.get("embeds") or []:
            parts += [embed.get("title") or "", embed.get("description") or ""]
            parts.append((embed.get("footer") or {}).get("text") or "")
            for f in embed.get("fields") or []:
                parts += [f["name"], f["value"]]
        return "\n".join(parts)

    @staticmethod
    def components_of(message: dict[str, Any]) -> list[dict[str, Any]]:
        """All interactive components of a message, flattened (buttons, selects)."""
        found: list[dict[str, Any]] = []

        def walk(comps: list[dict[str, Any]]) -> None:
            for comp in comps:
                if comp.get("type") in (2, 3, 5, 6, 7, 8):
                    found.append(comp)
                walk(comp.get("components") or [])
                if comp.get("accessory"):
                    walk([comp["accessory"]])

        walk(message.get("components") or [])
        return found

    async def click(
        self,
        message: dict[str, Any],
        custom_id: str,
        *,
        values: list[str] | None = None,
        user: FakeUser | None = None,
        settle: bool = True,
        timeout: float = 5.0,
        age: float = 0.0,
    ) -> InteractionRecord:
        """A user clicks button ``custom_id`` (or picks ``values`` in a select) on ``message``."""
        current = self.messages.get(int(message["id"]), message)
        comp = next((c for c in self.components_of(current) if c.get("custom_id") == custom_id), None)
        if comp is None:
            raise LookupError(
                f"no component with custom_id {custom_id!r} on message {message['id']}; have "
                f"{[c.get('custom_id') for c in self.components_of(current)]}"
            )
        if comp.get("disabled"):
            raise ValueError(f"component {custom_id!r} is disabled; a user cannot click it")
        guild = self._guild_by_channel(int(current["channel_id"]))
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": comp["type"], "id": comp.get("id")}
        if comp["type"] != 2:
            data["values"] = list(values or [])
        return await self._dispatch_interaction(
            3, data, user, guild, message=current, settle=settle, timeout=timeout, age=age
        )

    def user_message(
        self, content: str, author: FakeUser | None = None, guild: FakeGuild | None = None
    ) -> dict[str, Any]:
        """A message a human posted in the guild channel (a target for message context menus)."""
        guild = guild or self.guild
        return self._new_message(
            {"content": content},
            channel_id=guild.channel_id,
            guild_id=guild.id,
            author=author or self.other_member,
        )

    async def context_menu(
        self,
        name: str,
        message: dict[str, Any] | None = None,
        *,
        target_user: FakeUser | None = None,
        user: FakeUser | None = None,
        guild: FakeGuild | None = None,
        settle: bool = True,
        timeout: float = 5.0,
    ) -> InteractionRecord:
        """A user picks app command ``name`` from a message's (or a user's) context menu."""
        guild = self.guild if guild is None else guild
        ctype = 3 if message is not None else 2
        cmd = self._find_command(name, ctype, guild)
        data: dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": ctype}
        if message is not None:
            data["target_id"] = message["id"]
            data["resolved"] = {"messages": {message["id"]: message}}
        else:
            target = target_user or self.other_member
            data["target_id"] = str(target.id)
            data["resolved"] = {
                "users": {str(target.id): target.payload()},
                "members": {str(target.id): {k: val for k, val in target.member_payload().items() if k != "user"}},
            }
        return await self._dispatch_interaction(2, data, user, guild, settle=settle, timeout=timeout)

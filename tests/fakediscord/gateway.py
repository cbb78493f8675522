"""The gateway: Discord's websocket, on which the bot identifies, heartbeats, resumes and receives events.

A protocol of its own, with state that outlives a socket (sessions, sequence numbers, the events kept for
RESUME replay) and failure modes that tests trigger on purpose (``force_reconnect``), so it lives apart
from the REST routes. Interactions reach the bot only through ``dispatch_event`` here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from .models import FakeGuild, shard_of

# Gateway intents Discord treats as privileged (GUILD_MEMBERS, GUILD_PRESENCES, MESSAGE_CONTENT).
PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | (1 << 15)
GUILDS_INTENT = 1


class _Connection:
    """One gateway websocket; encodes frames as Discord does (zlib-stream shares one context per socket)."""

    def __init__(
        self, ws: web.WebSocketResponse, compress: str | None, path: str, transport: asyncio.BaseTransport | None = None
    ) -> None:
        self.ws = ws
        self.transport = transport  # the socket under ``ws`` (``release`` writes whole groups of frames to it)
        self.path = path
        self.compressor = zlib.compressobj() if compress == "zlib-stream" else None
        self.session: GatewaySession | None = None
        self.lock = asyncio.Lock()
        self.held: list[bytes | str] | None = None  # frames encoded but kept back (``gateway_held``)

    async def send(self, payload: dict[str, Any]) -> bool:
        if self.ws.closed:
            return False
        raw = json.dumps(payload, separators=(",", ":"))
        async with self.lock:
            try:
                frame: bytes | str = raw
                if self.compressor is not None:
                    frame = self.compressor.compress(raw.encode()) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
                if self.held is not None:
                    self.held.append(frame)
                elif isinstance(frame, bytes):
                    await self.ws.send_bytes(frame)
                else:
                    await self.ws.send_str(frame)
            except (ConnectionError, RuntimeError):
                return False
        return True

    async def release(self, group: int = 50) -> None:
        """Write the frames kept back, in order, as fast as the socket takes them; the fake's event loop
        gets a turn every ``group`` frames (so it keeps answering REST calls meanwhile)."""
        frames, self.held = self.held or [], None
        async with self.lock:
            transport = self.transport
            if isinstance(transport, asyncio.WriteTransport) and not self.ws.compress:
                # The same bytes as one ``send_bytes`` a frame, written a group at a time: a burst Discord sends
                # costs Discord's CPU, not the host's, and aiohttp's per-frame writer took about a second of
                # this 2-core machine for 10,000 frames, inside the burst's 3-second windows.
                for k in range(0, len(frames), group):
                    if self.ws.closed or transport.is_closing():
                        return
                    transport.write(b"".join(ws_frame(frame) for frame in frames[k : k + group]))
                    await asyncio.sleep(0)
                return
            for k, frame in enumerate(frames):
                if self.ws.closed:
                    return
                with contextlib.suppress(ConnectionError, RuntimeError):
                    if isinstance(frame, bytes):
                        await self.ws.send_bytes(frame)
                    else:
                        await self.ws.send_str(frame)
                if k % group == group - 1:
                    await asyncio.sleep(0)


def ws_frame(payload: bytes | str) -> bytes:
    """One unmasked, unfragmented websocket frame as a server writes it (RFC 6455 5.2): binary for bytes, text
    for str, with the payload length in 7, 16 or 64 bits."""
    data, opcode = (payload, 0x2) if isinstance(payload, bytes) else (payload.encode(), 0x1)
    n = len(data)
    if n < 126:
        head = bytes((0x80 | opcode, n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
    return head + data


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


class GatewayMixin:
    """``FakeDiscord``'s gateway: the ``/gateway`` and ``/resume-gateway`` sockets, sessions and dispatch.

    Works on the server's ``sessions``, ``connections``, ``identifies``, ``resume_requests``, ``heartbeats``,
    ``gateway_queries`` and ``close_codes`` (all set up in ``FakeDiscord.__init__``, where tests read them).
    """

    async def _ws_handler(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self.gateway_queries.append({"path": request.path, **request.query})
        conn = _Connection(ws, request.query.get("compress"), request.path, request.transport)
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
        if self.identify_hold is not None:
            await self.identify_hold.wait()
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

    @contextlib.asynccontextmanager
    async def gateway_held(self) -> AsyncIterator[None]:
        """Events dispatched inside the block are encoded in order but reach the bot only when it ends,
        all at once (as a burst Discord created in one instant would): with ``age=`` set to the instant
        the block ends, the interactions' 3-second windows start then, however long the fake took to
        build them."""
        connections = [s.connection for s in self.live_sessions() if s.connection is not None]
        for connection in connections:
            connection.held = []
        try:
            yield
        finally:
            for connection in connections:
                await connection.release()

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

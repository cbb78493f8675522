"""REST routing: one aiohttp handler for every ``/api/v10`` path, dispatching to the route handlers.

Every request goes through ``_rest_handler`` so that each one is parsed, authenticated, subject to the
injected faults and recorded the same way whichever route it hits; the handlers (here and in the other
mixins) only see the parsed body and the path's parameters and return ``(status, data[, headers])``.
The identity routes discord.py calls while logging in (gateway URL, bot user, application) live here too.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .records import InteractionRecord, RecordedCall

API_PREFIX = "/api/v10"


class RestMixin:
    """``FakeDiscord``'s REST front: the route table, the shared request handling and the login routes.

    Records into the server's ``calls``, ``unknown_calls``, ``rejected`` and ``sync_calls``; the table is
    built once in ``FakeDiscord.__init__`` (``_routes``) from the handlers of all the mixins.
    """

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

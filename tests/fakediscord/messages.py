"""Messages and their files: creation, edits, mentions, attachments and Discord's refusal of a bad body.

Interaction responses, followups and channel posts all become a message here, so a message's shape (ids,
flags, component ids, who is pinged, attachment URLs) and the 400 for an unacceptable body are decided in
one place; the static readers (``text_of``, ``components_of``) are what tests use to look at them.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from aiohttp import web

from . import validation as v
from .models import FakeUser, iso_now, snowflake
from .records import LOADING, InteractionRecord


class MessagesMixin:
    """``FakeDiscord``'s message store: ``messages`` (by id, current state), ``message_meta`` (allowed
    mentions, pings, edit time) and ``files`` (attachment bytes, served at ``/attachments/...``)."""

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

    @staticmethod
    def _invalid(errors: dict[str, Any], code: int = 50035, nest: str | None = None) -> tuple[int, Any]:
        if code == 50006:
            return 400, {"message": "Cannot send an empty message", "code": 50006}
        return 400, {
            "message": "Invalid Form Body",
            "code": 50035,
            "errors": {nest: errors} if nest else errors,
        }

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

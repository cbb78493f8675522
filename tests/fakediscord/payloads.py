"""Interaction payloads built as Discord builds them, from the commands the bot registered.

Options are checked and converted against the synced definition (so a test cannot send what no Discord
client could), role, channel and attachment options get their ``resolved`` objects, and the context
(member with permissions, guild, channel or DM, locale, token, an id that encodes the creation time) is
filled in the way discord.py expects to parse it.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from .models import BOT_PERMISSIONS, MEMBER_PERMISSIONS, FakeGuild, FakeUser, snowflake


class InteractionPayloadsMixin:
    """``FakeDiscord``'s payload builders, used by the user actions (``users.UserActionsMixin``)."""

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
        channel = guild.channel_payload(int(value)) if int(value) in guild.channel_ids() else None
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

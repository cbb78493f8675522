"""Guilds as seen from a channel: the channel routes, and the test-side helpers that add people to a guild.

The guilds themselves (one per shard, with an owner, an organiser, two players and a text channel) are
built in ``FakeDiscord.__init__``; this module holds what reads or extends them, so that role checks and
channel posts can be tested with members and roles a test creates on the spot.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from . import validation as v
from .models import MANAGE_GUILD, MEMBER_PERMISSIONS, FakeGuild, FakeUser, snowflake


class GuildsMixin:
    """``FakeDiscord``'s guild helpers, over ``guilds`` (``guild`` is the first one, the default)."""

    def _guild_by_channel(self, channel_id: int) -> FakeGuild | None:
        return next((g for g in self.guilds if channel_id in g.channel_ids()), None)

    async def _channel(self, request: web.Request, *, cid: str, **_: Any) -> tuple[int, Any]:
        guild = self._guild_by_channel(int(cid))
        if guild is None:
            return 404, {"message": "Unknown Channel", "code": 10003}
        return 200, guild.channel_payload(int(cid))

    async def _channel_message(self, request: web.Request, *, body: Any, cid: str, **_: Any) -> tuple[int, Any]:
        guild = self._guild_by_channel(int(cid))
        if guild is None:
            return 404, {"message": "Unknown Channel", "code": 10003}
        if int(cid) in guild.forbidden_channels:
            return 403, {"message": "Missing Access", "code": 50001}
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

    def channel_messages(self, guild: FakeGuild | None = None, channel_id: int | None = None) -> list[dict[str, Any]]:
        """Public messages the bot posted directly in the channel (not interaction responses); ``channel_id``: in
        another channel of the guild (``new_channel``)."""
        cid = str(channel_id if channel_id is not None else (guild or self.guild).channel_id)
        return [
            m
            for m in self.messages.values()
            if m["channel_id"] == cid and "interaction_metadata" not in m and m["author"]["bot"]
        ]

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

    def new_channel(self, name: str, guild: FakeGuild | None = None) -> int:
        """Another text channel in the guild (e.g. an audit channel); its id. Sessions are not told of it: make it
        before the bot connects (its GUILD_CREATE lists it), or a channel option naming it fails to convert."""
        guild = guild or self.guild
        channel_id = snowflake()
        guild.extra_channels.append((channel_id, name))
        return channel_id

    def forbid_channel(self, channel_id: int, guild: FakeGuild | None = None) -> None:
        """From now on the bot may not post in the channel: Discord's 403 Missing Access (code 50001)."""
        (guild or self._guild_by_channel(channel_id) or self.guild).forbidden_channels.add(channel_id)

    def new_role(self, name: str, guild: FakeGuild | None = None) -> int:
        """A role with ordinary member permissions (e.g. "Judges"), in the guild's role list."""
        guild = guild or self.guild
        role_id = snowflake()
        guild.extra_roles.append((role_id, name))
        return role_id

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

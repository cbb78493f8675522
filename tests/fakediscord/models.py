"""Payload builders for the fake Discord: snowflakes, users, members, guilds, channels, messages.

The shapes follow Discord's API v10 documentation closely enough that discord.py parses them with its
normal code paths (no monkey-patching on the client side).
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

DISCORD_EPOCH_MS = 1420070400000

# Permission bits used by the fixtures (https://discord.com/developers/docs/topics/permissions).
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
EMBED_LINKS = 1 << 14
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
MENTION_EVERYONE = 1 << 17
USE_EXTERNAL_EMOJIS = 1 << 18
MANAGE_GUILD = 1 << 5
ADMINISTRATOR = 1 << 3
USE_APPLICATION_COMMANDS = 1 << 31
MEMBER_PERMISSIONS = (
    VIEW_CHANNEL
    | SEND_MESSAGES
    | EMBED_LINKS
    | ATTACH_FILES
    | READ_MESSAGE_HISTORY
    | USE_EXTERNAL_EMOJIS
    | USE_APPLICATION_COMMANDS
)
BOT_PERMISSIONS = MEMBER_PERMISSIONS | MENTION_EVERYONE

_counter = itertools.count(1)


def snowflake(at_ms: int | None = None) -> int:
    """A fresh, unique snowflake whose timestamp is ``at_ms`` (default: now)."""
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    return ((ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) & 0x3FFFFF)


def snowflake_for_shard(shard_id: int, shard_count: int) -> int:
    """A guild id that Discord's formula ``(id >> 22) % shard_count`` routes to ``shard_id``."""
    ms = int(time.time() * 1000) - 86_400_000
    while ((ms - DISCORD_EPOCH_MS) % shard_count) != shard_id:
        ms += 1
    return snowflake(ms)


def shard_of(guild_id: int | None, shard_count: int) -> int:
    return 0 if guild_id is None else (guild_id >> 22) % shard_count


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


@dataclass
class FakeUser:
    """A Discord account: a human member of the fake guild, or the bot itself."""

    id: int
    username: str
    bot: bool = False
    permissions: int = MEMBER_PERMISSIONS
    roles: list[int] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.username,
            "global_name": None if self.bot else self.username,
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
            "flags": 0,
        }

    def member_payload(self, *, with_permissions: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "user": self.payload(),
            "nick": None,
            "avatar": None,
            "banner": None,
            "roles": [str(r) for r in self.roles],
            "joined_at": "2020-01-01T00:00:00+00:00",
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_permissions:
            data["permissions"] = str(self.permissions)
        return data


@dataclass
class FakeGuild:
    id: int
    name: str
    owner_id: int
    channel_id: int
    admin_role_id: int
    members: list[FakeUser] = field(default_factory=list)
    extra_roles: list[tuple[int, str]] = field(default_factory=list)  # (id, name): e.g. a judges' role
    extra_channels: list[tuple[int, str]] = field(default_factory=list)  # (id, name): e.g. an audit channel
    forbidden_channels: set[int] = field(default_factory=set)  # the bot may not post there (403 Missing Access)

    def channel_ids(self) -> list[int]:
        return [self.channel_id, *(cid for cid, _name in self.extra_channels)]

    def channel_payload(self, channel_id: int | None = None) -> dict[str, Any]:
        cid = self.channel_id if channel_id is None else channel_id
        name = dict(self.extra_channels).get(cid, "rules-questions")
        return {
            "id": str(cid),
            "type": 0,
            "guild_id": str(self.id),
            "name": name,
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def roles_payload(self) -> list[dict[str, Any]]:
        def role(rid: int, name: str, perms: int, position: int) -> dict[str, Any]:
            return {
                "id": str(rid),
                "name": name,
                "color": 0,
                "colors": {"primary_color": 0},
                "hoist": False,
                "icon": None,
                "unicode_emoji": None,
                "position": position,
                "permissions": str(perms),
                "managed": False,
                "mentionable": False,
                "flags": 0,
            }

        return [
            role(self.id, "@everyone", MEMBER_PERMISSIONS, 0),
            role(self.admin_role_id, "Tournament Organisers", MEMBER_PERMISSIONS | MANAGE_GUILD, 1),
            *(role(rid, name, MEMBER_PERMISSIONS, 2 + n) for n, (rid, name) in enumerate(self.extra_roles)),
        ]

    def partial_payload(self) -> dict[str, Any]:
        """The ``guild`` object embedded in interactions."""
        return {"id": str(self.id), "locale": "en-US", "features": []}

    def create_payload(self, bot: FakeUser) -> dict[str, Any]:
        """GUILD_CREATE data (what the gateway sends after READY)."""
        members = [bot.member_payload()] + [m.member_payload() for m in self.members]
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 1,
            "explicit_content_filter": 0,
            "roles": self.roles_payload(),
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "max_members": 500000,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "joined_at": "2020-01-01T00:00:00+00:00",
            "large": False,
            "unavailable": False,
            "member_count": len(members),
            "voice_states": [],
            "members": members,
            "channels": [self.channel_payload(cid) for cid in self.channel_ids()],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "lazy": True,
        }

"""A local fake of Discord's API and gateway for end-to-end tests of the bot (no network, no token)."""

from .models import FakeGuild, FakeUser
from .server import FakeDiscord, InteractionRecord, RecordedCall
from .wiring import bot_running, point_discord_at, preserved_discord_urls

__all__ = [
    "FakeDiscord",
    "FakeGuild",
    "FakeUser",
    "InteractionRecord",
    "RecordedCall",
    "bot_running",
    "point_discord_at",
    "preserved_discord_urls",
]

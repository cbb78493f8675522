"""One extension per feature (define, ask, rule, changes, banned, meta, admin, the context menu).

Shared here: the per-user cooldown read from settings, and the autocomplete adapters.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import discord
from discord import app_commands

from ..client import scope_of
from ..views import choices

log = logging.getLogger("bot")

PRIVATE = "Only you see the answer (you can still post it in the channel)"


def _cooldown(interaction: discord.Interaction) -> app_commands.Cooldown | None:
    settings = interaction.client.settings  # type: ignore[attr-defined]
    if settings.cooldown_seconds <= 0:
        return None
    return app_commands.Cooldown(settings.cooldown_rate, settings.cooldown_seconds)


def user_cooldown() -> Callable:
    """Per-user rate limit from settings (COOLDOWN_RATE per COOLDOWN_SECONDS; 0 seconds turns it off)."""
    return app_commands.checks.dynamic_cooldown(_cooldown, key=lambda i: i.user.id)


def lookup_command(name: str, description: str, **options: str) -> Callable[[Callable], app_commands.Command]:
    """A slash command answering a lookup: its ``options`` described, a ``private`` option, the per-user
    cooldown. One place for what every lookup shares, so a new one cannot leave out the rate limit."""

    def decorate(callback: Callable) -> app_commands.Command:
        described = app_commands.describe(private=PRIVATE, **options)(user_cooldown()(callback))
        return app_commands.command(name=name, description=description)(described)

    return decorate


def completer(method: str) -> Callable:
    """An autocomplete callback over one engine method (``complete``, ``complete_section``, ...).

    The index query runs in a worker thread: every keystroke is a request, and the event loop
    also serves the gateway heartbeat and the other shards.
    """

    async def autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        bot = interaction.client
        engine = bot.judge.engine  # type: ignore[attr-defined]
        kwargs = {}
        rulings = getattr(bot, "rulings", None)
        if method == "complete" and rulings is not None and interaction.guild_id is not None:
            kwargs["overlay"] = rulings.overlay(scope_of(interaction.guild_id))  # this server's rulings too
        try:
            return choices(await asyncio.to_thread(getattr(engine, method), current or "", 25, **kwargs))
        except Exception:  # autocomplete must never error out in the user's face
            log.exception("autocomplete %s failed for %r", method, current)
            return []

    return autocomplete

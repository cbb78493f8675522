"""One extension per feature (define, ask, rule, changes, banned, meta, admin, the context menu).

Shared here: the per-user cooldown read from settings, and the autocomplete adapters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import discord
from discord import app_commands

from bot.app.formats import shown_choices
from bot.discord_bot.admission import EXPIRE_AT, Busy, Expired, age
from bot.discord_bot.client import scope_of
from bot.discord_bot.logs import log_answer
from bot.discord_bot.replies import choices, first_response

log = logging.getLogger("bot")

PRIVATE = "Only you see the answer (you can still post it in the channel)"


def user_cooldown() -> Callable:
    """Per-user rate limit of one command, from settings (COOLDOWN_RATE per COOLDOWN_SECONDS; 0 seconds
    turns it off). Over the limit: discord.py's ``CommandOnCooldown``, answered by the bot's error handler."""

    async def predicate(interaction: discord.Interaction) -> bool:
        cooldowns = interaction.client.command_cooldowns  # type: ignore[attr-defined]
        command = interaction.command.qualified_name if interaction.command else "?"
        wait = cooldowns.retry_after((command, interaction.user.id), interaction.created_at.timestamp())
        if wait is not None:
            raise app_commands.CommandOnCooldown(app_commands.Cooldown(cooldowns.rate, cooldowns.per), wait)
        return True

    return app_commands.check(predicate)


def lookup_command(name: str, description: str, **options: str) -> Callable[[Callable], app_commands.Command]:
    """A slash command answering a lookup: its ``options`` described, a ``private`` option, the per-user
    cooldown. One place for what every lookup shares, so a new one cannot leave out the rate limit."""

    def decorate(callback: Callable) -> app_commands.Command:
        described = app_commands.describe(private=PRIVATE, **options)(user_cooldown()(callback))
        return app_commands.command(name=name, description=description)(described)

    return decorate


def completer(method: str) -> Callable:
    """An autocomplete callback over one engine method (``complete``, ``complete_section``, ...).

    The index query runs on the lookup workers: every keystroke is a request, and the event loop
    also serves the gateway heartbeat and the other shards. When the queue is full the user gets no
    suggestions; when the interaction expired while queued, nothing is sent. Logged at DEBUG only.
    """

    async def autocomplete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        bot = interaction.client
        engine = bot.judge.engine  # type: ignore[attr-defined]
        name = f"{interaction.command.qualified_name if interaction.command else '?'}:autocomplete"
        find = getattr(engine, method)
        kwargs = {}
        rulings = getattr(bot, "rulings", None)
        overlay = rulings.overlay(scope_of(interaction.guild_id)) if rulings and interaction.guild_id else None
        if method == "complete" and overlay is not None:
            kwargs["overlay"] = overlay  # this server's rulings too
        chosen = overlay.formats if overlay is not None else None  # the formats it plays (bot.app.formats)
        outcome, found = "ok", []
        try:
            found = await bot.lookups.run(  # type: ignore[attr-defined]
                lambda: find(current or "", 25, **kwargs), lambda: age(interaction) < EXPIRE_AT, urgent=True
            )
            found = shown_choices(found, engine.get, chosen)  # none of a format the server does not play
            # Sent here, through the bot's Responder (in turn, not at all once expired); discord.py
            # then sees the response done and sends nothing itself.
            await first_response(interaction, lambda: interaction.response.autocomplete(choices(found)))
        except Busy:
            outcome = "busy"
        except Expired:
            log_answer(interaction, name, "expired", level=logging.DEBUG)
            raise  # discord.py then sends nothing (its log of this is filtered out, see bot.discord_bot.client)
        except Exception:  # autocomplete must never error out in the user's face
            outcome = "error"
            log.exception("autocomplete %s failed", method)
            log.debug("autocomplete %s failed for %r", method, current)  # the user's text: DEBUG only
        log_answer(interaction, name, outcome, level=logging.DEBUG)
        return []  # only used when the response above was not sent (busy, error): no suggestions

    return autocomplete

"""/ruling: a server's judges record, edit, retire and import rulings; everyone in it reads them.

Who may write is checked here, on every write (including each modal submission), from the member the
interaction carries: Manage Server, or the role the server chose with ``/ruling config judge-role``.
``default_member_permissions`` is not relied on (a server can change it).

Forms (modals) carry their whole state in their custom id (``l5r:rm:a`` to add,
``l5r:rm:e:<ruling>:<version>`` to edit) and their submissions are handled from the raw interaction,
so a form opened before a restart still saves. A draft that cannot be saved (a problem in it, an edit
conflict, the database down) is handed back: attached as Markdown, and behind a button that reopens
the form with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.app.formats import FormatChoiceError, complete, describe, loaded, parse_choice
from bot.app.renderers.discord_markdown import NEUTRAL_COLOUR, escape, render, shorten
from bot.discord_bot.admission import Expired, remaining
from bot.discord_bot.client import scope_of
from bot.discord_bot.logs import log_answer
from bot.discord_bot.replies import answer_embed, first_response, send_error
from bot.rulings import markdown, present
from bot.rulings.importing import ImportLimits
from bot.rulings.repository import Author, Conflict, NotFlagged, NotFound, Ruling, ScopeConfig
from bot.rulings.service import ConcurrentChange, NoAnswer, StorageFull, Unavailable
from glossary.model import slugify

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot
    from bot.rulings.review import Flagged
    from bot.rulings.service import RulingsService

log = logging.getLogger("bot.rulings")

MODAL_PREFIX = "l5r:rm:"
REOPEN_PREFIX = "l5r:rd:"
CONFIRM_PREFIX = "l5r:rx:"  # /ruling delete-all's buttons: l5r:rx:<yes|no>:<expiry, Unix seconds>
CONFIRM_SECONDS = 300  # how long the confirmation's buttons work
STANDS_PREFIX = "l5r:rs:"  # the audit post's "Still stands" button: l5r:rs:<ruling id>
DOWN = "The rulings database is unreachable right now, so nothing was changed. Please try again in a minute."
FULL = ("The rulings database has no room to write (its disk is full), so nothing was changed. The bot's host "
        "has to free space; trying again will not help until then.")
NO_ANSWER = ("The rulings database is unreachable right now (it did not answer in time), so your change was not "
             "confirmed. Please check `/ruling list` in a minute before saving again: a change sent just as the "
             "database stopped answering may still be saved once it answers again.")
# Seconds kept back from Discord's 3-second window when a database read must come before a form opens (a form
# cannot follow a "thinking..." reply): the read gets the rest, the refusal still arrives in time.
FORM_MARGIN = 0.75


def _down(exc: Unavailable) -> str:
    """Why a write failed, as the judge is told: an outage (try again soon), a database that did not answer in
    time (the change is unconfirmed) or a full disk (the host must act)."""
    if isinstance(exc, StorageFull):
        return FULL
    return NO_ANSWER if isinstance(exc, NoAnswer) else DOWN


def _form_time(interaction: discord.Interaction) -> float:
    """How long a read may take before a form opens: what is left of the window, minus FORM_MARGIN."""
    return max(0.1, remaining(interaction) - FORM_MARGIN)


async def _defer(interaction: discord.Interaction, *, ephemeral: bool = True, update: bool = False) -> None:
    """Acknowledge before touching the database: a call may take up to RULINGS_DB_TIMEOUT, far past the
    3 seconds Discord gives a first response, while the reply after it has 15 minutes. Raises ``Expired``
    when even the acknowledgement is too late (then nothing else is done: nothing is written)."""
    if update:
        await first_response(interaction, lambda: interaction.response.defer(), deferred=True)
    else:
        await first_response(interaction, lambda: interaction.response.defer(ephemeral=ephemeral, thinking=True),
                             deferred=True)  # fmt: skip


async def _offer(
    interaction: discord.Interaction, choices: list[app_commands.Choice[str]]
) -> list[app_commands.Choice[str]]:
    """Send autocomplete choices through the bot's Responder: in turn, and not at all once Discord's window has
    closed (``Expired``, which discord.py then drops quietly), so a flood of keystrokes costs no late requests
    and never goes ahead of a judge's save. Returns [] (discord.py sends nothing more)."""
    try:
        await first_response(interaction, lambda: interaction.response.autocomplete(choices))
    except Expired:
        log_answer(interaction, f"{_command_name(interaction)}:autocomplete", "expired", level=logging.DEBUG)
        raise
    except discord.HTTPException as exc:  # a keystroke's choices are not worth a traceback
        log.debug("ruling autocomplete not delivered: %s", exc)
    return []


def _command_name(interaction: discord.Interaction) -> str:
    return interaction.command.qualified_name if interaction.command is not None else "ruling"


async def _send(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    """The reply: the followup after ``_defer`` (it replaces "thinking..."), else the first response."""
    kwargs.setdefault("allowed_mentions", NONE)
    if interaction.response.is_done():
        await interaction.followup.send(content, **{"ephemeral": True, **kwargs})
    else:
        await interaction.response.send_message(content, **{"ephemeral": True, **kwargs})
BUSY = (
    "Another change to this server's rulings was being saved at the same moment, so nothing was changed. "
    "Please try again."
)
IMPORT_RACED = (
    "Nothing was imported: another judge changed some of these rulings while the file was being imported. "
    "Run the import again: it will build on their change (rulings the file does not change stay as they are)."
)
NO_DM = "Rulings belong to a server: use this command in a server's channel."
NOT_JUDGE = (
    "Only this server's judges can change its rulings: members with the judge role "
    "(`/ruling config judge-role`) or the Manage Server permission."
)
NOT_ADMIN = "Only members with the Manage Server permission can change this server's ruling settings."
NOT_ADMIN_DELETE = "Only members with the Manage Server permission can delete this server's rulings."
NONE = discord.AllowedMentions.none()


class RulingError(app_commands.CheckFailure):
    """Refused, with a reason shown to the user as is (ephemeral; the tree's error handler sends it)."""


@dataclass
class _Form:
    """A form's content, to reopen it after a problem (kept in memory; the attached file survives restarts)."""

    ruling_id: int | None
    version: int | None
    title: str
    text: str
    applies: str
    event: str


class _Drafts:
    """Recent drafts handed back to their judge, by token (a small LRU)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.items: OrderedDict[str, _Form] = OrderedDict()

    def keep(self, form: _Form) -> str:
        token = secrets.token_urlsafe(9)
        self.items[token] = form
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return token

    def get(self, token: str) -> _Form | None:
        return self.items.get(token)


def _service(interaction: discord.Interaction) -> RulingsService:
    service = interaction.client.rulings  # type: ignore[attr-defined]
    if service is None:
        raise RulingError("Rulings are not available in this bot.")
    return service


def _scope(interaction: discord.Interaction) -> str:
    if interaction.guild_id is None:
        raise RulingError(NO_DM)
    return scope_of(interaction.guild_id)


def _author(interaction: discord.Interaction) -> Author:
    user = interaction.user
    return Author(str(user.id), getattr(user, "display_name", None) or user.name)


def _role_ids(member: discord.abc.User) -> set[str]:
    """The member's role ids as Discord sent them with the interaction (no member cache needed)."""
    raw = getattr(member, "_roles", None)
    if raw is not None:
        return {str(r) for r in raw}
    return {str(r.id) for r in getattr(member, "roles", [])}


def is_admin(interaction: discord.Interaction) -> bool:
    perms = interaction.permissions
    return interaction.guild_id is not None and (perms.manage_guild or perms.administrator)


def is_judge(interaction: discord.Interaction, config: ScopeConfig) -> bool:
    if is_admin(interaction):
        return True
    return bool(config.judge_role_id) and config.judge_role_id in _role_ids(interaction.user)


async def _config(interaction: discord.Interaction, timeout: float | None = None) -> ScopeConfig:
    try:
        return await _service(interaction).config(_scope(interaction), timeout)
    except Unavailable as exc:
        raise RulingError(_down(exc)) from None


async def _require_judge(interaction: discord.Interaction, timeout: float | None = None) -> ScopeConfig:
    """The server's settings, if the member is one of its judges (``timeout``: for the read before a form)."""
    config = await _config(interaction, timeout)
    if not is_judge(interaction, config):
        raise RulingError(NOT_JUDGE)
    return config


def _ruling_number(value: str) -> int:
    match = re.fullmatch(r"\s*#?\s*(\d{1,12})\s*", value or "")
    if not match:
        raise RulingError("Pick a ruling from the list (or give its number, e.g. `12`).")
    return int(match[1])


def import_limits(bot: JudgeBot) -> ImportLimits:
    """The bounds of one import, from the bot's settings (RULINGS_IMPORT_MAX_BYTES, RULINGS_IMPORT_MAX_RULINGS)."""
    settings = bot.settings
    return ImportLimits(settings.rulings_import_max_bytes, settings.rulings_import_max_rulings)


def import_description(limits: ImportLimits) -> str:
    """/ruling import's description: the bounds are said up front, where the command is picked."""
    return shorten(f"Add or update rulings from a house-rulings .md file (judges; {limits.describe()})", 100)


@contextlib.contextmanager
def _status_refusals(current: Ruling, doing: str) -> Iterator[None]:
    """Retire/restore errors as a short reply; each means nothing was written."""
    try:
        yield
    except Unavailable as exc:
        raise RulingError(_down(exc)) from None
    except NotFound:
        raise RulingError(f"This server has no ruling #{current.id} any more.") from None
    except Conflict as conflict:
        now = conflict.current
        raise RulingError(
            f"Nothing was changed: ruling #{now.id} changed while you were {doing} it (it is now version "
            f"{now.version}, {'active' if now.active else 'retired'}). Check it with "
            f"`/ruling history ruling:{now.id}`, then run the command again if you still mean it."
        ) from None
    except ConcurrentChange:
        raise RulingError(BUSY) from None


class RulingModal(discord.ui.Modal):
    """The add/edit form; its submission is handled by ``Rulings.on_modal`` from the raw interaction."""

    def __init__(self, custom_id: str, heading: str, form: _Form) -> None:
        super().__init__(title=heading[:45], custom_id=custom_id, timeout=None)
        fields = [
            ("Title", "One line: what the ruling is about", "title", form.title, discord.TextStyle.short,
             markdown.TITLE_MAX, True),
            ("Ruling", "Markdown; quoted exactly as written", "text", form.text, discord.TextStyle.paragraph,
             markdown.TEXT_MAX, True),
            ("Applies to", "Entry names, separated by commas", "applies", form.applies, discord.TextStyle.short,
             400, False),
            ("Event (optional)", "e.g. Kotei 2026", "event", form.event, discord.TextStyle.short,
             markdown.EVENT_MAX, False),
        ]  # fmt: skip
        for label, description, cid, default, style, limit, required in fields:
            text_input: discord.ui.TextInput[Any] = discord.ui.TextInput(
                custom_id=cid, style=style, default=default or None, max_length=limit, required=required
            )
            self.add_item(discord.ui.Label(text=label, description=description, component=text_input))
        self.stop()  # never kept in discord.py's store: submissions come through on_interaction


def modal_values(data: dict[str, Any]) -> dict[str, str]:
    """custom_id -> value from a modal submission (labels or legacy action rows)."""
    values: dict[str, str] = {}

    def walk(components: list[dict[str, Any]]) -> None:
        for comp in components:
            if "component" in comp:
                walk([comp["component"]])
            if comp.get("components"):
                walk(comp["components"])
            if comp.get("custom_id") is not None and "value" in comp:
                values[comp["custom_id"]] = comp.get("value") or ""

    walk(data.get("components") or [])
    return values


class Rulings(commands.Cog):
    ruling = app_commands.Group(
        name="ruling", description="This server's own rulings", guild_only=True
    )
    config = app_commands.Group(name="config", description="Who may record rulings, where changes are logged, "
                                "which formats are played", parent=ruling)  # fmt: skip

    def __init__(self, bot: JudgeBot) -> None:
        self.bot = bot
        self.drafts = _Drafts()
        self._reconciled = False

    # -- loading, and the data's life (bot/rulings/retention.py) --------------------------------------
    async def cog_load(self) -> None:
        if self.bot.rulings is not None:  # the first purge once the servers present are known
            self.bot.rulings.start_purging(self.bot.wait_until_ready)
            self.bot.rulings.on_review = self.post_reviews  # rulings whose rule changed: to the audit channels

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        if self.bot.rulings is not None:
            self.bot.rulings.want(scope_of(guild.id))
            self.bot.rulings.present(scope_of(guild.id))  # cleared in the next poll (one query for all)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        """Invited (again): a server within its grace period gets everything back (nothing was deleted)."""
        if self.bot.rulings is not None:
            self.bot.rulings.want(scope_of(guild.id))
            self.bot.rulings.present(scope_of(guild.id))
            await self.bot.rulings.try_flush_membership()

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Removed from the server (kicked, banned, or the server deleted): its data is marked for deletion
        after the grace period. An outage is not this: Discord then sends GUILD_DELETE with unavailable set,
        which discord.py reports as on_guild_unavailable, and which is deliberately not listened to."""
        if self.bot.rulings is not None:
            self.bot.rulings.left(scope_of(guild.id))
            await self.bot.rulings.try_flush_membership()

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        """A server that removed the bot while no process ran sent no on_guild_remove: mark the servers with
        data on this process's shards that Discord no longer lists (once per process)."""
        if self.bot.rulings is None or self._reconciled:
            return
        self._reconciled = True
        try:
            stored = await self.bot.rulings.unmarked()
        except Unavailable:
            return
        shard_count = self.bot.shard_count or 1
        shards = set(self.bot.shard_ids or range(shard_count))
        listed = {g.id for g in self.bot.guilds}
        for scope in absent_scopes(stored, listed, shards, shard_count):
            self.bot.rulings.left(scope)
        await self.bot.rulings.try_flush_membership()

    # -- autocomplete ------------------------------------------------------------------------------
    async def _pick(self, interaction: discord.Interaction, current: str, *, retired: bool | None):
        return await _offer(interaction, await self._ruling_choices(interaction, current, retired=retired))

    async def _ruling_choices(
        self, interaction: discord.Interaction, current: str, *, retired: bool | None
    ) -> list[app_commands.Choice[str]]:
        """Rulings of this server for a ``ruling`` option: active ones from memory, retired ones from a shared,
        reused read (``RulingsService.pick_list``; none while the database is busy or down). Any member can
        send these, a keystroke each: they never write and never queue on the database."""
        if interaction.guild_id is None or self.bot.rulings is None:
            return []
        scope = scope_of(interaction.guild_id)
        found = await self.bot.rulings.pick_list(scope, include_retired=retired is not False,
                                                 wait=remaining(interaction) - FORM_MARGIN)  # fmt: skip
        if retired:
            found = [r for r in found if not r.active]
        key = (current or "").strip().lstrip("#").lower()
        picked = [r for r in found if not key or key in r.title.lower() or key == str(r.id)]
        return [
            app_commands.Choice(name=shorten(f"#{r.id} {r.title}" + ("" if r.active else " (retired)"), 100),
                                value=str(r.id))
            for r in picked[:25]
        ]  # fmt: skip

    async def pick_active(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await self._pick(interaction, current, retired=False)

    async def pick_any(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await self._pick(interaction, current, retired=None)

    async def pick_retired(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await self._pick(interaction, current, retired=True)

    async def pick_entry(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """Rule entries (not rulings) for "applies to"."""
        from bot.discord_bot.cogs import completer

        choices = await completer("complete")(interaction, current)
        return [c for c in choices if not c.value.startswith("house:#")]

    async def pick_event(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await _offer(interaction, await self._event_choices(interaction, current))

    async def _event_choices(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """Events of the server's active rulings, most recently changed first (from memory, as ``_pick``)."""
        if interaction.guild_id is None or self.bot.rulings is None:
            return []
        found = await self.bot.rulings.pick_list(scope_of(interaction.guild_id), include_retired=False,
                                                 wait=remaining(interaction) - FORM_MARGIN)  # fmt: skip
        events = list(dict.fromkeys(r.event for r in sorted(found, key=lambda r: r.updated_at, reverse=True)
                                    if r.active and r.event))  # fmt: skip
        key = (current or "").lower()
        return [app_commands.Choice(name=e[:100], value=e[:100]) for e in events if key in e.lower()][:25]

    # -- writing: forms ----------------------------------------------------------------------------
    @ruling.command(name="add", description="Record a new ruling for this server (judges)")
    @app_commands.describe(applies_to="The rule it applies to (you can add more in the form)", event="Event name")
    @app_commands.autocomplete(applies_to=pick_entry, event=pick_event)
    async def add(
        self,
        interaction: discord.Interaction,
        applies_to: app_commands.Range[str, 1, 200] | None = None,
        event: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        await _require_judge(interaction, _form_time(interaction))
        service = _service(interaction)
        applies = ""
        if applies_to:
            ids = service.resolver.resolve(applies_to)
            applies = service.resolver.label(ids[0]) if len(ids) == 1 else applies_to
        form = _Form(None, None, "", "", applies, event or "")
        await interaction.response.send_modal(RulingModal(f"{MODAL_PREFIX}a", "New ruling", form))

    @ruling.command(name="edit", description="Change one of this server's rulings (judges)")
    @app_commands.describe(ruling="The ruling to edit")
    @app_commands.autocomplete(ruling=pick_active)
    async def edit(self, interaction: discord.Interaction, ruling: app_commands.Range[str, 1, 120]) -> None:
        await _require_judge(interaction, _form_time(interaction))
        current = await self._get(interaction, _ruling_number(ruling), _form_time(interaction))
        await interaction.response.send_modal(self._edit_modal(current, self._form_of(interaction, current)))

    def _form_of(self, interaction: discord.Interaction, ruling: Ruling) -> _Form:
        service = _service(interaction)
        applies = markdown.applies_line(ruling.applies_to, service.resolver)
        return _Form(ruling.id, ruling.version, ruling.title, ruling.text, applies, ruling.event or "")

    @staticmethod
    def _edit_modal(ruling: Ruling, form: _Form) -> RulingModal:
        return RulingModal(f"{MODAL_PREFIX}e:{ruling.id}:{ruling.version}", f"Edit ruling #{ruling.id}", form)

    async def _get(self, interaction: discord.Interaction, ruling_id: int, timeout: float | None = None) -> Ruling:
        try:
            found = await _service(interaction).get(_scope(interaction), ruling_id, timeout)
        except Unavailable as exc:
            raise RulingError(_down(exc)) from None
        if found is None:
            raise RulingError(f"This server has no ruling #{ruling_id}.")
        return found

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Form submissions and "reopen the form" buttons (not tied to any in-memory view)."""
        data: dict[str, Any] = interaction.data or {}  # type: ignore[assignment]
        custom_id = str(data.get("custom_id") or "")
        try:
            if interaction.type is discord.InteractionType.modal_submit and custom_id.startswith(MODAL_PREFIX):
                await self.on_modal(interaction, custom_id.removeprefix(MODAL_PREFIX), modal_values(data))
            elif interaction.type is discord.InteractionType.component and custom_id.startswith(REOPEN_PREFIX):
                await self.on_reopen(interaction, custom_id.removeprefix(REOPEN_PREFIX))
            elif interaction.type is discord.InteractionType.component and custom_id.startswith(CONFIRM_PREFIX):
                await self.on_confirm_delete(interaction, custom_id.removeprefix(CONFIRM_PREFIX))
            elif interaction.type is discord.InteractionType.component and custom_id.startswith(STANDS_PREFIX):
                await self.on_stands_button(interaction, custom_id.removeprefix(STANDS_PREFIX))
        except RulingError as exc:
            await send_error(interaction, str(exc))
        except Exception:
            log.exception("ruling form %s failed", custom_id)
            await send_error(interaction, "Sorry, something went wrong with that form. The error has been logged.")

    async def on_reopen(self, interaction: discord.Interaction, token: str) -> None:
        form = self.drafts.get(token)
        if form is None:
            raise RulingError("This draft is no longer in memory (the bot restarted); it is in the attached file.")
        await _require_judge(interaction, _form_time(interaction))
        if form.ruling_id is None:
            modal = RulingModal(f"{MODAL_PREFIX}a", "New ruling", form)
        else:
            current = await self._get(interaction, form.ruling_id, _form_time(interaction))
            modal = self._edit_modal(current, form)  # on top of the version that is current now
        await interaction.response.send_modal(modal)

    async def on_modal(self, interaction: discord.Interaction, state: str, values: dict[str, str]) -> None:
        ruling_id = version = None
        if state.startswith("e:"):
            _e, rid, ver = state.split(":")
            ruling_id, version = int(rid), int(ver)
        form = _Form(ruling_id, version, values.get("title", ""), values.get("text", ""),
                     values.get("applies", ""), values.get("event", ""))  # fmt: skip
        try:
            await _defer(interaction)
        except Expired:  # too late to reply at all: nothing is written (Discord keeps the form open with the text)
            log_answer(interaction, "ruling form", "expired")
            return
        try:  # checked again at submission: the role may have gone, and the database may be down now
            config = await _require_judge(interaction)
        except RulingError as refused:
            await self._hand_back(interaction, form, str(refused))
            return
        service = _service(interaction)
        scope = _scope(interaction)
        draft, problems = markdown.check_draft(form.title, form.text, form.event, form.applies, service.resolver)
        if problems:
            await self._hand_back(interaction, form, "Nothing was saved:\n" + present.problems_text(problems))
            return
        author = _author(interaction)
        try:
            if ruling_id is None:
                saved = await service.add(scope, draft, author)
                action = "add"
            else:
                saved = await service.edit(scope, ruling_id, version or 0, draft, author)
                action = "edit"
        except Unavailable as exc:
            await self._hand_back(interaction, form, _down(exc))
            return
        except NotFound:
            await self._hand_back(interaction, form, f"This server has no ruling #{ruling_id} any more.")
            return
        except Conflict as conflict:
            await self._conflict(interaction, form, conflict.current)
            return
        except ConcurrentChange:
            await self._hand_back(interaction, form, BUSY)
            return
        verb = "Saved" if action == "add" else "Updated"
        note = f"{verb} ruling #{saved.id} (version {saved.version}); it is in this server's answers now."
        await self._reply_with_ruling(interaction, note, saved)
        await self._audit(interaction, config, present.audit_line(author.name, action, saved))

    async def _hand_back(self, interaction: discord.Interaction, form: _Form, message: str) -> None:
        """Nothing lost: the draft as a Markdown file, and a button reopening the form with it."""
        token = self.drafts.keep(form)
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label="Reopen the form with my text", custom_id=REOPEN_PREFIX + token,
                                        style=discord.ButtonStyle.primary))  # fmt: skip
        await _send(interaction, shorten(message, 1900) + "\nYour draft is attached.", file=self._draft_file(form),
                    view=view)  # fmt: skip

    def _draft_file(self, form: _Form) -> discord.File:
        text = markdown.ruling_markdown(markdown.clean_line(form.title) or "Untitled", markdown.clean_text(form.text),
                                        event=markdown.clean_line(form.event) or None)  # fmt: skip
        if form.applies.strip():
            text = text.replace("\n\n", f"\nApplies to: {markdown.clean_line(form.applies)}\n\n", 1)
        return discord.File(io.BytesIO(text.encode("utf-8")), filename="my-draft.md")

    async def _conflict(self, interaction: discord.Interaction, form: _Form, current: Ruling) -> None:
        token = self.drafts.keep(form)
        when = current.updated_at.strftime("%Y-%m-%d %H:%M UTC")
        message = (
            f"**Not saved: ruling #{current.id} changed while you were editing it** (now version "
            f"{current.version}, {when}). Your draft is attached and nothing was lost. The current text is "
            "below; to apply your change on top of it, reopen the form."
        )
        view = discord.ui.View(timeout=None)
        button = discord.ui.Button(
            label="Edit the current version with my text",
            custom_id=REOPEN_PREFIX + token,
            style=discord.ButtonStyle.primary,
        )
        view.add_item(button)
        embed = self._ruling_embed(interaction, current)
        await _send(interaction, message, embed=embed, file=self._draft_file(form), view=view)

    def _ruling_embed(self, interaction: discord.Interaction, ruling: Ruling) -> discord.Embed:
        """The ruling as answers show it (the server's overlay is current after a write)."""
        judge = self.bot.judge.scoped(_service(interaction).overlay(_scope(interaction)))
        entry = markdown.ruling_entry(ruling, _service(interaction).resolver)
        return answer_embed(render(judge.composer.entry(entry)))

    async def _reply_with_ruling(self, interaction: discord.Interaction, note: str, ruling: Ruling) -> None:
        await _send(interaction, note, embed=self._ruling_embed(interaction, ruling))

    async def _audit(self, interaction: discord.Interaction, config: ScopeConfig, line: str) -> None:
        if not config.audit_channel_id:
            return
        try:
            channel = self.bot.get_partial_messageable(int(config.audit_channel_id), guild_id=interaction.guild_id)
            await channel.send(line, allowed_mentions=NONE)
        except (discord.HTTPException, ValueError):
            log.warning("could not post to the audit channel %s", config.audit_channel_id, exc_info=True)
            await interaction.followup.send(
                "(The change is saved, but it could not be posted to the audit channel: check the bot's access "
                "to it.)",
                ephemeral=True,
            )

    # -- writing: one-step commands ------------------------------------------------------------------
    @ruling.command(name="retire", description="Hide a ruling from answers; its history is kept (judges)")
    @app_commands.describe(ruling="The ruling to retire", reason="Why (kept in its history)")
    @app_commands.autocomplete(ruling=pick_active)
    async def retire(
        self,
        interaction: discord.Interaction,
        ruling: app_commands.Range[str, 1, 120],
        reason: app_commands.Range[str, 1, 300] | None = None,
    ) -> None:
        ruling_id = _ruling_number(ruling)
        await _defer(interaction)
        config = await _require_judge(interaction)
        current = await self._get(interaction, ruling_id)
        if not current.active:
            raise RulingError(f"Ruling #{current.id} is already retired.")
        with _status_refusals(current, "retiring"):
            saved = await _service(interaction).retire(_scope(interaction), current.id, _author(interaction), reason)
        await _send(
            interaction,
            f"Retired ruling #{saved.id} **{escape(saved.title)}**: answers no longer show it; "
            f"`/ruling history ruling:{saved.id}` keeps every version, and `/ruling restore` brings it back.",
        )
        await self._audit(interaction, config, present.audit_line(_author(interaction).name, "retire", saved, reason))

    @ruling.command(name="restore", description="Bring a retired ruling back into answers (judges)")
    @app_commands.describe(ruling="The retired ruling")
    @app_commands.autocomplete(ruling=pick_retired)
    async def restore(self, interaction: discord.Interaction, ruling: app_commands.Range[str, 1, 120]) -> None:
        ruling_id = _ruling_number(ruling)
        await _defer(interaction)
        config = await _require_judge(interaction)
        current = await self._get(interaction, ruling_id)
        if current.active:
            raise RulingError(f"Ruling #{current.id} is not retired.")
        with _status_refusals(current, "restoring"):
            saved = await _service(interaction).restore(_scope(interaction), current.id, _author(interaction))
        await self._reply_with_ruling(interaction, f"Restored ruling #{saved.id}.", saved)
        await self._audit(interaction, config, present.audit_line(_author(interaction).name, "restore", saved))

    @ruling.command(name="import", description=import_description(ImportLimits()))
    @app_commands.describe(file="A .md file in the house-rulings format (as /ruling export writes)")
    async def import_(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        service = _service(interaction)
        limits = import_limits(self.bot)
        if problem := limits.size_problem(file.size):  # Discord says the size: refused before downloading it
            raise RulingError(f"Nothing was imported: {problem}")
        await _defer(interaction)  # before the database (the judge check reads it), which may take a while
        config = await _require_judge(interaction)
        try:
            data = await file.read()
        except discord.HTTPException:
            await interaction.followup.send("The attached file could not be downloaded; try again.", ephemeral=True)
            return
        # Parsing a big file takes a second or more: in a worker thread, so other commands are answered meanwhile.
        drafts, problems = await asyncio.to_thread(markdown.parse_import, data, file.filename, service.resolver, limits)
        if problems:
            text, report = present.import_problems(file.filename, problems)
            extra: dict[str, Any] = {}
            if report is not None:  # more than one message holds: the first lines, and all of them as a file
                extra["file"] = discord.File(io.BytesIO(report.encode("utf-8")), filename=present.REPORT_FILE)
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=NONE, **extra)
            return
        author = _author(interaction)
        try:
            result = await service.import_drafts(_scope(interaction), drafts, author)
        except Unavailable as exc:
            await interaction.followup.send(_down(exc), ephemeral=True)
            return
        except (Conflict, ConcurrentChange):  # rolled back whole: nothing of the file was written
            await interaction.followup.send(IMPORT_RACED, ephemeral=True)
            return
        await interaction.followup.send(present.import_text(file.filename, result), ephemeral=True,
                                        allowed_mentions=NONE)  # fmt: skip
        if result.added or result.updated:  # one line for the whole file, not one per ruling
            await self._audit(interaction, config, present.audit_import(author.name, file.filename, result))

    # -- rulings whose rule changed (bot/rulings/review.py) ----------------------------------------------
    async def post_reviews(self, flagged: list[Flagged]) -> None:
        """The rulings this process flagged after a reload or a start: one post each in its server's audit
        channel (the database made sure no other process posts it), with the rule before and after and a
        "Still stands" button. A server without an audit channel sees the flag in ``/ruling list`` only."""
        name_of = self._name_of(None)
        for item in flagged:
            ruling = item.ruling
            try:
                config = await self.bot.rulings.config(ruling.scope)  # type: ignore[union-attr]
            except Unavailable:
                log.warning("ruling %s needs review, but its server's settings could not be read", ruling.id)
                continue
            if not config.audit_channel_id:
                continue
            text, attachment = present.review_post(item, name_of)
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Button(label="Still stands", style=discord.ButtonStyle.primary,
                                            custom_id=f"{STANDS_PREFIX}{ruling.id}"))  # fmt: skip
            extra: dict[str, Any] = {}
            if attachment is not None:
                name = present.REVIEW_FILE.format(id=ruling.id)
                extra["file"] = discord.File(io.BytesIO(attachment.encode("utf-8")), filename=name)
            guild_id = int(ruling.scope.partition(":")[2]) if ruling.scope.startswith("guild:") else None
            try:
                channel = self.bot.get_partial_messageable(int(config.audit_channel_id), guild_id=guild_id)
                await channel.send(text, view=view, allowed_mentions=NONE, **extra)
            except (discord.HTTPException, ValueError):
                log.warning("could not post ruling %s's review to the audit channel %s", ruling.id,
                            config.audit_channel_id, exc_info=True)  # fmt: skip

    @ruling.command(name="stands", description="A ruling flagged after its rule changed still stands (judges)")
    @app_commands.describe(ruling="The flagged ruling (see /ruling list needs_review:True)")
    @app_commands.autocomplete(ruling=pick_active)
    async def stands(self, interaction: discord.Interaction, ruling: app_commands.Range[str, 1, 120]) -> None:
        number = _ruling_number(ruling)
        await _defer(interaction)  # before the database, which may take a while
        config = await _require_judge(interaction)
        saved = await self._stands(interaction, number)
        await interaction.followup.send(self._stood_text(saved), ephemeral=True, allowed_mentions=NONE)
        await self._audit(interaction, config, present.stands_line(_author(interaction).name, saved))

    async def on_stands_button(self, interaction: discord.Interaction, state: str) -> None:
        """"Still stands" on an audit post: checked as the command is (a judge of that server), then the post
        says who confirmed it and loses its button."""
        if not state.isdigit():
            return
        await interaction.response.defer()  # the database may take a while: the post is edited after it
        await _require_judge(interaction)
        saved = await self._stands(interaction, int(state))
        line = present.stands_line(_author(interaction).name, saved)
        original = interaction.message.content if interaction.message is not None else ""
        await interaction.edit_original_response(content=shorten(f"{original}\n\n✅ {line}", 2000), view=None,
                                                 allowed_mentions=NONE)  # fmt: skip

    async def _stands(self, interaction: discord.Interaction, ruling_id: int) -> Ruling:
        try:
            return await _service(interaction).stands(_scope(interaction), ruling_id, _author(interaction))
        except Unavailable as exc:
            raise RulingError(_down(exc)) from None
        except NotFound:
            raise RulingError(f"This server has no ruling #{ruling_id}.") from None
        except NotFlagged as exc:
            raise RulingError(f"Ruling #{ruling_id} needs no review (it was edited or confirmed already, or its "
                              f"rule reads as when it was made). It is at version {exc.current.version}.") from None
        except (Conflict, ConcurrentChange):
            raise RulingError(BUSY) from None

    @staticmethod
    def _stood_text(ruling: Ruling) -> str:
        return (f"Ruling #{ruling.id} **{escape(ruling.title)}** still stands: it is recorded against the rule as "
                f"it reads now (version {ruling.version}), and answers no longer say it was made before the change.")

    # -- reading -------------------------------------------------------------------------------------
    def _name_of(self, interaction: discord.Interaction):  # type: ignore[no-untyped-def]
        engine = self.bot.judge.engine
        return lambda entry_id: (engine.get(entry_id).title if engine.get(entry_id) else entry_id)

    @ruling.command(name="list", description="This server's rulings (optionally for one event)")
    @app_commands.describe(event="Only rulings made for this event", private="Only you see the list",
                           needs_review="Only rulings whose rule changed since (judges clear them)")
    @app_commands.autocomplete(event=pick_event)
    async def list_(
        self,
        interaction: discord.Interaction,
        event: app_commands.Range[str, 1, 100] | None = None,
        private: bool = False,
        needs_review: bool = False,
    ) -> None:
        _service(interaction), _scope(interaction)  # refusals (no rulings here, a direct message) come first
        await _defer(interaction, ephemeral=private)
        try:
            found = await _service(interaction).list(_scope(interaction), event=event)
            if needs_review:
                found = [r for r in found if r.review_since]
        except Unavailable:
            raise RulingError(DOWN.replace("so nothing was changed", "so the list cannot be read")) from None
        title = "This server's rulings" + (f" — {escape(event)}" if event else "")
        embed = discord.Embed(title=shorten(title, 256), colour=NEUTRAL_COLOUR,
                              description=present.list_text(found, self._name_of(interaction), event,
                                                                flagged=needs_review))  # fmt: skip
        embed.set_footer(text=f"{len(found)} ruling{'s' if len(found) != 1 else ''} · /ruling history for versions")
        await _send(interaction, embed=embed, ephemeral=private)

    @ruling.command(name="history", description="Every version of one of this server's rulings")
    @app_commands.describe(ruling="The ruling", private="Only you see it")
    @app_commands.autocomplete(ruling=pick_any)
    async def history(
        self, interaction: discord.Interaction, ruling: app_commands.Range[str, 1, 120], private: bool = False
    ) -> None:
        ruling_id = _ruling_number(ruling)
        _service(interaction), _scope(interaction)
        await _defer(interaction, ephemeral=private)
        try:
            versions = await _service(interaction).history(_scope(interaction), ruling_id)
        except NotFound:
            raise RulingError(f"This server has no ruling #{ruling_id}.") from None
        except Unavailable:
            raise RulingError(DOWN.replace("so nothing was changed", "so the history cannot be read")) from None
        latest = versions[-1]
        title = f"History of ruling #{ruling_id}: {escape(latest.title)}"
        embed = discord.Embed(title=shorten(title, 256), description=present.history_text(versions),
                              colour=NEUTRAL_COLOUR)  # fmt: skip
        status = "retired (hidden from answers)" if latest.status != "active" else "active"
        embed.set_footer(text=f"{len(versions)} version{'s' if len(versions) != 1 else ''} · now {status}")
        await _send(interaction, embed=embed, ephemeral=private)

    @ruling.command(name="export", description="This server's rulings as a house-rulings Markdown file")
    async def export(self, interaction: discord.Interaction) -> None:
        service = _service(interaction)
        _scope(interaction)
        await _defer(interaction)
        try:
            found = await service.list(_scope(interaction))
        except Unavailable:
            raise RulingError(DOWN.replace("so nothing was changed", "so nothing can be exported")) from None
        guild = interaction.guild.name if interaction.guild and interaction.guild.name else "Server"
        text = markdown.export_markdown(found, service.resolver, f"{guild} rulings")
        name = f"rulings-{slugify(guild)[:40]}.md"
        await _send(
            interaction,
            f"{len(found)} ruling{'s' if len(found) != 1 else ''} in the house-rulings format "
            "(`/ruling import` reads it back; so does L5R_HOUSE_RULINGS).",
            file=discord.File(io.BytesIO(text.encode("utf-8")), filename=name),
        )

    # -- deleting everything (with a confirmation) -------------------------------------------------------
    @ruling.command(name="delete-all", description="Delete all of this server's rulings, history and settings (admins)")
    async def delete_all(self, interaction: discord.Interaction) -> None:
        if not is_admin(interaction):
            raise RulingError(NOT_ADMIN_DELETE)
        await _defer(interaction)
        try:
            stored = await _service(interaction).stored(_scope(interaction))
        except Unavailable as exc:
            raise RulingError(_down(exc)) from None
        if stored.empty:
            await _send(interaction, present.NOTHING_STORED)
            return
        expires = int(time.time()) + CONFIRM_SECONDS
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label="Delete everything", style=discord.ButtonStyle.danger,
                                        custom_id=f"{CONFIRM_PREFIX}yes:{expires}"))  # fmt: skip
        view.add_item(discord.ui.Button(label="Cancel", style=discord.ButtonStyle.secondary,
                                        custom_id=f"{CONFIRM_PREFIX}no:{expires}"))  # fmt: skip
        await _send(interaction, present.delete_prompt(stored, CONFIRM_SECONDS // 60), view=view)

    async def on_confirm_delete(self, interaction: discord.Interaction, state: str) -> None:
        """A click on the confirmation: checked again (still an admin, not expired), then everything goes."""
        choice, _, expires = state.partition(":")
        if choice != "yes":
            await interaction.response.edit_message(content="Cancelled: nothing was deleted.", view=None)
            return
        if not expires.isdigit() or int(expires) < time.time():
            await interaction.response.edit_message(content=present.CONFIRM_EXPIRED, view=None)
            return
        if not is_admin(interaction):
            raise RulingError(NOT_ADMIN_DELETE)
        service, scope = _service(interaction), _scope(interaction)
        try:
            await _defer(interaction, update=True)
        except Expired:  # too late to reply at all: nothing is deleted (the buttons stay, for another click)
            log_answer(interaction, "ruling delete-all", "expired")
            return
        try:
            config = await service.config(scope)  # read first: the audit channel is deleted with the rest
            deleted = await service.delete_all(scope)
        except Unavailable as exc:
            await interaction.edit_original_response(content=_down(exc), view=None)
            return
        await interaction.edit_original_response(content=present.deleted_text(deleted), view=None)
        log.info("deleted all rulings of a server at its admin's request (%d rulings)", deleted.rulings)
        who = escape(_author(interaction).name)
        await self._audit(interaction, config, f"{who} deleted all of this server's rulings ({deleted.rulings}).")

    # -- settings ------------------------------------------------------------------------------------
    async def _set(self, interaction: discord.Interaction, **values: str | None) -> ScopeConfig:
        if not is_admin(interaction):
            raise RulingError(NOT_ADMIN)
        _service(interaction), _scope(interaction)
        await _defer(interaction)
        try:
            return await _service(interaction).set_config(_scope(interaction), _author(interaction), **values)
        except Unavailable as exc:
            raise RulingError(_down(exc)) from None

    @config.command(name="judge-role", description="The role whose members may record rulings (admins)")
    @app_commands.describe(role="Members with this role are judges; leave empty for Manage Server only")
    async def judge_role(self, interaction: discord.Interaction, role: discord.Role | None = None) -> None:
        await self._set(interaction, judge_role_id=str(role.id) if role else None)
        text = (
            f"Judges are now members with the role **{escape(role.name)}** (and anyone with Manage Server)."
            if role
            else "No judge role: only members with Manage Server can record rulings."
        )
        await _send(interaction, text)

    @config.command(name="audit-channel", description="A channel that gets a line for every ruling change (admins)")
    @app_commands.describe(channel="Where to log changes; leave empty to stop logging")
    async def audit_channel(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        await self._set(interaction, audit_channel_id=str(channel.id) if channel else None)
        text = f"Ruling changes will be logged in <#{channel.id}>." if channel else "Ruling changes are not logged."
        await _send(interaction, text)

    # -- the formats the server plays (bot/app/formats.py) ---------------------------------------------
    async def pick_formats(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        """The loaded formats (and ``all``, ``none``), the parts typed before the last comma kept."""
        known = loaded(self.bot.judge.engine.corpus)
        return [app_commands.Choice(name=shorten(name, 100), value=value[:100])
                for name, value in complete(current, known)]  # fmt: skip

    @config.command(name="formats", description="The formats this server plays; answers leave the others out (admins)")
    @app_commands.describe(formats="none, all (default: every format), or formats separated by commas; empty: "
                           "show the choice")  # Discord's limit: 100 characters
    @app_commands.autocomplete(formats=pick_formats)
    async def formats(self, interaction: discord.Interaction, formats: str | None = None) -> None:
        service, scope = _service(interaction), _scope(interaction)
        known = loaded(self.bot.judge.engine.corpus)
        if formats is None:  # anyone may see what the server plays
            await _defer(interaction)
            await _send(interaction, describe((await _config(interaction)).formats, known))
            return
        if not is_admin(interaction):
            raise RulingError(NOT_ADMIN)
        try:
            chosen = parse_choice(formats, known)
        except FormatChoiceError as exc:
            raise RulingError(str(exc)) from None
        await _defer(interaction)
        try:
            config = await service.set_formats(scope, _author(interaction), chosen)
        except Unavailable as exc:
            raise RulingError(_down(exc)) from None
        except ConcurrentChange:
            raise RulingError(BUSY) from None
        said = describe(config.formats, known)
        await _send(interaction, f"Saved. {said}")
        await self._audit(interaction, config, f"{escape(_author(interaction).name)} set the formats: {said}")


def absent_scopes(stored: list[str], listed: set[int], shards: set[int], shard_count: int) -> list[str]:
    """The scopes with data whose server is on one of ``shards`` but not among the ``listed`` guilds (READY
    lists every server the bot is in, unavailable ones included): servers that removed the bot meanwhile."""
    absent = []
    for scope in stored:
        kind, _, raw = scope.partition(":")
        if kind != "guild" or not raw.isdigit():
            continue
        guild_id = int(raw)
        if (guild_id >> 22) % shard_count in shards and guild_id not in listed:
            absent.append(scope)
    return absent


async def setup(bot: commands.Bot) -> None:
    cog = Rulings(bot)  # type: ignore[arg-type]
    cog.import_.description = import_description(import_limits(cog.bot))  # this bot's bounds, not the defaults
    await bot.add_cog(cog)

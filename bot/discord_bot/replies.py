"""Answers as Discord messages: embeds, buttons, and the reply helpers every command uses.

Buttons are ``DynamicItem``s whose whole state is in the custom id (``l5r:open:<entry id>``,
``l5r:page:<kind>:<arg>:<n>``, ``l5r:post:<kind>:<arg>:<n>``), so they work after a restart
and on any shard or process: a click rebuilds the answer from ``(kind, arg)``. An ``/ask`` answer in a server
also has "Not the answer?" (``l5r:na:<question>``, handled by ``bot.discord_bot.cogs.feedback``).

Every reply respects Discord's window, counted from the interaction's creation (``bot.discord_bot.admission``):
the first response is bounded by what is left of it, later ones by ``REST_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.app.answer import Answer
from bot.app.commands import ASK, ENTRY, RULE
from bot.app.dated import split_as_of  # a report is about the question, not the day it was asked as of
from bot.app.judge import Judge, UserError
from bot.app.renderers import discord_markdown as render
from bot.app.renderers.discord_markdown import Message
from bot.discord_bot.admission import BUSY, DEFER_AT, EXPIRE_AT, REST_TIMEOUT, Busy, Expired, age, remaining, slow_down
from bot.discord_bot.logs import log_answer, note_first_response

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot

log = logging.getLogger("bot.discord_bot.replies")

CUSTOM_ID_LIMIT = 100
EXPIRED = "This button has expired (the bot restarted since it was made). Please run the command again."


# -- custom-id state ------------------------------------------------------------------------------


class ArgStore:
    """Long arguments (a long question) don't fit a custom id; keep them under a short hash.

    Entry ids are resolved from the corpus instead (restart-proof); other arguments live in this
    small LRU and a click after a restart gets a clear "expired" message.
    """

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self.items: OrderedDict[str, str] = OrderedDict()
        self._corpus: object = None  # the corpus ``_entry_digests`` was computed for (a reload replaces it)
        self._entry_digests: dict[str, str] = {}

    @staticmethod
    def digest(text: str) -> str:
        return "#" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]

    def encode(self, arg: str, room: int) -> str:
        if len(arg) <= room and not arg.startswith("#"):
            return arg
        token = self.digest(arg)
        self.items[token] = arg
        self.items.move_to_end(token)
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return token

    def decode(self, token: str, judge: Judge | None = None) -> str | None:
        if not token.startswith("#"):
            return token
        if token in self.items:
            return self.items[token]
        if judge is None:
            return None
        corpus = judge.engine.corpus  # a long entry id: find it in the corpus by its hash
        if corpus is not self._corpus:
            self._entry_digests = {self.digest(e.id): e.id for e in corpus.entries}
            self._corpus = corpus
        return self._entry_digests.get(token)


ARGS = ArgStore()
_OPEN_ROOM = CUSTOM_ID_LIMIT - len("l5r:open:")
_PAGE_ROOM = CUSTOM_ID_LIMIT - len("l5r:page:x:") - len(":999")


REPORT_PREFIX = "l5r:na:"  # "Not the answer?" under an /ask answer in a server: l5r:na:<question>
_REPORT_ROOM = CUSTOM_ID_LIMIT - len(REPORT_PREFIX)


def report_id(question: str) -> str:
    return REPORT_PREFIX + ARGS.encode(question, _REPORT_ROOM)


def open_id(entry_id: str) -> str:
    return "l5r:open:" + ARGS.encode(entry_id, _OPEN_ROOM)


def page_id(action: str, kind: str, arg: str, n: int) -> str:
    return f"l5r:{action}:{kind}:{ARGS.encode(arg, _PAGE_ROOM)}:{n}"


# -- embeds and views -----------------------------------------------------------------------------


def answer_embed(answer: Message, n: int = 0) -> discord.Embed:
    page = answer.page(n)
    embed = discord.Embed(
        title=answer.title, description=page.description or None, url=answer.url, colour=answer.colour
    )
    for f in page.fields:
        embed.add_field(name=f.name, value=f.value, inline=f.inline)
    if page.footer:
        embed.set_footer(text=page.footer)
    return embed


def answer_view(answer: Message, n: int = 0, *, private: bool = False, report: bool = False) -> discord.ui.View | None:
    """Buttons: the page's entry links (rows 0-3), then paging, "Post in channel" and, with ``report`` (a server's
    ``/ask`` answer that quotes something), "Not the answer?" (row 4)."""
    page_no = answer.page_number(n)
    page = answer.page(page_no)
    view = discord.ui.View(timeout=None)  # never times out: a timeout would unregister dynamic items
    for i, link in enumerate(page.links[: render.MAX_LINKS]):
        view.add_item(OpenButton(link.entry_id, link.label, row=i // 5))
    if len(answer.pages) > 1:
        view.add_item(PageButton(answer.kind, answer.arg, max(page_no - 1, 0), "◀ Previous", page_no == 0))
        last = len(answer.pages) - 1
        view.add_item(PageButton(answer.kind, answer.arg, min(page_no + 1, last), "Next ▶", page_no == last))
    if private:
        view.add_item(PostButton(answer.kind, answer.arg, page_no))
    if report and answer.kind == ASK and answer.hit_ids:
        view.add_item(discord.ui.Button(label="Not the answer?", style=discord.ButtonStyle.secondary,
                                        custom_id=report_id(split_as_of(answer.arg)[0]), row=4))  # fmt: skip
    return view if view.children else None


class RestTimeout(Expired):
    """A first response got no answer from the REST base before Discord's window closed."""


async def first_response(
    interaction: discord.Interaction, call: Callable[[], Awaitable[object]], *, deferred: bool = False
) -> None:
    """Send the interaction's first response (``call()``, made when its turn comes in the bot's
    ``Responder``), waiting no longer than Discord would still take it. Not sent at all when the
    window has closed by then (``Expired``); Discord's "Unknown interaction" is ``Expired`` too."""
    bot: JudgeBot = interaction.client  # type: ignore[assignment]
    try:
        await bot.responder.send(interaction, call, first=True, timeout=max(0.1, remaining(interaction) + 0.5))
    except TimeoutError:
        raise RestTimeout from None
    except discord.NotFound as exc:
        if exc.code == 10062:  # Unknown interaction: too late after all; don't try again
            raise Expired from None
        raise
    note_first_response(interaction, deferred)


async def later_response(interaction: discord.Interaction, call: Callable[[], Awaitable[object]]) -> None:
    """A followup or an edit after the first response (the interaction's token lasts 15 minutes)."""
    bot: JudgeBot = interaction.client  # type: ignore[assignment]
    await bot.responder.send(interaction, call, first=False, timeout=REST_TIMEOUT)


async def send_answer(
    interaction: discord.Interaction, answer: Message, *, private: bool, page: int = 0, edit: bool = False
) -> None:
    """Reply, follow up (after a defer) or edit in place; records hit ids for the answer's log line.

    ``edit`` replaces the clicked message: directly, or through the original response once the
    click was deferred because the lookup was slow.
    """
    interaction.extras["hits"] = answer.hit_ids
    embed = answer_embed(answer, page)
    # "Not the answer?" only in a server (its judges review the reports; nothing is taken from direct messages)
    report = interaction.guild_id is not None and getattr(interaction.client, "rulings", None) is not None
    view = answer_view(answer, page, private=private, report=report)
    kwargs: dict[str, Any] = {"embed": embed}
    if view is not None:
        kwargs["view"] = view
    if edit and interaction.response.is_done():
        await later_response(interaction, lambda: interaction.edit_original_response(embed=embed, view=view))
    elif edit:
        await first_response(interaction, lambda: interaction.response.edit_message(embed=embed, view=view))
    elif interaction.response.is_done():
        await later_response(interaction, lambda: interaction.followup.send(**kwargs, ephemeral=private))
    else:
        await first_response(interaction, lambda: interaction.response.send_message(**kwargs, ephemeral=private))


async def send_error(interaction: discord.Interaction, message: str) -> None:
    """A short ephemeral message; never raises (the interaction may have expired, the REST base may hang)."""
    try:
        if interaction.response.is_done():
            await later_response(interaction, lambda: interaction.followup.send(message, ephemeral=True))
        else:
            await first_response(interaction, lambda: interaction.response.send_message(message, ephemeral=True))
    except (discord.HTTPException, TimeoutError, Expired):
        log.warning("could not deliver error message to interaction %s", interaction.id, exc_info=True)


async def run_judge(
    interaction: discord.Interaction, make: Callable[[Judge], Answer], *, private: bool, thinking: bool = True
) -> Message:
    """Run a lookup on the worker pool; defer only when the answer may be late, so fast answers cost
    one request.

    The answer may be late when it is not ready ``DEFER_AT`` after the interaction's creation, or
    when the queue ahead of it would take longer than that (then the defer goes out at once).
    ``thinking=False`` (paging) defers as "update the message" instead of "bot is thinking".
    Raises ``Busy`` when the queue is full and ``Expired`` when no response can arrive in time.
    """
    bot: JudgeBot = interaction.client  # type: ignore[assignment]
    lookups = bot.lookups
    if lookups.saturated():
        raise Busy
    wait = DEFER_AT - age(interaction)
    if lookups.expected_seconds() > wait or bot.backlogged():
        wait = 0.0  # it would be late (a queue, or a burst to acknowledge): defer now, answer in turn

    def wanted() -> bool:  # asked by the worker before it starts: skip work nobody can receive
        return interaction.response.is_done() or age(interaction) < EXPIRE_AT

    judge = await bot.judge_for(interaction)  # with the asking server's own rulings, if any
    # Composed and rendered on the worker: the event loop only sends.
    # queued (or refused as busy) before any defer: a busy reply then goes to the asker alone, never after a
    # public "thinking" message
    job = lookups.submit(lambda: render.render(judge.run(make)), wanted)
    try:
        if wait > 0:
            await asyncio.wait({job}, timeout=wait)
        if not job.done() and not interaction.response.is_done():
            if age(interaction) >= EXPIRE_AT:
                raise Expired
            await first_response(
                interaction, lambda: interaction.response.defer(ephemeral=private, thinking=thinking), deferred=True
            )
        return await job
    finally:
        if not job.done():
            job.cancel()
        elif not job.cancelled():
            job.exception()  # seen: a lookup refused (Busy) after this reply gave up is no "never retrieved" error


async def outcome_of(interaction: discord.Interaction, reply: Awaitable[None]) -> str:
    """Await ``reply`` and name its outcome for the answer's log line: bad input gets a short
    ephemeral note, a full queue the busy reply, a closed window nothing; other errors propagate."""
    try:
        await reply
    except UserError as exc:
        await send_error(interaction, render.escape(str(exc)))
        return "user_error"
    except Busy:
        await send_error(interaction, BUSY)
        return "busy"
    except RestTimeout:
        return "timeout"
    except Expired:
        return "expired"
    return "ok"


async def answer(interaction: discord.Interaction, make: Callable[[Judge], Answer], *, private: bool) -> None:
    """The whole life of a lookup command: compute, then reply (see ``outcome_of``)."""

    async def reply() -> None:
        result = await run_judge(interaction, make, private=private)
        await send_answer(interaction, result, private=private)

    interaction.extras["outcome"] = await outcome_of(interaction, reply())


def choices(pairs: list[tuple[str, str]]) -> list[app_commands.Choice[str]]:
    """Autocomplete choices within Discord's limits (25, names and values of at most 100 characters)."""
    out = []
    for name, value in pairs[:25]:
        if value.startswith("house:"):  # tell a server's own ruling apart from the official rules
            name = f"{name} (house ruling)"
        label = render.shorten(" ".join(name.split()), render.CHOICE_LIMIT) or value[:100]
        out.append(app_commands.Choice(name=label, value=value if len(value) <= 100 else label))
    return out


# -- buttons --------------------------------------------------------------------------------------


class _Button(discord.ui.DynamicItem[discord.ui.Button], template=r"l5r:base:(?P<x>.*)"):
    """Shared click handling: the deadline, the per-user rate limit, errors turned into short
    ephemeral notes, and the click's one log line (its action, never its custom id: that can hold
    the user's question)."""

    action = "base"

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        interaction.extras.setdefault("received", time.perf_counter())
        name = f"button:{self.action}"
        if age(interaction) >= EXPIRE_AT:
            log_answer(interaction, name, "expired")
            return
        bot: JudgeBot = interaction.client  # type: ignore[assignment]
        retry_after = bot.button_cooldowns.retry_after(interaction.user.id)
        if retry_after is not None:
            await send_error(interaction, slow_down(retry_after))
            log_answer(interaction, name, "cooldown")
            return
        try:
            outcome = await outcome_of(interaction, self.handle(interaction))
        except Exception:
            outcome = "error"
            log.exception("button %s failed", self.action)
            await send_error(interaction, "Sorry, something went wrong with that button. It has been logged.")
        log_answer(interaction, name, outcome)

    async def handle(self, interaction: discord.Interaction) -> None:
        raise NotImplementedError


def _is_private(interaction: discord.Interaction) -> bool:
    return bool(interaction.message and interaction.message.flags.ephemeral)


class OpenButton(_Button, template=r"l5r:open:(?P<ref>.+)"):
    """Opens an entry in full, privately, with a "Post in channel" button (no clutter for others)."""

    action = "open"

    def __init__(self, entry_id: str, label: str = "Open", row: int | None = None) -> None:
        super().__init__(
            discord.ui.Button(
                label=label[:80], style=discord.ButtonStyle.secondary, custom_id=open_id(entry_id), row=row
            )
        )
        self.entry_id = entry_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> OpenButton:
        bot: JudgeBot = interaction.client  # type: ignore[assignment]
        entry_id = ARGS.decode(match["ref"], bot.judge) or ""
        return cls(entry_id or match["ref"], item.label or "Open", row=item.row)

    async def handle(self, interaction: discord.Interaction) -> None:
        if self.entry_id.startswith("#"):
            raise UserError(EXPIRED)
        result = await run_judge(interaction, lambda judge: judge.open(self.entry_id), private=True)
        await send_answer(interaction, result, private=True)


class _StateButton(_Button, template=r"l5r:state:(?P<x>.*)"):
    """A button that rebuilds an answer from ``(kind, arg)`` and shows page ``n`` of it."""

    action = "state"
    expired = False  # set when a hashed argument is unknown here (made before a restart)

    def __init__(
        self,
        kind: str,
        arg: str,
        n: int,
        label: str,
        disabled: bool = False,
        style: discord.ButtonStyle = discord.ButtonStyle.primary,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                style=style,
                disabled=disabled,
                row=4,
                custom_id=page_id(self.action, kind, arg, n),
            )
        )
        self.kind, self.arg, self.n = kind, arg, n

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> _StateButton:
        bot: JudgeBot = interaction.client  # type: ignore[assignment]
        arg = ARGS.decode(match["arg"], bot.judge if match["kind"] in (ENTRY, RULE) else None)
        button = cls(match["kind"], arg if arg is not None else match["arg"], int(match["n"]), item.label or "")
        button.expired = arg is None
        return button

    def rebuild(self) -> Callable[[Judge], Answer]:
        if self.expired:
            raise UserError(EXPIRED)
        kind, arg = self.kind, self.arg
        return lambda judge: judge.rebuild(kind, arg)


class PageButton(_StateButton, template=r"l5r:page:(?P<kind>[a-z]):(?P<arg>.*):(?P<n>\d{1,3})"):
    """Previous/next page: edits the message in place."""

    action = "page"

    async def handle(self, interaction: discord.Interaction) -> None:
        private = _is_private(interaction)
        result = await run_judge(interaction, self.rebuild(), private=private, thinking=False)
        await send_answer(interaction, result, private=private, page=self.n, edit=True)


class PostButton(_StateButton, template=r"l5r:post:(?P<kind>[a-z]):(?P<arg>.*):(?P<n>\d{1,3})"):
    """Posts a private answer publicly in the channel (as this interaction's response)."""

    action = "post"

    def __init__(self, kind: str, arg: str, n: int, label: str = "") -> None:
        super().__init__(kind, arg, n, label or "Post in channel", style=discord.ButtonStyle.success)

    async def handle(self, interaction: discord.Interaction) -> None:
        result = await run_judge(interaction, self.rebuild(), private=False)
        await send_answer(interaction, result, private=False, page=self.n)


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (OpenButton, PageButton, PostButton)

__all__ = [
    "ARGS",
    "DYNAMIC_ITEMS",
    "OpenButton",
    "PageButton",
    "PostButton",
    "answer",
    "answer_embed",
    "answer_view",
    "choices",
    "send_answer",
    "send_error",
]

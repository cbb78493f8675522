"""Posting digests of source changes to subscribed channels (``/changes subscribe``).

At start and after every reload (its own ``/reload`` or one another process announced), the bot offers the
sources it now serves to the database (``bot.rulings.digests``); when they changed since the last digest, exactly
one process moves the database's head and so owns the new digest, and every process then sends the deliveries it
manages to claim (each is claimed once). A digest is one message: its first page, with page buttons
(``l5r:dg:<digest>:<page>``) when it is long; a click reads the two kept versions from the database, so the
buttons work in any process and after a restart.

A server that chose its formats (``/ruling config formats``) gets only the changes of the formats it plays, with
one line naming the others; when nothing is left for it, nothing is posted (the delivery is "skipped").

A channel the bot can no longer post in (Discord answers 403 or 404) is logged, told to the server's audit
channel and its subscription marked failed: never tried again until an admin subscribes it again. Other
failures (Discord down, a timeout) are retried by a slow loop, a bounded number of times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import discord

from bot.app.digest import digest, played
from bot.app.renderers import discord_markdown as render
from bot.app.renderers.discord_markdown import Message
from bot.discord_bot.replies import answer_embed
from bot.rulings.digests import Delivery, DigestStore, compare, pack
from bot.rulings.retention import guild_scope
from bot.rulings.service import Unavailable
from glossary.diff import SourceDiff, diff

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot

log = logging.getLogger("bot.digests")

RETRY_SECONDS = 60.0  # how often pending deliveries are looked for (a failed try, or a process that died)
PREFIX = "l5r:dg:"
NONE = discord.AllowedMentions.none()
GONE = "This digest is no longer kept (only the latest ones are). `/changes list` lists the dated changes."


class DigestPoster:
    """One per bot process: checks the sources (``check``), sends what it claims (``deliver``)."""

    def __init__(self, bot: JudgeBot) -> None:
        self.bot = bot
        self._found: OrderedDict[int, SourceDiff | None] = OrderedDict()  # digest id -> its facts (None: gone)
        self._messages: dict[tuple[int, frozenset[str] | None], Message] = {}  # (digest, formats played) -> pages
        self._lock = asyncio.Lock()  # one check or delivery round at a time in this process
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.Task[None] | None = None

    def store(self) -> DigestStore:
        rulings = self.bot.rulings
        if rulings is None or rulings.db is None:
            raise Unavailable("no rulings database")
        return DigestStore(rulings.db)

    async def read(self, fetch: Any) -> Any:
        """A database call through the rulings service (migrated first; an outage raises ``Unavailable``)."""
        rulings = self.bot.rulings
        if rulings is None:
            raise Unavailable("no rulings database")
        return await rulings.read(lambda _repo: fetch(self.store()))

    # -- when ----------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """At start: check the sources now, then look for pending deliveries every ``RETRY_SECONDS``."""
        self.soon("start")
        if self._loop is None:
            self._loop = asyncio.create_task(self._retry_loop(), name="digest-retry")

    def soon(self, why: str) -> None:
        """Check the sources in the background (after a reload: the reply to /reload does not wait for it)."""
        task = asyncio.create_task(self.check(why), name=f"digest-check-{why}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in [*self._tasks, *([self._loop] if self._loop else [])]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._loop = None

    async def _retry_loop(self) -> None:
        while True:
            await asyncio.sleep(RETRY_SECONDS)
            try:
                await self.deliver()
            except Unavailable:
                pass  # the rulings service logs the outage
            except Exception:
                log.exception("sending pending digests failed")

    # -- what ----------------------------------------------------------------------------------------------------
    async def check(self, why: str) -> None:
        """Offer the sources served now; send the digest if this process moved the head."""
        try:
            async with self._lock:
                entries = list(self.bot.judge.engine.corpus.entries)
                fp, data = await asyncio.to_thread(pack, entries)
                moved = await self.read(lambda store: store.offer(fp, data, compare, run=asyncio.to_thread))
            if moved is not None:
                log.info("sources checked (%s): changed since the last digest; digest %d (%s) for %d channel(s)",
                         why, moved.digest_id, moved.summary, moved.deliveries)  # fmt: skip
            else:
                log.info("sources checked (%s): no digest to send from here (unchanged, or another process sends "
                         "it)", why)  # fmt: skip
            await self.deliver()
        except Unavailable:
            log.warning("could not check the sources for a digest (%s): the rulings database is unreachable", why)
        except Exception:
            log.exception("checking the sources for a digest failed (%s)", why)

    async def deliver(self) -> int:
        """Send every delivery this process can claim; returns how many were sent."""
        sent = 0
        async with self._lock:
            claimed: list[Delivery] = await self.read(lambda store: store.claim())
            for delivery in claimed:
                try:
                    sent += await self._send(delivery)
                except Exception as exc:  # before posting (the database went away): put it back for a later try
                    said = f"{type(exc).__name__}: {exc}"
                    log.warning("digest %d for channel %s not sent (%s); will try again", delivery.digest_id,
                                delivery.channel_id, said)  # fmt: skip
                    with contextlib.suppress(Exception):
                        await self.read(lambda store, d=delivery, s=said: store.failed(d, s, for_good=False))
        return sent

    async def found(self, digest_id: int) -> SourceDiff | None:
        """The digest's facts (kept for the latest few), or None when its versions are no longer kept."""
        if digest_id in self._found:
            self._found.move_to_end(digest_id)
            return self._found[digest_id]
        kept = await self.read(lambda store: store.entries_of(digest_id))
        made = await asyncio.to_thread(diff, *kept) if kept is not None else None
        self._found[digest_id] = made
        while len(self._found) > 8:
            gone, _ = self._found.popitem(last=False)
            self._messages = {k: v for k, v in self._messages.items() if k[0] != gone}
        return made

    async def message(self, digest_id: int, playing: frozenset[str] | None = None) -> Message | None:
        """The digest rendered for Discord as a server playing ``playing`` sees it (None: every format)."""
        found = await self.found(digest_id)
        if found is None:
            return None
        key = (digest_id, playing)
        if key not in self._messages:
            self._messages[key] = await asyncio.to_thread(
                lambda: render.render(digest(found, arg=str(digest_id), playing=playing))
            )
        return self._messages[key]

    async def playing(self, scope: str | None) -> frozenset[str] | None:
        """The formats a server plays (None: it chose nothing, or a direct message: every format)."""
        rulings = self.bot.rulings
        if scope is None or rulings is None:
            return None
        chosen = (await rulings.config(scope)).formats
        return None if chosen is None else frozenset(chosen)

    async def _send(self, delivery: Delivery) -> int:
        found = await self.found(delivery.digest_id)
        if found is None:  # its versions were pruned before it could be sent: nothing to show
            await self.read(lambda store: store.failed(delivery, "digest no longer kept", for_good=False))
            return 0
        playing = await self.playing(delivery.scope)
        if played(found, playing)[0].empty:  # every change is of a format this server does not play
            await self.read(lambda store: store.skipped(delivery))
            log.info("digest %d not posted in channel %s of %s: no change in the formats it plays",
                     delivery.digest_id, delivery.channel_id, delivery.scope)  # fmt: skip
            return 0
        message = await self.message(delivery.digest_id, playing)
        assert message is not None
        channel = self.bot.get_partial_messageable(int(delivery.channel_id), guild_id=_guild_id(delivery.scope))
        try:
            view = page_view(message, delivery.digest_id, 0)
            extra: dict[str, Any] = {"view": view} if view is not None else {}
            posted = await channel.send(embed=answer_embed(message, 0), allowed_mentions=NONE, **extra)
        except (discord.Forbidden, discord.NotFound) as exc:
            error = f"{exc.status} {exc.text or type(exc).__name__}"
            await self.read(lambda store: store.failed(delivery, error, for_good=True))
            log.warning("cannot post digests in channel %s of %s (%s): subscription marked failed, not retried",
                        delivery.channel_id, delivery.scope, error)  # fmt: skip
            await self._tell_audit(delivery, error)
            return 0
        except (discord.HTTPException, OSError, TimeoutError) as exc:
            said = f"{type(exc).__name__}: {exc}"
            gave_up = await self.read(lambda store: store.failed(delivery, said, for_good=False))
            log.warning("could not post digest %d in channel %s (%s)%s", delivery.digest_id, delivery.channel_id,
                        said, "; given up" if gave_up else "; will try again")  # fmt: skip
            return 0
        log.info("posted digest %d in channel %s of %s", delivery.digest_id, delivery.channel_id, delivery.scope)
        try:
            await self.read(lambda store: store.sent(delivery, str(posted.id)))
        except Exception:  # posted: never put back (it stays "sending", so it is not posted twice)
            log.warning("digest %d was posted in channel %s but could not be recorded as sent", delivery.digest_id,
                        delivery.channel_id, exc_info=True)  # fmt: skip
        return 1

    async def _tell_audit(self, delivery: Delivery, error: str) -> None:
        """The server's audit channel hears that its subscription stopped (when it has one, and it is another)."""
        rulings = self.bot.rulings
        if rulings is None:
            return
        try:
            config = await rulings.config(delivery.scope)
        except Unavailable:
            return
        if not config.audit_channel_id or config.audit_channel_id == delivery.channel_id:
            return
        text = (f"Rule-change digests can no longer be posted in <#{delivery.channel_id}> (Discord said: "
                f"{render.escape(error)}), so that subscription is stopped. Give the bot access to the channel, then "
                f"`/changes subscribe` it again.")  # fmt: skip
        try:
            audit = self.bot.get_partial_messageable(int(config.audit_channel_id), guild_id=_guild_id(delivery.scope))
            await audit.send(text, allowed_mentions=NONE)
        except (discord.HTTPException, ValueError):
            log.warning("could not post to the audit channel %s", config.audit_channel_id, exc_info=True)


def _guild_id(scope: str) -> int | None:
    kind, _, raw = scope.partition(":")
    return int(raw) if kind == "guild" and raw.isdigit() else None


def page_view(message: Message, digest_id: int, n: int) -> discord.ui.View | None:
    """Previous/next buttons for a digest of several pages (none for one page)."""
    if len(message.pages) < 2:
        return None
    view = discord.ui.View(timeout=None)
    last = len(message.pages) - 1
    view.add_item(DigestPage(digest_id, max(0, n - 1), "◀ Previous", disabled=n == 0))
    view.add_item(DigestPage(digest_id, min(last, n + 1), "Next ▶", disabled=n >= last))
    return view


class DigestPage(discord.ui.DynamicItem[discord.ui.Button], template=r"l5r:dg:(?P<digest>\d{1,12}):(?P<n>\d{1,3})"):
    """A digest's page button: the digest is read from the database by its id, in any process."""

    def __init__(self, digest_id: int, n: int, label: str = "Page", *, disabled: bool = False) -> None:
        self.digest_id, self.n = digest_id, n
        button: discord.ui.Button[Any] = discord.ui.Button(
            label=label, custom_id=f"{PREFIX}{digest_id}:{n}", style=discord.ButtonStyle.secondary, disabled=disabled
        )
        super().__init__(button)

    @classmethod
    async def from_custom_id(  # type: ignore[override]
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> DigestPage:
        return cls(int(match["digest"]), int(match["n"]))

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        poster: DigestPoster | None = getattr(interaction.client, "digests", None)
        scope = guild_scope(interaction.guild_id) if interaction.guild_id is not None else None
        try:
            playing = await poster.playing(scope) if poster is not None else None
            message = await poster.message(self.digest_id, playing) if poster is not None else None
        except Unavailable:
            await interaction.response.send_message(
                "The rulings database is unreachable right now; try the button again in a minute.", ephemeral=True
            )
            return
        if message is None:
            await interaction.response.send_message(GONE, ephemeral=True)
            return
        n = message.page_number(self.n)
        view = page_view(message, self.digest_id, n)
        await interaction.response.edit_message(embed=answer_embed(message, n), view=view)

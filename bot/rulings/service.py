"""Rulings for the bot process: the database, each server's overlay, and keeping both in step.

``RulingsService`` is what the cog and the answer path talk to (and it imports no Discord):

- writes go to the repository, then the writer's own overlay is rebuilt at once (a new ruling is
  searchable as soon as its judge is told it was saved);
- other processes notice through a poll of two counters (any ruling change; any ``/reload``) every
  ``poll_seconds``, then reload just the scopes whose revision moved, or reload the rule documents;
- an overlay is searchable by words as soon as it is built; by meaning, its paragraphs are embedded with
  the engine's model (reusing the vectors of unchanged texts), at once when few need it (a ruling added or
  edited), else in the background (a server's first load), then republished;
- when the database cannot be reached, answers go on from the rules (and from rulings already in
  memory); a server whose rulings could not be loaded is told so once, and the next successful poll
  loads them;
- players' "Not the answer?" reports (``feedback``): a pair a judge confirms is written like a ruling change
  (the writer's overlay rebuilt at once, other processes through the poll) and kept in the overlay as the
  server's own kept question;
- the data's life (``retention``): a server the bot was removed from is marked, a server it is in (again)
  unmarked (both written at once and retried by the poll while the database is down), and a purge deletes
  servers marked longer ago than the grace period: after the bot is ready, then every ``PURGE_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from bot.rulings import basis, feedback, markdown, retention, review
from bot.rulings.db import describe, make_engine, migrate
from bot.rulings.deadline import DEFAULT_TIMEOUT, DatabaseTimeout, within
from bot.rulings.repository import (
    ACTIVE,
    RETIRED,
    Author,
    Draft,
    ImportResult,
    NotFound,
    Ruling,
    RulingsRepository,
    ScopeConfig,
    Version,
)
from bot.rulings.schema import RELOAD_COUNTER, RULINGS_COUNTER
from index.query.overlay import Kept, NameResolver, Overlay, Overlays

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from index.engine import Engine

log = logging.getLogger("bot.rulings")

T = TypeVar("T")

LOAD_TIMEOUT = 1.0  # seconds an answer waits for a server's first load before going on without rulings
# Paragraphs embedded before an overlay is published (~6 ms each on the shipped model); more than this (a
# server's first load) are embedded in the background and the overlay published again, so a load or write
# never waits seconds for the model: until then the new rulings are found by words only.
EMBED_AT_ONCE = 32
# Migrating and purging may legitimately take longer than one command's database call (RULINGS_DB_TIMEOUT):
# they run in the poll and the purge loop, where nobody waits for them, and get this long at least.
LONG_TIMEOUT = 60.0
IMPORT_SECONDS_PER_RULING = 0.02  # an import's limit grows with its size (5,000 rulings: 108 s)
PURGE_SECONDS = 3600.0  # how often servers past their grace period are looked for (and at start, once ready)
UNAVAILABLE_NOTE = (
    "This server's rulings could not be loaded (the rulings database is unreachable), so this answer "
    "comes from the rule documents alone. Rulings will be back once the database is."
)
# What "the database is down" looks like, whichever driver reports it.
DB_ERRORS: tuple[type[BaseException], ...] = (SQLAlchemyError, OSError, TimeoutError, ConnectionError)
try:  # asyncpg raises its own errors for a server that went away mid-query
    import asyncpg

    DB_ERRORS += (asyncpg.PostgresError, asyncpg.InterfaceError)
except ImportError:  # pragma: no cover - asyncpg is a dependency
    pass


class Unavailable(RuntimeError):
    """The rulings database cannot be reached right now; nothing was written."""


class NoAnswer(Unavailable):
    """The database did not answer a write within ``RULINGS_DB_TIMEOUT`` (hung, not down): the write was
    abandoned unconfirmed. Told apart from an outage because a write abandoned while its commit was on the
    way may still land once the database answers again."""


class StorageFull(Unavailable):
    """The database is up but has no room to write (its disk is full): nothing was written. Told apart from an
    outage because waiting a minute will not help; the host has to free space."""


class ConcurrentChange(RuntimeError):
    """Another change to the same rulings was being written at the same moment (a unique key or a foreign key
    broke, a deadlock, a lock held too long): this write was rolled back whole; trying again is safe. The
    database is up: this is not an outage."""


# PostgreSQL's serialization failure and deadlock: transactions that ran into each other, not a server down.
_CONTENDED_STATES = {"40001", "40P01"}


def _contended(exc: BaseException) -> bool:
    """Whether a database error means "another write got in the way" rather than "the database is down"."""
    if isinstance(exc, IntegrityError):
        return True
    orig = exc.orig if isinstance(exc, DBAPIError) else exc  # asyncpg's own errors can come unwrapped
    state = str(getattr(orig, "sqlstate", None) or "")
    if state.startswith("23") or state in _CONTENDED_STATES:  # class 23: integrity constraint violations
        return True
    return isinstance(exc, DBAPIError) and "database is locked" in str(orig)  # SQLite: the write lock, held too long


# PostgreSQL's disk_full and out_of_memory classes (53100, 53200); SQLite says it in words (SQLITE_FULL).
_FULL_STATES = {"53100"}
_FULL_WORDS = ("database or disk is full", "no space left on device")


def _disk_full(exc: BaseException) -> bool:
    """Whether a database error means "no room to write" (a full disk or volume) rather than "down"."""
    seen: BaseException | None = exc
    while seen is not None:
        orig = seen.orig if isinstance(seen, DBAPIError) else seen
        if str(getattr(orig, "sqlstate", None) or "") in _FULL_STATES:
            return True
        if isinstance(orig, OSError) and orig.errno == errno.ENOSPC:
            return True
        if any(words in str(orig).lower() for words in _FULL_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# Autocomplete (any member's keystrokes, one interaction each): answered from memory, and from the database at
# most LISTING_READS reads at a time in the whole process; a keystroke that would need one more is shed.
LISTING_READS = 2
LISTING_SECONDS = 10.0  # a listing read for autocomplete serves later keystrokes this long (unless loaded newer)
LISTINGS_KEPT = 1024  # servers whose listing is kept


@dataclass
class _Listing:
    """A scope's rulings, retired ones too, as read for autocomplete."""

    rulings: list[Ruling]
    revision: int | None  # the loaded revision when it was read (None: the scope's rulings were not loaded)
    at: float  # time.monotonic() of the read


@dataclass
class _Loaded:
    revision: int
    rulings: list[Ruling]
    kept: tuple[Kept, ...] = ()  # the questions its judges confirmed a paragraph answers (bot.rulings.feedback)
    formats: frozenset[str] | None = None  # the formats it plays (/ruling config formats); None: it chose nothing


class RulingsService:
    """One per bot process (see the module docstring). ``engine`` is read on each use: /reload replaces
    its corpus, and overlays are relinked to the new one."""

    def __init__(
        self,
        url: URL,
        engine: Callable[[], Engine],
        *,
        poll_seconds: float = 2.0,
        on_remote_reload: Callable[[], Awaitable[None]] | None = None,
        grace: dt.timedelta = dt.timedelta(days=30),
        clock: Callable[[], dt.datetime] | None = None,
        db_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.url = url
        self.db_timeout = db_timeout  # seconds any one database call may take (RULINGS_DB_TIMEOUT)
        self.grace = grace  # how long a server's data outlives the bot's removal (L5R_DATA_GRACE_DAYS)
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))  # tests move time by replacing it
        self._engine = engine
        self.poll_seconds = poll_seconds
        self.on_remote_reload = on_remote_reload
        self.db: AsyncEngine | None = None
        self.repo: RulingsRepository | None = None
        self.feedback: feedback.FeedbackStore | None = None
        self.overlays = Overlays()
        self._loaded: dict[str, _Loaded] = {}
        self._wanted: set[str] = set()  # scopes served here that still need a first load
        self._forgotten: dict[str, int] = {}  # per scope, how many times it was forgotten (``_forget``)
        self._notified: set[str] = set()  # scopes told about the outage (once each)
        self._seen: dict[str, int] = {}
        self._schema_ready = False
        self._down_since: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._resolver: NameResolver | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._embedding: dict[str, asyncio.Task[None]] = {}  # scope -> its background embedding
        self._leaving: dict[str, dt.datetime] = {}  # scopes whose server removed the bot, not yet marked
        self._present: set[str] = set()  # scopes whose server has the bot, marks not yet cleared
        self._membership = asyncio.Lock()  # one flush at a time: a mark and a later clear land in that order
        self._purger: asyncio.Task[None] | None = None
        self.last_purge: dict[str, retention.Stored] | None = None  # what the latest purge deleted
        # Rulings whose rule changed (bot.rulings.review): checked at the first poll and after each reload; the
        # rulings this process flagged go to ``on_review`` (the Discord layer posts them to the audit channels).
        self.on_review: Callable[[list[review.Flagged]], Awaitable[object]] | None = None
        self._review_due = True
        self._listings: OrderedDict[str, _Listing] = OrderedDict()  # autocomplete's rulings, retired too
        self._listing_reads: dict[str, asyncio.Task[list[Ruling]]] = {}  # scope -> its one read in flight
        self.listings_shed = 0  # autocomplete listings answered without the database because it was busy

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the database and migrate it; if it is down, start anyway and keep trying in the poll."""
        self.db = make_engine(self.url)
        self.repo = RulingsRepository(self.db)
        self.feedback = feedback.FeedbackStore(self.db)
        try:
            await self._prepare()
            self._seen = await self.repo.counters()
        except DB_ERRORS as exc:
            self._mark_down(exc)
        self._task = asyncio.create_task(self._poll_loop(), name="rulings-poll")

    async def close(self) -> None:
        if self._purger is not None:
            self._purger.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._purger
            self._purger = None
        for task in list(self._embedding.values()):
            task.cancel()
        for task in list(self._embedding.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        if self.db is not None:  # a hung database must not hold the stop either
            with contextlib.suppress(*DB_ERRORS):
                await self._bounded(self.db.dispose())

    async def _prepare(self) -> None:
        if not self._schema_ready:
            await self._bounded(migrate(self._db()), max(LONG_TIMEOUT, self.db_timeout))
            self._schema_ready = True

    async def _bounded(self, call: Awaitable[T], seconds: float | None = None) -> T:
        """``call`` for at most ``seconds`` (default ``db_timeout``): a hung database raises ``DatabaseTimeout``
        (one of ``DB_ERRORS``) instead of holding the command, the poll or a lock for as long as it hangs."""
        return await within(call, self.db_timeout if seconds is None else seconds)

    def _db(self) -> AsyncEngine:
        if self.db is None:
            raise RuntimeError("RulingsService.start() was not awaited")
        return self.db

    def _repo(self) -> RulingsRepository:
        if self.repo is None:
            raise RuntimeError("RulingsService.start() was not awaited")
        return self.repo

    def _feedback(self) -> feedback.FeedbackStore:
        if self.feedback is None:
            raise RuntimeError("RulingsService.start() was not awaited")
        return self.feedback

    @property
    def available(self) -> bool:
        return self._down_since is None and self._schema_ready

    def _mark_down(self, exc: BaseException) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("rulings database %s unreachable (%s: %s); answering without unloaded rulings",
                        describe(self.url), type(exc).__name__, exc or "no answer in time")  # fmt: skip

    def _refused(self, exc: BaseException) -> Unavailable:
        """What a failed write raises: ``StorageFull`` when the database has no room (logged as an error for
        the host; the database is not marked down, reads still work), ``NoAnswer`` when it did not answer in
        time (hung), else ``Unavailable`` (an outage)."""
        if isinstance(exc, DatabaseTimeout):
            self._mark_down(exc)
            return NoAnswer(str(exc))
        if _disk_full(exc):
            log.error("rulings database %s has no room to write (disk full): %s; nothing was written",
                      describe(self.url), exc)  # fmt: skip
            return StorageFull(str(exc))
        self._mark_down(exc)
        return Unavailable(str(exc))

    def _mark_up(self) -> None:
        if self._down_since is not None:
            log.info("rulings database reachable again after %.1f s", time.monotonic() - self._down_since)
            self._down_since = None
            self._notified.clear()

    # -- names -----------------------------------------------------------------------------------
    @property
    def resolver(self) -> NameResolver:
        """Entry names -> ids over the rules currently loaded (rebuilt after a reload)."""
        corpus = self._engine().corpus
        if self._resolver is None or self._resolver.corpus is not corpus:
            self._resolver = NameResolver(corpus)
        return self._resolver

    # -- overlays --------------------------------------------------------------------------------
    def overlay(self, scope: str | None) -> Overlay | None:
        """The scope's overlay if it is loaded (never waits)."""
        return self.overlays.get(scope)

    def want(self, scope: str) -> None:
        """This process serves ``scope``: load its rulings at the next chance (a guild became available)."""
        if self.overlays.get(scope) is None:
            self._wanted.add(scope)

    async def overlay_for(self, scope: str | None, timeout: float = LOAD_TIMEOUT) -> tuple[Overlay | None, str | None]:
        """The scope's overlay for an answer, loading it first if needed; and a note to show, once, when
        the scope's rulings cannot be had."""
        if scope is None:
            return None, None
        found = self.overlays.get(scope)
        if found is not None:
            return found, None
        if self.available:
            try:
                return await asyncio.wait_for(self.refresh(scope), timeout), None
            except DB_ERRORS as exc:
                self._mark_down(exc)
        self._wanted.add(scope)
        if scope in self._notified:
            return None, None
        self._notified.add(scope)
        return None, UNAVAILABLE_NOTE

    async def refresh(self, scope: str) -> Overlay:
        """Read the scope's active rulings and publish a fresh overlay (raises on database errors)."""
        async with self._locks.setdefault(scope, asyncio.Lock()):
            forgotten = self._forgotten.get(scope, 0)
            revision, found = await self._bounded(self._repo().active(scope))
            pairs = await self._bounded(self._feedback().confirmed(scope))  # after the revision: newer only moves it
            chosen = (await self._bounded(self._repo().config(scope))).formats  # after the revision, as the pairs
            self._mark_up()
            loaded = _Loaded(revision, found, tuple(k for p in pairs if (k := p.kept) is not None),
                             None if chosen is None else frozenset(chosen))
            if self._forgotten.get(scope, 0) != forgotten:
                # forgotten while its rows were read (the bot was removed from the server: ``left``): the answer
                # that asked gets them, memory keeps nothing of them
                return await self._publish(scope, loaded=loaded)
            if (before := self._loaded.get(scope)) is not None and revision < before.revision:
                self.overlays.drop(scope)  # its rows were deleted: the older revision must replace the newer
            self._loaded[scope] = loaded
            self._wanted.discard(scope)
            return await self._publish(scope)

    async def _publish(self, scope: str, previous: Overlay | None = None, loaded: _Loaded | None = None) -> Overlay:
        """Build and publish the scope's overlay from its loaded rulings; ``previous`` (default: the one
        published) lends its vectors for texts that did not change. With ``loaded`` (rulings not held: the scope
        was forgotten while they were read) the overlay is built from those and not published."""
        loaded = loaded if loaded is not None else self._loaded[scope]
        engine = self._engine()
        resolver = self.resolver
        previous = previous if previous is not None else self.overlays.get(scope)

        def build(at_most: int | None, reuse: Overlay | None) -> Overlay:
            entries = [markdown.ruling_entry(r, resolver) for r in loaded.rulings]
            return engine.build_overlay(
                scope, entries, loaded.revision, previous=reuse, embed_at_most=at_most, kept=loaded.kept,
                formats=loaded.formats,
            )

        overlay = await asyncio.to_thread(build, EMBED_AT_ONCE, previous)
        if self._loaded.get(scope) is not loaded:
            # forgotten while it was built (the bot left the server: ``left``), or loaded again since (that
            # load publishes its own): published now, it would put back what is no longer held or newer
            return overlay
        self.overlays.put(overlay)
        if overlay.unembedded and scope not in self._embedding:
            self._embedding[scope] = asyncio.create_task(self._embed_later(scope), name=f"rulings-embed-{scope}")
        return self.overlays.get(scope) or overlay

    async def _embed_later(self, scope: str) -> None:
        """Embed what the published overlay left out (too many paragraphs to wait for), then publish it again
        unless another overlay of the scope was published meanwhile (that one is embedded in turn, reusing
        these vectors)."""
        done: Overlay | None = None
        try:
            while (current := self.overlays.get(scope)) is not None and current.unembedded:
                loaded, engine, resolver = self._loaded.get(scope), self._engine(), self.resolver
                if loaded is None:
                    return
                reuse = (current,) if done is None else (current, done)

                def build(
                    loaded: _Loaded = loaded, engine: Engine = engine, resolver: NameResolver = resolver,
                    reuse: tuple[Overlay, ...] = reuse,
                ) -> Overlay:  # fmt: skip
                    entries = [markdown.ruling_entry(r, resolver) for r in loaded.rulings]
                    return engine.build_overlay(scope, entries, loaded.revision, previous=reuse, kept=loaded.kept,
                                                formats=loaded.formats)

                started = time.perf_counter()
                done = await asyncio.to_thread(build)
                log.info("embedded %d ruling paragraphs of %s in %.1f s", current.unembedded, scope,
                         time.perf_counter() - started)  # fmt: skip
                if self.overlays.get(scope) is not current:
                    continue  # another overlay was published meanwhile: embed that one (these vectors are reused)
                self.overlays.put(done)
                if done.unembedded:  # the model cannot embed them (it went away): stop trying
                    return
        except Exception:  # a failure costs search by meaning for this scope, never the rulings themselves
            log.exception("embedding the rulings of %s failed; they are found by words only", scope)
        finally:
            self._embedding.pop(scope, None)

    async def relink(self) -> None:
        """After the rule documents were reloaded: rebuild every overlay against the new entries, then look
        for rulings whose rule changed (with the database down, the poll does it once it is back)."""
        for scope in list(self._loaded):
            previous = self.overlays.get(scope)
            self.overlays.drop(scope)
            await self._publish(scope, previous)
        self._review_due = True
        try:
            await self.review_rules()
        except DB_ERRORS as exc:
            self._mark_down(exc)

    # -- rulings whose rule changed (bot/rulings/review.py) ---------------------------------------------
    def texts(self, entry_ids: Sequence[str]) -> list[basis.RuleText]:
        """The entries' texts as the loaded sources have them: what a ruling written now is made against."""
        engine = self._engine()
        return [basis.rule_text(i, engine.get(i)) for i in entry_ids]

    async def review_rules(self) -> review.Outcome:
        """Compare every active ruling's recorded rule text with the sources (raises on database errors); the
        rulings this process flagged go to ``on_review``, and the overlays whose notes changed are rebuilt."""
        await self._prepare()
        today = self.clock().date().isoformat()
        checking = review.check(self._db(), self._engine().get, today)
        outcome = await self._bounded(checking, max(LONG_TIMEOUT, self.db_timeout))
        self._review_due = False
        self._mark_up()
        for scope in sorted(outcome.scopes & set(self._loaded)):
            await self.refresh(scope)
        if outcome.flagged or outcome.cleared or outcome.recorded:
            log.info("rule changes: %d ruling(s) flagged for review, %d cleared (text back as it was), %d "
                     "recorded for the first time", len(outcome.flagged), len(outcome.cleared), outcome.recorded)
        if outcome.flagged and self.on_review is not None:
            try:
                await self.on_review(outcome.flagged)
            except Exception:  # the flags are saved and shown; only the audit posts are lost
                log.exception("posting %d flagged ruling(s) to the audit channels failed", len(outcome.flagged))
        return outcome

    async def stands(self, scope: str, ruling_id: int, author: Author) -> Ruling:
        """A judge says a flagged ruling still stands on the rule as it reads now (``NotFlagged`` if none)."""

        async def write(repo: RulingsRepository) -> Ruling:
            current = await repo.get(scope, ruling_id)
            if current is None:
                raise NotFound(f"no ruling #{ruling_id} in this server")
            return await repo.stands(scope, ruling_id, author, self.texts(current.applies_to))

        return await self._write(scope, write)  # type: ignore[return-value]

    # -- the poll --------------------------------------------------------------------------------
    async def _poll_loop(self) -> None:
        await self._repeat(self.poll, "poll", self.poll_seconds, wait_first=True)

    async def _repeat(
        self, step: Callable[[], Awaitable[object]], what: str, every: float, *, wait_first: bool
    ) -> None:
        """Run ``step`` every ``every`` seconds for good: a database error marks the database down, any other
        error is logged; neither stops the loop (the poll and the purge share this)."""
        while True:
            if wait_first:
                await asyncio.sleep(every)
            try:
                await step()
            except DB_ERRORS as exc:
                self._mark_down(exc)
            except Exception:  # a bug here must not stop the loop for good
                log.exception("rulings %s failed", what)
            if not wait_first:
                await asyncio.sleep(every)

    async def poll(self) -> None:
        """One round: reconnect/migrate if needed, load wanted scopes, reload changed ones, follow /reload."""
        await self._prepare()
        counters = await self._bounded(self._repo().counters())
        self._mark_up()
        await self.flush_membership()
        if self._review_due:  # at start (and after a reload that found the database down)
            await self.review_rules()
        for scope in list(self._wanted):
            await self.refresh(scope)
        if counters.get(RULINGS_COUNTER) != self._seen.get(RULINGS_COUNTER):
            revisions = await self._bounded(self._repo().revisions(self._loaded))
            for scope, loaded in list(self._loaded.items()):
                if revisions.get(scope, 0) != loaded.revision:
                    await self.refresh(scope)
        reload = counters.get(RELOAD_COUNTER)
        if RELOAD_COUNTER in self._seen and reload != self._seen[RELOAD_COUNTER] and self.on_remote_reload:
            log.info("another process reloaded the rule documents; reloading here too")
            self._seen[RELOAD_COUNTER] = reload or 0
            await self.on_remote_reload()
        self._seen = {**self._seen, **counters}

    async def announce_reload(self) -> None:
        """This process reloaded the rule documents: tell the others (through the ``reload`` counter)."""
        try:
            value = await self._bounded(self._repo().bump_counter(RELOAD_COUNTER))
            self._seen[RELOAD_COUNTER] = value
        except DB_ERRORS as exc:
            self._mark_down(exc)
            raise Unavailable("the other bot processes could not be told (rulings database unreachable)") from exc

    # -- writes (each refreshes the writer's overlay before returning) ------------------------------
    async def _write(
        self, scope: str, action: Callable[[RulingsRepository], Awaitable[object]], timeout: float | None = None
    ) -> object:
        """``action`` within ``timeout`` (default ``db_timeout``), then the writer's overlay re-read."""
        if not self._schema_ready:
            try:
                await self._bounded(self._prepare())
            except DB_ERRORS as exc:
                self._mark_down(exc)
                raise Unavailable(str(exc)) from exc
        try:
            result = await self._bounded(action(self._repo()), timeout)
        except DB_ERRORS as exc:
            if not isinstance(exc, DatabaseTimeout) and _contended(exc):
                log.info("a write to %s ran into another one and was rolled back: %s", scope, exc)
                raise ConcurrentChange(str(exc)) from exc
            raise self._refused(exc) from exc
        try:
            await self.refresh(scope)
        except DB_ERRORS as exc:  # written, but not re-read: the next poll will load it
            self._mark_down(exc)
        return result

    async def add(self, scope: str, draft: Draft, author: Author) -> Ruling:
        texts = self.texts(draft.applies_to)
        return await self._write(  # type: ignore[return-value]
            scope, lambda repo: repo.add(scope, draft, author, texts=texts)
        )

    async def edit(self, scope: str, ruling_id: int, expected: int, draft: Draft, author: Author) -> Ruling:
        return await self._write(  # type: ignore[return-value]
            scope, lambda repo: repo.edit(scope, ruling_id, expected, draft, author, self.texts(draft.applies_to))
        )

    async def retire(self, scope: str, ruling_id: int, author: Author, note: str | None = None) -> Ruling:
        return await self._write(  # type: ignore[return-value]
            scope, lambda repo: repo.set_status(scope, ruling_id, RETIRED, author, note)
        )

    async def restore(self, scope: str, ruling_id: int, author: Author) -> Ruling:
        return await self._write(  # type: ignore[return-value]
            scope, lambda repo: repo.set_status(scope, ruling_id, ACTIVE, author)
        )

    async def import_drafts(self, scope: str, drafts: Sequence[Draft], author: Author) -> ImportResult:
        # Thousands of rulings in one transaction take seconds on a busy host: not a hung database.
        limit = max(LONG_TIMEOUT, self.db_timeout + IMPORT_SECONDS_PER_RULING * len(drafts))
        return await self._write(  # type: ignore[return-value]
            scope, lambda repo: repo.import_drafts(scope, drafts, author, self.texts), limit
        )

    # -- players' reports and the pairs judges confirm (bot/rulings/feedback.py) -------------------------
    async def report(
        self, scope: str, question: str, reporter_id: str, pick: tuple[str, int, str] | None
    ) -> tuple[feedback.Outcome, feedback.Report | None]:
        """Keep a member's "Not the answer?" pick ((entry id, paragraph, digest), None: no paragraph answers)
        as a pending report; answers are unchanged until a judge confirms it."""
        entry_id, paragraph, digest = pick if pick is not None else (None, None, None)
        return await self.read(  # type: ignore[return-value]
            lambda _repo: self._feedback().report(scope, question, reporter_id, entry_id, paragraph, digest)
        )

    async def pending(self, scope: str) -> list[feedback.Report]:
        return await self.read(lambda _repo: self._feedback().pending(scope))  # type: ignore[return-value]

    async def confirmed(self, scope: str) -> list[feedback.Report]:
        return await self.read(lambda _repo: self._feedback().confirmed(scope))  # type: ignore[return-value]

    async def report_by_id(self, scope: str, report_id: int) -> feedback.Report | None:
        return await self.read(lambda _repo: self._feedback().get(scope, report_id))  # type: ignore[return-value]

    async def confirm(
        self, scope: str, report_id: int, judge_id: str, pick: tuple[str, int, str] | None
    ) -> feedback.Report:
        """Confirm a report with ``pick`` (entry id, paragraph, digest), or with None (the loaded rules do not
        answer it): in this server's answers on return."""
        entry_id, paragraph, digest = pick if pick is not None else (None, None, None)
        return await self._write(  # type: ignore[return-value]
            scope, lambda _repo: self._feedback().confirm(scope, report_id, judge_id, entry_id, paragraph, digest)
        )

    async def dismiss(self, scope: str, report_id: int) -> bool:
        return await self.read(lambda _repo: self._feedback().dismiss(scope, report_id))  # type: ignore[return-value]

    async def withdraw(self, scope: str, report_id: int) -> bool:
        """Drop a confirmed pair: this server's answers go back to the rules' own ranking."""
        return await self._write(  # type: ignore[return-value]
            scope, lambda _repo: self._feedback().withdraw(scope, report_id)
        )

    async def set_formats(self, scope: str, author: Author, formats: Sequence[str] | None) -> ScopeConfig:
        """Choose the formats the server plays (format ids; None: none chosen, every format shown). Written like
        a ruling change: this process's overlay carries the choice on return, the others' after their poll."""
        return await self._write(scope, lambda repo: repo.set_config(scope, author, formats=formats))  # type: ignore[return-value]

    async def set_config(self, scope: str, author: Author, **values: str | None) -> ScopeConfig:
        try:
            return await self._bounded(self._repo().set_config(scope, author, **values))  # type: ignore[arg-type]
        except DB_ERRORS as exc:
            raise self._refused(exc) from exc

    # -- reads for commands (raise Unavailable when the database is down) ---------------------------
    async def read(
        self, fetch: Callable[[RulingsRepository], Awaitable[object]], timeout: float | None = None
    ) -> object:
        """``fetch`` within ``timeout`` (default ``db_timeout``; shorter where a first response must follow)."""

        async def prepared() -> object:
            await self._prepare()
            return await fetch(self._repo())

        try:
            result = await self._bounded(prepared(), timeout)
        except DB_ERRORS as exc:
            self._mark_down(exc)
            raise Unavailable(str(exc)) from exc
        self._mark_up()
        return result

    async def get(self, scope: str, ruling_id: int, timeout: float | None = None) -> Ruling | None:
        return await self.read(lambda repo: repo.get(scope, ruling_id), timeout)  # type: ignore[return-value]

    async def list(self, scope: str, *, include_retired: bool = False, event: str | None = None) -> list[Ruling]:
        return await self.read(  # type: ignore[return-value]
            lambda repo: repo.list(scope, include_retired=include_retired, event=event)
        )

    async def history(self, scope: str, ruling_id: int) -> list[Version]:
        return await self.read(lambda repo: repo.history(scope, ruling_id))  # type: ignore[return-value]

    async def config(self, scope: str, timeout: float | None = None) -> ScopeConfig:
        return await self.read(lambda repo: repo.config(scope), timeout)  # type: ignore[return-value]

    async def events(self, scope: str) -> list[str]:
        return await self.read(lambda repo: repo.events(scope))  # type: ignore[return-value]

    # -- autocomplete: never a write, never a queue of reads ---------------------------------------------
    async def pick_list(self, scope: str, *, include_retired: bool, wait: float) -> list[Ruling]:
        """The scope's rulings for an autocomplete (retired ones too with ``include_retired``), waiting at
        most ``wait`` seconds. Active rulings come from memory once the scope is loaded; the rest from one
        read shared by every keystroke while it runs and reused until the scope's revision moves. A keystroke
        that would need a read beyond ``LISTING_READS`` at once, or while the database is down or slow, gets
        what memory has (possibly nothing): a flood of keystrokes never queues on the database's connections,
        so a judge's save behind it is not held up."""
        loaded = self._loaded.get(scope)
        if loaded is not None and not include_retired:
            return loaded.rulings
        fallback = loaded.rulings if loaded is not None else []
        revision = loaded.revision if loaded is not None else None
        cached = self._listings.get(scope)
        if cached is not None and (
            cached.revision == revision if revision is not None else time.monotonic() - cached.at < LISTING_SECONDS
        ):
            return cached.rulings
        task = self._listing_reads.get(scope)
        if task is None:
            if len(self._listing_reads) >= LISTING_READS or not self.available:
                self.listings_shed += 1
                return cached.rulings if cached is not None else fallback
            task = asyncio.create_task(self._read_listing(scope, revision), name=f"rulings-listing-{scope}")
            self._listing_reads[scope] = task
            task.add_done_callback(lambda done: self._listing_done(scope, done))
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, wait))
        except (TimeoutError, Unavailable):
            self.listings_shed += 1
            return cached.rulings if cached is not None else fallback

    async def _read_listing(self, scope: str, revision: int | None) -> list[Ruling]:
        found = await self.read(lambda repo: repo.list(scope, include_retired=True))
        self._listings[scope] = _Listing(found, revision, time.monotonic())  # type: ignore[arg-type]
        self._listings.move_to_end(scope)
        while len(self._listings) > LISTINGS_KEPT:
            self._listings.popitem(last=False)
        return found  # type: ignore[return-value]

    def _listing_done(self, scope: str, task: asyncio.Task[list[Ruling]]) -> None:
        if self._listing_reads.get(scope) is task:
            del self._listing_reads[scope]
        if not task.cancelled():
            task.exception()  # retrieved: every keystroke waiting for it may have given up already

    # -- the data's life (bot/rulings/retention.py) ---------------------------------------------------
    def left(self, scope: str) -> None:
        """The bot was removed from the server (not an outage): mark its data at the next write, and stop
        holding its rulings in memory. Nothing is deleted before the grace period ends."""
        self._present.discard(scope)
        self._leaving.setdefault(scope, self.clock())
        self._wanted.discard(scope)
        self._forget(scope)

    def present(self, scope: str) -> None:
        """The bot is in the server (it became available, or the bot was invited again): clear any mark."""
        self._leaving.pop(scope, None)
        self._present.add(scope)

    async def flush_membership(self) -> None:
        """Write the pending marks and clears (raises on database errors; they stay pending)."""
        async with self._membership:
            await self._flush_membership()

    async def _flush_membership(self) -> None:
        if self._leaving:
            leaving = dict(self._leaving)
            marked = await self._bounded(retention.mark_left(self._db(), leaving))
            for scope in leaving:
                if self._leaving.get(scope) == leaving[scope]:
                    del self._leaving[scope]
            if marked:
                log.info("marked %d server(s) that removed the bot for deletion in %s", len(marked), self.grace)
        if self._present:
            present = set(self._present)
            cleared = await self._bounded(retention.clear_left(self._db(), present))
            self._present -= present
            if cleared:
                log.info("%d server(s) invited the bot again within the grace period: their data is kept",
                         len(cleared))  # fmt: skip

    async def try_flush_membership(self) -> None:
        """``flush_membership`` now if it can be; with the database down the poll retries it."""
        try:
            await self._prepare()
            await self.flush_membership()
        except DB_ERRORS as exc:
            self._mark_down(exc)

    async def purge_expired(self, now: dt.datetime | None = None) -> dict[str, retention.Stored]:
        """Delete the data of every server that removed the bot more than ``grace`` before ``now``."""
        await self._prepare()
        await self.flush_membership()
        cutoff = (now or self.clock()) - self.grace
        purged = await self._bounded(retention.purge(self._db(), cutoff), max(LONG_TIMEOUT, self.db_timeout))
        for scope in purged:
            self._forget(scope)
        self.last_purge = purged
        if purged:
            log.info("deleted the data of %d server(s) %s after they removed the bot (%d rulings)",
                     len(purged), self.grace, sum(p.rulings for p in purged.values()))  # fmt: skip
        return purged

    def start_purging(self, ready: Callable[[], Awaitable[object]], every: float = PURGE_SECONDS) -> None:
        """Purge once ``ready()`` returns (the servers present are known by then), then every ``every`` s."""
        if self._purger is None:
            self._purger = asyncio.create_task(self._purge_loop(ready, every), name="rulings-purge")

    async def _purge_loop(self, ready: Callable[[], Awaitable[object]], every: float) -> None:
        await ready()
        await self._repeat(self.purge_expired, "purge", every, wait_first=False)

    async def unmarked(self) -> list[str]:
        """The scopes with data whose server is taken to have the bot (raises Unavailable)."""
        return await self.read(lambda _repo: retention.unmarked(self._db()))  # type: ignore[return-value]

    async def stored(self, scope: str) -> retention.Stored:
        return await self.read(lambda _repo: retention.stored(self._db(), scope))  # type: ignore[return-value]

    async def delete_all(self, scope: str) -> retention.Stored:
        """Delete everything stored for the server now (its admin asked); returns what was deleted."""
        try:
            await self._prepare()
            deleted = await self._bounded(retention.delete_scope(self._db(), scope), max(LONG_TIMEOUT, self.db_timeout))
        except DB_ERRORS as exc:
            self._mark_down(exc)
            raise Unavailable(str(exc)) from exc
        self._forget(scope)
        try:
            await self.refresh(scope)  # an empty overlay: answers in the server show no ruling from now on
        except DB_ERRORS as exc:
            self._mark_down(exc)
        return deleted

    def _forget(self, scope: str) -> None:
        """Hold nothing of the scope in memory (its overlay, its loaded rulings, their vectors); a read of its
        rows in flight (``refresh``) sees it was forgotten and keeps nothing either."""
        self._forgotten[scope] = self._forgotten.get(scope, 0) + 1
        self.overlays.drop(scope)
        self._loaded.pop(scope, None)
        if (task := self._embedding.get(scope)) is not None:
            task.cancel()

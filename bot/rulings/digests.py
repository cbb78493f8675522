"""Digests of source changes for subscribed channels: what is kept, and how the database decides who sends.

Every bot process, at start and after each reload, offers the sources it now serves (``DigestStore.offer``): a
snapshot of their entries (``glossary.diff.snapshot``, zlib-compressed JSON) under their fingerprint. The one
``source_head`` row holds the fingerprint the latest digest brought the sources to, and a generation:

- no head yet: this version becomes the head (the first start sends nothing: there is nothing to compare with);
- the head is this version: nothing to do (another process got here first, or nothing changed);
- else the process moves the head from generation N with one conditional ``UPDATE … WHERE generation = N``: the
  database lets exactly one process do that, and only that process writes digest N (unique per generation) and one
  pending delivery per active subscription, in the same transaction.

Deliveries are then claimed one by one (``UPDATE … WHERE status = 'pending'``: one process gets each), sent, and
marked sent, failed (the channel is gone or forbidden: its subscription is marked failed and never tried again) or
put back for a later try (a Discord outage; at most ``MAX_ATTEMPTS``). A delivery left "sending" by a process that
died mid-send is not retried: a digest is sent at most once, never twice.

Snapshots are kept for the head and the digests of the last ``KEEP_DIGESTS`` generations (a page button on an
older digest says it is no longer kept).
"""

from __future__ import annotations

import datetime as dt
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.app.digest import summary
from bot.rulings.schema import (
    RULINGS_COUNTER,
    counters,
    digest_deliveries,
    digests,
    scopes,
    source_head,
    source_snapshots,
    subscriptions,
)
from glossary.diff import SourceDiff, diff, fingerprint, from_snapshot, snapshot
from glossary.model import Entry

HEAD = "sources"
ACTIVE, FAILED = "active", "failed"
PENDING, SENDING, SENT, SKIPPED = "pending", "sending", "sent", "skipped"  # skipped: no change its server sees
MAX_ATTEMPTS = 5  # a delivery Discord kept refusing for other reasons (5xx, timeouts) is given up after this
KEEP_DIGESTS = 20  # generations whose snapshots are kept for page buttons


def pack(entries: Sequence[Entry]) -> tuple[str, bytes]:
    """The sources' fingerprint and compressed snapshot (CPU work: run it off the event loop)."""
    data = json.dumps(snapshot(entries), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return fingerprint(entries), zlib.compress(data, 6)


def unpack(data: bytes) -> list[Entry]:
    return from_snapshot(json.loads(zlib.decompress(data)))


@dataclass(frozen=True)
class Moved:
    """The head was moved by this process: digest ``digest_id`` (from ``old`` to ``new``) is its to send."""

    digest_id: int
    old: str
    new: str
    summary: str
    deliveries: int


@dataclass(frozen=True)
class Delivery:
    """One digest to one subscribed channel, claimed by this process to send."""

    id: int
    digest_id: int
    subscription_id: int
    scope: str
    channel_id: str
    attempts: int


@dataclass(frozen=True)
class Subscription:
    scope: str
    channel_id: str
    status: str
    failure: str | None = None


class DigestStore:
    """The digest tables over one database engine (the rulings database)."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], dt.datetime] | None = None) -> None:
        self.engine = engine
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))

    # -- the sources' versions -------------------------------------------------------------------------------
    async def head(self) -> tuple[str, int] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(
                select(source_head.c.fingerprint, source_head.c.generation).where(source_head.c.name == HEAD)
            )).first()  # fmt: skip
            return (row[0], int(row[1])) if row else None

    async def snapshot(self, fp: str) -> bytes | None:
        async with self.engine.connect() as conn:
            return (await conn.execute(
                select(source_snapshots.c.data).where(source_snapshots.c.fingerprint == fp)
            )).scalar()  # fmt: skip

    async def offer(
        self, fp: str, data: bytes, compare: Callable[[bytes, bytes], SourceDiff], *, run: Any = None
    ) -> Moved | None:
        """These sources are now served here: move the head to them if they are new (see the module docstring).
        ``compare(old data, new data)`` gives the facts (``run(fn, *args)`` runs it off the loop when given).
        Returns what this process must send, or None (nothing new, or another process moved the head)."""
        head = await self.head()
        if head is None:
            await self._first(fp, data)
            return None
        old, generation = head
        if old == fp:
            return None
        old_data = await self.snapshot(old)
        found = None
        if old_data is not None:
            found = await run(compare, old_data, data) if run is not None else compare(old_data, data)
        return await self._move(old, generation, fp, data, found)

    async def _first(self, fp: str, data: bytes) -> None:
        now = self.clock()
        async with self.engine.begin() as conn:
            await _insert_missing(conn, source_snapshots, {"fingerprint": fp, "data": data, "created_at": now})
            await _insert_missing(conn, source_head, {"name": HEAD, "fingerprint": fp, "generation": 0,
                                                      "updated_at": now})  # fmt: skip

    async def _move(self, old: str, generation: int, fp: str, data: bytes, found: SourceDiff | None) -> Moved | None:
        now = self.clock()
        async with self.engine.begin() as conn:
            moved = await conn.execute(
                update(source_head)
                .where(source_head.c.name == HEAD, source_head.c.generation == generation)
                .values(fingerprint=fp, generation=generation + 1, updated_at=now)
            )  # fmt: skip
            if moved.rowcount != 1:
                return None  # another process moved it first: it sends
            await _insert_missing(conn, source_snapshots, {"fingerprint": fp, "data": data, "created_at": now})
            if found is None or found.empty:
                await self._prune(conn, generation)
                return None  # the old snapshot was lost, or nothing a digest shows changed: move on silently
            said = summary(found)
            digest_id = (await conn.execute(
                insert(digests).values(generation=generation, old_fingerprint=old, new_fingerprint=fp, summary=said,
                                       created_at=now).returning(digests.c.id)
            )).scalar_one()  # fmt: skip
            await self._prune(conn, generation)
            subs = (await conn.execute(select(subscriptions.c.id).where(subscriptions.c.status == ACTIVE))).scalars()
            ids = list(subs)
            if ids:
                await conn.execute(insert(digest_deliveries), [
                    {"digest_id": digest_id, "subscription_id": sid, "status": PENDING, "attempts": 0} for sid in ids
                ])  # fmt: skip
            return Moved(digest_id, old, fp, said, len(ids))

    async def _prune(self, conn: AsyncConnection, generation: int) -> None:
        """Keep the snapshots of the head and of the last ``KEEP_DIGESTS`` digests."""
        recent = select(digests.c.old_fingerprint, digests.c.new_fingerprint).where(
            digests.c.generation > generation - KEEP_DIGESTS
        )  # the digest just written (generation ``generation``) among them
        keep = {fp for row in await conn.execute(recent) for fp in row}
        keep |= set((await conn.execute(select(source_head.c.fingerprint))).scalars())
        await conn.execute(delete(source_snapshots).where(source_snapshots.c.fingerprint.not_in(sorted(keep))))

    async def entries_of(self, digest_id: int) -> tuple[list[Entry], list[Entry]] | None:
        """The two versions a digest compares, or None when they are no longer kept."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(
                select(digests.c.old_fingerprint, digests.c.new_fingerprint).where(digests.c.id == digest_id)
            )).first()  # fmt: skip
            if row is None:
                return None
            found = dict((await conn.execute(
                select(source_snapshots.c.fingerprint, source_snapshots.c.data)
                .where(source_snapshots.c.fingerprint.in_([row[0], row[1]]))
            )).all())  # fmt: skip
        if row[0] not in found or row[1] not in found:
            return None
        return unpack(found[row[0]]), unpack(found[row[1]])

    # -- subscriptions -----------------------------------------------------------------------------------------
    async def subscribe(self, scope: str, channel_id: str, user_id: str) -> str:
        """Subscribe a channel: "new", "again" (a failed one made active) or "already"."""
        now = self.clock()
        async with self.engine.begin() as conn:
            # A new scope starts at the global counter, as the repository starts one (retention.py explains why).
            start = select(counters.c.value).where(counters.c.name == RULINGS_COUNTER).scalar_subquery()
            await _insert_missing(conn, scopes, {"scope": scope, "revision": func.coalesce(start, 0)})
            row = (await conn.execute(
                select(subscriptions.c.id, subscriptions.c.status)
                .where(subscriptions.c.scope == scope, subscriptions.c.channel_id == channel_id)
            )).first()  # fmt: skip
            if row is None:
                await _insert_missing(conn, subscriptions, {
                    "scope": scope, "channel_id": channel_id, "status": ACTIVE, "created_by": user_id,
                    "created_at": now,
                })  # fmt: skip
                return "new"
            if row[1] == ACTIVE:
                return "already"
            await conn.execute(update(subscriptions).where(subscriptions.c.id == row[0]).values(
                status=ACTIVE, failed_at=None, failure=None, created_by=user_id, created_at=now))  # fmt: skip
            return "again"

    async def unsubscribe(self, scope: str, channel_id: str) -> bool:
        async with self.engine.begin() as conn:
            ids = list((await conn.execute(
                select(subscriptions.c.id)
                .where(subscriptions.c.scope == scope, subscriptions.c.channel_id == channel_id)
            )).scalars())  # fmt: skip
            if not ids:
                return False
            await conn.execute(delete(digest_deliveries).where(digest_deliveries.c.subscription_id.in_(ids)))
            await conn.execute(delete(subscriptions).where(subscriptions.c.id.in_(ids)))
            return True

    async def subscriptions(self, scope: str | None = None) -> list[Subscription]:
        query = select(subscriptions.c.scope, subscriptions.c.channel_id, subscriptions.c.status,
                       subscriptions.c.failure).order_by(subscriptions.c.id)  # fmt: skip
        if scope is not None:
            query = query.where(subscriptions.c.scope == scope)
        async with self.engine.connect() as conn:
            return [Subscription(*row) for row in await conn.execute(query)]

    # -- deliveries --------------------------------------------------------------------------------------------
    async def claim(self, limit: int = 50) -> list[Delivery]:
        """Take pending deliveries to send (each is taken by one process only)."""
        claimed: list[Delivery] = []
        async with self.engine.connect() as conn:
            rows = list(await conn.execute(
                select(digest_deliveries.c.id).where(digest_deliveries.c.status == PENDING)
                .order_by(digest_deliveries.c.id).limit(limit)
            ))  # fmt: skip
        for (delivery_id,) in rows:
            async with self.engine.begin() as conn:
                taken = await conn.execute(
                    update(digest_deliveries)
                    .where(digest_deliveries.c.id == delivery_id, digest_deliveries.c.status == PENDING)
                    .values(status=SENDING, claimed_at=self.clock(), attempts=digest_deliveries.c.attempts + 1)
                )  # fmt: skip
                if taken.rowcount != 1:
                    continue
                row = (await conn.execute(
                    select(digest_deliveries.c.digest_id, digest_deliveries.c.subscription_id, subscriptions.c.scope,
                           subscriptions.c.channel_id, digest_deliveries.c.attempts)
                    .select_from(digest_deliveries.join(
                        subscriptions, digest_deliveries.c.subscription_id == subscriptions.c.id))
                    .where(digest_deliveries.c.id == delivery_id)
                )).one()  # fmt: skip
                claimed.append(Delivery(delivery_id, row[0], row[1], row[2], row[3], int(row[4])))
        return claimed

    async def sent(self, delivery: Delivery, message_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(digest_deliveries).where(digest_deliveries.c.id == delivery.id)
                               .values(status=SENT, message_id=message_id, error=None))  # fmt: skip

    async def skipped(self, delivery: Delivery) -> None:
        """Nothing to post: every change is of a format the channel's server does not play."""
        async with self.engine.begin() as conn:
            await conn.execute(update(digest_deliveries).where(digest_deliveries.c.id == delivery.id)
                               .values(status=SKIPPED))  # fmt: skip

    async def failed(self, delivery: Delivery, error: str, *, for_good: bool) -> bool:
        """Sending failed. ``for_good`` (the channel is gone or forbidden): the delivery and the subscription are
        marked failed, never tried again. Else it is put back for a later try, up to ``MAX_ATTEMPTS``. Returns
        whether it was given up."""
        give_up = for_good or delivery.attempts >= MAX_ATTEMPTS
        async with self.engine.begin() as conn:
            await conn.execute(update(digest_deliveries).where(digest_deliveries.c.id == delivery.id)
                               .values(status=FAILED if give_up else PENDING, error=error[:500]))  # fmt: skip
            if for_good:
                await conn.execute(update(subscriptions).where(subscriptions.c.id == delivery.subscription_id)
                                   .values(status=FAILED, failed_at=self.clock(), failure=error[:500]))  # fmt: skip
        return give_up

    async def deliveries(self, digest_id: int | None = None) -> list[dict[str, Any]]:
        """Every delivery (of one digest) with its channel: for tests and the host's questions."""
        query = (
            select(digest_deliveries, subscriptions.c.channel_id, subscriptions.c.scope)
            .select_from(digest_deliveries.join(subscriptions,
                                                digest_deliveries.c.subscription_id == subscriptions.c.id))
            .order_by(digest_deliveries.c.id)
        )  # fmt: skip
        if digest_id is not None:
            query = query.where(digest_deliveries.c.digest_id == digest_id)
        async with self.engine.connect() as conn:
            return [dict(row._mapping) for row in await conn.execute(query)]

    async def digest_rows(self) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            return [dict(row._mapping) for row in await conn.execute(select(digests).order_by(digests.c.id))]


def compare(old_data: bytes, new_data: bytes) -> SourceDiff:
    """The facts between two kept snapshots."""
    return diff(unpack(old_data), unpack(new_data))


async def _insert_missing(conn: AsyncConnection, table: Any, values: dict[str, Any]) -> None:
    """Insert a row unless one with its key is there (two processes may insert it at once), in both dialects."""
    dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    await conn.execute(dialect_insert(table).values(**values).on_conflict_do_nothing())



"""The data's life: what is kept about a server and a user, for how long, and how it is deleted.

A server's rows are marked when the bot is removed from it (``scopes.left_at``) and deleted once the
mark is older than the grace period; a re-invite clears the mark, and nothing was deleted meanwhile.
An admin (``/ruling delete-all``) or the host (``python -m bot.rulings forget-server``) deletes a
server's rows at once (its rulings and its players' reports and confirmed pairs, ``bot.rulings.feedback``). A
user's deletion request (``forget-user``) replaces their id and name in the history with a placeholder; the
rulings themselves are the server's and stay; their pending reports lose their id, and pairs they confirmed name
the placeholder.

Every deletion runs in one transaction that first takes the rows it deletes (``FOR UPDATE`` on
PostgreSQL; on SQLite a write as the first statement takes the database's write lock), so two bot
processes purging at once delete each server once, and a re-invite committed first is never undone.
Each bumps the ``rulings`` counter, so every process reloads what it had in memory.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.rulings.schema import (
    RULINGS_COUNTER,
    counters,
    digest_deliveries,
    feedback,
    ruling_basis,
    ruling_versions,
    rulings,
    scopes,
    subscriptions,
)

DELETED_ID = "0"  # no Discord user has id 0
DELETED_NAME = "deleted user"
PURGE_BATCH = 100  # servers deleted per transaction (a long purge never holds the write lock for long)


@dataclass(frozen=True)
class Stored:
    """What is stored for one server: its rulings (active and retired), their versions, whether a judge role
    or an audit channel is set, whether it has a row in ``scopes`` at all (settings, revision, mark), and its
    players' reports (pending and confirmed, ``bot.rulings.feedback``)."""

    rulings: int = 0
    versions: int = 0
    settings: bool = False
    row: bool = False
    reports: int = 0

    @property
    def empty(self) -> bool:
        return not (self.row or self.rulings or self.versions or self.reports)


@dataclass(frozen=True)
class Forgotten:
    """What a user's deletion request changed."""

    versions: int  # history rows re-attributed to the placeholder
    judge_names: int  # "Judge:" names (current rulings and history rows) replaced
    rulings: int  # current rulings whose creator or last editor was the user
    settings: int  # server settings last changed by the user
    names: tuple[str, ...]  # the names replaced
    reports: int = 0  # pending reports that lose the user's id, and confirmed pairs whose judge was the user

    @property
    def changed(self) -> bool:
        return bool(self.versions or self.judge_names or self.rulings or self.settings or self.reports)


def guild_scope(guild_id: int | str) -> str:
    """The scope of a Discord server's rows (``bot.discord_bot.client.scope_of`` writes the same)."""
    return f"guild:{guild_id}"


def utc(value: dt.datetime) -> dt.datetime:
    """Aware UTC (SQLite keeps datetimes as UTC text without a zone: comparisons need UTC on both sides)."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


async def _bump_counter(conn: AsyncConnection) -> None:
    await conn.execute(update(counters).where(counters.c.name == RULINGS_COUNTER).values(value=counters.c.value + 1))


async def _claim(conn: AsyncConnection, condition: ColumnElement[bool], limit: int | None = None) -> list[str]:
    """Lock and return the scopes matching ``condition`` for the rest of the transaction."""
    picked = select(scopes.c.scope).where(condition).order_by(scopes.c.scope)
    if limit is not None:
        picked = picked.limit(limit)
    if conn.dialect.name == "postgresql":
        rows = await conn.execute(picked.with_for_update(skip_locked=limit is not None))
        return [scope for (scope,) in rows]
    # SQLite: writing first takes the write lock, and the rows are read under it (never from an older snapshot).
    rows = await conn.execute(
        update(scopes).where(scopes.c.scope.in_(picked.scalar_subquery())).values(left_at=scopes.c.left_at)
        .returning(scopes.c.scope)
    )  # fmt: skip
    return sorted(scope for (scope,) in rows)


async def _stored(conn: AsyncConnection, scope_list: Sequence[str]) -> dict[str, Stored]:
    if not scope_list:
        return {}
    ruling_counts = dict(
        (await conn.execute(
            select(rulings.c.scope, func.count()).where(rulings.c.scope.in_(scope_list)).group_by(rulings.c.scope)
        )).all()
    )  # fmt: skip
    version_counts = dict(
        (await conn.execute(
            select(rulings.c.scope, func.count())
            .select_from(ruling_versions.join(rulings, ruling_versions.c.ruling_id == rulings.c.id))
            .where(rulings.c.scope.in_(scope_list))
            .group_by(rulings.c.scope)
        )).all()
    )  # fmt: skip
    rows = await conn.execute(
        select(scopes.c.scope, scopes.c.judge_role_id, scopes.c.audit_channel_id, scopes.c.formats)
        .where(scopes.c.scope.in_(scope_list))
    )
    settings = {scope: bool(role or channel or formats is not None) for scope, role, channel, formats in rows}
    report_counts = dict(
        (await conn.execute(
            select(feedback.c.scope, func.count()).where(feedback.c.scope.in_(scope_list)).group_by(feedback.c.scope)
        )).all()
    )  # fmt: skip
    return {
        s: Stored(int(ruling_counts.get(s, 0)), int(version_counts.get(s, 0)), settings.get(s, False), s in settings,
                  int(report_counts.get(s, 0)))
        for s in scope_list
    }  # fmt: skip


async def _delete(conn: AsyncConnection, scope_list: Sequence[str]) -> dict[str, Stored]:
    """Delete every row of these scopes (reports, versions, rulings, settings); returns what each had."""
    found = await _stored(conn, scope_list)
    if not scope_list:
        return found
    ids = select(rulings.c.id).where(rulings.c.scope.in_(scope_list)).scalar_subquery()
    await conn.execute(delete(feedback).where(feedback.c.scope.in_(scope_list)))
    subs = select(subscriptions.c.id).where(subscriptions.c.scope.in_(scope_list)).scalar_subquery()
    await conn.execute(delete(digest_deliveries).where(digest_deliveries.c.subscription_id.in_(subs)))
    await conn.execute(delete(subscriptions).where(subscriptions.c.scope.in_(scope_list)))  # /changes subscribe
    await conn.execute(delete(ruling_versions).where(ruling_versions.c.ruling_id.in_(ids)))
    await conn.execute(delete(ruling_basis).where(ruling_basis.c.ruling_id.in_(ids)))  # the rule texts they rest on
    await conn.execute(delete(rulings).where(rulings.c.scope.in_(scope_list)))
    await conn.execute(delete(scopes).where(scopes.c.scope.in_(scope_list)))
    if any(not s.empty for s in found.values()):
        await _bump_counter(conn)
    return found


async def stored(engine: AsyncEngine, scope: str) -> Stored:
    """What is stored for ``scope`` now (for the confirmation of a deletion)."""
    async with engine.connect() as conn:
        return (await _stored(conn, [scope]))[scope]


async def delete_scope(engine: AsyncEngine, scope: str) -> Stored:
    """Delete everything stored for ``scope`` now; returns what was deleted."""
    async with engine.begin() as conn:
        await _claim(conn, scopes.c.scope == scope)
        return (await _delete(conn, [scope]))[scope]


async def mark_left(engine: AsyncEngine, left: Mapping[str, dt.datetime]) -> list[str]:
    """The bot was removed from these servers (scope -> when): mark the ones that have rows and no mark yet."""
    marked: list[str] = []
    if not left:
        return marked
    async with engine.begin() as conn:
        for scope, when in sorted(left.items()):
            result = await conn.execute(
                update(scopes).where(scopes.c.scope == scope, scopes.c.left_at.is_(None)).values(left_at=utc(when))
            )
            if result.rowcount:
                marked.append(scope)
    return marked


async def clear_left(engine: AsyncEngine, present: Iterable[str]) -> list[str]:
    """The bot is in these servers (again): clear their marks; returns the scopes whose mark was cleared."""
    wanted = sorted(set(present))
    cleared: list[str] = []
    async with engine.begin() as conn:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = await conn.execute(
                update(scopes).where(scopes.c.scope.in_(chunk), scopes.c.left_at.is_not(None)).values(left_at=None)
                .returning(scopes.c.scope)
            )  # fmt: skip
            cleared += [scope for (scope,) in rows]
    return sorted(cleared)


async def marked(engine: AsyncEngine) -> dict[str, dt.datetime]:
    """Every scope marked as left, with when."""
    async with engine.connect() as conn:
        rows = await conn.execute(select(scopes.c.scope, scopes.c.left_at).where(scopes.c.left_at.is_not(None)))
        return {scope: utc(when) for scope, when in rows}


async def unmarked(engine: AsyncEngine) -> list[str]:
    """Every scope with rows and no mark (servers the bot is taken to be in)."""
    async with engine.connect() as conn:
        return sorted((await conn.execute(select(scopes.c.scope).where(scopes.c.left_at.is_(None)))).scalars())


async def purge(engine: AsyncEngine, cutoff: dt.datetime, batch: int = PURGE_BATCH) -> dict[str, Stored]:
    """Delete every scope marked before ``cutoff``; returns what each had. Safe to run in several processes
    at once (each scope is deleted by one of them) and again (nothing left: nothing done)."""
    expired = scopes.c.left_at.is_not(None) & (scopes.c.left_at < utc(cutoff))
    purged: dict[str, Stored] = {}
    while True:
        async with engine.begin() as conn:
            claimed = await _claim(conn, expired, limit=batch)
            purged.update(await _delete(conn, claimed))
        if len(claimed) < batch:
            return purged


async def forget_user(engine: AsyncEngine, user_id: str, names: Iterable[str] = ()) -> Forgotten:
    """Replace ``user_id`` and their names with the placeholder everywhere rulings record them.

    Their recorded names (the names their changes were made under) are replaced as the "Judge:" of the
    rulings they touched; ``names`` (given by the host) are replaced as "Judge:" in every ruling. Ruling
    texts are kept as written. Every server touched gets a new revision, so answers show the change.
    """
    v, r = ruling_versions.c, rulings.c
    extra = sorted({n for n in names if n and n != DELETED_NAME})
    async with engine.begin() as conn:
        await _bump_counter(conn)  # first: the write lock (SQLite) before anything is read
        recorded = sorted(set((await conn.execute(select(v.author_name).where(v.author_id == user_id))).scalars()))
        touched = set((await conn.execute(select(v.ruling_id).where(v.author_id == user_id).distinct())).scalars())
        touched |= set((await conn.execute(
            select(r.id).where((r.created_by == user_id) | (r.updated_by == user_id))
        )).scalars())  # fmt: skip
        ids = sorted(touched)
        in_versions = _or(v.judge.in_(recorded) & v.ruling_id.in_(ids) if recorded else None,
                          v.judge.in_(extra) if extra else None)  # fmt: skip
        in_rulings = _or(r.judge.in_(recorded) & r.id.in_(ids) if recorded else None,
                         r.judge.in_(extra) if extra else None)  # fmt: skip
        affected = set((await conn.execute(select(r.scope).where(r.id.in_(ids)))).scalars())
        judge_names = 0
        if in_rulings is not None and in_versions is not None:
            affected |= set((await conn.execute(select(r.scope).where(in_rulings))).scalars())
            judge_names += (await conn.execute(update(rulings).where(in_rulings).values(judge=DELETED_NAME))).rowcount
            judge_names += (
                await conn.execute(update(ruling_versions).where(in_versions).values(judge=DELETED_NAME))
            ).rowcount
        versions = (
            await conn.execute(
                update(ruling_versions).where(v.author_id == user_id)
                .values(author_id=DELETED_ID, author_name=DELETED_NAME)
            )
        ).rowcount  # fmt: skip
        await conn.execute(update(rulings).where(r.created_by == user_id).values(created_by=DELETED_ID))
        await conn.execute(update(rulings).where(r.updated_by == user_id).values(updated_by=DELETED_ID))
        settings = (
            await conn.execute(update(scopes).where(scopes.c.updated_by == user_id).values(updated_by=DELETED_ID))
        ).rowcount
        settings += (await conn.execute(  # the digests' subscriptions they made (bot.rulings.digests)
            update(subscriptions).where(subscriptions.c.created_by == user_id).values(created_by=DELETED_ID)
        )).rowcount  # fmt: skip
        # Their pending reports stay for the judges without saying whose; pairs they confirmed name the placeholder.
        reports = (await conn.execute(
            update(feedback).where(feedback.c.reporter_id == user_id).values(reporter_id=None)
        )).rowcount  # fmt: skip
        reports += (await conn.execute(
            update(feedback).where(feedback.c.reviewed_by == user_id).values(reviewed_by=DELETED_ID)
        )).rowcount  # fmt: skip
        if affected:
            await conn.execute(
                update(scopes).where(scopes.c.scope.in_(sorted(affected))).values(revision=scopes.c.revision + 1)
            )
    return Forgotten(
        versions, judge_names, len(ids), settings, tuple(recorded + [n for n in extra if n not in recorded]), reports
    )


def _or(a: ColumnElement[bool] | None, b: ColumnElement[bool] | None) -> ColumnElement[bool] | None:
    if a is None or b is None:
        return a if b is None else b
    return a | b


def _when(value: dt.datetime | None) -> str | None:
    return utc(value).isoformat() if value is not None else None


async def export_scope(engine: AsyncEngine, scope: str) -> dict[str, Any]:
    """Everything stored for ``scope``, as JSON-ready data: settings, rulings and every version of each, and its
    players' reports and confirmed pairs."""
    async with engine.connect() as conn:
        row = (await conn.execute(select(scopes).where(scopes.c.scope == scope))).first()
        found = list(await conn.execute(select(rulings).where(rulings.c.scope == scope).order_by(rulings.c.id)))
        ids = [m._mapping["id"] for m in found]
        history = list(
            await conn.execute(
                select(ruling_versions).where(ruling_versions.c.ruling_id.in_(ids))
                .order_by(ruling_versions.c.ruling_id, ruling_versions.c.version)
            )
        ) if ids else []  # fmt: skip
        reports = list(await conn.execute(select(feedback).where(feedback.c.scope == scope).order_by(feedback.c.id)))
    by_ruling: dict[int, list[dict[str, Any]]] = {}
    for version in history:
        m = dict(version._mapping)
        entry = {k: m[k] for k in ("version", "action", "status", "title", "text", "event", "judge", "ruled_on",
                                   "note", "author_id", "author_name")}  # fmt: skip
        entry["applies_to"] = json.loads(m["applies_to"])
        entry["created_at"] = _when(m["created_at"])
        by_ruling.setdefault(m["ruling_id"], []).append(entry)
    settings = None
    if row is not None:
        m = dict(row._mapping)
        settings = {
            "judge_role_id": m["judge_role_id"],
            "audit_channel_id": m["audit_channel_id"],
            "formats": json.loads(m["formats"]) if m["formats"] is not None else None,
            "updated_at": _when(m["updated_at"]),
            "updated_by": m["updated_by"],
            "left_at": _when(m["left_at"]),
        }
    out_rulings = []
    for ruling in found:
        m = dict(ruling._mapping)
        item = {k: m[k] for k in ("id", "version", "status", "title", "text", "event", "judge", "ruled_on",
                                  "created_by", "updated_by")}  # fmt: skip
        item["applies_to"] = json.loads(m["applies_to"])
        item["created_at"], item["updated_at"] = _when(m["created_at"]), _when(m["updated_at"])
        item["versions"] = by_ruling.get(m["id"], [])
        out_rulings.append(item)
    out_reports = []
    for report in reports:
        m = dict(report._mapping)
        item = {k: m[k] for k in ("id", "status", "question", "entry_id", "paragraph", "reporter_id", "reviewed_by")}
        item["reported_at"], item["reviewed_at"] = _when(m["reported_at"]), _when(m["reviewed_at"])
        out_reports.append(item)
    return {"scope": scope, "settings": settings, "rulings": out_rulings, "feedback": out_reports}

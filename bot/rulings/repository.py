"""Every read and write of rulings, one transaction each, with no Discord in sight.

Rules the schema alone cannot enforce live here:
- a change is a new row in ``ruling_versions`` (who, when, what); nothing is deleted here (only the
  privacy deletions in ``retention`` delete or re-attribute rows);
- an edit names the version its author saw; if another edit landed first, ``Conflict`` carries the
  current ruling and nothing is written (optimistic concurrency: the second judge loses nothing,
  they get the current text and their own draft back);
- every query is filtered by scope, so one server can never read or change another's rulings;
- every change bumps its scope's revision and the ``rulings`` counter in the same transaction,
  which is what other bot processes poll.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import and_, bindparam, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.rulings import basis
from bot.rulings.basis import RuleText
from bot.rulings.schema import RULINGS_COUNTER, counters, ruling_versions, rulings, scopes
from index.text.analysis import fold

ACTIVE, RETIRED = "active", "retired"
IMPORT_BATCH = 500  # rulings per statement in an import: one round trip each, the event loop runs between them
# The texts of the entries a ruling applies to, as the sources have them now (bot.rulings.basis): recorded with it.
TextsOf = Callable[[Sequence[str]], Sequence[RuleText]]


@dataclass(frozen=True)
class Author:
    """Who makes a change: a Discord user id and the name shown for them at that moment."""

    id: str
    name: str


@dataclass(frozen=True)
class Draft:
    """What a judge submits: the ruling's content. ``applies_to`` holds shared entry ids."""

    title: str
    text: str
    applies_to: tuple[str, ...] = ()
    event: str | None = None
    judge: str | None = None  # who ruled (default: the author)
    ruled_on: str | None = None  # YYYY-MM-DD (default: today, UTC)

    def same_content(self, ruling: Ruling) -> bool:
        return (
            self.title == ruling.title
            and self.text == ruling.text
            and tuple(self.applies_to) == tuple(ruling.applies_to)
            and (self.event or None) == ruling.event
            and (self.judge is None or self.judge == ruling.judge)
            and (self.ruled_on is None or self.ruled_on == ruling.ruled_on)
        )


@dataclass(frozen=True)
class Ruling:
    """A ruling's current state."""

    id: int
    scope: str
    version: int
    status: str
    title: str
    text: str
    applies_to: tuple[str, ...]
    event: str | None
    judge: str | None
    ruled_on: str
    created_at: dt.datetime
    created_by: str
    updated_at: dt.datetime
    updated_by: str
    edited_on: str | None = None  # date of the latest edit, when there was one after the first version
    review_since: str | None = None  # "needs review": the date the rule it applies to changed (bot.rulings.review)

    @property
    def active(self) -> bool:
        return self.status == ACTIVE


@dataclass(frozen=True)
class Version:
    """One state a ruling had: the action that made it, who, when."""

    ruling_id: int
    version: int
    action: str
    status: str
    title: str
    text: str
    applies_to: tuple[str, ...]
    event: str | None
    judge: str | None
    ruled_on: str
    note: str | None
    author_id: str
    author_name: str
    created_at: dt.datetime


@dataclass(frozen=True)
class ScopeConfig:
    scope: str
    revision: int = 0
    judge_role_id: str | None = None
    audit_channel_id: str | None = None
    formats: tuple[str, ...] | None = None  # format ids the server plays (glossary.formats); None: it chose nothing


@dataclass
class ImportResult:
    added: list[Ruling] = field(default_factory=list)
    updated: list[Ruling] = field(default_factory=list)
    unchanged: list[Ruling] = field(default_factory=list)


class Conflict(Exception):
    """Another change landed first; ``current`` is the ruling as it now stands."""

    def __init__(self, current: Ruling) -> None:
        super().__init__(f"ruling {current.id} is at version {current.version}")
        self.current = current


class NotFound(LookupError):
    """No such ruling in this scope."""


class NotFlagged(ValueError):
    """The ruling needs no review (never flagged, or already cleared); ``current`` is how it stands."""

    def __init__(self, current: Ruling) -> None:
        super().__init__(f"ruling {current.id} needs no review")
        self.current = current


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands datetimes back without a zone; they were written in UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _ruling(row: Row, edited_on: str | None = None) -> Ruling:
    m = row._mapping
    return Ruling(
        id=m["id"],
        scope=m["scope"],
        version=m["version"],
        status=m["status"],
        title=m["title"],
        text=m["text"],
        applies_to=tuple(json.loads(m["applies_to"])),
        event=m["event"],
        judge=m["judge"],
        ruled_on=m["ruled_on"],
        created_at=_aware(m["created_at"]),
        created_by=m["created_by"],
        updated_at=_aware(m["updated_at"]),
        updated_by=m["updated_by"],
        edited_on=edited_on,
        review_since=m["review_since"],
    )


def _version(row: Row) -> Version:
    m = row._mapping
    return Version(
        ruling_id=m["ruling_id"],
        version=m["version"],
        action=m["action"],
        status=m["status"],
        title=m["title"],
        text=m["text"],
        applies_to=tuple(json.loads(m["applies_to"])),
        event=m["event"],
        judge=m["judge"],
        ruled_on=m["ruled_on"],
        note=m["note"],
        author_id=m["author_id"],
        author_name=m["author_name"],
        created_at=_aware(m["created_at"]),
    )


class RulingsRepository:
    """Async access to the rulings tables through one SQLAlchemy engine (SQLite or PostgreSQL)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    # -- changes ---------------------------------------------------------------------------------
    async def add(
        self, scope: str, draft: Draft, author: Author, action: str = "add", texts: Sequence[RuleText] = ()
    ) -> Ruling:
        """A new ruling; ``texts`` (the entries it applies to, as the sources have them) are recorded with it."""
        async with self.engine.begin() as conn:
            ruling = await self._insert(conn, scope, draft, author, action)
            await basis.record(conn, ruling.id, scope, texts, ruling.created_at)
            await self._bump(conn, scope)
        return ruling

    async def edit(
        self,
        scope: str,
        ruling_id: int,
        expected_version: int,
        draft: Draft,
        author: Author,
        texts: Sequence[RuleText] = (),
    ) -> Ruling:
        """A new version with ``draft``'s content; ``Conflict`` if ``expected_version`` is not current. The
        judge looked at it again: ``texts`` become its basis and a "needs review" flag is cleared."""
        async with self.engine.begin() as conn:
            current = await self._current(conn, scope, ruling_id)
            if current.version != expected_version:
                raise Conflict(current)
            ruling = await self._write(conn, current, draft, current.status, "edit", author, None, expected_version)
            await basis.record(conn, ruling.id, scope, texts, ruling.updated_at)
            await self._bump(conn, scope)
        return ruling

    async def stands(self, scope: str, ruling_id: int, author: Author, texts: Sequence[RuleText]) -> Ruling:
        """A judge says the ruling still stands on the rule as it reads now: a new version (action ``stands``,
        content unchanged), ``texts`` its basis, the flag cleared. Nothing is written if it has no flag."""
        async with self.engine.begin() as conn:
            await self._bump(conn, scope)  # first: the write lock (SQLite) before anything is read
            current = await self._current(conn, scope, ruling_id)
            if current.review_since is None:
                raise NotFlagged(current)
            draft = Draft(
                current.title, current.text, current.applies_to, current.event, current.judge, current.ruled_on
            )
            ruling = await self._write(conn, current, draft, current.status, "stands", author, None, current.version)
            await basis.record(conn, ruling.id, scope, texts, ruling.updated_at)
        return ruling

    async def set_status(
        self, scope: str, ruling_id: int, status: str, author: Author, note: str | None = None
    ) -> Ruling:
        """Retire (hide from answers) or restore a ruling: a new version; the text is kept."""
        async with self.engine.begin() as conn:
            current = await self._current(conn, scope, ruling_id)
            if current.status == status:
                return current
            draft = Draft(
                current.title, current.text, current.applies_to, current.event, current.judge, current.ruled_on
            )
            action = "retire" if status == RETIRED else "restore"
            ruling = await self._write(conn, current, draft, status, action, author, note, current.version)
            await self._bump(conn, scope)
        return ruling

    async def import_drafts(
        self, scope: str, drafts: Sequence[Draft], author: Author, texts_of: TextsOf | None = None
    ) -> ImportResult:
        """All or nothing, in one transaction: a draft titled like an active ruling becomes its next version
        (unless identical), any other draft a new ruling; of two drafts with one title, the later is kept.

        Rows are written ``IMPORT_BATCH`` at a time (two statements a batch, not several per ruling, and the
        event loop runs between batches), so the cost grows linearly with the file. If another change to one
        of these rulings lands between the read and the write, its version row is already there: the unique
        (ruling, version) key fails the import as a whole (``IntegrityError``) and nothing is written.
        """
        result = ImportResult()
        at = _now()
        async with self.engine.begin() as conn:
            await self._ensure_scope(conn, scope)
            existing = {fold(r.title): r for r in await self._list(conn, scope, include_retired=False)}
            fresh: list[Draft] = []
            changed: list[tuple[Ruling, Draft]] = []
            for key, draft in {fold(d.title): d for d in drafts}.items():
                current = existing.get(key)
                if current is None:
                    fresh.append(draft)
                elif draft.same_content(current):
                    result.unchanged.append(current)
                else:
                    changed.append((current, draft))
            for start in range(0, len(fresh), IMPORT_BATCH):
                result.added += await self._insert_batch(conn, scope, fresh[start : start + IMPORT_BATCH], author, at)
                await asyncio.sleep(0)
            for start in range(0, len(changed), IMPORT_BATCH):
                result.updated += await self._update_batch(conn, changed[start : start + IMPORT_BATCH], author, at)
                await asyncio.sleep(0)
            if texts_of is not None:  # what each added or changed ruling was made against (unchanged ones keep theirs)
                for ruling in result.added + result.updated:
                    await basis.record(conn, ruling.id, scope, texts_of(ruling.applies_to), at)
            if result.added or result.updated:
                await self._bump(conn, scope)
        return result

    async def _insert_batch(
        self, conn: AsyncConnection, scope: str, drafts: Sequence[Draft], author: Author, at: dt.datetime
    ) -> list[Ruling]:
        """New rulings (version 1, action ``import``): one multi-row insert for them, one for their versions."""
        made = [(d, d.judge or author.name, d.ruled_on or at.date().isoformat()) for d in drafts]
        rows = [
            {"scope": scope, "version": 1, "status": ACTIVE, "title": d.title, "text": d.text,
             "applies_to": json.dumps(list(d.applies_to)), "event": d.event or None, "judge": judge,
             "ruled_on": ruled_on, "created_at": at, "created_by": author.id, "updated_at": at,
             "updated_by": author.id}
            for d, judge, ruled_on in made
        ]  # fmt: skip
        # Titles are unique within a batch (drafts were keyed by title): they tell which id is whose, whatever
        # order the database returns them in (asking for parameter order makes SQLite insert row by row).
        found = await conn.execute(insert(rulings).returning(rulings.c.id, rulings.c.title), rows)
        by_title = {title: int(ruling_id) for ruling_id, title in found}
        ids = [by_title[d.title] for d in drafts]
        versions = [
            self._version_values(i, 1, "import", ACTIVE, d, judge, ruled_on, None, author, at)
            for i, (d, judge, ruled_on) in zip(ids, made, strict=True)
        ]
        await conn.execute(insert(ruling_versions), versions)
        return [
            Ruling(i, scope, 1, ACTIVE, d.title, d.text, tuple(d.applies_to), d.event or None, judge, ruled_on,
                   at, author.id, at, author.id)
            for i, (d, judge, ruled_on) in zip(ids, made, strict=True)
        ]  # fmt: skip

    async def _update_batch(
        self, conn: AsyncConnection, changes: Sequence[tuple[Ruling, Draft]], author: Author, at: dt.datetime
    ) -> list[Ruling]:
        """Next versions of existing rulings (action ``import``, made active): one executemany update, one
        multi-row insert of their versions (which fails on the unique key if one changed meanwhile)."""
        made = [
            (current, draft, draft.judge or current.judge or author.name, draft.ruled_on or current.ruled_on)
            for current, draft in changes
        ]
        statement = (
            update(rulings)
            .where(
                rulings.c.id == bindparam("b_id"),
                rulings.c.scope == bindparam("b_scope"),
                rulings.c.version == bindparam("b_seen"),
            )
            .values(
                version=bindparam("b_version"), status=ACTIVE, title=bindparam("b_title"), text=bindparam("b_text"),
                applies_to=bindparam("b_applies"), event=bindparam("b_event"), judge=bindparam("b_judge"),
                ruled_on=bindparam("b_ruled_on"), updated_at=at, updated_by=author.id, review_since=None,
            )
        )  # fmt: skip
        await conn.execute(
            statement,
            [
                {"b_id": c.id, "b_scope": c.scope, "b_seen": c.version, "b_version": c.version + 1, "b_title": d.title,
                 "b_text": d.text,
                 "b_applies": json.dumps(list(d.applies_to)), "b_event": d.event or None, "b_judge": judge,
                 "b_ruled_on": ruled_on}
                for c, d, judge, ruled_on in made
            ],
        )  # fmt: skip
        versions = [
            self._version_values(c.id, c.version + 1, "import", ACTIVE, d, judge, ruled_on, None, author, at)
            for c, d, judge, ruled_on in made
        ]
        await conn.execute(insert(ruling_versions), versions)
        edited_on = at.date().isoformat()
        return [
            dataclasses.replace(
                c, version=c.version + 1, status=ACTIVE, title=d.title, text=d.text, applies_to=tuple(d.applies_to),
                event=d.event or None, judge=judge, ruled_on=ruled_on, updated_at=at, updated_by=author.id,
                edited_on=edited_on, review_since=None,
            )
            for c, d, judge, ruled_on in made
        ]  # fmt: skip

    async def set_config(
        self,
        scope: str,
        author: Author,
        *,
        judge_role_id: str | None | type[Ellipsis] = ...,
        audit_channel_id: str | None | type[Ellipsis] = ...,
        formats: Sequence[str] | None | type[Ellipsis] = ...,
    ) -> ScopeConfig:
        """Change a server's settings (``...`` leaves a setting as it is). Choosing ``formats`` (format ids; None:
        none chosen, every format shown) changes what its answers show, so it moves the scope's revision on and
        other processes rebuild its overlay at their next poll, as after a ruling change."""
        values: dict[str, object] = {"updated_at": _now(), "updated_by": author.id}
        if judge_role_id is not ...:
            values["judge_role_id"] = judge_role_id
        if audit_channel_id is not ...:
            values["audit_channel_id"] = audit_channel_id
        if formats is not ...:
            values["formats"] = None if formats is None else json.dumps(list(dict.fromkeys(formats)))  # type: ignore[arg-type]
        async with self.engine.begin() as conn:
            await self._ensure_scope(conn, scope)
            await conn.execute(update(scopes).where(scopes.c.scope == scope).values(**values))
            if formats is not ...:
                await self._bump(conn, scope)
            return await self._config(conn, scope)

    async def bump_counter(self, name: str) -> int:
        """Increment a process-wide counter (e.g. ``reload``) and return its new value."""
        async with self.engine.begin() as conn:
            return await self._increment(conn, name)

    # -- reads -----------------------------------------------------------------------------------
    async def get(self, scope: str, ruling_id: int) -> Ruling | None:
        async with self.engine.connect() as conn:
            try:
                return await self._current(conn, scope, ruling_id)
            except NotFound:
                return None

    async def active(self, scope: str) -> tuple[int, list[Ruling]]:
        """The scope's revision and its active rulings, read together (one snapshot)."""
        async with self.engine.begin() as conn:
            config = await self._config(conn, scope)
            return config.revision, await self._list(conn, scope, include_retired=False)

    async def list(self, scope: str, *, include_retired: bool = False, event: str | None = None) -> list[Ruling]:
        async with self.engine.connect() as conn:
            found = await self._list(conn, scope, include_retired=include_retired)
        if event:
            found = [r for r in found if r.event and fold(r.event) == fold(event)]
        return found

    async def history(self, scope: str, ruling_id: int) -> list[Version]:
        """Every version of a ruling, oldest first (``NotFound`` outside this scope)."""
        async with self.engine.connect() as conn:
            await self._current(conn, scope, ruling_id)
            rows = await conn.execute(
                select(ruling_versions)
                .where(ruling_versions.c.ruling_id == ruling_id)
                .order_by(ruling_versions.c.version)
            )
            return [_version(r) for r in rows]

    async def config(self, scope: str) -> ScopeConfig:
        async with self.engine.connect() as conn:
            return await self._config(conn, scope)

    async def counters(self) -> dict[str, int]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(counters.c.name, counters.c.value))
            return {name: int(value) for name, value in rows}

    async def revisions(self, scope_list: Iterable[str]) -> dict[str, int]:
        """Current revision of each scope that has a row (scopes never written to have none)."""
        wanted = list(scope_list)
        if not wanted:
            return {}
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(scopes.c.scope, scopes.c.revision).where(scopes.c.scope.in_(wanted)))
            return {scope: int(revision) for scope, revision in rows}

    async def events(self, scope: str) -> list[str]:
        """Event names used by the scope's active rulings, most recent first."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(rulings.c.event, func.max(rulings.c.updated_at).label("latest"))
                .where(rulings.c.scope == scope, rulings.c.status == ACTIVE, rulings.c.event.is_not(None))
                .group_by(rulings.c.event)
                .order_by(func.max(rulings.c.updated_at).desc())
            )
            return [event for event, _latest in rows]

    # -- internals -------------------------------------------------------------------------------
    async def _ensure_scope(self, conn: AsyncConnection, scope: str) -> None:
        found = await conn.execute(select(scopes.c.scope).where(scopes.c.scope == scope))
        if found.first() is None:
            # Two processes may write a new scope's first ruling at once: insert-if-missing, in both dialects.
            dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            # A new scope starts at the global counter, not 0: a server deleted and written again (retention.py)
            # never repeats a revision another process still holds for it.
            start = select(counters.c.value).where(counters.c.name == RULINGS_COUNTER).scalar_subquery()
            stmt = dialect_insert(scopes).values(scope=scope, revision=func.coalesce(start, 0))
            await conn.execute(stmt.on_conflict_do_nothing(index_elements=["scope"]))

    async def _config(self, conn: AsyncConnection, scope: str) -> ScopeConfig:
        row = (await conn.execute(select(scopes).where(scopes.c.scope == scope))).first()
        if row is None:
            return ScopeConfig(scope)
        m = row._mapping
        chosen = m["formats"]
        formats = tuple(json.loads(chosen)) if chosen is not None else None
        return ScopeConfig(scope, int(m["revision"]), m["judge_role_id"], m["audit_channel_id"], formats)

    async def _increment(self, conn: AsyncConnection, name: str) -> int:
        result = await conn.execute(
            update(counters)
            .where(counters.c.name == name)
            .values(value=counters.c.value + 1)
            .returning(counters.c.value)
        )
        value = result.scalar_one_or_none()
        if value is None:
            await conn.execute(insert(counters).values(name=name, value=1))
            value = 1
        return int(value)

    async def _bump(self, conn: AsyncConnection, scope: str) -> None:
        await conn.execute(update(scopes).where(scopes.c.scope == scope).values(revision=scopes.c.revision + 1))
        await self._increment(conn, RULINGS_COUNTER)

    async def _edited_on(self, conn: AsyncConnection, ids: list[int]) -> dict[int, str]:
        """Date of each ruling's latest content change after its first version (edits and imports)."""
        if not ids:
            return {}
        rows = await conn.execute(
            select(ruling_versions.c.ruling_id, func.max(ruling_versions.c.created_at))
            .where(
                ruling_versions.c.ruling_id.in_(ids),
                ruling_versions.c.version > 1,
                ruling_versions.c.action.in_(("edit", "import")),
            )
            .group_by(ruling_versions.c.ruling_id)
        )
        return {rid: _aware(when).date().isoformat() for rid, when in rows if when is not None}

    async def _current(self, conn: AsyncConnection, scope: str, ruling_id: int) -> Ruling:
        row = (
            await conn.execute(select(rulings).where(and_(rulings.c.id == ruling_id, rulings.c.scope == scope)))
        ).first()
        if row is None:
            raise NotFound(f"no ruling #{ruling_id} in this server")
        return _ruling(row, (await self._edited_on(conn, [ruling_id])).get(ruling_id))

    async def _list(self, conn: AsyncConnection, scope: str, *, include_retired: bool) -> list[Ruling]:
        query = select(rulings).where(rulings.c.scope == scope)
        if not include_retired:
            query = query.where(rulings.c.status == ACTIVE)
        rows = list(await conn.execute(query.order_by(rulings.c.id)))
        edited = await self._edited_on(conn, [r._mapping["id"] for r in rows])
        return [_ruling(r, edited.get(r._mapping["id"])) for r in rows]

    @staticmethod
    def _version_values(
        ruling_id: int,
        version: int,
        action: str,
        status: str,
        draft: Draft,
        judge: str,
        ruled_on: str,
        note: str | None,
        author: Author,
        at: dt.datetime,
    ) -> dict[str, object]:
        return {
            "ruling_id": ruling_id,
            "version": version,
            "action": action,
            "status": status,
            "title": draft.title,
            "text": draft.text,
            "applies_to": json.dumps(list(draft.applies_to)),
            "event": draft.event or None,
            "judge": judge,
            "ruled_on": ruled_on,
            "note": note,
            "author_id": author.id,
            "author_name": author.name,
            "created_at": at,
        }

    async def _insert(self, conn: AsyncConnection, scope: str, draft: Draft, author: Author, action: str) -> Ruling:
        await self._ensure_scope(conn, scope)
        at = _now()
        judge = draft.judge or author.name
        ruled_on = draft.ruled_on or at.date().isoformat()
        result = await conn.execute(
            insert(rulings)
            .values(
                scope=scope,
                version=1,
                status=ACTIVE,
                title=draft.title,
                text=draft.text,
                applies_to=json.dumps(list(draft.applies_to)),
                event=draft.event or None,
                judge=judge,
                ruled_on=ruled_on,
                created_at=at,
                created_by=author.id,
                updated_at=at,
                updated_by=author.id,
            )
            .returning(rulings.c.id)
        )
        ruling_id = int(result.scalar_one())
        values = self._version_values(ruling_id, 1, action, ACTIVE, draft, judge, ruled_on, None, author, at)
        await conn.execute(insert(ruling_versions).values(**values))
        return await self._current(conn, scope, ruling_id)

    async def _write(
        self,
        conn: AsyncConnection,
        current: Ruling,
        draft: Draft,
        status: str,
        action: str,
        author: Author,
        note: str | None,
        expected_version: int,
    ) -> Ruling:
        at = _now()
        judge = draft.judge or current.judge or author.name
        ruled_on = draft.ruled_on or current.ruled_on
        version = expected_version + 1
        result = await conn.execute(
            update(rulings)
            .where(rulings.c.id == current.id, rulings.c.scope == current.scope, rulings.c.version == expected_version)
            .values(
                version=version,
                status=status,
                title=draft.title,
                text=draft.text,
                applies_to=json.dumps(list(draft.applies_to)),
                event=draft.event or None,
                judge=judge,
                ruled_on=ruled_on,
                updated_at=at,
                updated_by=author.id,
                # a judge looked at its content again (edit, import, "still stands"); retiring keeps the flag
                review_since=current.review_since if action in ("retire", "restore") else None,
            )
        )
        if result.rowcount != 1:  # another transaction got there between our read and our write
            raise Conflict(await self._current(conn, current.scope, current.id))
        values = self._version_values(current.id, version, action, status, draft, judge, ruled_on, note, author, at)
        await conn.execute(insert(ruling_versions).values(**values))
        return await self._current(conn, current.scope, current.id)

"""Players' "Not the answer?" reports and the pairs a server's judges confirm from them, Discord-free.

A member who finds that an ``/ask`` answer quotes the wrong paragraph picks the right one (or says none
answers); that is a *pending report*: the question as asked, the paragraph picked (entry id and 0-based
number, with a digest of its text), the server, and who reported it. A judge of that server then
*confirms* it (possibly with another paragraph, or with none: the loaded rules do not answer it) or *dismisses*
it. A confirmed pair is that server's own kept question (``index.query.overlay.Kept``): the question and its
paraphrases are answered with that paragraph first, in that server only; confirmed with no paragraph, they are
answered with the line that the loaded rules may not cover them. Confirming drops the reporter's id (only the
judge's stays: who vouches for the pair); dismissing deletes the report.

Stored no more than that (docs/privacy.md). Every change that alters answers (a confirmation, a
withdrawal) bumps the server's revision and the ``rulings`` counter in the same transaction, as a ruling
change does, so every bot process reloads that server's overlay at its next poll.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.rulings.repository import NotFound, RulingsRepository
from bot.rulings.schema import feedback
from index.query.overlay import Kept

PENDING, CONFIRMED = "pending", "confirmed"
QUESTION_MAX = 300  # what /ask searches on (bot.app.judge.QUERY_LIMIT)
MAX_PENDING = 100  # pending reports a server holds at most (its judges review them; spam stops here)
MAX_PENDING_EACH = 5  # pending reports one member may have at once

Outcome = Literal["saved", "duplicate", "yours_full", "server_full"]


@dataclass(frozen=True)
class Report:
    """One row: a pending report, or a confirmed pair (then ``reporter_id`` is None)."""

    id: int
    scope: str
    status: str
    question: str
    entry_id: str | None  # None: "none of these answers it"
    paragraph: int | None
    digest: str | None
    reporter_id: str | None
    reported_at: dt.datetime
    reviewed_by: str | None
    reviewed_at: dt.datetime | None

    @property
    def kept(self) -> Kept | None:
        """The pair as the overlay takes it: a paragraph that answers, or (confirmed without one) the judges'
        word that the loaded rules do not answer the question. None for a pending report."""
        if self.status != CONFIRMED:
            return None
        if self.entry_id is None or self.paragraph is None:
            return Kept(self.question, None, None)
        return Kept(self.question, self.entry_id, self.paragraph, self.digest)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands datetimes back without a zone; they were written in UTC."""
    return value if value is None or value.tzinfo else value.replace(tzinfo=dt.UTC)


def _report(row: Row) -> Report:
    m = row._mapping
    reported = _aware(m["reported_at"])
    assert reported is not None
    return Report(
        id=int(m["id"]), scope=m["scope"], status=m["status"], question=m["question"], entry_id=m["entry_id"],
        paragraph=m["paragraph"], digest=m["digest"], reporter_id=m["reporter_id"], reported_at=reported,
        reviewed_by=m["reviewed_by"], reviewed_at=_aware(m["reviewed_at"]),
    )  # fmt: skip


def _same_question(question: str):  # type: ignore[no-untyped-def]
    """The same question however it was cased or spaced (reports are compared on this)."""
    return func.lower(feedback.c.question) == " ".join(question.split()).lower()


class FeedbackStore:
    """Reports and confirmed pairs through the rulings database (one transaction per call); every query is
    filtered by scope, so a server never reads or reviews another's."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._rulings = RulingsRepository(engine)  # the scope row and its revision follow the rulings' rules

    async def report(
        self,
        scope: str,
        question: str,
        reporter_id: str,
        entry_id: str | None = None,
        paragraph: int | None = None,
        digest: str | None = None,
    ) -> tuple[Outcome, Report | None]:
        """Keep a pending report unless the same one is pending, or the member or the server has too many."""
        question = " ".join(question.split())[:QUESTION_MAX]
        if not question:
            raise ValueError("a report needs the question")
        if (entry_id is None) != (paragraph is None):
            raise ValueError("a report names an entry and its paragraph, or neither")
        f = feedback.c
        async with self.engine.begin() as conn:
            await self._rulings._ensure_scope(conn, scope)
            pending = and_(f.scope == scope, f.status == PENDING)
            same = await conn.execute(
                select(feedback).where(
                    pending, _same_question(question),
                    f.entry_id.is_(None) if entry_id is None else f.entry_id == entry_id,
                    f.paragraph.is_(None) if paragraph is None else f.paragraph == paragraph,
                )
            )  # fmt: skip
            if (found := same.first()) is not None:
                return "duplicate", _report(found)
            theirs = (await conn.execute(select(func.count()).where(pending, f.reporter_id == reporter_id))).scalar()
            if int(theirs or 0) >= MAX_PENDING_EACH:
                return "yours_full", None
            total = (await conn.execute(select(func.count()).where(pending))).scalar()
            if int(total or 0) >= MAX_PENDING:
                return "server_full", None
            result = await conn.execute(
                feedback.insert()
                .values(scope=scope, status=PENDING, question=question, entry_id=entry_id, paragraph=paragraph,
                        digest=digest, reporter_id=reporter_id, reported_at=_now())
                .returning(*feedback.c)
            )  # fmt: skip
            return "saved", _report(result.one())

    async def pending(self, scope: str) -> list[Report]:
        """The scope's pending reports, oldest first."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(feedback).where(feedback.c.scope == scope, feedback.c.status == PENDING).order_by(feedback.c.id)
            )
            return [_report(r) for r in rows]

    async def confirmed(self, scope: str) -> list[Report]:
        """The scope's confirmed pairs, oldest first (what its overlay keeps)."""
        async with self.engine.connect() as conn:
            return await self._confirmed(conn, scope)

    async def get(self, scope: str, report_id: int) -> Report | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(
                select(feedback).where(feedback.c.scope == scope, feedback.c.id == report_id)
            )).first()  # fmt: skip
            return _report(row) if row is not None else None

    async def confirm(
        self,
        scope: str,
        report_id: int,
        judge_id: str,
        entry_id: str | None,
        paragraph: int | None,
        digest: str | None,
    ) -> Report:
        """Make a pending report a confirmed pair with this paragraph (the reporter's pick or a judge's
        correction), or with none (``entry_id`` and ``paragraph`` None: the loaded rules do not answer it); the
        reporter's id is dropped. ``NotFound`` when it is no longer pending here (another judge reviewed it
        first). A pair already confirmed for the same question is not stored twice."""
        if (entry_id is None) != (paragraph is None):
            raise ValueError("a confirmation names an entry and its paragraph, or neither")
        f = feedback.c
        async with self.engine.begin() as conn:
            await self._rulings._bump(conn, scope)  # first: the write lock (SQLite) before anything is read
            row = (await conn.execute(
                select(feedback).where(f.scope == scope, f.id == report_id, f.status == PENDING)
            )).first()  # fmt: skip
            if row is None:
                raise NotFound(f"no pending report #{report_id} in this server")
            question = row._mapping["question"]
            twin = (await conn.execute(
                select(feedback).where(
                    f.scope == scope, f.status == CONFIRMED, _same_question(question),
                    f.entry_id.is_(None) if entry_id is None else f.entry_id == entry_id,
                    f.paragraph.is_(None) if paragraph is None else f.paragraph == paragraph,
                )
            )).first()  # fmt: skip
            if twin is not None:
                await conn.execute(delete(feedback).where(f.id == report_id))
                return _report(twin)
            result = await conn.execute(
                update(feedback)
                .where(f.id == report_id, f.status == PENDING)
                .values(status=CONFIRMED, entry_id=entry_id, paragraph=paragraph, digest=digest, reporter_id=None,
                        reviewed_by=judge_id, reviewed_at=_now())
                .returning(*feedback.c)
            )  # fmt: skip
            return _report(result.one())

    async def dismiss(self, scope: str, report_id: int) -> bool:
        """Delete a pending report (answers are unchanged); False when it was no longer pending here."""
        f = feedback.c
        async with self.engine.begin() as conn:
            result = await conn.execute(
                delete(feedback).where(f.scope == scope, f.id == report_id, f.status == PENDING)
            )
            return bool(result.rowcount)

    async def withdraw(self, scope: str, report_id: int) -> bool:
        """Delete a confirmed pair: the server's answers go back to the rules' own ranking."""
        f = feedback.c
        async with self.engine.begin() as conn:
            result = await conn.execute(
                delete(feedback).where(f.scope == scope, f.id == report_id, f.status == CONFIRMED)
            )
            if result.rowcount:
                await self._rulings._bump(conn, scope)
            return bool(result.rowcount)

    async def reviewed(self) -> list[Report]:
        """Every confirmed pair of every server, in the order they were confirmed (the host's export)."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(feedback).where(feedback.c.status == CONFIRMED).order_by(feedback.c.reviewed_at, feedback.c.id)
            )
            return [_report(r) for r in rows]

    @staticmethod
    async def _confirmed(conn: AsyncConnection, scope: str) -> list[Report]:
        rows = await conn.execute(
            select(feedback).where(feedback.c.scope == scope, feedback.c.status == CONFIRMED).order_by(feedback.c.id)
        )
        return [_report(r) for r in rows]

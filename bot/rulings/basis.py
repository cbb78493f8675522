"""What a ruling was made against: the verbatim text of each entry it applies to, and a digest of it.

Recorded when a ruling is made, edited, imported or confirmed to still stand, in the same transaction
(``ruling_basis``); ``bot.rulings.review`` compares it with the sources after each reload or start. The text
is kept whole (not only its digest) because the judges' audit post shows the rule before and after.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.rulings.schema import ruling_basis
from glossary.model import Entry
from index.build.asked import digest


@dataclass(frozen=True)
class RuleText:
    """One entry's text as the sources had it: ``text`` is its paragraphs, blank-line separated ("" when the
    sources no longer hold the entry); ``stamp`` its newest change date then (YYYY-MM-DD)."""

    entry_id: str
    text: str
    digest: str
    stamp: str | None = None


def newest_stamp(entry: Entry | None) -> str | None:
    """The latest date among the entry's change stamps (an impossible printed date counts as its probable one)."""
    if entry is None:
        return None
    dates = [c.probable_date or c.date for c in entry.changes if c.date]
    dates = [d for d in dates if d and len(d) == 10]
    return max(dates) if dates else None


def rule_text(entry_id: str, entry: Entry | None) -> RuleText:
    text = "\n\n".join(entry.paragraphs) if entry is not None else ""
    return RuleText(entry_id, text, digest(text), newest_stamp(entry))


async def record(
    conn: AsyncConnection, ruling_id: int, scope: str, texts: Sequence[RuleText], at: dt.datetime
) -> None:
    """Make ``texts`` the ruling's basis, replacing what was recorded before (an edit may name other entries)."""
    await conn.execute(delete(ruling_basis).where(ruling_basis.c.ruling_id == ruling_id))
    if texts:
        await conn.execute(insert(ruling_basis), [row(ruling_id, scope, t, at) for t in texts])


def row(ruling_id: int, scope: str, text: RuleText, at: dt.datetime) -> dict[str, object]:
    return {"ruling_id": ruling_id, "entry_id": text.entry_id, "scope": scope, "digest": text.digest,
            "text": text.text, "stamp": text.stamp, "recorded_at": at}  # fmt: skip

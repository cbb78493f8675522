"""Server rulings that notice when their rule changed (issue 18).

After a reload of the rule documents, or a start, every active ruling's basis (``bot.rulings.basis``: the text
of each entry it applies to when it was made, edited or last confirmed) is compared with the sources:

- a text that differs flags the ruling "needs review" (``rulings.review_since`` = the date the rule changed:
  the entry's newest change stamp when the sources added a newer one, else the day of the check);
- a flagged ruling whose texts all read as recorded again (the change was undone) is cleared by itself;
- a ruling with no basis (made before this existed) gets the current text recorded, without a flag.

The flag is set by a conditional update (``review_since IS NULL``) after taking the ``rulings`` counter's row
(the SQLite write lock; a row lock on PostgreSQL), so of several processes checking at once exactly one sets
it and reports it: the one that posts to the server's audit channel. Each change bumps its scope's revision,
so every process shows the note in answers after its next poll.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.rulings import basis
from bot.rulings.basis import RuleText
from bot.rulings.repository import ACTIVE, Ruling, RulingsRepository
from bot.rulings.schema import RULINGS_COUNTER, counters, ruling_basis, rulings, scopes
from glossary.model import Entry

Lookup = Callable[[str], Entry | None]


@dataclass(frozen=True)
class RuleChange:
    """One entry a flagged ruling applies to: its text when the ruling was made, and now (verbatim)."""

    entry_id: str
    before: str
    after: str  # "" when the sources no longer hold the entry


@dataclass(frozen=True)
class Flagged:
    """A ruling this check flagged (this process set the flag: it reports it)."""

    ruling: Ruling
    changed_on: str
    changes: tuple[RuleChange, ...]


@dataclass
class Outcome:
    flagged: list[Flagged] = field(default_factory=list)
    cleared: list[Ruling] = field(default_factory=list)  # flags cleared because the text changed back
    recorded: int = 0  # rulings from before this feature whose basis was recorded now

    @property
    def scopes(self) -> set[str]:
        return {f.ruling.scope for f in self.flagged} | {r.scope for r in self.cleared}


def changed_on(before: RuleText | None, entry: Entry | None, ruled_on: str, today: str) -> str:
    """When the rule changed: the entry's newest stamp if the sources added one newer than what the ruling saw
    (and not before the ruling itself: then the sources were only late), else ``today`` (the reload or start)."""
    stamp = basis.newest_stamp(entry)
    seen = before.stamp if before is not None else None
    if stamp and (seen is None or stamp > seen) and stamp >= ruled_on and stamp <= today:
        return stamp
    return today


async def check(engine: AsyncEngine, lookup: Lookup, today: str, at: dt.datetime | None = None) -> Outcome:
    """Compare every active ruling's basis with the sources (``lookup``: entry id -> the entry now), in one
    transaction; see the module docstring."""
    repo = RulingsRepository(engine)  # the scope revision and the counter follow the rulings' rules
    at = at or dt.datetime.now(dt.UTC)
    outcome = Outcome()
    async with engine.begin() as conn:
        # First a write: the database's write lock (SQLite) or the counter row's lock (PostgreSQL), so checks in
        # several processes run one after the other and each flag is set (and posted) by one of them.
        await conn.execute(
            update(counters).where(counters.c.name == RULINGS_COUNTER).values(value=counters.c.value)
        )
        gone = select(scopes.c.scope).where(scopes.c.left_at.is_not(None))  # servers that removed the bot
        found = list(await conn.execute(
            select(rulings).where(rulings.c.status == ACTIVE, rulings.c.applies_to != "[]",
                                  rulings.c.scope.not_in(gone)).order_by(rulings.c.id)
        ))  # fmt: skip
        if not found:
            return outcome
        recorded: dict[int, dict[str, RuleText]] = {}
        b = ruling_basis.c
        rows = await conn.execute(  # digests only: the texts are read for the rulings that changed
            select(b.ruling_id, b.entry_id, b.digest, b.stamp).join(rulings, rulings.c.id == b.ruling_id)
            .where(rulings.c.status == ACTIVE)
        )  # fmt: skip
        for ruling_id, entry_id, digest, stamp in rows:
            recorded.setdefault(ruling_id, {})[entry_id] = RuleText(entry_id, "", digest, stamp)
        now: dict[str, RuleText] = {}
        dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
        touched: set[str] = set()
        for row in found:
            m = row._mapping
            ruling_id, scope, flag = m["id"], m["scope"], m["review_since"]
            seen = recorded.get(ruling_id, {})
            changes: list[RuleChange] = []
            fresh: list[RuleText] = []
            for entry_id in json.loads(m["applies_to"]):
                if (current := now.get(entry_id)) is None:
                    current = now[entry_id] = basis.rule_text(entry_id, lookup(entry_id))
                before = seen.get(entry_id)
                if before is None:
                    fresh.append(current)
                elif before.digest != current.digest:
                    changes.append(RuleChange(entry_id, "", current.text))  # the text before: read if flagged
            if fresh:  # made before the basis was kept (or it names an entry with none): what is in force now
                await conn.execute(
                    dialect_insert(ruling_basis).values([basis.row(ruling_id, scope, t, at) for t in fresh])
                    .on_conflict_do_nothing(index_elements=["ruling_id", "entry_id"])
                )  # fmt: skip
                outcome.recorded += not seen
            if changes and flag is None:
                when = max(
                    changed_on(seen.get(c.entry_id), lookup(c.entry_id), m["ruled_on"], today) for c in changes
                )
                result = await conn.execute(
                    update(rulings).where(rulings.c.id == ruling_id, rulings.c.review_since.is_(None))
                    .values(review_since=when)
                )  # fmt: skip
                if result.rowcount == 1:
                    ruling = await repo._current(conn, scope, ruling_id)
                    texts = dict((await conn.execute(
                        select(b.entry_id, b.text).where(b.ruling_id == ruling_id)
                    )).all())  # fmt: skip
                    changes = [RuleChange(c.entry_id, texts.get(c.entry_id, ""), c.after) for c in changes]
                    outcome.flagged.append(Flagged(ruling, when, tuple(changes)))
                    touched.add(scope)
            elif not changes and flag is not None:
                result = await conn.execute(
                    update(rulings).where(rulings.c.id == ruling_id, rulings.c.review_since == flag)
                    .values(review_since=None)
                )  # fmt: skip
                if result.rowcount == 1:
                    outcome.cleared.append(await repo._current(conn, scope, ruling_id))
                    touched.add(scope)
        for scope in sorted(touched):
            await repo._bump(conn, scope)
    return outcome


def changed_paragraphs(before: str, after: str) -> list[tuple[list[str], list[str]]]:
    """The paragraphs that differ between two texts of an entry (before, after), in order: what the audit post
    quotes (the whole texts go in its attachment). Moved-but-equal paragraphs are not changes."""
    old, new = before.split("\n\n") if before else [], after.split("\n\n") if after else []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [(old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def before_after(flagged: Flagged, label: Callable[[str], str]) -> str:
    """The whole before/after of a flagged ruling's rule as plain text (the audit post's attachment)."""
    ruling = flagged.ruling
    parts = [f"Ruling #{ruling.id}: {ruling.title} ({ruling.ruled_on})",
             f"Needs review: the rule it applies to changed on {flagged.changed_on}.", ""]  # fmt: skip
    for change in flagged.changes:
        parts += [f"== {label(change.entry_id)} ==", "", "-- Before (when the ruling was made) --", change.before, "",
                  "-- After (the sources now) --", change.after or "(no longer in the sources)", ""]  # fmt: skip
    return "\n".join(parts)

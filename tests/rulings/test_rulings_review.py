"""Rulings that notice when their rule changed: the basis recorded with a ruling, the check after a reload or a
start (flag once, even with several processes; clear when the text changes back), "still stands", edits, and
rulings from before the feature; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from sqlalchemy import inspect, select

from bot.rulings import basis, present, retention, review
from bot.rulings.db import make_engine, migrate, resolve_url
from bot.rulings.repository import RETIRED, Author, Draft, NotFlagged, Ruling, RulingsRepository
from bot.rulings.schema import ruling_basis
from glossary.model import Change, Entry, Location

ANN, BOB = Author("101", "Ann"), Author("102", "Bob")
ONE, TWO = "guild:1", "guild:2"
TERRAIN = "glossary:terrain"
OLD = ["If a Terrain is already in play at the current battlefield, no player can play another Terrain there."]
NEW = ["A player may play a Terrain at a battlefield that has one; the new Terrain replaces it."]
TODAY = "2026-11-26"


def entry(paragraphs: list[str], changes: tuple[Change, ...] = ()) -> Entry:
    return Entry(id=TERRAIN, source="glossary", document="Glossary", kind="term", title="Terrain",
                 section=["T"], paragraphs=list(paragraphs), location=Location("g.txt", 1, 2),
                 changes=list(changes))  # fmt: skip


class Sources:
    """The rule documents as a process has them loaded (a reload swaps the entry)."""

    def __init__(self) -> None:
        self.terrain: Entry | None = entry(OLD)

    def get(self, entry_id: str) -> Entry | None:
        return self.terrain if entry_id == TERRAIN else None

    def texts(self, ids) -> list[basis.RuleText]:  # type: ignore[no-untyped-def]
        return [basis.rule_text(i, self.get(i)) for i in ids]


@pytest_asyncio.fixture
async def repo(database_url: str, tmp_path: Path) -> AsyncIterator[RulingsRepository]:
    engine = make_engine(resolve_url(database_url, tmp_path))
    await migrate(engine)
    try:
        yield RulingsRepository(engine)
    finally:
        await engine.dispose()


def draft(title: str = "Two Terrains") -> Draft:
    return Draft(title=title, text="The second Terrain is not played.", applies_to=(TERRAIN,), ruled_on="2026-11-01")


async def test_migration_0005_adds_the_basis_table_and_the_flag(repo: RulingsRepository) -> None:
    async with repo.engine.connect() as conn:
        tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("rulings")})
    assert "ruling_basis" in tables and "review_since" in columns


async def test_a_changed_rule_flags_the_ruling_once_and_a_change_back_clears_it(repo: RulingsRepository) -> None:
    sources = Sources()
    made = await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    async with repo.engine.connect() as conn:
        rows = list(await conn.execute(select(ruling_basis)))
    assert [(r.ruling_id, r.entry_id, r.text, r.scope) for r in rows] == [(made.id, TERRAIN, OLD[0], ONE)]
    assert (await review.check(repo.engine, sources.get, TODAY)).flagged == []  # unchanged: nothing to say

    revision = (await repo.config(ONE)).revision
    sources.terrain = entry(NEW)  # a reload changes the paragraph
    outcome = await review.check(repo.engine, sources.get, TODAY)
    (flagged,) = outcome.flagged
    assert flagged.ruling.id == made.id and flagged.changed_on == TODAY and flagged.ruling.review_since == TODAY
    assert flagged.changes == (review.RuleChange(TERRAIN, OLD[0], NEW[0]),)
    assert (await repo.config(ONE)).revision == revision + 1  # every process rebuilds the server's overlay
    assert (await repo.get(ONE, made.id)).review_since == TODAY
    assert (await review.check(repo.engine, sources.get, "2026-11-27")).flagged == []  # reported once only
    assert (await repo.get(ONE, made.id)).review_since == TODAY

    sources.terrain = entry(OLD)  # the change is undone: the flag clears by itself
    outcome = await review.check(repo.engine, sources.get, TODAY)
    assert [r.id for r in outcome.cleared] == [made.id] and outcome.flagged == []
    assert (await repo.get(ONE, made.id)).review_since is None
    assert (await repo.get(ONE, made.id)).version == 1  # nobody wrote a version: the text simply reads as before


async def test_several_processes_checking_at_once_flag_it_once(repo: RulingsRepository, database_url: str,
                                                               tmp_path: Path) -> None:  # fmt: skip
    sources = Sources()
    made = [await repo.add(s, draft(), ANN, texts=sources.texts([TERRAIN])) for s in (ONE, ONE, TWO)]
    sources.terrain = entry(NEW)
    engines = [make_engine(resolve_url(database_url, tmp_path)) for _ in range(3)]
    try:
        outcomes = await asyncio.gather(*(review.check(e, sources.get, TODAY) for e in engines))
    finally:
        for e in engines:
            await e.dispose()
    flagged = sorted(f.ruling.id for o in outcomes for f in o.flagged)
    assert flagged == sorted(r.id for r in made)  # each ruling reported by exactly one process


async def test_the_date_is_the_new_stamp_when_the_sources_give_one(repo: RulingsRepository) -> None:
    sources = Sources()
    sources.terrain = entry(OLD, (Change("changed", "2008-05-21", "[CHANGED 21 May 2008]", paragraph=0),))
    made = await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    stamps = (Change("changed", "2008-05-21", "[CHANGED 21 May 2008]", paragraph=0),
              Change("changed", "2026-11-20", "[CHANGED November 20 2026]", paragraph=0))  # fmt: skip
    sources.terrain = entry([NEW[0] + " [CHANGED November 20 2026]"], stamps)
    (flagged,) = (await review.check(repo.engine, sources.get, TODAY)).flagged
    assert flagged.changed_on == "2026-11-20" and flagged.ruling.id == made.id
    # a stamp older than the ruling (late sources) is not when the rule changed for it: the day of the check is
    assert review.changed_on(basis.RuleText(TERRAIN, "x", "d"), entry(NEW, stamps[:1]), "2026-11-01", TODAY) == TODAY


async def test_still_stands_records_the_new_text_and_clears_the_flag(repo: RulingsRepository) -> None:
    sources = Sources()
    made = await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    try:
        await repo.stands(ONE, made.id, BOB, sources.texts([TERRAIN]))
        raise AssertionError("a ruling without a flag cannot be confirmed")
    except NotFlagged:
        pass
    sources.terrain = entry(NEW)
    await review.check(repo.engine, sources.get, TODAY)
    stood = await repo.stands(ONE, made.id, BOB, sources.texts([TERRAIN]))
    assert stood.review_since is None and stood.version == 2 and stood.text == made.text
    assert [(v.action, v.author_name) for v in await repo.history(ONE, made.id)] == [("add", "Ann"), ("stands", "Bob")]
    assert (await review.check(repo.engine, sources.get, TODAY)).flagged == []  # it stands on the new text
    sources.terrain = entry(OLD)  # now the old text is a change from what the judge confirmed
    (flagged,) = (await review.check(repo.engine, sources.get, TODAY)).flagged
    assert flagged.changes == (review.RuleChange(TERRAIN, NEW[0], OLD[0]),)


async def test_an_edit_clears_the_flag_and_retiring_keeps_it(repo: RulingsRepository) -> None:
    sources = Sources()
    made = await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    sources.terrain = entry(NEW)
    await review.check(repo.engine, sources.get, TODAY)
    retired = await repo.set_status(ONE, made.id, RETIRED, BOB)
    assert retired.review_since == TODAY
    restored = await repo.set_status(ONE, made.id, "active", BOB)
    assert restored.review_since == TODAY
    edited = await repo.edit(ONE, made.id, restored.version, draft("Two Terrains, again"), BOB,
                             sources.texts([TERRAIN]))  # fmt: skip
    assert edited.review_since is None
    assert (await review.check(repo.engine, sources.get, TODAY)).flagged == []


async def test_rulings_from_before_the_feature_get_the_current_text_without_a_flag(repo: RulingsRepository) -> None:
    sources = Sources()
    old = await repo.add(ONE, draft(), ANN)  # no basis, as rulings made before migration 0005
    imported = await repo.import_drafts(TWO, [draft("Imported")], ANN, texts_of=sources.texts)
    sources.terrain = entry(NEW)
    outcome = await review.check(repo.engine, sources.get, TODAY)
    assert outcome.recorded == 1 and [f.ruling.id for f in outcome.flagged] == [imported.added[0].id]
    assert (await repo.get(ONE, old.id)).review_since is None
    sources.terrain = entry(OLD)
    (flagged,) = (await review.check(repo.engine, sources.get, TODAY)).flagged  # recorded NEW: OLD is a change
    assert flagged.ruling.id == old.id


async def test_an_entry_gone_from_the_sources_is_a_change_and_deleting_a_server_deletes_its_basis(
    repo: RulingsRepository,
) -> None:
    sources = Sources()
    made = await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    sources.terrain = None
    (flagged,) = (await review.check(repo.engine, sources.get, TODAY)).flagged
    assert flagged.changes == (review.RuleChange(TERRAIN, OLD[0], ""),)
    assert "(no longer in the sources)" in review.before_after(flagged, lambda i: "Terrain")
    await retention.delete_scope(repo.engine, ONE)
    async with repo.engine.connect() as conn:
        assert list(await conn.execute(select(ruling_basis).where(ruling_basis.c.ruling_id == made.id))) == []


async def test_a_server_that_removed_the_bot_is_not_checked(repo: RulingsRepository) -> None:
    sources = Sources()
    await repo.add(ONE, draft(), ANN, texts=sources.texts([TERRAIN]))
    await retention.mark_left(repo.engine, {ONE: dt.datetime(2026, 11, 20, tzinfo=dt.UTC)})
    sources.terrain = entry(NEW)
    assert (await review.check(repo.engine, sources.get, TODAY)).flagged == []  # nobody there to tell
    await retention.clear_left(repo.engine, {ONE})
    assert len((await review.check(repo.engine, sources.get, TODAY)).flagged) == 1  # invited back: told then


def test_the_audit_post_quotes_the_changed_paragraphs_or_attaches_them_when_long() -> None:
    ruling = Ruling(7, ONE, 1, "active", "@everyone Two *Terrains*", "x", (TERRAIN,), None, "Ann", "2026-11-01",
                    dt.datetime.now(dt.UTC), "101", dt.datetime.now(dt.UTC), "101", review_since=TODAY)  # fmt: skip
    before, after = "\n\n".join(["Intro.", OLD[0], "Outro."]), "\n\n".join(["Intro.", NEW[0], "Outro."])
    flagged = review.Flagged(ruling, TODAY, (review.RuleChange(TERRAIN, before, after),))
    text, attachment = present.review_post(flagged, lambda _i: "Terrain")
    assert attachment is None and f"> {OLD[0]}" in text and f"> {NEW[0]}" in text
    assert "Intro." not in text  # only the paragraph that changed is quoted
    assert "\\*Terrains\\*" in text  # what a judge typed has no Markdown effect
    short, attachment = present.review_post(flagged, lambda _i: "Terrain", room=300)
    assert len(short) <= 300 and "rule-change-7.txt" in short
    assert attachment is not None and before in attachment and after in attachment  # whole texts, verbatim

"""Players' "Not the answer?" reports and the pairs judges confirm: the store on SQLite and PostgreSQL, what it
does to a server's data life (retention), the host's export, and the overlay a confirmed pair feeds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import inspect

from bot.rulings import feedback, retention
from bot.rulings.__main__ import feedback_lines
from bot.rulings.db import head_revision, make_engine, migrate, resolve_url
from bot.rulings.feedback import CONFIRMED, PENDING, FeedbackStore
from bot.rulings.repository import NotFound, RulingsRepository
from glossary.model import Corpus, Entry, Location
from index.build.asked import digest

ONE, TWO = "guild:1", "guild:2"
HAND = "obsidian-hand:ii-c-maximum-hand-size"


@pytest_asyncio.fixture
async def store(database_url: str, tmp_path: Path) -> AsyncIterator[FeedbackStore]:
    engine = make_engine(resolve_url(database_url, tmp_path))
    await migrate(engine)
    try:
        yield FeedbackStore(engine)
    finally:
        await engine.dispose()


async def test_migration_0003_adds_the_feedback_table(database_url: str, tmp_path: Path) -> None:
    engine = make_engine(resolve_url(database_url, tmp_path))
    try:
        assert await migrate(engine, "0002") == "0002"
        assert await migrate(engine) == head_revision() == "0006"
        async with engine.connect() as conn:
            columns = await conn.run_sync(lambda c: {col["name"] for col in inspect(c).get_columns("feedback")})
        assert {"question", "entry_id", "paragraph", "digest", "reporter_id", "reviewed_by"} <= columns
    finally:
        await engine.dispose()


async def test_a_report_is_pending_with_its_reporter_until_a_judge_confirms_it(store: FeedbackStore) -> None:
    outcome, report = await store.report(ONE, "  max   hand size ", "501", HAND, 0, "d" * 16)
    assert outcome == "saved" and report is not None
    assert (report.status, report.question, report.entry_id, report.paragraph) == (PENDING, "max hand size", HAND, 0)
    assert report.reporter_id == "501" and report.reviewed_by is None
    assert [r.id for r in await store.pending(ONE)] == [report.id] and await store.pending(TWO) == []
    assert await store.confirmed(ONE) == []  # answers are unchanged while it is pending

    before = await RulingsRepository(store.engine).counters()
    pair = await store.confirm(ONE, report.id, "900", HAND, 0, "e" * 16)
    assert (pair.status, pair.reporter_id, pair.reviewed_by, pair.digest) == (CONFIRMED, None, "900", "e" * 16)
    assert pair.reviewed_at is not None
    assert await store.pending(ONE) == [] and [p.id for p in await store.confirmed(ONE)] == [report.id]
    after = await RulingsRepository(store.engine).counters()
    assert after["rulings"] == before["rulings"] + 1  # other processes reload the server at their next poll
    kept = pair.kept
    assert kept is not None and (kept.question, kept.entry_id, kept.paragraph) == ("max hand size", HAND, 0)


async def test_the_same_report_is_kept_once_and_members_and_servers_have_limits(store: FeedbackStore) -> None:
    first = await store.report(ONE, "max hand size", "501", HAND, 0, None)
    again = await store.report(ONE, "Max Hand Size", "502", HAND, 0, None)
    assert first[0] == "saved" and again[0] == "duplicate" and again[1] is not None and again[1].id == first[1].id
    assert (await store.report(ONE, "max hand size", "502", HAND, 1, None))[0] == "saved"  # another paragraph
    assert (await store.report(ONE, "max hand size", "502"))[0] == "saved"  # "none of these answers it"
    for n in range(feedback.MAX_PENDING_EACH - 2):
        assert (await store.report(ONE, f"question {n}", "502"))[0] == "saved"
    assert (await store.report(ONE, "one more", "502"))[0] == "yours_full"
    assert (await store.report(TWO, "one more", "502"))[0] == "saved"  # a limit per server
    with pytest.raises(ValueError):
        await store.report(ONE, "x", "503", HAND, None, None)


async def test_dismiss_deletes_a_pending_report_and_servers_never_review_each_others(store: FeedbackStore) -> None:
    _o, report = await store.report(ONE, "max hand size", "501", HAND, 1, None)
    assert report is not None
    assert await store.dismiss(TWO, report.id) is False  # another server's judge: nothing happens
    with pytest.raises(NotFound):
        await store.confirm(TWO, report.id, "900", HAND, 0, None)
    assert await store.get(TWO, report.id) is None
    assert await store.dismiss(ONE, report.id) is True
    assert await store.get(ONE, report.id) is None and await store.confirmed(ONE) == []
    with pytest.raises(NotFound):  # reviewed already (by another judge): nothing to confirm
        await store.confirm(ONE, report.id, "900", HAND, 0, None)


async def test_a_pair_confirmed_twice_is_stored_once_and_can_be_withdrawn(store: FeedbackStore) -> None:
    _o, a = await store.report(ONE, "max hand size", "501", HAND, 1, None)
    _o, b = await store.report(ONE, "MAX hand size", "502")
    assert a is not None and b is not None
    first = await store.confirm(ONE, a.id, "900", HAND, 0, None)  # corrected by the judge: paragraph 0
    second = await store.confirm(ONE, b.id, "901", HAND, 0, None)
    assert second.id == first.id and len(await store.confirmed(ONE)) == 1 and await store.pending(ONE) == []
    assert await store.withdraw(TWO, first.id) is False
    assert await store.withdraw(ONE, first.id) is True and await store.confirmed(ONE) == []


async def test_deleting_a_server_deletes_its_reports_and_forget_user_anonymises_them(store: FeedbackStore) -> None:
    engine = store.engine
    _o, pending = await store.report(ONE, "max hand size", "501", HAND, 1, None)
    _o, confirmed = await store.report(ONE, "for each samurai", "502", "glossary:for-each", 0, None)
    _o, other = await store.report(TWO, "max hand size", "501", HAND, 0, None)
    assert pending and confirmed and other
    await store.confirm(ONE, confirmed.id, "900", "glossary:for-each", 0, None)

    forgotten = await retention.forget_user(engine, "501")
    assert forgotten.reports == 2 and forgotten.changed
    assert {r.reporter_id for r in [*await store.pending(ONE), *await store.pending(TWO)]} == {None}
    assert (await retention.forget_user(engine, "900")).reports == 1
    assert [p.reviewed_by for p in await store.confirmed(ONE)] == [retention.DELETED_ID]

    exported = await retention.export_scope(engine, ONE)
    assert [r["question"] for r in exported["feedback"]] == ["max hand size", "for each samurai"]
    assert (await retention.stored(engine, ONE)).reports == 2
    deleted = await retention.delete_scope(engine, ONE)
    assert deleted.reports == 2 and not deleted.empty
    assert await store.pending(ONE) == [] and await store.confirmed(ONE) == []
    assert [r.id for r in await store.pending(TWO)] == [other.id]  # the other server keeps its own
    assert await retention.stored(engine, ONE) == retention.Stored()


async def test_purge_after_the_grace_period_deletes_reports_too(store: FeedbackStore) -> None:
    import datetime as dt

    await store.report(ONE, "max hand size", "501", HAND, 1, None)
    now = dt.datetime.now(dt.UTC)
    assert await retention.mark_left(store.engine, {ONE: now - dt.timedelta(days=40)}) == [ONE]
    purged = await retention.purge(store.engine, now - dt.timedelta(days=30))
    assert purged[ONE].reports == 1 and await store.pending(ONE) == []


def _entry(paragraphs: list[str]) -> Entry:
    return Entry(id=HAND, source="obsidian-hand", document="The Obsidian Hand Ruleset", kind="section",
                 title="C. Maximum Hand Size", section=[], paragraphs=paragraphs,
                 location=Location("004.txt", 230, 234), lines=[(232, 232), (234, 234)])  # fmt: skip


async def test_a_judge_can_confirm_that_the_loaded_rules_do_not_answer_a_question(store: FeedbackStore) -> None:
    _o, none = await store.report(ONE, "how many cards in the focus pool", "501")  # "none of these answers it"
    assert none is not None and none.kept is None  # pending: nothing changes yet
    pair = await store.confirm(ONE, none.id, "900", None, None, None)
    assert (pair.status, pair.entry_id, pair.paragraph, pair.reporter_id) == (CONFIRMED, None, None, None)
    kept = pair.kept
    assert kept is not None and kept.not_covered and kept.question == "how many cards in the focus pool"
    _o, again = await store.report(ONE, "How many cards in the focus pool", "502")
    assert again is not None and (await store.confirm(ONE, again.id, "901", None, None, None)).id == pair.id
    assert len(await store.confirmed(ONE)) == 1
    _o, other = await store.report(ONE, "max hand size", "503", HAND, 0, None)
    assert other is not None
    with pytest.raises(ValueError):
        await store.confirm(ONE, other.id, "900", HAND, None, None)
    line = json.loads(feedback_lines(await store.reviewed(), Corpus([]))[0])
    assert line == {"question": "how many cards in the focus pool", "entry_id": None, "paragraph": None,
                    "digest": None, "current": None, "source": None, "not_covered": True}  # fmt: skip


async def test_the_export_is_one_json_line_per_pair_with_where_its_paragraph_stands(store: FeedbackStore) -> None:
    paragraphs = ["A player starts with a maximum hand size of 8.", "Maximum hand size is a stat of the player."]
    corpus = Corpus([_entry(paragraphs)])
    _o, a = await store.report(ONE, "max hand size", "501", HAND, 1, None)
    _o, b = await store.report(TWO, "hand size limit", "502", HAND, 0, None)
    assert a and b
    await store.confirm(ONE, a.id, "900", HAND, 0, digest(paragraphs[0]))
    await store.confirm(TWO, b.id, "901", HAND, 1, "0" * 16)  # its text has changed since
    lines = [json.loads(line) for line in feedback_lines(await store.reviewed(), corpus)]
    assert lines[0] == {"question": "max hand size", "entry_id": HAND, "paragraph": 0, "digest": digest(paragraphs[0]),
                        "current": True, "source": {"file": "004.txt", "lines": [232, 232]}}  # fmt: skip
    assert lines[1]["current"] is False and lines[1]["source"] is None and "server" not in lines[1]
    assert all("900" not in json.dumps(line) and "501" not in json.dumps(line) for line in lines)  # no user ids
    with_server = [json.loads(line) for line in feedback_lines(await store.reviewed(), corpus, with_server=True)]
    assert [line["server"] for line in with_server] == ["1", "2"]

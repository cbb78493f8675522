"""A rulings database that hangs (up, accepting connections, never answering), not one that is stopped.

PostgreSQL is reached through ``hangproxy.HangingProxy``: while it hangs, every byte either way is held
and new connections are accepted and never answered, as on a frozen host. Every database call is
time-limited (RULINGS_DB_TIMEOUT, short here); the judge's draft is handed back as on an outage, the
answers go on from what is loaded, and the bot recovers once the database answers again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running
from hangproxy import HangingProxy
from pgserver import PostgresServer

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from bot.discord_bot.cogs.rulings import DOWN, NO_ANSWER, REOPEN_PREFIX
from bot.rulings.db import resolve_url
from bot.rulings.deadline import DatabaseTimeout, within
from bot.rulings.repository import Author, Draft
from bot.rulings.service import NoAnswer, RulingsService, Unavailable
from index.engine import Engine

text_of = FakeDiscord.text_of
TIMEOUT = 1.5  # RULINGS_DB_TIMEOUT for these tests (the default is 8 s)
SETTLE = TIMEOUT * 4 + 10  # how long the fake waits for a reply that comes after the time limit


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("hung"))  # the session's default index, copied


@pytest_asyncio.fixture
async def proxied(postgres: PostgresServer) -> AsyncIterator[tuple[str, HangingProxy]]:
    """A fresh database and a DATABASE_URL that reaches it through a proxy that can hang."""
    direct = postgres.create_database(f"hung_{time.time_ns()}")
    proxy = await HangingProxy("127.0.0.1", postgres.port).start()
    try:
        yield direct.replace(f":{postgres.port}/", f":{proxy.port}/"), proxy
    finally:
        await proxy.stop()


async def test_within_stops_waiting_at_the_deadline_even_when_the_call_ignores_cancellation() -> None:
    """A call whose cancellation hangs (a rollback on a hung server) does not hold the caller past the limit."""
    released = asyncio.Event()
    cleaned: list[bool] = []

    async def stubborn() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await released.wait()  # cleanup that waits on the hung server
            cleaned.append(True)
            raise
        return "never"

    with pytest.raises(DatabaseTimeout):
        await within(stubborn(), 0.2)
    assert cleaned == []  # the caller got control back while the call was still cleaning up
    released.set()
    for _ in range(10):
        await asyncio.sleep(0)
    assert cleaned == [True]  # and the abandoned call finished in the background once it could
    assert await within(asyncio.sleep(0, "done"), 1) == "done"


async def test_a_write_to_a_hung_database_is_abandoned_unconfirmed_and_the_service_recovers(
    proxied: tuple[str, HangingProxy], engine: Engine, tmp_path: Path
) -> None:
    url, proxy = proxied
    service = RulingsService(resolve_url(url, tmp_path), lambda: engine, poll_seconds=0.3, db_timeout=TIMEOUT)
    await service.start()
    try:
        author = Author("1", "Ann")
        first = await service.add("guild:1", Draft("Before the hang", "Text one."), author)
        proxy.hang()
        with pytest.raises(NoAnswer):  # an Unavailable: the cog hands the draft back
            await service.add("guild:1", Draft("During the hang", "Text two."), author)
        with pytest.raises(Unavailable):
            await service.list("guild:1")
        assert not service.available
        assert service.overlay("guild:1") is not None  # answers keep what was loaded
        listed = await service.pick_list("guild:1", include_retired=True, wait=0.5)  # never waits on it
        assert [r.id for r in listed] == [first.id]
        proxy.resume()
        for _ in range(100):
            if service.available:
                break
            await asyncio.sleep(0.1)
        assert service.available
        titles = [r.title for r in await service.list("guild:1")]
        assert "Before the hang" in titles
        after = await service.add("guild:1", Draft("After the hang", "Text three."), author)
        assert after.version == 1
    finally:
        proxy.resume()
        await service.close()


async def test_a_hung_database_hands_the_judges_draft_back_and_answers_go_on(
    proxied: tuple[str, HangingProxy], engine: Engine, tmp_path: Path
) -> None:
    url, proxy = proxied
    async with FakeDiscord() as fake:
        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                            state_dir=tmp_path / "state", cooldown_seconds=0, database_url=url,
                            rulings_poll_seconds=0.3, rulings_db_timeout=TIMEOUT)  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        judge = fake.new_member("judge", manage_guild=True)
        async with bot_running(fake, bot, "fake-token"):
            opened = await fake.invoke_command("ruling add", {}, user=judge)
            saved = await fake.submit_modal(opened, {"title": "Loaded ruling", "text": "Text.", "applies": "Terrain"})
            assert "Saved ruling #" in saved.message["content"]
            form = await fake.invoke_command("ruling add", {}, user=judge)  # opened while the database answers

            proxy.hang()
            lost = await fake.submit_modal(form, {"title": "Written while hung", "text": "My careful text."},
                                           timeout=SETTLE)  # fmt: skip
            assert lost.response_type == 5  # acknowledged at once, answered after the time limit
            content = lost.message["content"]
            assert content.startswith((DOWN, NO_ANSWER)), content
            assert "My careful text." in fake.attachment_data(lost.message).decode()  # handed back, not lost
            reopen = [c["custom_id"] for c in fake.components_of(lost.message)]
            assert any(c.startswith(REOPEN_PREFIX) for c in reopen)

            listed = await fake.invoke_command("ruling list", {}, user=judge, timeout=SETTLE)
            assert listed.response_type == 5 and "unreachable" in text_of(listed.message)
            refused = await fake.invoke_command("ruling add", {}, user=judge, timeout=SETTLE)  # a form cannot wait
            assert refused.modal is None and "unreachable" in text_of(refused.message)
            typed = await fake.autocomplete("ruling history", "ruling", "Load", user=judge, timeout=SETTLE)
            assert typed.response_type == 8  # choices (from memory), in time
            answer = await fake.invoke_command("define", {"term": "terrain"}, timeout=SETTLE)
            assert "Loaded ruling" in "\n".join(text_of(m) for m in answer.messages)

            proxy.resume()
            for _ in range(60):  # the poll finds the database again; then the draft is saved from the button
                if bot.rulings is not None and bot.rulings.available:
                    break
                await asyncio.sleep(0.25)
            again = await fake.click(lost.message, reopen[0], user=judge, timeout=SETTLE)
            assert again.modal is not None, text_of(again.message or {})
            done = await fake.submit_modal(again, timeout=SETTLE)
            assert "Saved ruling #" in done.message["content"], done.message["content"]
            listed = await fake.invoke_command("ruling list", {}, user=judge, timeout=SETTLE)
            assert "Written while hung" in text_of(listed.message)
        assert [r for r in fake.rejected if r.response.get("code") != 10062] == []

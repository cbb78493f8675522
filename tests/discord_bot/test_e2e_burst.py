"""A burst delivered all at once, end to end against the fake Discord (bot in this process).

The fake keeps the gateway frames back while it builds the burst (``gateway_held``) and stamps each
interaction's id with the instant it chooses (``age=``), so the ages are the test's, not the machine's:
some fresh, some with one second left, some already past the bot's cut-off. What is asserted holds on
any machine: the expired ones are dropped before discord.py builds anything for them (the command tree
never sees them) and each gets its ``expired`` line; no interaction gets two first responses or one
after its deadline; and some fresh ones are answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running, preserved_discord_urls
from fakediscord.load import STALE_AGE

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("burst"))  # the session's default index, copied


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[FakeDiscord, JudgeBot]]:
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            settings = Settings(
                token="fake-token",
                api_base=fake.api_base,
                index_dir=tmp_path_factory.mktemp("burst-state") / "index",
                cooldown_seconds=0.0,
            )
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot):
                yield fake, bot


async def test_a_burst_drops_the_expired_unread_and_answers_none_twice_or_late(running, monkeypatch, caplog) -> None:
    fake, bot = running
    seen: list[int] = []
    check = bot.tree.interaction_check

    async def counting(interaction):  # the command tree's first look at an interaction discord.py built
        seen.append(interaction.id)
        return await check(interaction)

    monkeypatch.setattr(bot.tree, "interaction_check", counting)
    users = [fake.new_member(f"burst{i}") for i in range(300)]
    at = asyncio.get_running_loop().time()  # the instant the burst is created: shortly after building it
    lead = 5.0  # seconds the fake has to build them (about 1 s needed on a loaded 2-core machine)

    def age() -> float:
        return asyncio.get_running_loop().time() - (at + lead)

    recs: dict[str, list] = {"fresh": [], "short": [], "stale": []}
    with caplog.at_level(logging.INFO, logger="bot"):
        async with fake.gateway_held():
            for i, user in enumerate(users):
                group = ("fresh", "short", "stale")[i % 3]
                extra = {"fresh": 0.0, "short": 2.0, "stale": STALE_AGE}[group]
                rec = await fake.invoke_command(
                    "define", {"term": "target"}, user=user, age=age() + extra, settle=False
                )
                recs[group].append(rec)
            wait = at + lead - asyncio.get_running_loop().time()
            assert wait > 0, f"building 300 interactions took the fake more than {lead} s"
            await asyncio.sleep(wait)
        everyone = [r for group in recs.values() for r in group]
        def over() -> bool:  # each answered, or its window closed
            return all(r.settled or r.created_at + 3.5 < time.perf_counter() for r in everyone)

        await fake.wait_for(over, 120, "the burst")
        stale_users = {r.user.id for r in recs["stale"]}
        await fake.wait_for(lambda: _expired(caplog, stale_users) == len(stale_users), 30, "expired lines")

    stale_ids = {r.id for r in recs["stale"]}
    assert stale_ids.isdisjoint(seen)  # dropped before discord.py built an Interaction for them
    assert all(r.callbacks == [] and r.rejected == [] for r in recs["stale"])
    for rec in everyone:
        assert len(rec.callbacks) <= 1, rec.describe()
        assert all(c.response.get("code") == 10062 for c in rec.rejected), rec.describe()  # only "too late"
        if rec.callbacks:
            assert rec.response_age is not None and rec.response_age <= 3.0, rec.describe()
    assert any(r.settled for r in recs["fresh"])
    assert bot.intake.waiting == 0


def _expired(caplog: pytest.LogCaptureFixture, users: set[int]) -> int:
    lines = Counter(
        r.fields["user"]
        for r in caplog.records
        if r.getMessage() == "answer" and r.fields.get("outcome") == "expired" and r.fields.get("user") in users
    )
    return len(lines)


async def test_the_intake_can_pause_and_resume_reading_the_gateway_socket(running) -> None:
    """The pause reaches the socket through discord.py's and aiohttp's attributes: an upgrade that moved
    them would leave bursts unthrottled, and this would fail."""
    fake, bot = running
    assert bot._pause_gateway(True) == 1
    try:
        rec = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member(), settle=False)
        await asyncio.sleep(0.5)
        assert rec.callbacks == []  # not read while paused
    finally:
        assert bot._pause_gateway(False) == 1
    await rec.wait_until(lambda r: r.settled, 30)
    assert rec.response_type == 4 and len(rec.callbacks) == 1

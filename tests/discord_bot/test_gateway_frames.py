"""Gateway frames that cannot be read at all (a corrupt zlib frame, text that is not JSON, JSON that is not
an object) and events whose payload is the wrong shape: each is logged in one line and skipped, or the
socket is reconnected, and the bot keeps answering. None ends the process (issue 20, item 7)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, bot_running

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("frames"))  # the session's default index, copied


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def running(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[FakeDiscord,
                                                                                                   JudgeBot]]:
    state = Path(tmp_path_factory.mktemp("frames-state"))
    async with FakeDiscord() as fake:
        settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                            state_dir=state, cooldown_seconds=0)  # fmt: skip
        bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, bot, "fake-token"):
            yield fake, bot


async def _still_answers(fake: FakeDiscord, bot: JudgeBot) -> None:
    await fake.wait_until_connected(timeout=20)
    rec = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member(), timeout=20)
    assert rec.message["embeds"][0]["title"] == "Target"
    assert not bot.is_closed()


FRAMES = {
    "corrupt zlib": b"\x00\x01garbage that no inflater reads\x00\x00\xff\xff",
    "not json": "{this is not json",
    "json array": "[1, 2, 3]",
    "json string": '"hello"',
}


@pytest.mark.parametrize("kind", list(FRAMES))
async def test_an_unreadable_frame_is_logged_briefly_and_the_bot_keeps_answering(running, kind, caplog) -> None:
    fake, bot = running
    await fake.wait_until_connected(timeout=20)
    session = fake.session_for_guild(fake.guild)
    assert session.connection is not None
    frame = FRAMES[kind]
    with caplog.at_level(logging.WARNING):
        if isinstance(frame, bytes):
            await session.connection.ws.send_bytes(frame)
        else:
            await session.connection.ws.send_str(frame)
        await _still_answers(fake, bot)
    noted = [r for r in caplog.records if r.name == "bot.gateway"]
    assert noted and all(not r.exc_info for r in noted), [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("data", ["a string", 12, ["a", "list"], {"id": None}])
async def test_an_interaction_of_the_wrong_shape_is_skipped(running, data, caplog) -> None:
    fake, bot = running
    await fake.wait_until_connected(timeout=20)
    with caplog.at_level(logging.WARNING, logger="bot.gateway"):
        await fake.dispatch_event(fake.session_for_guild(fake.guild), "INTERACTION_CREATE", data)  # type: ignore[arg-type]
        await _still_answers(fake, bot)

"""End to end: a server's admin chooses the formats it plays (/ruling config formats) through the real bot on the
fake Discord; that server's answers change, another server's and direct messages' do not."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeGuild, InteractionRecord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
OH = "the-obsidian-hand-ruleset"
LEFT_OUT = "The Obsidian Hand Ruleset also has a rule on this; this server does not play it."
AMENDS = "In The Obsidian Hand Ruleset"


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("e2e-formats"))  # the session's default index, copied


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict]:
    state = tmp_path_factory.mktemp("e2e-formats-state")
    with preserved_discord_urls():
        async with FakeDiscord(shard_count=2) as fake:
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5)  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                yield {"fake": fake, "one": fake.guilds[0], "two": fake.guilds[1]}


async def ask(fake: FakeDiscord, command: str, options: dict, guild: FakeGuild | None) -> str:
    """The whole answer a member reads (every page), in ``guild`` or, with None, in a direct message."""
    if guild is None:
        rec = await fake.invoke_command(command, options, dm=True)
    else:
        rec = await fake.invoke_command(command, options, user=fake.member, guild=guild)
    assert rec.rejected == [], rec.rejected[0].response
    texts, message = [text_of(rec.message)], rec.message
    while (nxt := next((c for c in fake.components_of(message) if c.get("label") == "Next ▶"), None)) is not None:
        if nxt.get("disabled"):
            break
        message = (await fake.click(message, nxt["custom_id"], user=fake.member)).message
        texts.append(text_of(message))
    return "\n".join(texts)


async def choose(fake: FakeDiscord, guild: FakeGuild, formats: str | None) -> InteractionRecord:
    options = {} if formats is None else {"formats": formats}
    return await fake.invoke_command("ruling config formats", options, user=fake.admin, guild=guild)


async def test_a_server_that_chose_nothing_sees_every_format(world) -> None:
    fake, one = world["fake"], world["one"]
    shown = await choose(fake, one, None)
    assert shown.ephemeral and "This server has not chosen its formats: answers show every format's rules (The " \
        "Obsidian Hand Ruleset)." in shown.message["content"]  # fmt: skip
    assert AMENDS in await ask(fake, "define", {"term": "terrain"}, one)
    ac = await fake.autocomplete("ruling config formats", "formats", "obsid", user=fake.admin, guild=one)
    assert ac.choices == [{"name": "The Obsidian Hand Ruleset", "value": OH}]
    ac = await fake.autocomplete("ruling config formats", "formats", "", user=fake.admin, guild=one)
    assert [c["value"] for c in ac.choices] == ["all", "none", OH]


async def test_only_admins_choose_and_a_bad_choice_is_refused_without_pinging(world) -> None:
    fake, one = world["fake"], world["one"]
    refused = await fake.invoke_command("ruling config formats", {"formats": "none"}, user=fake.member, guild=one)
    assert "Only members with the Manage Server permission" in refused.message["content"]
    bad = await choose(fake, one, "@everyone")
    content = bad.message["content"]
    assert "“@everyone” is not a loaded format" in content and "The Obsidian Hand Ruleset (" in content
    assert not fake.pings(bad.message)["everyone"]
    assert AMENDS in await ask(fake, "define", {"term": "terrain"}, one)  # nothing was changed


async def test_playing_no_format_leaves_it_out_here_only(world) -> None:
    fake, one, two = world["fake"], world["one"], world["two"]
    saved = await choose(fake, one, "none")
    assert "Saved. This server plays no format: answers show the glossary and house rulings, and leave out The " \
        "Obsidian Hand Ruleset." in saved.message["content"]  # fmt: skip

    terrain = await ask(fake, "define", {"term": "terrain"}, one)
    assert AMENDS not in terrain and terrain.count(LEFT_OUT) == 1
    assert "If a Terrain is already in play at the current battlefield" in terrain
    question = await ask(fake, "ask", {"question": "how many terrains can be in play"}, one)
    assert question.count(LEFT_OUT) == 1 and "— The Obsidian Hand Ruleset" not in question
    banned = await ask(fake, "banned", {"card": "Moshi Eihime"}, one)
    assert "This server plays no format with a banned list, so no format bans “Moshi Eihime” here." in banned
    assert "is banned" not in banned
    section = await ask(fake, "rule", {"section": "Cardinal Rule 2"}, one)
    assert "No section matches" in section and LEFT_OUT in section

    for command, option, typed in (("define", "term", "tactical adv"), ("banned", "card", "moshi")):
        here = await fake.autocomplete(command, option, typed, user=fake.member, guild=one)
        there = await fake.autocomplete(command, option, typed, user=fake.member, guild=two)
        assert not [c for c in here.choices if c["value"].startswith("obsidian-hand:")], here.choices
        assert [c for c in there.choices if c["value"].startswith("obsidian-hand:")], there.choices

    for elsewhere in (two, None):  # another server, and direct messages: as before
        assert AMENDS in await ask(fake, "define", {"term": "terrain"}, elsewhere)
        assert "Moshi Eihime is banned" in (await ask(fake, "banned", {"card": "Moshi Eihime"}, elsewhere)) \
            .replace("*", "")  # fmt: skip
    assert "This server plays no format" in (await choose(fake, one, None)).message["content"]


async def test_playing_the_obsidian_hand_shows_it_again(world) -> None:
    fake, one = world["fake"], world["one"]
    saved = await choose(fake, one, "Obsidian Hand")
    assert "Saved. This server plays The Obsidian Hand Ruleset" in saved.message["content"]
    terrain = await ask(fake, "define", {"term": "terrain"}, one)
    assert AMENDS in terrain and LEFT_OUT not in terrain
    assert "Moshi Eihime is banned" in (await ask(fake, "banned", {"card": "Moshi Eihime"}, one)).replace("*", "")
    assert "Formats played here The Obsidian Hand Ruleset" in (await ask(fake, "about", {}, one)).replace("*", "")
    back = await choose(fake, one, "all")
    assert "has not chosen its formats" in back.message["content"]
    assert "Formats played here" not in await ask(fake, "about", {}, one)

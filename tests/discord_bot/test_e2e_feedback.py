"""End to end: "Not the answer?" through the real bot on the fake Discord, with the real engine and SQLite.

A member asks a question whose answer quotes the wrong paragraph (running the experienced and non-experienced
versions of one unique personality in a deck quotes Experienced line 54, on non-unique versions, where line 49
answers it), reports it with the right paragraph, a judge confirms it: that question and a paraphrase quote line 49
first in that server
from then on; the other server's answers are unchanged; a dismissed report changes nothing; a member who is
not a judge cannot review; the button is not offered in direct messages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeGuild, FakeUser, InteractionRecord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
QUESTION = "can I run the experienced and non-experienced versions of the same unique personality in one deck"
PARAPHRASE = "can one deck hold both the unique experienced and non-experienced version of a personality"
RIGHT = "Even if they are Unique, Experienced cards with the same title"  # line 49: what the question asks
WRONG = "Non-Unique, non-Experienced versions of a card do not affect"  # line 54: what the ranking quotes first
SAMURAI = "gain 1 honor for each samurai I control - is that three separate honor gains?"


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("e2e-feedback"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    state = tmp_path_factory.mktemp("e2e-feedback-state")
    with preserved_discord_urls():
        async with FakeDiscord(shard_count=2) as fake:
            role = fake.new_role("Judges", guild=fake.guilds[0])
            judge = fake.new_member("Ann", guild=fake.guilds[0], roles=[role])
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5)  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                rec = await fake.invoke_command(
                    "ruling config judge-role", {"role": role}, user=fake.admin, guild=fake.guilds[0]
                )
                assert "Judges are now members with the role" in rec.message["content"]
                yield {"fake": fake, "bot": bot, "one": fake.guilds[0], "two": fake.guilds[1], "judge": judge}


def quoted_first(rec: InteractionRecord) -> str:
    """The first result of an /ask answer as a member reads it."""
    assert rec.rejected == [], rec.rejected[0].response
    text = text_of(rec.message).replace("**", "").replace("\\", "")  # as read: no bold marks, no escapes
    assert "1. " in text, text
    return text.split("1. ", 1)[1].split("\n2. ", 1)[0]


async def ask(fake: FakeDiscord, guild: FakeGuild, question: str, user: FakeUser | None = None) -> InteractionRecord:
    return await fake.invoke_command("ask", {"question": question}, user=user or fake.member, guild=guild)


def component(message: dict[str, Any], prefix: str, label: str | None = None) -> dict[str, Any]:
    found = [c for c in FakeDiscord.components_of(message) if str(c.get("custom_id", "")).startswith(prefix)
             and (label is None or c.get("label") == label)]  # fmt: skip
    assert found, (prefix, label, FakeDiscord.components_of(message))
    return found[0]


async def report(fake: FakeDiscord, answer: InteractionRecord, option: str, user: FakeUser | None = None) -> str:
    """Click "Not the answer?" under ``answer`` and pick the option whose label starts with ``option``."""
    button = component(answer.message, "l5r:na:")
    assert button["label"] == "Not the answer?"
    clicked = await fake.click(answer.message, button["custom_id"], user=user or fake.member)
    await clicked.wait_until(lambda r: any(FakeDiscord.components_of(m) for m in r.messages))
    menu_message = next(m for m in clicked.messages if FakeDiscord.components_of(m))
    assert int(menu_message.get("flags") or 0) & 64  # only the member sees the menu
    menu = component(menu_message, "l5r:np:")
    assert menu["type"] == 3 and len(menu["options"]) <= 25
    assert all(len(o["label"]) <= 100 for o in menu["options"])
    assert menu["options"][-1]["label"] == "None of these answers it"
    picked = next((o for o in menu["options"] if o["label"].startswith(option)), None)
    assert picked is not None, [o["label"] for o in menu["options"]]
    done = await fake.click(menu_message, menu["custom_id"], values=[picked["value"]], user=user or fake.member)
    return text_of(done.message if done.message else fake.messages[int(menu_message["id"])])


async def review(fake: FakeDiscord, guild: FakeGuild, user: FakeUser) -> InteractionRecord:
    rec = await fake.invoke_command("ruling feedback", {}, user=user, guild=guild)
    await rec.wait_until(lambda r: bool(r.messages) and any(text_of(m).strip() for m in r.messages))
    return rec


def review_message(fake: FakeDiscord, rec: InteractionRecord) -> dict[str, Any]:
    return next(m for m in reversed(rec.messages) if "Answer report" in text_of(m))


async def test_the_wrong_paragraph_is_quoted_today(world) -> None:
    fake = world["fake"]
    for guild in (world["one"], world["two"]):
        first = quoted_first(await ask(fake, guild, QUESTION))
        assert WRONG in first and RIGHT not in first
    assert WRONG in quoted_first(await ask(fake, world["one"], PARAPHRASE))  # the paraphrase too


async def test_not_the_answer_is_offered_in_servers_only(world) -> None:
    fake = world["fake"]
    dm = await fake.invoke_command("ask", {"question": QUESTION}, dm=True)
    assert not [c for c in fake.components_of(dm.message) if str(c.get("custom_id", "")).startswith("l5r:na:")]
    answer = await ask(fake, world["one"], QUESTION)
    other = await fake.click(answer.message, component(answer.message, "l5r:na:")["custom_id"], user=fake.other_member)
    assert "Only the member who asked can report this answer" in text_of(other.message)


async def test_a_member_reports_and_a_judge_confirms_then_that_server_quotes_the_confirmed_paragraph(world) -> None:
    fake, one, two, judge = world["fake"], world["one"], world["two"], world["judge"]
    answer = await ask(fake, one, QUESTION)
    said = await report(fake, answer, "Experienced, paragraph 8")
    assert "waiting for this server's judges" in said
    assert WRONG in quoted_first(await ask(fake, one, QUESTION))  # nothing changes before a judge confirms

    refused = await fake.invoke_command("ruling feedback", {}, user=fake.member, guild=one)
    assert "Only this server's judges" in text_of(refused.message)

    rec = await review(fake, one, judge)
    page = review_message(fake, rec)
    text = text_of(page).replace("**", "").replace("\\", "")
    assert "Answer report 1 of 1" in text and f"“{QUESTION}”" in text
    assert text.index(RIGHT) < text.index(WRONG)  # the pick, then what is answered first now
    confirm = component(page, "l5r:fb:ok:", "Confirm")
    stranger = await fake.click(page, confirm["custom_id"], user=fake.member)  # a member who is not a judge
    # refused in a follow-up: the click is acknowledged before the database is read (issue 20, item 3)
    await stranger.wait_until(lambda r: any("Only this server's judges" in text_of(m) for m in r.messages))
    clicked = await fake.click(page, confirm["custom_id"], user=judge)
    await clicked.wait_until(lambda r: "Confirmed" in text_of(fake.messages[int(page["id"])]))
    assert "No answer reports are waiting" in text_of(fake.messages[int(page["id"])])

    for question in (QUESTION, PARAPHRASE):  # the question and a paraphrase, at once
        first = quoted_first(await ask(fake, one, question))
        assert RIGHT in first and "line 49" in first, first
    first = quoted_first(await ask(fake, two, QUESTION))  # another server: unchanged
    assert WRONG in first and RIGHT not in first
    dm = await fake.invoke_command("ask", {"question": QUESTION}, dm=True)
    assert WRONG in quoted_first(dm)


async def test_a_dismissed_report_changes_nothing(world) -> None:
    fake, one, judge = world["fake"], world["one"], world["judge"]
    before = quoted_first(await ask(fake, one, SAMURAI))
    assert "For each" in before and "single effect" in before  # quotes For each, paragraph 1, which answers it
    answer = await ask(fake, one, SAMURAI)
    said = await report(fake, answer, "For each, paragraph 2")  # a wrong report: the judge dismisses it
    assert "waiting for this server's judges" in said
    rec = await review(fake, one, judge)
    page = review_message(fake, rec)
    assert "Answer report 1 of 1" in text_of(page)
    clicked = await fake.click(page, component(page, "l5r:fb:no:", "Dismiss")["custom_id"], user=judge)
    await clicked.wait_until(lambda r: "Dismissed" in text_of(fake.messages[int(page["id"])]))
    assert quoted_first(await ask(fake, one, SAMURAI)) == before
    assert await world["bot"].rulings.pending(f"guild:{one.id}") == []


async def test_a_judge_can_pick_another_paragraph(world) -> None:
    fake, one, judge = world["fake"], world["one"], world["judge"]
    answer = await ask(fake, one, SAMURAI)
    assert "waiting" in await report(fake, answer, "None of these answers it")
    rec = await review(fake, one, judge)
    page = review_message(fake, rec)
    assert "none of the quoted paragraphs answers it" in text_of(page)
    assert not component(page, "l5r:fb:ok:", "Confirm").get("disabled")  # confirming says no rule answers it
    fixing = await fake.click(page, component(page, "l5r:fb:fix:")["custom_id"], user=judge)
    await fixing.wait_until(lambda r: any(c["type"] == 3 for c in fake.components_of(fake.messages[int(page["id"])])))
    menu = component(fake.messages[int(page["id"])], "l5r:fc:")
    option = next(o for o in menu["options"] if o["label"].startswith("For each, paragraph 1"))
    picked = await fake.click(fake.messages[int(page["id"])], menu["custom_id"], values=[option["value"]], user=judge)
    await picked.wait_until(lambda r: "Confirmed" in text_of(fake.messages[int(page["id"])]))
    first = quoted_first(await ask(fake, one, SAMURAI))
    assert "For each" in first and "paragraph 1" in first and "separately for each" not in first


# no loaded rule says; the question used before (gaining honor for destroying a province) is shipped as not
# covered since 2026-11-27 (night), so a server's confirmation no longer changes its answer
DUEL_HONOR = "do I gain honor when my personality wins a duel"
DUEL_HONOR_AGAIN = "does winning a duel give honor"
NOT_COVERED = f"The loaded rules may not cover this: a question like it, “{DUEL_HONOR}”"


async def test_a_judge_confirms_that_no_rule_answers_and_that_server_says_so(world) -> None:
    """A member finds none of the quoted paragraphs answers; a judge confirms it as is: that question and a
    paraphrase keep their results in that server, under a line that says the loaded rules may not cover it and
    names the confirmed question. Another server's answers are unchanged."""
    fake, one, two, judge = world["fake"], world["one"], world["two"], world["judge"]
    answer = await ask(fake, one, DUEL_HONOR)
    assert "Result (of a duel)" in quoted_first(answer) and "may not cover" not in text_of(answer.message)
    assert "waiting" in await report(fake, answer, "None of these answers it")
    rec = await review(fake, one, judge)
    page = review_message(fake, rec)
    assert "none of the quoted paragraphs answers it" in text_of(page)
    assert "say the loaded rules do not answer it" in text_of(page)  # the footer says what Confirm does
    clicked = await fake.click(page, component(page, "l5r:fb:ok:", "Confirm")["custom_id"], user=judge)
    await clicked.wait_until(lambda r: "Confirmed" in text_of(fake.messages[int(page["id"])]))
    assert "the loaded rules do not answer it" in text_of(fake.messages[int(page["id"])])
    for question in (DUEL_HONOR, DUEL_HONOR_AGAIN):
        rec = await ask(fake, one, question)
        text = text_of(rec.message).replace("\\", "")
        assert NOT_COVERED in text and "Result (of a duel)" in quoted_first(rec), text
    assert "may not cover" not in text_of((await ask(fake, two, DUEL_HONOR)).message)  # another server: unchanged

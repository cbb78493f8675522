"""End to end: the real JudgeBot (discord.py) with the real Engine on the shipped corpus, against the fake Discord.

One bot and one fake are shared by the module; tests that need their own cooldown bucket use a fresh member.
Expected texts come from the engine (the entry's own paragraphs), never from copies in this file.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, InteractionRecord, bot_running, preserved_discord_urls
from fakediscord import validation as v

from bot.app.renderers.discord_markdown import plain
from bot.app.settings import Settings
from bot.discord_bot import replies as views
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

COOLDOWN_SECONDS = 60.0


def judge_settings(fake: FakeDiscord, index_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "token": "fake-token",
        "api_base": fake.api_base,
        "index_dir": index_dir,
        "cooldown_rate": 1,
        "cooldown_seconds": COOLDOWN_SECONDS,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    return index_copy("e2e")  # its own copy: the bot reloads it and keeps its state beside it


@pytest.fixture(scope="module")
def engine(index_dir: Path) -> Engine:
    return Engine.open(None, index_dir)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def judge(engine: Engine, index_dir: Path) -> AsyncIterator[tuple[FakeDiscord, JudgeBot]]:
    with preserved_discord_urls():
        async with FakeDiscord() as fake:
            bot = JudgeBot(judge_settings(fake, index_dir), engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                yield fake, bot


text_of = FakeDiscord.text_of


def buttons(fake: FakeDiscord, message: dict) -> dict[str, dict]:
    return {c["custom_id"]: c for c in fake.components_of(message) if c.get("custom_id")}


def first_open_target(fake: FakeDiscord, message: dict) -> str:
    opens = [cid for cid in buttons(fake, message) if cid.startswith("l5r:open:")]
    assert opens, f"no open buttons on {message['id']}"
    return opens[0].removeprefix("l5r:open:")


def public_answer(rec: InteractionRecord) -> dict:
    msg = rec.message
    assert msg is not None, rec.describe()
    assert not int(msg["flags"]) & v.EPHEMERAL, f"expected a public answer, got {text_of(msg)[:200]!r}"
    return msg


# -- startup -----------------------------------------------------------------------------------------------


async def test_commands_synced_once_globally(judge) -> None:
    fake, bot = judge
    registered = {(c["type"], c["name"]) for c in fake.registered_commands()}
    assert registered == {
        (1, "define"), (1, "ask"), (1, "rule"), (1, "changes"), (1, "banned"), (1, "history"),
        (1, "about"), (1, "help"), (1, "reload"), (1, "ruling"), (3, "Look up rules"),
    }  # fmt: skip
    assert len(fake.sync_calls) == 1
    assert bot.synced is True
    assert [q["compress"] for q in fake.gateway_queries] == ["zlib-stream"]
    assert "privileged" not in str(fake.identifies) and fake.identifies[0]["intents"] & 1


# -- each command ------------------------------------------------------------------------------------------


async def test_define_target_quotes_the_entry_verbatim_with_dates(judge, engine) -> None:
    fake, _ = judge
    entry = engine.get("glossary:target")
    rec = await fake.invoke_command("define", {"term": "target"})
    msg = public_answer(rec)
    embed = msg["embeds"][0]
    assert embed["title"] == entry.title == "Target"
    for paragraph in entry.paragraphs:  # as Discord shows it: escapes ("\\[ADDED ...") are not displayed
        assert paragraph in plain(embed["description"])
    assert "2007-09-20" in text_of(msg)
    assert "Glossary T › Target" in text_of(msg)
    assert rec.latency is not None and rec.latency < 3.0


async def test_define_autocomplete_then_pick(judge) -> None:
    fake, _ = judge
    ac = await fake.autocomplete("define", "term", "targ")
    assert ac.choices[0] == {"name": "Target", "value": "glossary:target"}
    assert len(ac.choices) <= 25 and all(len(c["name"]) <= 100 for c in ac.choices)
    rec = await fake.invoke_command("define", {"term": ac.choices[0]["value"]}, user=fake.new_member())
    assert public_answer(rec)["embeds"][0]["title"] == "Target"


async def test_define_typo_is_corrected(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("define", {"term": "targte"}, user=fake.new_member())
    assert public_answer(rec)["embeds"][0]["title"] == "Target"


async def test_define_unknown_offers_did_you_mean_buttons(judge, engine) -> None:
    fake, _ = judge
    result = engine.define("army")
    assert result.entry is None and result.candidates  # the premise: no confident match, some guesses
    rec = await fake.invoke_command("define", {"term": "army"}, user=fake.new_member())
    assert "Did you mean" in text_of(rec.message)
    ids = [cid for cid in buttons(fake, rec.message) if cid.startswith("l5r:open:")]
    assert ids == [f"l5r:open:{c.id}" for c in result.candidates][: len(ids)] and ids
    click = await fake.click(rec.message, ids[0], user=fake.new_member())
    expected = result.candidates[0]
    assert click.message["embeds"][0]["title"] == expected.title
    assert expected.paragraphs[0][:200] in click.message["embeds"][0]["description"]


async def test_ask_terrain_first_then_open_and_post(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("ask", {"question": "is a terrain an enemy card"})
    msg = public_answer(rec)
    first = first_open_target(fake, msg)
    assert first in ("glossary:terrain", "glossary:region"), first
    opened = await fake.click(msg, f"l5r:open:{first}", user=fake.new_member())
    assert opened.response_type == 4 and opened.ephemeral
    assert opened.message["embeds"][0]["title"] in ("Terrain", "Region")
    post_ids = [cid for cid in buttons(fake, opened.message) if cid.startswith("l5r:post:")]
    assert len(post_ids) == 1
    posted = await fake.click(opened.message, post_ids[0], user=fake.new_member())
    public = public_answer(posted)
    assert public["embeds"][0]["title"] == opened.message["embeds"][0]["title"]
    assert "l5r:post:" not in str(buttons(fake, public))


async def test_ask_next_page_edits_in_place(judge) -> None:
    fake, _ = judge
    # a question several entries answer about equally well (the answer lists only those close to the best):
    # "honor" is the title word of six entries (family honor, the Honor ability and victory, ...)
    rec = await fake.invoke_command("ask", {"question": "honor"}, user=fake.new_member())
    msg = copy.deepcopy(rec.message)  # rec.message is live: the click below edits it in place
    footer = msg["embeds"][0]["footer"]["text"]
    pages = int(re.search(r"page 1/(\d+)", footer)[1])
    assert pages >= 2
    nxt = next(c for c in fake.components_of(msg) if c.get("label", "").startswith("Next"))
    clicked = await fake.click(msg, nxt["custom_id"], user=fake.new_member())
    assert clicked.response_type == 7
    edited = fake.messages[int(msg["id"])]
    assert f"page 2/{pages}" in edited["embeds"][0]["footer"]["text"]
    assert first_open_target(fake, edited) != first_open_target(fake, msg)
    prev = next(c for c in fake.components_of(edited) if c.get("label", "").endswith("Previous"))
    assert not prev.get("disabled")


async def test_rule_cardinal_rule_2_and_autocomplete(judge, engine) -> None:
    fake, _ = judge
    ac = await fake.autocomplete("rule", "section", "cardinal rule 2")
    assert "Cardinal Rule 2: Cards vs. Cards" in [c["name"] for c in ac.choices]
    rec = await fake.invoke_command("rule", {"section": "cardinal rule 2"})
    embed = public_answer(rec)["embeds"][0]
    assert embed["title"] == "Cardinal Rule 2: Cards vs. Cards"
    entry = next(e for e in engine.corpus.entries if e.title == embed["title"])
    assert all(p in embed["description"] for p in entry.paragraphs)


async def test_changes_since_2008_05_01_newest_first(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("changes list", {"since": "2008-05-01"})
    embed = public_answer(rec)["embeds"][0]
    assert "2008-05-01" in embed["title"]
    dates = re.findall(r"\*\*(\d{4}-\d{2}-\d{2})\*\*", embed["description"])
    assert dates, embed["description"][:300]
    assert all(d >= "2008-05-01" for d in dates)
    assert dates == sorted(dates, reverse=True)


async def test_changes_bad_date_is_a_short_ephemeral_message(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("changes list", {"since": "May 2008"}, user=fake.new_member())
    assert rec.ephemeral
    assert "since" in rec.message["content"] and "Traceback" not in rec.message["content"]


async def test_banned_moshi_eihime(judge) -> None:
    fake, _ = judge
    ac = await fake.autocomplete("banned", "card", "mos")
    assert ac.choices[0]["name"] == "Moshi Eihime"
    rec = await fake.invoke_command("banned", {"card": "moshi eihime"})
    text = text_of(public_answer(rec))
    assert "banned" in text and "2016-02-15" in text and "Personalities" in text


async def test_banned_house_of_black_lion(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("banned", {"card": "house of black lion"}, user=fake.new_member())
    text = text_of(public_answer(rec))
    assert "House of the Black Lion" in text and "2015-10-05" in text and "Strongholds" in text


async def test_banned_without_a_card_lists_the_whole_list(judge, engine) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("banned", {}, user=fake.new_member())
    text = text_of(public_answer(rec))
    names = [r.record.title for r in engine.banned_list()]
    assert len(names) == 25 and all(name in text for name in names)
    assert "Moshi Eihime — banned 2016-02-15" in text and "**Miscellaneous**" in text
    assert r"Banned Cards (004\_f05ef39847fd66e3.txt, lines 115-151)" in text  # Markdown-escaped for Discord


async def test_about_and_help(judge, engine) -> None:
    fake, _ = judge
    about = await fake.invoke_command("about")
    assert f"**Entries** {len(engine.corpus.entries)}" in text_of(about.message)
    assert all(f in text_of(about.message).replace("\\_", "_") for f in engine.corpus.files)
    helped = await fake.invoke_command("help")
    for name in ("/define", "/ask", "/rule", "/changes", "/banned", "/about", "Look up rules"):
        assert name in text_of(helped.message)


async def test_context_menu_runs_ask_on_the_message(judge) -> None:
    fake, _ = judge
    target = fake.user_message("is a terrain an enemy card")
    rec = await fake.context_menu("Look up rules", target, user=fake.new_member())
    assert rec.ephemeral
    assert first_open_target(fake, rec.message) in ("glossary:terrain", "glossary:region")


async def test_private_flag_gives_ephemeral_with_post_button(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("define", {"term": "target", "private": True}, user=fake.new_member())
    assert rec.ephemeral
    post = [cid for cid in buttons(fake, rec.message) if cid.startswith("l5r:post:")]
    assert len(post) == 1
    posted = await fake.click(rec.message, post[0], user=fake.new_member())
    assert public_answer(posted)["embeds"][0]["title"] == "Target"


# -- behaviour a server relies on --------------------------------------------------------------------------


async def test_cooldown_second_fast_call_says_try_again(judge) -> None:
    fake, _ = judge
    user = fake.new_member("impatient")
    first = await fake.invoke_command("define", {"term": "target"}, user=user)
    public_answer(first)
    second = await fake.invoke_command("define", {"term": "target"}, user=user)
    assert second.ephemeral
    assert re.search(r"try again in \d+ s", second.message["content"])
    assert second.message["embeds"] == []


async def test_reload_refused_for_plain_member(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("reload", user=fake.new_member("player"))
    assert rec.ephemeral
    assert "Manage Server" in rec.message["content"]
    assert "Reloaded" not in rec.message["content"]


async def test_reload_allowed_with_manage_server_and_for_owner(judge, engine) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("reload", user=fake.new_member("to", manage_guild=True), timeout=15)
    assert rec.response_type == 5 and rec.ephemeral
    assert f"Reloaded {len(engine.corpus.entries)} entries" in rec.message["content"]
    owner = await fake.invoke_command("reload", user=fake.owner, timeout=15)
    assert "Reloaded" in owner.message["content"]
    # the bot still answers from the swapped-in index
    after = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member())
    assert public_answer(after)["embeds"][0]["title"] == "Target"


async def test_mentions_cannot_ping_and_are_escaped(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("ask", {"question": "@everyone <@123> hi"}, user=fake.new_member())
    msg = rec.message
    assert fake.allowed_mentions(msg) == {"parse": []}
    assert fake.pings(msg) == {"everyone": False, "users": [], "roles": []}
    assert "@everyone" not in text_of(msg)
    assert "@\u200beveryone" in text_of(msg)


async def test_slow_lookup_defers_then_answers(judge, monkeypatch) -> None:
    fake, bot = judge
    monkeypatch.setattr(views, "DEFER_AT", 0.05)  # seconds after the interaction's creation
    real_ask = bot.engine.ask

    def slow_ask(*args, **kwargs):
        time.sleep(0.6)
        return real_ask(*args, **kwargs)

    monkeypatch.setattr(bot.engine, "ask", slow_ask)
    rec = await fake.invoke_command("ask", {"question": "is a terrain an enemy card"}, user=fake.new_member())
    assert rec.response_type == 5
    assert rec.latency is not None and rec.latency < 0.6  # acknowledged before the lookup finished
    assert first_open_target(fake, public_answer(rec)) in ("glossary:terrain", "glossary:region")


async def test_gateway_resume_mid_session_keeps_answering(judge) -> None:
    fake, _ = judge
    identifies = len(fake.identifies)
    resumes = sum(s.resumes for s in fake.sessions.values())
    await fake.force_reconnect("reconnect")
    rec = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member(), timeout=8)
    assert public_answer(rec)["embeds"][0]["title"] == "Target"
    await fake.wait_for_resume(resumes + 1)
    await fake.force_reconnect("close", code=4000)
    rec = await fake.invoke_command("banned", {"card": "moshi eihime"}, user=fake.new_member(), timeout=8)
    assert "2016-02-15" in text_of(public_answer(rec))
    await fake.wait_for_resume(resumes + 2)
    assert len(fake.identifies) == identifies  # resumed, never re-identified
    assert all(r["path"] == "/resume-gateway" for r in fake.resume_requests)


async def test_invalidated_session_reidentifies_and_buttons_still_work(judge, monkeypatch) -> None:
    fake, bot = judge
    rec = await fake.invoke_command("ask", {"question": "is a terrain an enemy card"}, user=fake.new_member())

    async def no_pause(shard_id, *, initial=False):  # discord.py waits 5 s before re-IDENTIFY; not here
        return None

    monkeypatch.setattr(bot, "before_identify_hook", no_pause)
    identifies = len(fake.identifies)
    await fake.force_reconnect("invalidate")
    await fake.wait_for(lambda: len(fake.identifies) > identifies, 5, "a new IDENTIFY")
    await fake.wait_until_connected()
    target = first_open_target(fake, rec.message)
    opened = await fake.click(rec.message, f"l5r:open:{target}", user=fake.new_member())
    assert opened.message["embeds"][0]["title"] in ("Terrain", "Region")
    again = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member())
    assert public_answer(again)["embeds"][0]["title"] == "Target"


async def test_rate_limited_callback_is_retried_and_answered(judge) -> None:
    fake, _ = judge
    fake.inject_rate_limit(1, "callback", retry_after=0.2)
    rec = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member())
    assert public_answer(rec)["embeds"][0]["title"] == "Target"
    statuses = [c.status for c in fake.calls if c.route == "callback" and f"/{rec.id}/" in c.path]
    assert statuses == [429, 200]


async def test_cross_reference_button_opens_the_referenced_entry(judge, engine) -> None:
    fake, _ = judge
    entry = next(e for e in engine.corpus.entries if e.kind == "term" and any(c.target for c in e.see_also))
    target = next(c.target for c in entry.see_also if c.target)
    rec = await fake.invoke_command("define", {"term": entry.id}, user=fake.new_member())
    assert public_answer(rec)["embeds"][0]["title"] == entry.title
    assert f"l5r:open:{target}" in buttons(fake, rec.message)
    opened = await fake.click(rec.message, f"l5r:open:{target}", user=fake.new_member())
    assert opened.message["embeds"][0]["title"] == engine.get(target).title


async def test_changes_filtered_by_source_and_paged(judge, engine) -> None:
    fake, _ = judge
    # The Obsidian Hand's 22 dated records are 8 changes (an update-log record and the entries it touched are one
    # row), a single page; the glossary's 18 stamps are 18 rows, two pages.
    expected = engine.changes(source="obsidian-hand")
    rec = await fake.invoke_command("changes list", {"source": "obsidian-hand"}, user=fake.new_member())
    footer = public_answer(rec)["embeds"][0]["footer"]["text"]
    events = {r.change.update_id or f"#{n}" for n, r in enumerate(expected)}
    assert footer == f"{len(events)} changes, newest first · {len({r.entry.id for r in expected})} entries"
    expected = engine.changes(since="2007-01-01", source="glossary")
    rec = await fake.invoke_command("changes list", {"since": "2007-01-01", "source": "glossary"},
                                    user=fake.new_member())  # fmt: skip
    msg = copy.deepcopy(public_answer(rec))
    assert msg["embeds"][0]["footer"]["text"].startswith(f"{len(expected)} changes")
    assert "Comprehensive Rules" in msg["embeds"][0]["title"]
    nxt = next(c for c in fake.components_of(msg) if c.get("label", "").startswith("Next"))
    page2 = await fake.click(msg, nxt["custom_id"], user=fake.new_member())
    assert "page 2/" in page2.message["embeds"][0]["footer"]["text"]
    assert page2.message["embeds"][0]["description"] != msg["embeds"][0]["description"]


async def test_changes_until_only_older_dates(judge) -> None:
    fake, _ = judge
    rec = await fake.invoke_command("changes list", {"until": "2008-01-01"}, user=fake.new_member())
    dates = re.findall(r"\*\*(\d{4}-\d{2}-\d{2})\*\*", public_answer(rec)["embeds"][0]["description"])
    assert dates and all(d <= "2008-01-01" for d in dates)


async def test_internal_error_is_a_short_ephemeral_message(judge, monkeypatch, caplog) -> None:
    fake, bot = judge

    def broken(*args, **kwargs):
        raise RuntimeError("index exploded")

    monkeypatch.setattr(bot.engine, "ask", broken)
    rec = await fake.invoke_command("ask", {"question": "anything"}, user=fake.new_member())
    assert rec.ephemeral
    content = rec.message["content"]
    assert content.startswith("Sorry") and "Traceback" not in content and "exploded" not in content
    assert rec.message["embeds"] == []
    assert "index exploded" in caplog.text  # the traceback goes to the log instead


async def test_every_entry_of_the_corpus_is_accepted_by_discord(judge, engine) -> None:
    """/define each entry by id and page through it: the fake refuses anything over Discord's limits."""
    fake, _ = judge
    rejected_before = len(fake.rejected)
    pages_clicked = 0
    for entry in engine.corpus.entries:
        rec = await fake.invoke_command("define", {"term": entry.id}, user=fake.new_member())
        assert rec.rejected == [], (entry.id, rec.rejected[0].response)
        msg = public_answer(rec)
        assert msg["embeds"][0]["title"], entry.id
        while nxt := next(
            (c for c in fake.components_of(msg) if c.get("label", "").startswith("Next") and not c.get("disabled")),
            None,
        ):
            page = await fake.click(msg, nxt["custom_id"], user=fake.new_member())
            assert page.rejected == [], (entry.id, page.rejected[0].response)
            msg = fake.messages[int(msg["id"])]
            pages_clicked += 1
            assert pages_clicked < 500, "Next never ends"
    assert len(fake.rejected) == rejected_before


async def test_concurrent_commands_all_answered_in_time(judge) -> None:
    fake, _ = judge
    questions = ["is a terrain an enemy card", "target", "cardinal rule", "banned", "duel", "honor"]
    recs = await asyncio.gather(
        *(fake.invoke_command("ask", {"question": q}, user=fake.new_member(), timeout=60) for q in questions)
    )
    # each answered once, its first response accepted within Discord's window (the fake refuses a late one)
    assert all(r.response_type in (4, 5) and len(r.callbacks) == 1 and r.response_age <= 3.0 for r in recs)


async def test_every_request_was_valid_and_known(judge) -> None:
    """Runs last in the module: nothing the bot sent was refused, nothing hit an unknown route."""
    fake, _ = judge
    assert fake.unknown_calls == []
    assert [(c.path, c.response) for c in fake.rejected] == []
    assert len(fake.sync_calls) == 1


# -- restarts ----------------------------------------------------------------------------------------------


async def test_second_start_with_unchanged_commands_does_not_sync(engine, tmp_path) -> None:
    async with FakeDiscord() as fake:
        first = JudgeBot(judge_settings(fake, tmp_path / "index"), engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, first):
            pass
        assert len(fake.sync_calls) == 1 and first.synced is True
        second = JudgeBot(judge_settings(fake, tmp_path / "index"), engine=engine, guild_ready_timeout=0.1)
        async with bot_running(fake, second):
            rec = await fake.invoke_command("define", {"term": "target"})
            assert rec.message["embeds"][0]["title"] == "Target"
        assert len(fake.sync_calls) == 1 and second.synced is False
        assert [c for c in fake.calls if c.route in ("commands", "command") and c.method != "GET"] == [
            fake.sync_calls[0]
        ]


async def test_buttons_survive_a_restart(engine, tmp_path) -> None:
    """A button made by one bot process is handled by the next one (state lives in the custom id)."""
    async with FakeDiscord() as fake:
        settings = judge_settings(fake, tmp_path / "index")
        async with bot_running(fake, JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)):
            rec = await fake.invoke_command("ask", {"question": "is a terrain an enemy card"})
        async with bot_running(fake, JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)):
            target = first_open_target(fake, rec.message)
            opened = await fake.click(rec.message, f"l5r:open:{target}", user=fake.new_member())
            assert opened.message["embeds"][0]["title"] in ("Terrain", "Region")


async def test_guild_sync_when_guild_ids_set(engine, tmp_path) -> None:
    async with FakeDiscord() as fake:
        settings = judge_settings(fake, tmp_path / "index", guild_ids=(fake.guild.id,))
        async with bot_running(fake, JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)):
            assert fake.registered_commands() == []
            assert {c["name"] for c in fake.registered_commands(fake.guild.id)} >= {"define", "Look up rules"}
            rec = await fake.invoke_command("define", {"term": "target"})
            assert rec.message["embeds"][0]["title"] == "Target"


async def test_two_processes_each_run_half_the_shards(engine, tmp_path) -> None:
    """SHARD_COUNT=2 with SHARD_IDS split over two bots: each guild is answered by its shard's bot."""
    async with FakeDiscord(shard_count=2) as fake:
        bots = [
            JudgeBot(
                judge_settings(fake, tmp_path / "index", shard_count=2, shard_ids=(shard,)),
                engine=engine,
                guild_ready_timeout=0.1,
            )
            for shard in (0, 1)
        ]
        async with bot_running(fake, bots[0]), bot_running(fake, bots[1]):
            assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 2), (1, 2)]
            for shard, guild in enumerate(fake.guilds):
                rec = await fake.invoke_command("define", {"term": "target"}, guild=guild)
                assert public_answer(rec)["embeds"][0]["title"] == "Target"
                assert bots[shard].get_guild(guild.id) is not None
                assert bots[1 - shard].get_guild(guild.id) is None
        assert len(fake.sync_calls) == 1


async def test_malformed_gateway_events_are_skipped_and_the_bot_keeps_answering(judge, caplog) -> None:
    """discord.py runs event parsers without a guard, so one malformed event used to end the process."""
    fake, bot = judge
    session = fake.session_for_guild(fake.guild)
    good = fake._interaction_payload(2, {"name": "define", "type": 1}, fake.new_member(), fake.guild)
    member = {k: v for k, v in good["member"].items() if k != "user"}
    no_user = {**good, "id": str(int(good["id"]) + 1), "member": member}
    bad_id = {**good, "id": "abc"}
    with caplog.at_level(logging.WARNING, logger="bot.gateway"):
        for name, data in (
            ("INTERACTION_CREATE", no_user),
            ("INTERACTION_CREATE", bad_id),
            ("INTERACTION_CREATE", None),
            ("GUILD_CREATE", None),
            ("CHANNEL_UPDATE", {"id": "abc"}),
        ):
            await fake.dispatch_event(session, name, data)  # type: ignore[arg-type]
        rec = await fake.invoke_command("define", {"term": "target"}, user=fake.new_member(), timeout=8)
    assert public_answer(rec)["embeds"][0]["title"] == "Target"  # still connected, still answering
    assert not bot.is_closed()
    skipped = [r.getMessage() for r in caplog.records if r.name == "bot.gateway"]
    assert len(skipped) >= 3 and all(m.startswith("skipped a malformed ") for m in skipped), skipped
    assert not any(r.exc_info for r in caplog.records if r.name == "bot.gateway")  # one line, no traceback

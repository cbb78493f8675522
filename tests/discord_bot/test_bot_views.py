"""The Discord layer without Discord: custom ids, buttons, replies, errors, cooldown, admin check, sync.

Interactions are spec'd fakes (autospec of discord.py's own classes), so a call the real
classes would not accept fails here too.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import discord
import pytest
from discord import app_commands

from bot.app import commands as render
from bot.app.answer import Answer
from bot.app.judge import Judge
from bot.app.settings import Settings
from bot.discord_bot import replies as views
from bot.discord_bot.client import JudgeBot, JudgeTree, apply_api_base
from bot.discord_bot.cogs.admin import NotAllowed, owner_or_manager
from bot.discord_bot.replies import ARGS, DYNAMIC_ITEMS, OpenButton, PageButton, PostButton, answer_embed, answer_view
from index.engine import Engine
from tests.rendering import to_discord


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    eng = Engine.open(None, index_copy("index"))  # its own copy: /reload rebuilds it
    yield eng
    eng.close()


@pytest.fixture
async def bot(engine: Engine, tmp_path: Path) -> JudgeBot:
    settings = Settings(cooldown_rate=2, cooldown_seconds=30, state_dir=tmp_path / "state", owner_ids=frozenset({7}))
    b = JudgeBot(settings, engine=engine)
    from bot.discord_bot.client import EXTENSIONS

    for ext in EXTENSIONS:
        await b.load_extension(ext)
    b.add_dynamic_items(*DYNAMIC_ITEMS)
    yield b
    await b.http.close()


def fake_interaction(
    bot: JudgeBot, *, ephemeral_message: bool = False, user_id: int = 1, manage_guild: bool = False
) -> mock.Mock:
    interaction = mock.create_autospec(discord.Interaction, instance=True)
    interaction.client = bot
    interaction.extras = {}
    interaction.id = discord.utils.time_snowflake(dt.datetime.now(dt.UTC))  # created now: Discord's 3 s start here
    interaction.user = SimpleNamespace(id=user_id)
    interaction.guild = SimpleNamespace(id=5)
    interaction.guild_id = 5
    interaction.permissions = discord.Permissions(manage_guild=manage_guild)
    interaction.created_at = dt.datetime.now(dt.UTC)
    interaction.command = None
    interaction.message = SimpleNamespace(flags=discord.MessageFlags(ephemeral=ephemeral_message))
    response = mock.create_autospec(discord.InteractionResponse, instance=True)
    done = {"value": False}
    response.is_done.side_effect = lambda: done["value"]

    def mark_done(*_a: object, **_k: object) -> None:
        done["value"] = True

    for name in ("send_message", "edit_message", "defer", "autocomplete"):
        getattr(response, name).side_effect = mark_done
    interaction.response = response
    interaction.followup = mock.create_autospec(discord.Webhook, instance=True)
    return interaction


async def click(bot: JudgeBot, cls: type, custom_id: str, interaction: mock.Mock, label: str = "x") -> None:
    """What discord.py does on a component click: match the template, build the item, call back."""
    match = cls.__discord_ui_compiled_template__.fullmatch(custom_id)
    assert match, custom_id
    item = discord.ui.Button(label=label, custom_id=custom_id)
    button = await cls.from_custom_id(interaction, item, match)
    await button.callback(interaction)


def sent(call: mock._Call) -> tuple[discord.Embed | None, discord.ui.View | None, bool | None]:
    return call.kwargs.get("embed"), call.kwargs.get("view"), call.kwargs.get("ephemeral")


def custom_ids(view: discord.ui.View | None) -> list[str]:
    return [item.custom_id for item in view.children] if view else []


# -- custom ids ---------------------------------------------------------------------------------


def test_custom_ids_fit_and_round_trip(engine: Engine) -> None:
    long_question = "can a terrain " + "really " * 40 + "be an enemy card?"
    for entry in engine.corpus.entries:
        cid = views.open_id(entry.id)
        assert len(cid) <= views.CUSTOM_ID_LIMIT
        m = OpenButton.__discord_ui_compiled_template__.fullmatch(cid)
        assert ARGS.decode(m["ref"], SimpleNamespace(engine=engine)) == entry.id
    for kind, arg in [
        (render.ASK, long_question),
        (render.CHANGES, "2008-01-01||glossary"),
        (render.ENTRY, "glossary:target"),
        (render.ASK, "#hashtag question"),
    ]:
        cid = views.page_id("page", kind, arg, 12)
        assert len(cid) <= views.CUSTOM_ID_LIMIT
        m = PageButton.__discord_ui_compiled_template__.fullmatch(cid)
        assert (m["kind"], ARGS.decode(m["arg"]), m["n"]) == (kind, arg, "12")
    assert views.page_id("post", render.ENTRY, "glossary:target", 0) == "l5r:post:e:glossary:target:0"


def test_long_entry_id_survives_restart_via_corpus(engine: Engine) -> None:
    entry = engine.corpus.entries[0]
    token = ARGS.digest(entry.id)
    empty = views.ArgStore()  # a fresh process: nothing remembered
    assert empty.decode(token, SimpleNamespace(engine=engine)) == entry.id
    assert empty.decode(ARGS.digest("some long question")) is None


# -- embeds and views ---------------------------------------------------------------------------


async def test_every_entry_embed_and_view_is_valid(bot: JudgeBot, engine: Engine) -> None:
    for entry in engine.corpus.entries:
        answer = to_discord(bot.judge.open(entry.id))
        for n in range(len(answer.pages)):
            embed = answer_embed(answer, n)
            assert len(embed) <= 6000 and embed.title == answer.title
            view = answer_view(answer, n, private=True)
            rows = view.to_components()
            assert len(rows) <= 5 and all(len(r["components"]) <= 5 for r in rows)
            ids = custom_ids(view)
            assert len(ids) == len(set(ids)) and all(len(i) <= 100 for i in ids)
            assert ids[-1] == f"l5r:post:e:{entry.id}:{n}"


async def test_paged_answer_has_previous_next(bot: JudgeBot) -> None:
    answer = to_discord(bot.judge.changes())
    assert len(answer.pages) > 2
    view = answer_view(answer, 1)
    nav = [c for c in view.children if c.custom_id.startswith("l5r:page:")]
    assert [c.custom_id for c in nav] == ["l5r:page:c:||:0", "l5r:page:c:||:2"]
    first = answer_view(answer, 0)
    assert [c.item.disabled for c in first.children if c.custom_id.startswith("l5r:page:")] == [True, False]
    assert not any(c.startswith("l5r:post:") for c in custom_ids(view))  # public: no "post" button


# -- commands through the callbacks -------------------------------------------------------------


async def test_define_command_replies_publicly_with_cross_reference_buttons(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    command = bot.tree.get_command("define")
    await command.callback(command.binding, interaction, "terrain")
    embed, view, ephemeral = sent(interaction.response.send_message.call_args)
    assert embed.title == "Terrain" and ephemeral is False
    assert "l5r:open:obsidian-hand:update-2015-10-20" in custom_ids(view)
    assert interaction.extras["hits"][0] == "glossary:terrain"


async def test_private_lookup_offers_post_button_and_post_is_public(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    command = bot.tree.get_command("banned")
    await command.callback(command.binding, interaction, "moshi eihime", True)
    embed, view, ephemeral = sent(interaction.response.send_message.call_args)
    assert ephemeral is True and embed.title == "Banned: Moshi Eihime"
    post_id = custom_ids(view)[-1]
    assert post_id == "l5r:post:b:moshi eihime:0"
    click_it = fake_interaction(bot, ephemeral_message=True)
    await click(bot, PostButton, post_id, click_it, "Post in channel")
    embed, view, ephemeral = sent(click_it.response.send_message.call_args)
    assert ephemeral is False and embed.title == "Banned: Moshi Eihime"
    assert not any(c.startswith("l5r:post:") for c in custom_ids(view))


async def test_autocomplete_values_answer_their_commands(bot: JudgeBot) -> None:
    """What Discord sends back when a user picks a choice is its value; each command must accept it."""
    for command, option, typed, title in [
        ("define", "term", "targ", "Target"),
        ("banned", "card", "moshi", "Banned: Moshi Eihime"),
        ("rule", "section", "cardinal rule 2", "Cardinal Rule 2: Cards vs. Cards"),
    ]:
        cmd = bot.tree.get_command(command)
        interaction = fake_interaction(bot)
        assert await cmd._params[option].autocomplete(interaction, typed) == []  # it responded itself:
        (choices,) = interaction.response.autocomplete.call_args.args
        assert 0 < len(choices) <= 25 and all(len(c.name) <= 100 and len(c.value) <= 100 for c in choices)
        picked = fake_interaction(bot)  # the command, sent with the picked choice's value
        await cmd.callback(cmd.binding, picked, choices[0].value)
        embed, _view, _ = sent(picked.response.send_message.call_args)
        assert embed.title == title, (command, choices[0])


async def test_open_and_page_buttons(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    await click(bot, OpenButton, "l5r:open:glossary:target", interaction)
    embed, view, ephemeral = sent(interaction.response.send_message.call_args)
    assert embed.title == "Target" and ephemeral is True
    assert "The word “target” must appear" in embed.description

    paging = fake_interaction(bot)
    await click(bot, PageButton, "l5r:page:c:2008-01-01||:1", paging)
    embed, _view, _ = sent(paging.response.edit_message.call_args)
    expected = to_discord(bot.judge.changes("2008-01-01"))
    assert embed.description == expected.pages[1].description
    assert embed.footer.text.endswith(f"page 2/{len(expected.pages)}")


async def test_slow_page_click_defers_as_update_then_edits_the_original(
    bot: JudgeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "DEFER_AT", 0.0)
    real_rebuild = bot.judge.rebuild

    def slow_rebuild(kind: str, arg: str) -> Answer:
        time.sleep(0.05)  # certainly still running when the (zero) defer threshold passes
        return real_rebuild(kind, arg)

    monkeypatch.setattr(bot.judge, "rebuild", slow_rebuild)
    paging = fake_interaction(bot)
    await click(bot, PageButton, "l5r:page:c:2008-01-01||:1", paging)
    paging.response.defer.assert_called_once_with(ephemeral=False, thinking=False)
    paging.response.edit_message.assert_not_called()
    embed = paging.edit_original_response.call_args.kwargs["embed"]
    expected = to_discord(bot.judge.changes("2008-01-01"))
    assert embed.description == expected.pages[1].description
    assert paging.extras["hits"] == expected.hit_ids


async def test_unknown_hash_after_restart_says_expired(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    await click(bot, PageButton, "l5r:page:a:#0123456789abcdef:1", interaction)
    interaction.response.send_message.assert_called_once_with(views.EXPIRED, ephemeral=True)


async def test_bad_dates_get_a_short_ephemeral_message(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    command = bot.tree.get_command("changes").get_command("list")  # a group on Discord: the listing is /changes list
    await command.callback(command.binding, interaction, "yesterday", None, None, False)
    interaction.response.send_message.assert_called_once_with(
        "since must be a date like 2008-01-31 (or 2008-01, or 2008); got “yesterday”.", ephemeral=True
    )


async def test_context_menu_runs_ask_privately(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot)
    cog = bot.get_cog("LookupMenu")
    message = SimpleNamespace(content="Is a  terrain an enemy card?")
    await cog.look_up(interaction, message)
    embed, _view, ephemeral = sent(interaction.response.send_message.call_args)
    assert ephemeral is True and embed.title == "Rules for: Is a terrain an enemy card?"
    assert interaction.extras["hits"][0] == "glossary:terrain"
    empty = fake_interaction(bot)
    await cog.look_up(empty, SimpleNamespace(content=""))
    empty.response.send_message.assert_called_once_with("That message has no text to look up.", ephemeral=True)


# -- errors, cooldown, admin --------------------------------------------------------------------


async def test_cooldown_then_error_message(bot: JudgeBot) -> None:
    command = bot.tree.get_command("ask")
    interaction = fake_interaction(bot, user_id=31)
    for _ in range(2):  # COOLDOWN_RATE=2 per 30 s in this fixture
        assert all([await check(interaction) for check in command.checks])
    with pytest.raises(app_commands.CommandOnCooldown) as info:
        for check in command.checks:
            await check(interaction)
    assert 29 < info.value.retry_after <= 30
    assert all([await check(fake_interaction(bot, user_id=32)) for check in command.checks])  # per user
    await bot.tree.on_error(interaction, info.value)
    interaction.response.send_message.assert_called_once_with("Slow down a little — try again in 30 s.", ephemeral=True)


async def test_unexpected_error_logs_traceback_but_user_sees_short_note(bot: JudgeBot, caplog) -> None:
    interaction = fake_interaction(bot)
    try:
        raise KeyError("boom")
    except KeyError as exc:
        error = app_commands.CommandInvokeError(bot.tree.get_command("ask"), exc)
    with caplog.at_level(logging.ERROR, logger="bot"):
        await JudgeTree.on_error(bot.tree, interaction, error)
    (message,), kwargs = interaction.response.send_message.call_args
    assert message == "Sorry, something went wrong answering that. The error has been logged."
    assert kwargs == {"ephemeral": True} and "boom" not in message
    assert "Traceback" in caplog.text and "KeyError: 'boom'" in caplog.text


async def test_reload_is_owner_or_manage_server_only(bot: JudgeBot) -> None:
    app = SimpleNamespace(team=None, owner=discord.Object(42))  # the application's owner, as Discord says
    with (
        mock.patch.object(bot, "application_info", autospec=True, return_value=app),
        pytest.raises(NotAllowed, match="Only the bot's owner or members with Manage Server"),
    ):
        await owner_or_manager(fake_interaction(bot, user_id=1))
    assert await owner_or_manager(fake_interaction(bot, user_id=1, manage_guild=True))
    owner = fake_interaction(bot, user_id=7)
    owner.user = mock.create_autospec(discord.User, instance=True)
    owner.user.id = 7
    assert await owner_or_manager(owner)


async def test_reload_defers_then_reports(bot: JudgeBot) -> None:
    interaction = fake_interaction(bot, manage_guild=True)
    command = bot.tree.get_command("reload")
    await command.callback(command.binding, interaction)
    interaction.response.defer.assert_called_once_with(ephemeral=True, thinking=True)
    (text,), kwargs = interaction.followup.send.call_args
    # the whole reload's time, then the index build's share of it
    assert re.fullmatch(r"Reloaded \d+ entries from 5 files in \d+\.\d\d s \(index build \d+\.\d\d s\)\.", text)
    assert kwargs["ephemeral"]
    assert bot.judge.define("target").title == "Target"  # still answering after the swap


async def test_reload_is_limited_per_server_and_across_servers_but_not_for_owners(bot: JudgeBot) -> None:
    """A server admin cannot run /reload in a loop (each keeps a core busy for seconds): after one, the next
    in that server waits RELOAD_COOLDOWN, and in any server RELOAD_COOLDOWN_GLOBAL; the reply says when. The
    bot's owners are never made to wait."""
    command = bot.tree.get_command("reload")
    first = fake_interaction(bot, manage_guild=True)
    await command.callback(command.binding, first)
    first.response.defer.assert_called_once()
    again = fake_interaction(bot, manage_guild=True)
    await command.callback(command.binding, again)
    again.response.defer.assert_not_called()
    (text,), kwargs = again.response.send_message.call_args
    assert kwargs["ephemeral"] and text.startswith("Reloads are limited to one every 60 s in a server")
    # counted from the first reload's start, which on a loaded machine takes a while: at most 60 s, not a set figure
    assert re.search(r"the next one is allowed <t:\d+:R> \(in ([1-5]?\d|60) s\)\.$", text), text
    elsewhere = fake_interaction(bot, manage_guild=True)
    elsewhere.guild, elsewhere.guild_id = SimpleNamespace(id=6), 6
    await command.callback(command.binding, elsewhere)  # another server: the 15 s across all servers
    (text,), _ = elsewhere.response.send_message.call_args
    assert re.search(r"\(in (1[0-5]|[0-9]) s\)\.$", text), text
    owner = fake_interaction(bot, user_id=7)  # OWNER_IDS: no limit
    await command.callback(command.binding, owner)
    owner.response.defer.assert_called_once()
    owner.response.send_message.assert_not_called()


async def test_a_failed_reload_names_no_host_path(bot: JudgeBot) -> None:
    from index.engine import ReloadFailed

    failure = "the build process failed: OSError: [Errno 28] No space left on device: '/var/lib/l5r/index/b-1/x.npz'"
    command = bot.tree.get_command("reload")
    interaction = fake_interaction(bot, manage_guild=True)
    with mock.patch.object(bot, "reload_rules", autospec=True, side_effect=ReloadFailed(failure)):
        await command.callback(command.binding, interaction)
    (text,), _ = interaction.followup.send.call_args
    assert text.startswith("Reload failed; still serving the ") and "/var/lib" not in text
    assert "No space left on device: 'x.npz'" in text


# -- startup: API base, intents, command sync ---------------------------------------------------


def test_apply_api_base_points_rest_and_webhooks_at_base() -> None:
    import discord.http
    import discord.webhook.async_

    old = discord.http.Route.BASE
    try:
        apply_api_base("http://127.0.0.1:9999/api/v10/")
        assert discord.http.Route("GET", "/gateway/bot").url == "http://127.0.0.1:9999/api/v10/gateway/bot"
        route = discord.webhook.async_.Route("POST", "/interactions/1/tok/callback")
        assert route.url == "http://127.0.0.1:9999/api/v10/interactions/1/tok/callback"
    finally:
        discord.http.Route.BASE = old


async def test_bot_options(bot: JudgeBot) -> None:
    assert bot.allowed_mentions.to_dict() == {"parse": []}
    assert not bot.intents.message_content and not bot.intents.members and not bot.intents.presences
    names = sorted(c.name for c in bot.tree.get_commands())
    assert names == ["Look up rules", "about", "ask", "banned", "changes", "define", "help", "history", "reload",
                     "rule", "ruling"]
    menu = bot.tree.get_command("Look up rules", type=discord.AppCommandType.message)
    rate_limited = [bot.tree.get_command(n) for n in ("define", "ask", "rule", "banned")] + [menu]
    rate_limited.append(bot.tree.get_command("changes").get_command("list"))
    assert all(len(c.checks) == 1 for c in rate_limited)  # the per-user cooldown


async def test_commands_synced_only_when_changed(bot: JudgeBot) -> None:
    with mock.patch.object(bot.tree, "sync", autospec=True) as sync:
        assert await bot.sync_commands() is True
        assert await bot.sync_commands() is False
        assert sync.call_count == 1
        assert (bot.settings.state_dir / "commands.sha256").read_text().strip() == bot.command_digest()
        await bot.unload_extension("bot.discord_bot.cogs.meta")  # a definition changed
        assert await bot.sync_commands() is True
        assert sync.call_count == 2


async def test_slow_lookup_is_deferred_then_followed_up(bot: JudgeBot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "DEFER_AT", 0.01)

    def slow(judge: Judge) -> Answer:  # a Judge call that takes longer than the defer threshold
        time.sleep(0.1)
        return judge.define("target")

    interaction = fake_interaction(bot)
    await views.answer(interaction, slow, private=True)
    interaction.response.defer.assert_called_once_with(ephemeral=True, thinking=True)
    interaction.response.send_message.assert_not_called()
    embed, _view, ephemeral = sent(interaction.followup.send.call_args)
    assert embed.title == "Target" and ephemeral is True

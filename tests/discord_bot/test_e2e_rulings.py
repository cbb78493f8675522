"""End to end: two servers on the fake Discord, two judges each, recording rulings through the real bot.

One JudgeBot (both shards) with the real engine and a SQLite rulings database. Checks what each server
sees after every change, that nothing leaks between servers or into direct messages, the server-side
permission checks, forms (modals), the edit conflict, import/export, the audit channel, and that no
message can ping anyone.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from fakediscord import FakeDiscord, FakeGuild, FakeUser, InteractionRecord, bot_running, preserved_discord_urls

from bot.app.settings import Settings
from bot.discord_bot.client import JudgeBot
from index.engine import Engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

text_of = FakeDiscord.text_of
DUEL_TEXT = "No Terrain may be played while a duel is being resolved.\n\n- This includes *Reaction* Terrains."


@dataclasses.dataclass
class Server:
    guild: FakeGuild
    role: int
    judges: tuple[FakeUser, FakeUser]
    player: FakeUser


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Engine:
    return Engine.open(None, index_copy("e2e-rulings"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict]:
    state = tmp_path_factory.mktemp("e2e-rulings-state")
    with preserved_discord_urls():
        async with FakeDiscord(shard_count=2) as fake:
            servers = []
            for n, guild in enumerate(fake.guilds):
                role = fake.new_role("Judges", guild=guild)
                names = (("Ann", "Bob"), ("Cat", "Dan"))[n]
                judges = (
                    fake.new_member(names[0], guild=guild, roles=[role]),
                    fake.new_member(names[1], guild=guild, roles=[role]),
                )
                servers.append(Server(guild, role, judges, fake.new_member(f"Player{n}", guild=guild)))
            settings = Settings(token="fake-token", api_base=fake.api_base, index_dir=engine.index_dir,
                                state_dir=state, cooldown_seconds=0, rulings_poll_seconds=0.5)  # fmt: skip
            bot = JudgeBot(settings, engine=engine, guild_ready_timeout=0.1)
            async with bot_running(fake, bot, "fake-token"):
                for server in servers:
                    rec = await fake.invoke_command(
                        "ruling config judge-role", {"role": server.role}, user=fake.admin, guild=server.guild
                    )
                    assert "Judges are now members with the role **Judges**" in rec.message["content"]
                yield {"fake": fake, "bot": bot, "one": servers[0], "two": servers[1], "state": state}


async def add_ruling(fake: FakeDiscord, server: Server, judge: FakeUser, values: dict, **options) -> InteractionRecord:
    opened = await fake.invoke_command("ruling add", options, user=judge, guild=server.guild)
    assert opened.modal is not None, text_of(opened.message or {})
    return await fake.submit_modal(opened, values)


async def all_pages(fake: FakeDiscord, rec: InteractionRecord, user: FakeUser | None = None) -> str:
    """Every page of an answer, read by clicking "Next" as a user would."""
    assert rec.rejected == [], rec.rejected[0].response
    texts = [text_of(rec.message)]
    message = rec.message
    while True:
        nxt = next((c for c in fake.components_of(message) if c.get("label") == "Next ▶"), None)
        if nxt is None or nxt.get("disabled"):
            return "\n".join(texts)
        clicked = await fake.click(message, nxt["custom_id"], user=user)
        message = clicked.message
        texts.append(text_of(message))


async def define(fake: FakeDiscord, server: Server | None, term: str) -> str:
    if server is None:
        rec = await fake.invoke_command("define", {"term": term}, dm=True)
        return await all_pages(fake, rec, fake.member)
    rec = await fake.invoke_command("define", {"term": term}, user=server.player, guild=server.guild)
    return await all_pages(fake, rec, server.player)


def ruling_id_in(rec: InteractionRecord) -> int:
    content = rec.message["content"]
    assert "ruling #" in content, content
    return int(content.split("ruling #")[1].split(" ")[0])


async def test_a_judge_records_a_ruling_that_only_their_server_sees(world) -> None:
    fake, one, two = world["fake"], world["one"], world["two"]
    opened = await fake.invoke_command(
        "ruling add", {"applies_to": "glossary:terrain", "event": "Kotei 2026"}, user=one.judges[0], guild=one.guild
    )
    modal = opened.modal
    fields = {c["component"]["custom_id"]: c["component"] for c in modal["components"]}
    assert fields["applies"]["value"] == "Terrain" and fields["event"]["value"] == "Kotei 2026"
    assert fields["text"]["max_length"] == 4000 and fields["text"]["style"] == 2
    saved = await fake.submit_modal(opened, {"title": "Terrain during a duel", "text": DUEL_TEXT})
    assert saved.ephemeral and "Saved ruling #" in saved.message["content"]
    world["duel"] = ruling_id_in(saved)

    answer = await define(fake, one, "terrain")  # searchable at once: no rebuild, no wait
    credit = f"(Ann, {answer.split('(Ann, ')[1][:10]}, Kotei 2026)"
    assert f"**Server ruling — Terrain during a duel {credit}**:" in answer  # worded as a house ruling is
    assert answer.index("Server ruling — Terrain during a duel") > answer.index("Terrain")
    assert "No Terrain may be played while a duel is being resolved." in answer
    assert "Terrain during a duel" not in await define(fake, two, "terrain")
    assert "Terrain during a duel" not in await define(fake, None, "terrain")  # direct messages: no rulings


async def test_ask_and_autocomplete_include_the_ruling_in_its_server_only(world) -> None:
    fake, one, two = world["fake"], world["one"], world["two"]
    question = {"question": "can a terrain be played during a duel"}
    ask_one = await fake.invoke_command("ask", question, user=one.player, guild=one.guild)
    ask_two = await fake.invoke_command("ask", question, user=two.player, guild=two.guild)
    assert "Terrain during a duel" in text_of(ask_one.message)
    assert "Terrain during a duel" not in text_of(ask_two.message)
    ac_one = await fake.autocomplete("define", "term", "terrain d", user=one.player, guild=one.guild)
    ac_two = await fake.autocomplete("define", "term", "terrain d", user=two.player, guild=two.guild)
    assert any(c["value"] == f"house:#{world['duel']}" for c in ac_one.choices)
    assert not any(c["value"].startswith("house:#") for c in ac_two.choices)
    opened = await fake.click(ask_one.message, f"l5r:open:house:#{world['duel']}", user=one.player)
    about = next(f["value"] for f in opened.message["embeds"][0]["fields"] if f["name"] == "About")
    assert about.startswith("Server ruling (Ann, ") and about.endswith("Kotei 2026)\nApplies to: Terrain")


async def test_only_judges_and_managers_may_write_checked_by_the_bot(world) -> None:
    fake, one, two = world["fake"], world["one"], world["two"]
    for user in (one.player, two.judges[0]):  # a player, and a judge of the other server
        rec = await fake.invoke_command("ruling add", {}, user=user, guild=one.guild)
        assert rec.modal is None and "Only this server's judges can change its rulings" in rec.message["content"]
    retire = await fake.invoke_command("ruling retire", {"ruling": str(world["duel"])}, user=one.player,
                                       guild=one.guild)  # fmt: skip
    assert "Only this server's judges" in retire.message["content"]
    config = await fake.invoke_command("ruling config judge-role", {}, user=one.judges[0], guild=one.guild)
    assert "Only members with the Manage Server permission" in config.message["content"]
    # A form opened by a judge is checked again when submitted: losing the role in between is enough.
    opened = await fake.invoke_command("ruling add", {}, user=one.judges[1], guild=one.guild)
    one.judges[1].roles.remove(one.role)
    try:
        rec = await fake.submit_modal(opened, {"title": "Sneaky", "text": "Text."})
        assert "Only this server's judges" in rec.message["content"]
    finally:
        one.judges[1].roles.append(one.role)
    assert "Sneaky" not in text_of((await fake.invoke_command("ruling list", {}, guild=one.guild)).message)
    with pytest.raises(ValueError, match="not available in direct messages"):
        await fake.invoke_command("ruling list", {}, dm=True)


async def test_two_judges_editing_at_once_the_second_gets_a_conflict_and_loses_nothing(world) -> None:
    fake, one = world["fake"], world["one"]
    ann, bob = one.judges
    rid = str(world["duel"])
    form_ann = await fake.invoke_command("ruling edit", {"ruling": rid}, user=ann, guild=one.guild)
    form_bob = await fake.invoke_command("ruling edit", {"ruling": rid}, user=bob, guild=one.guild)
    assert form_ann.modal["custom_id"] == form_bob.modal["custom_id"] == f"l5r:rm:e:{rid}:1"
    bob_text = "No Terrain may be played while a duel is being resolved, by either player."
    done = await fake.submit_modal(form_bob, {"text": bob_text})
    assert "Updated ruling #" in done.message["content"] and "(version 2)" in done.message["content"]
    ann_text = "Terrains cannot be played during duels."
    conflict = await fake.submit_modal(form_ann, {"text": ann_text})
    msg = conflict.message
    assert conflict.ephemeral and "changed while you were editing it" in msg["content"]
    assert bob_text in text_of(msg)  # the current text
    assert ann_text in fake.attachment_data(msg).decode()  # her draft, as Markdown
    reopen = next(c for c in fake.components_of(msg) if c.get("custom_id", "").startswith("l5r:rd:"))
    again = await fake.click(msg, reopen["custom_id"], user=ann)
    fields = {c["component"]["custom_id"]: c["component"] for c in again.modal["components"]}
    assert again.modal["custom_id"] == f"l5r:rm:e:{rid}:2" and fields["text"]["value"] == ann_text
    saved = await fake.submit_modal(again)
    assert "(version 3)" in saved.message["content"]
    assert ann_text in await define(fake, one, "terrain")
    history = await fake.invoke_command("ruling history", {"ruling": rid}, guild=one.guild)
    text = text_of(history.message)
    assert "**Version 3** — edited by Ann" in text and "**Version 2** — edited by Bob" in text
    assert "**Version 1** — added by Ann" in text and "3 versions · now active" in text


async def test_bad_input_is_refused_clearly_and_the_draft_is_handed_back(world) -> None:
    fake, one = world["fake"], world["one"]
    rec = await add_ruling(fake, one, one.judges[0], {"title": "Typo", "text": "Text.", "applies": "Terain, Target"})
    assert "Nothing was saved" in rec.message["content"]
    assert "“Terain” is not the name of any entry in the rules" in rec.message["content"]
    assert "## Typo" in fake.attachment_data(rec.message).decode()
    heading = await add_ruling(fake, one, one.judges[0], {"title": "Two", "text": "One.\n\n## Another ruling\n\nX"})
    assert "would start a new ruling" in heading.message["content"]
    opened = await fake.invoke_command("ruling add", {}, user=one.judges[0], guild=one.guild)
    with pytest.raises(ValueError, match="at most 4000"):  # Discord's client refuses it before sending
        await fake.submit_modal(opened, {"title": "Long", "text": "x" * 4001})
    missing = await fake.invoke_command("ruling retire", {"ruling": "999999"}, user=one.judges[0], guild=one.guild)
    assert "This server has no ruling #999999" in missing.message["content"]


async def test_mentions_in_a_ruling_never_ping(world) -> None:
    fake, one = world["fake"], world["one"]
    player = fake.member
    text = f"@everyone and <@{player.id}> and <@&{one.role}>: Terrain rulings apply here too."
    saved = await add_ruling(fake, one, one.judges[0], {"title": "@everyone listen", "text": text,
                                                         "applies": "Terrain"})  # fmt: skip
    assert "Saved ruling #" in saved.message["content"]
    answer = await fake.invoke_command("define", {"term": "terrain"}, user=one.player, guild=one.guild)
    for rec in (saved, answer):
        pings = fake.pings(rec.message)
        assert not pings["everyone"] and not pings["users"] and not pings["roles"]
    rid = ruling_id_in(saved)
    await fake.invoke_command("ruling retire", {"ruling": str(rid)}, user=one.judges[1], guild=one.guild)


async def test_retire_hides_a_ruling_history_keeps_it_and_restore_brings_it_back(world) -> None:
    fake, two = world["fake"], world["two"]
    cat, dan = two.judges
    saved = await add_ruling(fake, two, cat, {"title": "Ranged attacks at night", "text": "Ranged attacks work.",
                                              "applies": "Ranged Attack"})  # fmt: skip
    rid = str(ruling_id_in(saved))
    assert "Ranged attacks at night" in await define(fake, two, "ranged attack")
    retired = await fake.invoke_command("ruling retire", {"ruling": rid, "reason": "wrong"}, user=dan,
                                        guild=two.guild)  # fmt: skip
    assert "Retired ruling #" in retired.message["content"]
    assert "Ranged attacks at night" not in await define(fake, two, "ranged attack")
    listed = await fake.invoke_command("ruling list", {}, guild=two.guild)
    assert "Ranged attacks at night" not in text_of(listed.message)
    history = await fake.invoke_command("ruling history", {"ruling": rid}, guild=two.guild)
    assert "**Version 2** — retired by Dan" in text_of(history.message) and "“wrong”" in text_of(history.message)
    ac = await fake.autocomplete("ruling restore", "ruling", "", user=dan, guild=two.guild)
    assert [c["value"] for c in ac.choices] == [rid]
    restored = await fake.invoke_command("ruling restore", {"ruling": rid}, user=cat, guild=two.guild)
    assert "Restored ruling #" in restored.message["content"]
    assert "Ranged attacks at night" in await define(fake, two, "ranged attack")
    await fake.invoke_command("ruling retire", {"ruling": rid}, user=cat, guild=two.guild)
    assert "Ranged attacks at night" not in await define(fake, two, "ranged attack")
    # The other server never sees any of it, and cannot reach it by number.
    one = world["one"]
    other = await fake.invoke_command("ruling history", {"ruling": rid}, guild=one.guild)
    assert f"This server has no ruling #{rid}" in other.message["content"]


async def test_export_then_import_into_the_other_server_round_trips(world) -> None:
    fake, one, two = world["fake"], world["one"], world["two"]
    exported = await fake.invoke_command("ruling export", {}, user=one.player, guild=one.guild)
    data = fake.attachment_data(exported.message)
    text = data.decode()
    assert text.startswith("# Test Guild 0 rulings\n") and "## Terrain during a duel\n" in text
    assert "Event: Kotei 2026\nApplies to: Terrain\n\nTerrains cannot be played during duels.\n" in text
    assert "@everyone listen" not in text  # retired
    upload = fake.upload("kotei.md", data)
    imported = await fake.invoke_command("ruling import", {"file": upload}, user=two.judges[0], guild=two.guild)
    assert "Imported **kotei.md**: 1 added, 0 updated, 0 unchanged." in imported.message["content"]
    answer = await define(fake, two, "terrain")
    assert "**Server ruling — Terrain during a duel (Ann," in answer  # the judge who ruled, from the file
    again = await fake.invoke_command("ruling import", {"file": upload}, user=two.judges[1], guild=two.guild)
    assert "0 added, 0 updated, 1 unchanged" in again.message["content"]
    re_exported = await fake.invoke_command("ruling export", {}, user=two.player, guild=two.guild)
    body = fake.attachment_data(re_exported.message).decode()
    assert body.split("\n", 1)[1] == text.split("\n", 1)[1]  # the same rulings, byte for byte


async def test_a_malformed_import_reports_lines_and_imports_nothing(world) -> None:
    fake, two = world["fake"], world["two"]
    before = text_of((await fake.invoke_command("ruling list", {}, guild=two.guild)).message)
    bad = (
        b"# Bad file\n\n## Good ruling\nDate: 2026-11-02\nApplies to: Target\n\nFine.\n\n"
        b"## Broken ruling\nDate: 2026-13-40\nApplies to: Terain\n\nText.\n"
    )
    rec = await fake.invoke_command("ruling import", {"file": fake.upload("bad.md", bad)}, user=two.judges[0],
                                    guild=two.guild)  # fmt: skip
    content = rec.message["content"]
    assert "Nothing was imported: **bad.md** has 2 problems" in content
    assert "line 10: bad-date" in content and "line 11: ruling 'Broken ruling': “Terain” is not the name" in content
    assert text_of((await fake.invoke_command("ruling list", {}, guild=two.guild)).message) == before
    binary = await fake.invoke_command("ruling import", {"file": fake.upload("x.md", b"\x00\x01")},
                                       user=two.judges[0], guild=two.guild)  # fmt: skip
    assert "line 1: this is not a text file" in binary.message["content"]


async def test_the_audit_channel_gets_a_line_per_change(world) -> None:
    fake, one = world["fake"], world["one"]
    rec = await fake.invoke_command("ruling config audit-channel", {"channel": one.guild.channel_id},
                                    user=fake.admin, guild=one.guild)  # fmt: skip
    assert "Ruling changes will be logged in" in rec.message["content"]
    before = len(fake.channel_messages(one.guild))
    saved = await add_ruling(fake, one, one.judges[1], {"title": "Audited <@&1> ruling", "text": "Audited.",
                                                         "applies": "Target"})  # fmt: skip
    await fake.wait_for(lambda: len(fake.channel_messages(one.guild)) > before, 5, "the audit line")
    line = fake.channel_messages(one.guild)[-1]
    assert line["content"].startswith("Bob added ruling `#") and "Audited" in line["content"]
    assert fake.allowed_mentions(line) == {"parse": []} and not fake.pings(line)["roles"]
    assert fake.channel_messages(world["two"].guild) == []
    await fake.invoke_command("ruling retire", {"ruling": str(ruling_id_in(saved))}, user=one.judges[0],
                              guild=one.guild)  # fmt: skip
    await fake.invoke_command("ruling config audit-channel", {}, user=fake.admin, guild=one.guild)


async def test_list_and_changes_show_the_servers_rulings(world) -> None:
    fake, one = world["fake"], world["one"]
    listed = text_of((await fake.invoke_command("ruling list", {"event": "Kotei 2026"}, guild=one.guild)).message)
    assert "**Terrain during a duel** — Ann" in listed and "applies to Terrain" in listed
    changes = await fake.invoke_command("changes list", {"source": "house"}, user=one.player, guild=one.guild)
    assert "Server ruling › Terrain during a duel (Ann)" in text_of(changes.message)


async def test_every_request_was_valid_and_known(world) -> None:
    fake = world["fake"]
    assert fake.unknown_calls == []
    assert [(c.path, c.response) for c in fake.rejected] == []
    snapshot = copy.deepcopy(fake.messages)
    assert snapshot  # the fake kept every message the bot sent


async def test_the_database_is_a_file_in_the_state_folder(world) -> None:
    assert (Path(world["state"]) / "rulings.sqlite3").exists()

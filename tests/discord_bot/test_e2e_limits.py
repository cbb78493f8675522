"""The fake Discord refuses what the real one refuses, with Discord's status codes and error JSON.

Requests go over HTTP to the fake's interaction and webhook endpoints (no bot needed), so the
checks the e2e bot tests rely on are themselves tested, including the boundary that is still allowed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from fakediscord import FakeDiscord

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def respond(
    fake: FakeDiscord, http: aiohttp.ClientSession, body: dict[str, Any], itype: int = 2
) -> tuple[int, Any]:
    rec = fake.create_interaction(itype)
    url = f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback?with_response=1"
    async with http.post(url, json=body) as resp:
        return resp.status, await resp.json()


def button(custom_id: str, label: str = "x") -> dict[str, Any]:
    return {"type": 2, "style": 1, "custom_id": custom_id, "label": label}


def row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": 1, "components": list(components)}


def field(name: str = "n", value: str = "v") -> dict[str, str]:
    return {"name": name, "value": value}


# (what, message data that is just allowed, data that is just over, path to the error in "errors.data")
MESSAGE_LIMITS = [
    ("content", {"content": "a" * 2000}, {"content": "a" * 2001}, ["content"]),
    ("embed title", {"embeds": [{"title": "t" * 256}]}, {"embeds": [{"title": "t" * 257}]}, ["embeds", "0", "title"]),
    (
        "embed description",
        {"embeds": [{"description": "d" * 4096}]},
        {"embeds": [{"description": "d" * 4097}]},
        ["embeds", "0", "description"],
    ),
    (
        "field count",
        {"embeds": [{"fields": [field()] * 25}]},
        {"embeds": [{"fields": [field()] * 26}]},
        ["embeds", "0", "fields"],
    ),
    (
        "field name",
        {"embeds": [{"fields": [field(name="n" * 256)]}]},
        {"embeds": [{"fields": [field(name="n" * 257)]}]},
        ["embeds", "0", "fields", "0", "name"],
    ),
    (
        "field value",
        {"embeds": [{"fields": [field(value="v" * 1024)]}]},
        {"embeds": [{"fields": [field(value="v" * 1025)]}]},
        ["embeds", "0", "fields", "0", "value"],
    ),
    (
        "embed total",
        {"embeds": [{"description": "d" * 4000}, {"description": "d" * 2000}]},
        {"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]},
        ["embeds"],
    ),
    ("embed count", {"embeds": [{"title": "t"}] * 10}, {"embeds": [{"title": "t"}] * 11}, ["embeds"]),
    (
        "custom id",
        {"components": [row(button("c" * 100))]},
        {"components": [row(button("c" * 101))]},
        ["components", "0", "components", "0", "custom_id"],
    ),
    (
        "action rows",
        {"components": [row(button(f"r{i}")) for i in range(5)]},
        {"components": [row(button(f"r{i}")) for i in range(6)]},
        ["components"],
    ),
    (
        "buttons per row",
        {"components": [row(*[button(f"b{i}") for i in range(5)])]},
        {"components": [row(*[button(f"b{i}") for i in range(6)])]},
        ["components", "0", "components"],
    ),
    (
        "button label",
        {"components": [row(button("b", "l" * 80))]},
        {"components": [row(button("b", "l" * 81))]},
        ["components", "0", "components", "0", "label"],
    ),
    (
        "duplicate custom id",
        {"components": [row(button("a"), button("b"))]},
        {"components": [row(button("a"), button("a"))]},
        ["components", "0", "components", "1", "custom_id"],
    ),
]


def dig(errors: dict[str, Any], path: list[str]) -> list[dict[str, str]]:
    node = errors
    for key in path:
        node = node[key]
    return node["_errors"]


@pytest.mark.parametrize(("what", "ok", "bad", "path"), MESSAGE_LIMITS, ids=[m[0] for m in MESSAGE_LIMITS])
async def test_message_limits(fake, http, what, ok, bad, path) -> None:
    status, _ = await respond(fake, http, {"type": 4, "data": ok})
    assert status == 200, what
    status, body = await respond(fake, http, {"type": 4, "data": bad})
    assert status == 400
    assert (body["code"], body["message"]) == (50035, "Invalid Form Body")
    assert dig(body["errors"]["data"], path)[0]["code"]


async def test_autocomplete_limits(fake, http) -> None:
    ok = {"type": 8, "data": {"choices": [{"name": "n" * 100, "value": "v"}] * 25}}
    assert (await respond(fake, http, ok, itype=4))[0] == 200
    status, body = await respond(fake, http, {"type": 8, "data": {"choices": [{"name": "n", "value": "v"}] * 26}}, 4)
    assert status == 400 and dig(body["errors"]["data"], ["choices"])[0]["code"] == "BASE_TYPE_MAX_LENGTH"
    status, body = await respond(fake, http, {"type": 8, "data": {"choices": [{"name": "n" * 101, "value": "v"}]}}, 4)
    assert status == 400 and dig(body["errors"]["data"], ["choices", "0", "name"])[0]["code"] == "BASE_TYPE_BAD_LENGTH"


async def test_wrong_callback_type_for_interaction(fake, http) -> None:
    status, body = await respond(fake, http, {"type": 8, "data": {"choices": []}}, itype=2)
    assert status == 400 and body["code"] == 50035
    status, _ = await respond(fake, http, {"type": 7, "data": {"content": "x"}}, itype=2)
    assert status == 400


async def test_empty_message_refused(fake, http) -> None:
    status, body = await respond(fake, http, {"type": 4, "data": {"content": ""}})
    assert (status, body) == (400, {"message": "Cannot send an empty message", "code": 50006})


async def test_late_double_and_unknown_responses(fake, http) -> None:
    rec = fake.create_interaction()
    url = f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback"
    rec.created_at -= 3.01  # as if created just over three seconds ago
    async with http.post(url, json={"type": 4, "data": {"content": "late"}}) as resp:
        assert (resp.status, await resp.json()) == (404, {"message": "Unknown interaction", "code": 10062})
    rec = fake.create_interaction()
    url = f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback"
    rec.created_at -= 1.5  # still in time (with room for a slow machine before the window closes)
    async with http.post(url, json={"type": 5}) as resp:
        assert resp.status == 200
        assert (await resp.json())["interaction"]["response_message_loading"] is True
    async with http.post(url, json={"type": 4, "data": {"content": "again"}}) as resp:
        assert (resp.status, (await resp.json())["code"]) == (400, 40060)
    async with http.post(url.replace(rec.token, "wrong-token"), json={"type": 5}) as resp:
        assert (resp.status, (await resp.json())["code"]) == (404, 10062)


async def test_followups_validated_and_first_followup_fills_the_deferred_message(fake, http) -> None:
    rec = fake.create_interaction()
    base = f"{fake.api_base}/webhooks/{fake.app_id}/{rec.token}"
    async with http.post(base + "?wait=true", json={"content": "too early"}) as resp:
        assert (resp.status, (await resp.json())["code"]) == (404, 10015)
    async with http.post(f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback", json={"type": 5}):
        pass
    async with http.post(base + "?wait=true", json={"content": "x" * 2001}) as resp:
        assert resp.status == 400
    async with http.post(base + "?wait=true", json={"content": "answer"}) as resp:
        first = await resp.json()
    assert first["id"] == str(rec.original_message_id) and rec.settled
    async with http.post(base + "?wait=true", json={"content": "more", "flags": 64}) as resp:
        second = await resp.json()
    assert second["id"] != first["id"] and rec.followups[0]["flags"] == 64
    async with http.patch(base + "/messages/@original", json={"content": "edited"}) as resp:
        assert (await resp.json())["content"] == "edited"
    async with http.patch(base + "/messages/@original", json={"embeds": [{"title": "t" * 300}]}) as resp:
        assert resp.status == 400
    async with http.get(base + f"/messages/{second['id']}") as resp:
        assert (await resp.json())["content"] == "more"
    async with http.delete(base + f"/messages/{second['id']}") as resp:
        assert resp.status == 204
    assert rec.followups == []


async def test_rate_limit_injection_looks_like_discord(fake, http) -> None:
    fake.inject_rate_limit(1, "callback", retry_after=0.25)
    rec = fake.create_interaction()
    url = f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback"
    async with http.post(url, json={"type": 5}) as resp:
        assert resp.status == 429
        assert (await resp.json()) == {"message": "You are being rate limited.", "retry_after": 0.25, "global": False}
        assert resp.headers["Retry-After"] == "1" and resp.headers["X-RateLimit-Remaining"] == "0"
        assert resp.headers["Via"]  # discord.py treats a 429 without Via as a Cloudflare ban
    async with http.post(url, json={"type": 5}) as resp:
        assert resp.status == 200


async def test_rest_needs_bot_token_and_unknown_routes_are_recorded(fake, http) -> None:
    async with http.get(f"{fake.api_base}/users/@me") as resp:
        assert (resp.status, await resp.json()) == (401, {"message": "401: Unauthorized", "code": 0})
    async with http.get(f"{fake.api_base}/guilds/1/bans", headers={"Authorization": "Bot x"}) as resp:
        assert (resp.status, await resp.json()) == (404, {"message": "404: Not Found", "code": 0})
    assert fake.unknown_calls[-1].path == "/guilds/1/bans"


async def test_command_definitions_are_validated(fake, http) -> None:
    url = f"{fake.api_base}/applications/{fake.app_id}/commands"
    headers = {"Authorization": "Bot x"}
    bad = [{"name": "Define", "description": "upper case is not allowed", "type": 1}]
    async with http.put(url, json=bad, headers=headers) as resp:
        body = await resp.json()
        assert resp.status == 400 and body["errors"]["0"]["name"]["_errors"][0]["code"]
    good = [{"name": "define", "description": "d", "type": 1}, {"name": "Look up rules", "type": 3}]
    async with http.put(url, json=good, headers=headers) as resp:
        first = await resp.json()
    async with http.put(url, json=good, headers=headers) as resp:
        again = await resp.json()
    assert [c["id"] for c in first] == [c["id"] for c in again]  # ids are stable across overwrites
    assert len(fake.sync_calls) == 3


async def test_interaction_token_expires_after_15_minutes(fake, http) -> None:
    rec = fake.create_interaction()
    async with http.post(f"{fake.api_base}/interactions/{rec.id}/{rec.token}/callback", json={"type": 5}):
        pass
    rec.created_at -= 15 * 60 + 1
    async with http.post(f"{fake.api_base}/webhooks/{fake.app_id}/{rec.token}", json={"content": "late"}) as resp:
        assert (resp.status, await resp.json()) == (401, {"message": "Invalid Webhook Token", "code": 50027})

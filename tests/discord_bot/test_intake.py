"""The intake between the gateway reader and discord.py's INTERACTION_CREATE parser (bot.discord_bot.intake).

Driven with raw events whose ids carry a chosen creation time and with the intake's own clock, so nothing
here depends on the machine's speed: expired events are dropped without being parsed, a backlog is
started newest first, nothing is started twice, and nothing starts while the senders have no room.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.discord_bot.intake import DISCORD_EPOCH_MS, HIGH, Intake, created_at
from bot.discord_bot.logs import log_dropped, raw_command_name

NOW = 1_800_000_000.0  # the intake's clock in these tests (POSIX seconds)


def event(age: float, n: int = 0, **extra: Any) -> dict[str, Any]:
    """A raw INTERACTION_CREATE payload created ``age`` seconds before NOW (``n`` keeps ids apart)."""
    ms = int((NOW - age) * 1000)
    payload = {
        "id": str(((ms - DISCORD_EPOCH_MS) << 22) | n),
        "type": 2,
        "data": {"name": "define"},
        "guild_id": "42",
        "member": {"user": {"id": str(1000 + n)}},
    }
    payload.update(extra)
    return payload


class State:
    """What the intake needs of discord.py's ConnectionState: the parsers dict the gateway reads."""

    def __init__(self) -> None:
        self.parsed: list[dict[str, Any]] = []
        self.parsers = {"INTERACTION_CREATE": self.parsed.append}


def make(room: list[bool] | None = None) -> tuple[Intake, State, list[dict[str, Any]]]:
    state, dropped = State(), []
    room = room if room is not None else [True]
    intake = Intake(dropped.append, room=lambda: room[0], clock=lambda: NOW)
    intake.install(state)
    return intake, state, dropped


async def settle(intake: Intake) -> None:
    assert await intake.wait_idle(5)


def test_the_creation_time_comes_from_the_snowflake_and_a_bad_id_gives_none() -> None:
    assert created_at(event(1.5)) == pytest.approx(NOW - 1.5, abs=0.001)
    assert created_at({"id": "abc"}) is None and created_at(None) is None and created_at({}) is None


async def test_an_expired_interaction_is_dropped_unparsed_and_logged_once() -> None:
    intake, state, dropped = make()
    receive = state.parsers["INTERACTION_CREATE"]
    receive(event(2.8, 1))
    receive(event(10.0, 2))
    await settle(intake)
    assert state.parsed == []  # no Interaction was built for them
    assert [d["member"]["user"]["id"] for d in dropped] == ["1001", "1002"]
    assert intake.shed_count == 2


async def test_a_backlog_starts_newest_first_and_each_interaction_once() -> None:
    intake, state, _ = make()
    receive = state.parsers["INTERACTION_CREATE"]
    ages = [2.0, 0.5, 1.5, 0.1, 1.0, 0.3]
    for n, age in enumerate(ages):  # read in one turn of the event loop, as one gateway chunk
        receive(event(age, n))
    await settle(intake)
    started = [created_at(d) for d in state.parsed]
    assert len(state.parsed) == len(ages) == len({d["id"] for d in state.parsed})
    assert started[0] == pytest.approx(NOW - 2.0, abs=0.001)  # the first of a chunk goes straight through
    assert started[1:] == sorted(started[1:], reverse=True)  # the rest: newest first


async def test_nothing_starts_while_the_senders_have_no_room_and_what_expires_meanwhile_is_dropped() -> None:
    clock = [NOW]
    room = [False]
    state, dropped = State(), []
    intake = Intake(dropped.append, room=lambda: room[0], clock=lambda: clock[0])
    intake.install(state)
    receive = state.parsers["INTERACTION_CREATE"]
    receive(event(0.1, 0))  # straight through (no backlog yet)
    receive(event(2.5, 1))
    receive(event(0.2, 2))
    await asyncio.sleep(0.05)
    assert len(state.parsed) == 1 and intake.waiting == 2
    clock[0] = NOW + 0.4  # 2.9 s and 0.6 s old now: the first can no longer be answered in time
    room[0] = True
    await settle(intake)
    assert [d["id"] for d in state.parsed] == [event(0.1, 0)["id"], event(0.2, 2)["id"]]
    assert [d["id"] for d in dropped] == [event(2.5, 1)["id"]]


async def test_a_malformed_event_goes_to_discords_guarded_parser_at_once() -> None:
    intake, state, dropped = make()
    receive = state.parsers["INTERACTION_CREATE"]
    receive({"id": "abc"})
    receive(None)
    await settle(intake)
    assert state.parsed == [{"id": "abc"}, None] and dropped == []


async def test_the_drop_line_has_the_answer_lines_fields_and_never_the_users_text(caplog) -> None:
    assert raw_command_name(event(3)) == "define"
    group = {"name": "ruling", "options": [{"type": 1, "name": "add", "options": [{"type": 3, "value": "x"}]}]}
    assert raw_command_name(event(3, data=group)) == "ruling add"
    assert raw_command_name(event(3, type=4)) == "define:autocomplete"
    secret = "l5r:page:q:what does my secret question say:2"
    assert raw_command_name(event(3, type=3, data={"custom_id": secret})) == "button:page"
    assert raw_command_name(event(3, type=5, data={"custom_id": "x"})) == "modal"
    with caplog.at_level(logging.DEBUG, logger="bot"):
        log_dropped(event(3, 7, type=3, data={"custom_id": secret}))
        log_dropped(event(3, 8, type=4))
    lines = [(r.levelno, r.fields) for r in caplog.records if r.getMessage() == "answer"]
    assert [(level, f["command"], f["outcome"], f["user"], f["guild"]) for level, f in lines] == [
        (logging.INFO, "button:page", "expired", 1007, 42),
        (logging.DEBUG, "define:autocomplete", "expired", 1008, 42),
    ]
    assert "secret" not in caplog.text


async def test_reading_the_gateway_pauses_while_enough_waits_and_resumes_when_it_has_been_started() -> None:
    state, calls = State(), []
    intake = Intake(lambda data: None, clock=lambda: NOW, pause=calls.append)
    intake.install(state)
    receive = state.parsers["INTERACTION_CREATE"]
    for n in range(HIGH + 10):  # one gateway chunk: the first goes straight through, the rest wait
        receive(event(0.5, n))
    assert set(calls) == {True} and intake.paused and intake.pauses == 1  # asked again for each event over HIGH
    await settle(intake)
    assert calls[-1] is False and calls.count(False) == 1 and not intake.paused
    assert len(state.parsed) == HIGH + 10


async def test_the_gateway_loop_waits_at_the_gate_while_enough_waits_and_reads_on_below_low() -> None:
    """Pausing the socket did not stop discord.py from inflating and parsing every buffered frame (aiohttp
    resumes it whenever its own queue drains): the gateway loop itself waits before its next frame."""
    room = [False]
    state = State()
    intake = Intake(lambda data: None, room=lambda: room[0], clock=lambda: NOW)
    intake.install(state)
    gate = state.parsers["INTERACTION_CREATE"].gate
    await asyncio.wait_for(gate(), 1)  # nothing waits: the next frame is read at once
    for n in range(HIGH + 1):  # the first starts straight away, HIGH wait while the senders have no room
        state.parsers["INTERACTION_CREATE"](event(0.5, n))
    waiter = asyncio.create_task(gate())
    await asyncio.sleep(0.05)
    assert not waiter.done() and intake.gate_waits == 1
    room[0] = True  # the senders have room: the waiting ones start and the loop may read again
    await asyncio.wait_for(waiter, 5)
    await settle(intake)
    assert len(state.parsed) == HIGH + 1


async def test_the_gate_opens_after_gate_max_whatever_waits(monkeypatch) -> None:
    import bot.discord_bot.intake as intake_module

    monkeypatch.setattr(intake_module, "GATE_MAX", 0.05)
    state = State()
    intake = Intake(lambda data: None, room=lambda: False, clock=lambda: NOW)  # the senders never have room
    intake.install(state)
    for n in range(HIGH + 1):
        state.parsers["INTERACTION_CREATE"](event(0.5, n))
    await asyncio.wait_for(state.parsers["INTERACTION_CREATE"].gate(), 2)  # returns: reading goes on, as before
    assert intake.waiting == HIGH
    intake._heap.clear()  # noqa: SLF001 - let the starting task end
    await settle(intake)


async def test_every_gateway_socket_awaits_its_own_clients_gate_before_it_reads_a_frame(monkeypatch) -> None:
    from discord.gateway import DiscordWebSocket

    from bot.discord_bot.intake import hold_reading

    order: list[str] = []

    async def received_message(ws: Any, msg: Any, /) -> None:  # discord.py's: inflate, parse, dispatch
        order.append(f"read {msg}")

    monkeypatch.setattr(DiscordWebSocket, "received_message", received_message)
    hold_reading()
    hold_reading()  # once per process: a second call does not wrap again

    async def gate() -> None:
        order.append("gate")

    def receive(data: Any) -> None: ...

    receive.gate = gate  # type: ignore[attr-defined]

    class Socket:  # what the wrapper needs of a DiscordWebSocket: the parsers dict it was given
        _discord_parsers = {"INTERACTION_CREATE": receive}

    class Plain:  # a socket of a client without an intake reads as before
        _discord_parsers: dict[str, Any] = {}

    await DiscordWebSocket.received_message(Socket(), "frame 1")
    await DiscordWebSocket.received_message(Plain(), "frame 2")
    assert order == ["gate", "read frame 1", "read frame 2"]

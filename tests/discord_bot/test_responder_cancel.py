"""A sender of the bot's ``Responder`` stops when cancelled, even as its call completes (a stop that hangs).

On Python 3.11 ``asyncio.wait_for`` returns the inner call's result when the cancellation arrives in the
same turn of the event loop as that result, and the sender's loop then waited for its next job for ever:
``Responder.close()`` (and pytest-asyncio's loop close) hung on it. The order is forced here, so the race is
not left to timing.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import discord

from bot.discord_bot.admission import Responder


async def test_a_sender_cancelled_in_the_turn_its_call_completes_still_stops() -> None:
    responder = Responder(senders=1)
    result: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def call() -> str:
        return await result

    interaction = SimpleNamespace(id=discord.utils.time_snowflake(discord.utils.utcnow()))
    sending = asyncio.create_task(responder.send(interaction, call, first=False, timeout=5))  # type: ignore[arg-type]
    deadline = time.monotonic() + 5
    while responder.first_pending or not responder._tasks:  # noqa: SLF001 - wait until the sender holds the job
        await asyncio.sleep(0.01)
        assert time.monotonic() < deadline
    await asyncio.sleep(0.05)
    sender = responder._tasks[0]  # noqa: SLF001
    result.set_result("sent")  # the call completes ...
    sender.cancel()  # ... and the stop arrives in the same turn
    done, _ = await asyncio.wait({sender}, timeout=2)
    assert sender in done and sender.cancelled()
    sending.cancel()
    await asyncio.gather(sending, return_exceptions=True)
    await responder.close()

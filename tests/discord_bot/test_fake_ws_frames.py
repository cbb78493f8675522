"""The fake Discord writes a held burst as raw websocket frames (``fakediscord.gateway.ws_frame``), a group per
socket write: aiohttp's own client, which discord.py reads the gateway with, must read them as the frames
``send_bytes``/``send_str`` would have written, whatever the payload's length encoding."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web
from fakediscord.gateway import ws_frame

PAYLOADS: list[bytes | str] = [b"", b"x" * 125, b"y" * 126, "text \u00e9" * 30, b"z" * 65_535, b"w" * 65_536, "ok"]


async def test_raw_frames_read_as_the_messages_written() -> None:
    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        assert request.transport is not None and not ws.compress
        request.transport.write(b"".join(ws_frame(p) for p in PAYLOADS[:4]))
        await asyncio.sleep(0)
        request.transport.write(b"".join(ws_frame(p) for p in PAYLOADS[4:]))
        await ws.receive()  # the client's close
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session, session.ws_connect(f"http://127.0.0.1:{port}/ws") as ws:
            got = []
            for _ in PAYLOADS:
                msg = await ws.receive(timeout=10)
                assert msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
                got.append(msg.data)
            assert got == PAYLOADS
            assert [type(x) for x in got] == [type(p) for p in PAYLOADS]
    finally:
        await runner.cleanup()

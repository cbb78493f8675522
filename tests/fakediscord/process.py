"""Run the real bot as a child process (``python -m bot run``) against a fake Discord.

What a deployment runs, signals and all: the tests of stopping, health and load use it, and so do
the load benchmark and the container check (with ``command`` set to a ``podman run`` line).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import FakeDiscord

ROOT = Path(__file__).resolve().parents[2]


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (what it gives outgoing connections); 32768 if unknown."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, for a child process to listen on.

    Taken below the kernel's ephemeral range: a port from that range can go to any process's outgoing connection
    (another test run's, a database client's) between this check and the child's bind, which then fails with
    "address already in use" (seen once, with two test runs side by side)."""
    low = _ephemeral_low()
    for _ in range(100):
        port = random.randrange(10_000, low) if low > 11_000 else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get_json(url: str, timeout: float = 2.0) -> tuple[int, Any]:
    """(status, parsed body) of a GET, including error statuses; (0, None) when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read() or b"null")
        except ValueError:
            return exc.code, None
    except (OSError, ValueError):
        return 0, None


class BotProcess:
    """``python -m bot run`` in a child process, pointed at ``fake`` through DISCORD_API_BASE.

    ``env`` adds or overrides variables (None removes one); the working folder is ``workdir`` (no
    ``.env`` there unless a test writes one). Output goes to ``workdir/bot.log``.
    """

    def __init__(
        self,
        fake: FakeDiscord,
        workdir: Path,
        env: dict[str, str | None] | None = None,
        *,
        args: Sequence[str] = ("run",),
        command: Sequence[str] | None = None,
        health_port: int | None = None,
    ) -> None:
        self.fake = fake
        self.workdir = Path(workdir)
        self.health_port = health_port if health_port is not None else free_port()
        base = {
            "DISCORD_TOKEN": "fake-token",
            "DISCORD_API_BASE": fake.api_base,
            "L5R_INDEX_DIR": str(self.workdir / "index"),
            "L5R_STATE_DIR": str(self.workdir / "state"),
            "HEALTH_PORT": str(self.health_port),
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
        }
        merged: dict[str, str | None] = {**os.environ, **base, **(env or {})}
        self.env = {k: v for k, v in merged.items() if v is not None}
        self.command = list(command) if command else [sys.executable, "-m", "bot", *args]
        self.proc: asyncio.subprocess.Process | None = None
        self.log_path = self.workdir / "bot.log"
        self._log: IO[bytes] | None = None

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}"

    async def start(self) -> BotProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in wait())
        self.proc = await asyncio.create_subprocess_exec(
            *self.command, cwd=self.workdir, env=self.env, stdout=self._log, stderr=asyncio.subprocess.STDOUT
        )
        return self

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    async def health(self) -> tuple[int, Any]:
        return await asyncio.to_thread(get_json, self.health_url + "/healthz")

    async def metrics(self) -> str:
        def fetch() -> str:
            with urllib.request.urlopen(self.health_url + "/metrics", timeout=5) as resp:
                return resp.read().decode()

        return await asyncio.to_thread(fetch)

    async def wait_healthy(self, timeout: float = 60.0) -> dict[str, Any]:
        """Until ``/healthz`` says 200 (gateway connected, index loaded); fails with the bot's log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.returncode is not None:
                raise RuntimeError(f"the bot exited with {self.proc.returncode}:\n{self.log_text()[-3000:]}")
            status, body = await self.health()
            if status == 200:
                await self.fake.wait_for(self._guilds_sent, 10, "GUILD_CREATE to reach the bot")
                return body
            await asyncio.sleep(0.2)
        raise TimeoutError(f"the bot did not become healthy in {timeout} s:\n{self.log_text()[-3000:]}")

    def _guilds_sent(self) -> bool:
        # at least one session: the bot's health says "connected" from HELLO on, and on a loaded machine the
        # fake had not yet handled the IDENTIFY (no session at all, so "every session" was vacuously true)
        sessions = self.fake.live_sessions()
        return bool(sessions) and all(any(e["t"] == "GUILD_CREATE" for e in s.events) for s in sessions)

    def send_signal(self, signum: int = signal.SIGTERM) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    async def wait(self, timeout: float = 15.0) -> int:
        assert self.proc is not None
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        finally:
            if self._log is not None and self.proc.returncode is not None:
                self._log.close()

    async def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM, then wait; killed (and -9 returned) if it does not stop within ``timeout``."""
        if self.proc is None or self.proc.returncode is not None:
            return self.proc.returncode if self.proc else 0
        self.send_signal(signal.SIGTERM)
        try:
            return await self.wait(timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()
            return -9

    async def __aenter__(self) -> BotProcess:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

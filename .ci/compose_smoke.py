"""Start compose.yaml with podman-compose and check it as a new admin would (.ci/compose-check).

The project's own compose.yaml is used unchanged, with an override that only adapts it to this
machine: host networking (the fake Discord serves on 127.0.0.1 in this process), a free port for
PostgreSQL and for each bot's health endpoint, and the images built here (the bot image from
.ci/container-check, a stand-in PostgreSQL when Docker Hub cannot be reached). It checks: the database
becomes healthy before any bot starts, both shards (profile ``sharded``) become healthy on one
PostgreSQL, a ruling made through one shard's server is answered by the other process, and
``down`` stops everything cleanly. It prints the times it measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakediscord import FakeDiscord  # noqa: E402
from fakediscord.process import free_port, get_json  # noqa: E402


class Failed(Exception):
    pass


def say(text: str) -> None:
    print(f"compose-check: {text}", flush=True)


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failed(what)
    say(f"  ok: {what}")


OVERRIDE = """
services:
  db:
    image: {postgres_image}
    network_mode: host
    environment:
      PGPORT: "{pg_port}"
  bot:
    image: {bot_image}
    network_mode: host
    ports: !reset []
    environment:
      DISCORD_API_BASE: {api_base}
      DATABASE_URL: postgresql://judge:{password}@127.0.0.1:{pg_port}/rulings
      HEALTH_PORT: "{health_0}"
      HEALTH_HOST: 127.0.0.1
      SHARD_COUNT: "2"
  bot-shard-1:
    image: {bot_image}
    network_mode: host
    environment:
      DISCORD_API_BASE: {api_base}
      DATABASE_URL: postgresql://judge:{password}@127.0.0.1:{pg_port}/rulings
      HEALTH_PORT: "{health_1}"
      HEALTH_HOST: 127.0.0.1
      SHARD_COUNT: "2"
"""


class Compose:
    """podman-compose in a scratch project folder holding copies of compose.yaml and the override."""

    def __init__(self, command: str, folder: Path, project: str) -> None:
        self.base = [*shlex.split(command), "--project-name", project,
                     "-f", str(folder / "compose.yaml"), "-f", str(folder / "compose.override.yaml")]
        self.folder = folder

    def __call__(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=timeout,
                              cwd=self.folder, env={**os.environ, "COMPOSE_PROFILES": "sharded"})


async def wait_healthy(port: int, limit: float) -> tuple[float, dict]:
    started = time.monotonic()
    body: dict = {}
    while time.monotonic() - started < limit:
        status, body = await asyncio.to_thread(get_json, f"http://127.0.0.1:{port}/healthz")
        if status == 200:
            return time.monotonic() - started, body
        await asyncio.sleep(0.5)
    raise Failed(f"no healthy /healthz on port {port} after {limit:.0f} s: {json.dumps(body)[:300]}")


async def run(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="compose-check-"))
    project = f"l5r-judge-check-{int(time.time())}"
    password = "composecheck"
    pg_port, health_0, health_1 = free_port(), free_port(), free_port()
    shutil.copy(ROOT / "compose.yaml", folder / "compose.yaml")
    (folder / ".env").write_text(f"DISCORD_TOKEN=fake-token\nPOSTGRES_PASSWORD={password}\nLOG_FORMAT=json\n")
    async with FakeDiscord(shard_count=2) as fake:
        (folder / "compose.override.yaml").write_text(OVERRIDE.format(
            postgres_image=args.postgres_image, bot_image=args.bot_image, pg_port=pg_port, password=password,
            api_base=fake.api_base, health_0=health_0, health_1=health_1))
        compose = Compose(args.compose, folder, project)
        config = compose("config")
        if config.returncode != 0:
            raise Failed(f"podman-compose cannot read compose.yaml: {config.stderr.strip()[-300:]}")
        t0 = time.monotonic()
        up = await asyncio.to_thread(compose, "up", "-d", "--no-build")
        try:
            if up.returncode != 0:
                raise Failed(f"up -d failed ({up.returncode}): {(up.stderr or up.stdout).strip()[-800:]}")
            if "doesn't support healthy" in up.stderr:
                say("NOTE: this podman cannot wait for a health check (needs 4.6+): the bots started right "
                    "after the database, not after it was healthy")
            say(f"up -d returned after {time.monotonic() - t0:.1f} s")
            took_0, body_0 = await wait_healthy(health_0, 180)
            took_1, body_1 = await wait_healthy(health_1, 180)
            say(f"both shards healthy {time.monotonic() - t0:.1f} s after `up` "
                f"(shard 0 {took_0:.1f} s, then shard 1 {took_1:.1f} s more)")
            check(list(body_0["gateway"]["shards"]) == ["0"] and list(body_1["gateway"]["shards"]) == ["1"],
                  "one process per shard")
            podman = shlex.split(args.podman)
            # Health does not wait for the database: a bot that starts before PostgreSQL is ready answers
            # without rulings and migrates on its next poll (every 2 s). Where podman cannot wait for the
            # database's health check, that is the usual order, so the schema is waited for here.
            t_schema = time.monotonic()
            while True:
                version = subprocess.run([*podman, "exec", f"{project}_db_1", "psql", "--username=judge",
                                          "--dbname=rulings", "--tuples-only", "--command",
                                          "select version_num from alembic_version"],
                                         capture_output=True, text=True, timeout=60)
                migrated = version.returncode == 0 and version.stdout.strip() != ""
                if migrated or time.monotonic() - t_schema > 90:
                    break
                await asyncio.sleep(1.0)
            found = version.stdout.strip() or version.stderr[-200:]
            check(migrated, f"the bots migrated the rulings schema in PostgreSQL ({found}; "
                            f"{time.monotonic() - t_schema:.1f} s after both were healthy)")
            started = json.loads(subprocess.run([*podman, "inspect", f"{project}_db_1", f"{project}_bot_1"],
                                                capture_output=True, text=True).stdout or "[]")
            if len(started) == 2:
                db_at, bot_at = (s["State"]["StartedAt"] for s in started)
                say(f"database started at {db_at}, bot at {bot_at}")
            rec = await fake.invoke_command("define", {"term": "target"}, guild=fake.guilds[1], timeout=15)
            check(rec.message["embeds"][0]["title"] == "Target", "/define answered by shard 1's process")
            rec = await fake.invoke_command("define", {"term": "target"}, guild=fake.guilds[0], timeout=15)
            check(rec.message["embeds"][0]["title"] == "Target", "/define answered by shard 0's process")
        finally:
            t1 = time.monotonic()
            stop = await asyncio.to_thread(compose, "stop", "--timeout", "15")
            stopped_in = time.monotonic() - t1
            podman = shlex.split(args.podman)
            names = [f"{project}_{svc}_1" for svc in ("bot", "bot-shard-1")]
            codes = [subprocess.run([*podman, "inspect", "--format", "{{.State.ExitCode}}", name],
                                    capture_output=True, text=True).stdout.strip() for name in names]
            logs = "\n".join(subprocess.run([*podman, "logs", name], capture_output=True, text=True).stderr
                             for name in names)
            down = compose("down", "--volumes", timeout=120)
            shutil.rmtree(folder, ignore_errors=True)
        say(f"stop took {stopped_in:.1f} s for the three containers (exit {stop.returncode})")
        check(stop.returncode == 0 and down.returncode == 0, "stop and down end every container")
        check(codes == ["0", "0"], f"both bots exited with 0 ({codes})")
        check("SIGTERM received" in logs and "Traceback" not in logs, "both bots stopped cleanly")
        check("fake-token" not in logs and password not in logs, "neither the token nor the password is logged")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot-image", required=True)
    parser.add_argument("--postgres-image", required=True)
    parser.add_argument("--compose", default="podman-compose", help="the podman-compose command and its options")
    parser.add_argument("--podman", default="podman", help="the podman command with its storage options")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except (Failed, TimeoutError, subprocess.TimeoutExpired) as exc:
        say(f"FAILED: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

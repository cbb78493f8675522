"""Run the built image against the fake Discord and check it as an operator would (.ci/container-check).

The container runs with the host's network (everything stays on 127.0.0.1): the fake Discord
serves in this process, the bot in the container logs in to it, and this script checks the
user, the health endpoint and the HEALTHCHECK, `python -m index define target`, one command
answered end to end, and a `podman stop` (SIGTERM) that ends with exit 0 within a few seconds
and a gateway closed with 1000.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakediscord import FakeDiscord  # noqa: E402
from fakediscord.process import free_port, get_json  # noqa: E402

STOP_LIMIT = 10.0  # seconds `podman stop` waits before SIGKILL, as `docker stop` does


class Failed(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failed(what)
    print(f"container-check:   ok: {what}", flush=True)


class Podman:
    def __init__(self, command: str) -> None:
        self.base = shlex.split(command)

    def __call__(self, *args: str, timeout: float = 120, check: bool = False) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise Failed(f"podman {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
        return proc


async def run(image: str, podman: Podman) -> None:
    name = f"l5r-judge-check-{int(time.time())}"
    port = free_port()
    inspect = json.loads(podman("image", "inspect", image, check=True).stdout)[0]
    config = inspect.get("Config") or inspect.get("config") or {}
    check(config.get("User") == "10001:10001", f"the image runs as 10001:10001 (User={config.get('User')!r})")
    check("/var/lib/l5r-judge/state" in (config.get("Volumes") or {}), "the state folder is a VOLUME")
    health_cmd = (inspect.get("Healthcheck") or config.get("Healthcheck") or {}).get("Test")
    check(health_cmd == ["CMD", "python", "-m", "bot", "health"], f"HEALTHCHECK asks the bot ({health_cmd})")

    async with FakeDiscord() as fake:
        started = await asyncio.to_thread(
            podman,
            "run", "--detach", "--name", name, "--runtime", "runc", "--network", "host",
            # explicit limits: the runtime's defaults are above what this sandbox lets a process set
            "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
            "--health-interval", "disable",  # no systemd timers here; the check is run by hand below
            "-e", "DISCORD_TOKEN=fake-token", "-e", f"DISCORD_API_BASE={fake.api_base}",
            "-e", f"HEALTH_PORT={port}", "-e", "LOG_FORMAT=json",
            image,
        )  # fmt: skip
        if started.returncode != 0:
            raise Failed(f"podman run failed: {started.stderr.strip()[-800:]}")
        try:
            deadline = time.monotonic() + 90
            status, body = 0, None
            while time.monotonic() < deadline:
                status, body = await asyncio.to_thread(get_json, f"http://127.0.0.1:{port}/healthz")
                if status == 200:
                    break
                state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
                if state not in ("running", "created", "configured", "initialized"):
                    raise Failed(f"the container stopped ({state}): {podman('logs', name).stderr[-2000:]}")
                await asyncio.sleep(0.5)
            check(status == 200, f"/healthz says healthy: {json.dumps(body)[:200]}")
            shard = body["gateway"]["shards"]["0"]
            check(body["index"]["entries"] > 100 and shard["connected"], "index loaded, gateway connected")
            user = await asyncio.to_thread(podman, "exec", name, "id", "-u")
            check(user.stdout.strip() == "10001", f"the bot runs as uid {user.stdout.strip()}")
            healthcheck = await asyncio.to_thread(podman, "healthcheck", "run", name)
            check(healthcheck.returncode == 0, f"HEALTHCHECK passes ({healthcheck.stdout.strip() or 'healthy'})")
            define = await asyncio.to_thread(podman, "exec", name, "python", "-m", "index", "define", "target")
            check(define.returncode == 0 and define.stdout.startswith("Target"), "python -m index define target")
            stats = await asyncio.to_thread(podman, "exec", name, "python", "-m", "index", "stats", "--json")
            kept = json.loads(stats.stdout or "{}").get("kept_questions", 0) if stats.returncode == 0 else 0
            check(kept >= 900, f"the kept players' questions ship in the image and are used ({kept})")
            rec = await fake.invoke_command("define", {"term": "target"}, timeout=10)
            check(rec.message["embeds"][0]["title"] == "Target", "/define target answered through the fake Discord")

            stop_started = time.monotonic()
            await asyncio.to_thread(podman, "stop", "--time", str(int(STOP_LIMIT)), name, timeout=60)
            took = time.monotonic() - stop_started
            code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
            check(code == "0", f"stopped with exit code {code}")
            check(took < 5.0, f"stopped in {took:.1f} s (SIGTERM handled, not killed after {STOP_LIMIT:.0f} s)")
            check(fake.close_codes == [1000], f"the gateway was closed with {fake.close_codes}")
            logs = podman("logs", name)
            text = logs.stdout + logs.stderr
            check("SIGTERM received" in text and "Traceback" not in text, "the log shows a clean stop")
            check("fake-token" not in text, "the token is not in the log")
        finally:
            podman("rm", "--force", name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", required=True)
    parser.add_argument("--podman", default="podman", help="the podman command with its storage options")
    args = parser.parse_args()
    try:
        asyncio.run(run(args.image, Podman(args.podman)))
    except (Failed, TimeoutError, subprocess.TimeoutExpired) as exc:
        print(f"container-check: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

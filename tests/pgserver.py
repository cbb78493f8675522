"""A throwaway PostgreSQL server for tests, from Debian's ``postgresql`` package (initdb + pg_ctl).

PostgreSQL refuses to run as root, so when the tests run as root the server runs as the ``postgres``
system user the package creates (its data folder lives in a fresh /tmp folder that user owns). It
listens on 127.0.0.1 on a free port, trusts local connections, and is deleted afterwards.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path


def bindir() -> Path | None:
    """The folder holding initdb/pg_ctl: ``pg_config --bindir``, else Debian's versioned folder."""
    found = shutil.which("pg_config")
    if found:
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            path = Path(subprocess.run([found, "--bindir"], capture_output=True, text=True, check=True).stdout.strip())
            if (path / "initdb").exists():
                return path
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def unavailable_reason() -> str | None:
    """Why no test server can be started here, or None when it can."""
    if bindir() is None:
        return "PostgreSQL is not installed (apt-get install postgresql; .ci/run does this)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """``start()``, ``url(db)``, ``create_database(db)``, ``stop()`` / ``start()`` again, ``cleanup()``."""

    def __init__(self) -> None:
        self.bin = bindir()
        if self.bin is None:
            raise RuntimeError(unavailable_reason() or "no PostgreSQL")
        self.root = Path(tempfile.mkdtemp(prefix="l5r-pg-", dir="/tmp"))
        self.data = self.root / "data"
        self.port = free_port()
        self._demote: Callable[[], None] | None = None
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)

            def demote() -> None:
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)

            self._demote = demote
        self._initialised = False

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LC_ALL": "C.UTF-8", "PGPORT": str(self.port)}
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            preexec_fn=self._demote,  # noqa: PLW1509 - only drops root for PostgreSQL's own tools
            env=env,
            cwd=self.root,
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def start(self) -> PostgresServer:
        """Start (initialising on first use). The first start retries on another free port: under
        pytest-xdist each worker runs its own server, and two can pick the same port in between."""
        first = not self._initialised
        if first:
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
            self._initialised = True
        for attempt in range(3 if first else 1):
            try:
                self._pg_ctl_start()
                return self
            except subprocess.CalledProcessError:
                if attempt == (2 if first else 0):
                    raise
                self.port = free_port()
        return self

    def _pg_ctl_start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def psql(self, sql: str, db: str = "postgres") -> str:
        out = self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-v",
                        "ON_ERROR_STOP=1", "-tA", "-c", sql)  # fmt: skip
        return out.stdout

    def create_database(self, name: str) -> str:
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def url(self, db: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def tool(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a PostgreSQL client tool (pg_dump, pg_restore) as the server's user."""
        return self._run(name, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", *args)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

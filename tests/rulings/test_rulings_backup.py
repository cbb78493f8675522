"""Backups restore: SQLite's online backup (python -m bot.rulings backup) and PostgreSQL's pg_dump."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from bot.rulings.db import make_engine, migrate, resolve_url
from bot.rulings.repository import Author, Draft, RulingsRepository

ROOT = Path(__file__).resolve().parents[2]
ANN = Author("1", "Ann")


async def _fill(repo: RulingsRepository) -> int:
    ruling = await repo.add("guild:1", Draft("Backed up", "Version one.", ("glossary:terrain",), "Kotei"), ANN)
    await repo.edit("guild:1", ruling.id, 1, Draft("Backed up", "Version two.", ("glossary:terrain",), "Kotei"), ANN)
    await repo.set_config("guild:1", ANN, judge_role_id="42")
    return ruling.id


async def _check(repo: RulingsRepository, ruling_id: int) -> None:
    (ruling,) = await repo.list("guild:1")
    assert (ruling.id, ruling.text, ruling.version) == (ruling_id, "Version two.", 2)
    assert [v.text for v in await repo.history("guild:1", ruling_id)] == ["Version one.", "Version two."]
    assert (await repo.config("guild:1")).judge_role_id == "42"


async def test_sqlite_online_backup_while_the_database_is_open_restores(tmp_path: Path) -> None:
    state = tmp_path / "state"
    engine = make_engine(resolve_url(None, state))
    await migrate(engine)
    repo = RulingsRepository(engine)
    ruling_id = await _fill(repo)
    assert (state / "rulings.sqlite3-wal").exists()  # recent writes still in the WAL, not the main file
    env = {**os.environ, "L5R_STATE_DIR": str(state), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    backup = tmp_path / "backups" / "rulings-2026-11-23.sqlite3"
    proc = subprocess.run([sys.executable, "-m", "bot.rulings", "backup", str(backup)], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"to {backup}" in proc.stdout
    await repo.add("guild:1", Draft("After the backup", "Not in it."), ANN)  # the live database moves on
    await engine.dispose()

    restored = tmp_path / "restored"  # restore = put the file in place of the database (bot stopped)
    restored.mkdir()
    shutil.copy(backup, restored / "rulings.sqlite3")
    engine = make_engine(resolve_url(None, restored))
    try:
        assert await migrate(engine) == "0006"
        await _check(RulingsRepository(engine), ruling_id)
    finally:
        await engine.dispose()
    again = subprocess.run([sys.executable, "-m", "bot.rulings", "backup", str(backup)], env=env,
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert again.returncode == 1 and "exists" in again.stderr


async def test_postgresql_pg_dump_restores_into_a_new_database(postgres, tmp_path: Path) -> None:
    url = postgres.create_database("live_backup")
    engine = make_engine(resolve_url(url, tmp_path))
    await migrate(engine)
    ruling_id = await _fill(RulingsRepository(engine))
    await engine.dispose()
    dump = postgres.root / "rulings.dump"
    postgres.tool("pg_dump", "--format=custom", "--file", str(dump), "live_backup")
    copy_url = postgres.create_database("restored_backup")
    postgres.tool("pg_restore", "--no-owner", "--dbname", "restored_backup", str(dump))
    engine = make_engine(resolve_url(copy_url, tmp_path))
    try:
        assert await migrate(engine) == "0006"
        await _check(RulingsRepository(engine), ruling_id)
    finally:
        await engine.dispose()


def test_the_cli_says_which_database_and_refuses_postgres_backups(tmp_path: Path) -> None:
    env = {**os.environ, "L5R_STATE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    where = subprocess.run([sys.executable, "-m", "bot.rulings", "where"], env=env, capture_output=True, text=True)
    assert where.stdout.strip() == f"sqlite+aiosqlite:///{tmp_path}/rulings.sqlite3"
    env["DATABASE_URL"] = "postgresql://u:secret@127.0.0.1:1/x"
    where = subprocess.run([sys.executable, "-m", "bot.rulings", "where"], env=env, capture_output=True, text=True)
    assert "secret" not in where.stdout and "***" in where.stdout
    refused = subprocess.run([sys.executable, "-m", "bot.rulings", "backup", str(tmp_path / "b")], env=env,
                             capture_output=True, text=True)  # fmt: skip
    assert refused.returncode == 2 and "pg_dump" in refused.stderr

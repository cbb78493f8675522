"""Settings: parsing from the environment, and one clear error line for each bad value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app.settings import Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]


def test_full_environment_is_parsed() -> None:
    env = {
        "DISCORD_TOKEN": "secret-token-value",
        "DISCORD_GUILD_IDS": "111, 222",
        "DISCORD_API_BASE": "http://127.0.0.1:8080/api/v10/",
        "SHARD_COUNT": "4",
        "SHARD_IDS": "0,2",
        "L5R_SOURCES": os.pathsep.join(["/a/one.txt", "/b"]),
        "L5R_INDEX_DIR": "/tmp/idx",
        "L5R_HOUSE_RULINGS": "/tmp/house",
        "LOG_LEVEL": "debug",
        "COOLDOWN_RATE": "3",
        "COOLDOWN_SECONDS": "7.5",
        "RULEBOOK_URL": "https://example.org/book/",
        "OWNER_IDS": "42",
        "L5R_STATE_DIR": "/tmp/state",
    }
    s = Settings.from_env(env)
    assert s.token == "secret-token-value"
    assert s.guild_ids == (111, 222)
    assert s.api_base == "http://127.0.0.1:8080/api/v10"
    assert (s.shard_count, s.shard_ids) == (4, (0, 2))
    assert s.sources == (Path("/a/one.txt"), Path("/b"))
    assert (s.index_dir, s.house_rulings, s.state_dir) == (Path("/tmp/idx"), Path("/tmp/house"), Path("/tmp/state"))
    assert (s.log_level, s.cooldown_rate, s.cooldown_seconds) == ("DEBUG", 3, 7.5)
    assert s.rulebook_url == "https://example.org/book"
    assert s.owner_ids == frozenset({42})


def test_defaults_and_token_never_in_repr() -> None:
    s = Settings.from_env({"DISCORD_TOKEN": "secret-token-value"})
    assert "secret-token-value" not in repr(s) and "secret-token-value" not in str(s)
    assert (s.guild_ids, s.api_base, s.shard_count, s.sources) == ((), None, None, None)
    assert (s.cooldown_rate, s.cooldown_seconds, s.log_level) == (5, 10.0, "INFO")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DISCORD_GUILD_IDS": "12,abc"}, "DISCORD_GUILD_IDS: expected comma-separated whole numbers"),
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT: must be at least 1"),
        ({"SHARD_COUNT": "two"}, "SHARD_COUNT: expected a whole number"),
        ({"SHARD_IDS": "0,1"}, "SHARD_IDS needs SHARD_COUNT"),
        ({"SHARD_COUNT": "2", "SHARD_IDS": "0,2"}, "SHARD_IDS: every shard id must be below SHARD_COUNT=2"),
        ({"DISCORD_API_BASE": "127.0.0.1:80"}, "DISCORD_API_BASE: expected an http:// or https:// URL"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL: expected one of"),
        ({"COOLDOWN_SECONDS": "-1"}, "COOLDOWN_SECONDS: must be zero or a positive number"),
        ({"COOLDOWN_SECONDS": "soon"}, "COOLDOWN_SECONDS: expected a number of seconds"),
        ({"RULEBOOK_URL": "rules.html"}, "RULEBOOK_URL: expected an http:// or https:// URL"),
        ({"L5R_EMBEDDING_MODEL": "/no/such/model"}, "L5R_EMBEDDING_MODEL: not a folder"),
        ({"L5R_EMBEDDING_MODEL": "."}, "L5R_EMBEDDING_MODEL: '.' has no model.onnx"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env(env)
    assert str(info.value).startswith(message)


def test_embedding_model_setting_accepts_off_and_a_model_folder() -> None:
    from index.text.embedding import DEFAULT_MODEL

    assert Settings.from_env({"L5R_EMBEDDING_MODEL": "off"}).embedding_model == "off"
    assert Settings.from_env({"L5R_EMBEDDING_MODEL": str(DEFAULT_MODEL)}).embedding_model == str(DEFAULT_MODEL)
    assert Settings.from_env({}).embedding_model is None


def test_bad_setting_at_startup_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "SHARD_COUNT": "many"}
    env.pop("DISCORD_TOKEN", None)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "ask", "/help"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: SHARD_COUNT: expected a whole number, got 'many'\n"
    assert proc.stdout == ""


def test_dotenv_in_working_folder_is_read_and_environment_wins(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".env").write_text("COOLDOWN_RATE=9\nRULEBOOK_URL=https://book.example/\nOWNER_IDS=5\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OWNER_IDS", "6")
    for name in ("COOLDOWN_RATE", "RULEBOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    try:
        s = Settings.from_env()
        assert (s.cooldown_rate, s.rulebook_url, s.owner_ids) == (9, "https://book.example", frozenset({6}))
    finally:
        for name in ("COOLDOWN_RATE", "RULEBOOK_URL"):
            os.environ.pop(name, None)


def test_rulings_database_settings() -> None:
    settings = Settings.from_env({"DATABASE_URL": "postgresql://judge:s3cret@db/rulings", "RULINGS_POLL_SECONDS": "5"})
    assert settings.database_url == "postgresql://judge:s3cret@db/rulings" and settings.rulings_poll_seconds == 5.0
    assert "s3cret" not in repr(settings)
    assert Settings.from_env({}).database_url is None and Settings.from_env({}).rulings_poll_seconds == 2.0
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"DATABASE_URL": "mysql://root:hunter2@db/x"})
    assert "DATABASE_URL: expected postgresql://" in str(caught.value) and "hunter2" not in str(caught.value)


def test_dotenv_of_a_parent_folder_is_not_read(tmp_path: Path, monkeypatch) -> None:
    """Only the working folder's .env: python-dotenv's find_dotenv would walk up to a parent's."""
    (tmp_path / ".env").write_text("COOLDOWN_RATE=9\n")
    child = tmp_path / "child"
    child.mkdir()
    monkeypatch.chdir(child)
    monkeypatch.delenv("COOLDOWN_RATE", raising=False)
    try:
        assert Settings.from_env().cooldown_rate == 5
    finally:
        os.environ.pop("COOLDOWN_RATE", None)


def test_service_settings() -> None:
    s = Settings.from_env(
        {
            "LOG_FORMAT": "JSON",
            "HEALTH_PORT": "8080",
            "HEALTH_HOST": "0.0.0.0",
            "LOOKUP_WORKERS": "3",
            "MAX_WAIT": "4",
            "SHUTDOWN_GRACE": "2.5",
        }
    )
    assert (s.log_format, s.health_port, s.health_host) == ("json", 8080, "0.0.0.0")
    assert (s.lookup_workers, s.max_wait, s.shutdown_grace) == (3, 4.0, 2.5)
    d = Settings.from_env({})
    assert (d.log_format, d.health_port, d.health_host) == ("text", None, "127.0.0.1")  # no endpoint by default
    assert (d.lookup_workers, d.max_wait, d.shutdown_grace) == (2, 10.0, 5.0)
    assert Settings.from_env({"HEALTH_PORT": "0"}).health_port is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT: expected one of text, json"),
        ({"HEALTH_PORT": "70000"}, "HEALTH_PORT: expected a TCP port"),
        ({"HEALTH_PORT": "http"}, "HEALTH_PORT: expected a whole number"),
        ({"LOOKUP_WORKERS": "0"}, "LOOKUP_WORKERS: must be at least 1"),
        ({"MAX_WAIT": "-3"}, "MAX_WAIT: must be zero or a positive number"),
        ({"SHUTDOWN_GRACE": "-1"}, "SHUTDOWN_GRACE: must be zero or a positive number"),
    ],
)
def test_bad_service_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env(env)
    assert str(info.value).startswith(message)


def test_health_endpoint_limits() -> None:
    s = Settings.from_env({"HEALTH_MAX_CONNECTIONS": "8", "HEALTH_HEADER_TIMEOUT": "0.5"})
    assert (s.health_max_connections, s.health_header_timeout) == (8, 0.5)
    d = Settings.from_env({})
    assert (d.health_max_connections, d.health_header_timeout) == (64, 5.0)
    for env, message in (
        ({"HEALTH_MAX_CONNECTIONS": "0"}, "HEALTH_MAX_CONNECTIONS: must be at least 1"),
        ({"HEALTH_MAX_CONNECTIONS": "many"}, "HEALTH_MAX_CONNECTIONS: expected a whole number"),
        ({"HEALTH_HEADER_TIMEOUT": "0"}, "HEALTH_HEADER_TIMEOUT: must be a positive number of seconds"),
        ({"HEALTH_HEADER_TIMEOUT": "-2"}, "HEALTH_HEADER_TIMEOUT: must be a positive number of seconds"),
        ({"HEALTH_HEADER_TIMEOUT": "soon"}, "HEALTH_HEADER_TIMEOUT: expected a number of seconds"),
    ):
        with pytest.raises(SettingsError) as info:
            Settings.from_env(env)
        assert str(info.value).startswith(message)

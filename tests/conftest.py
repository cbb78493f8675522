"""Shared pytest fixtures. Generic on purpose: other helpers' tests may use them too."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Test files are imported with --import-mode=importlib (pyproject), which does not put their folders on
# sys.path; a test that imports a sibling test module by its bare name (``from test_bot_render import``)
# still finds it. Appended, so these folders never shadow a real package.
for _folder in sorted(Path(__file__).resolve().parent.iterdir()):
    if _folder.is_dir() and not (_folder / "__init__.py").exists() and any(_folder.glob("test_*.py")):
        sys.path.append(str(_folder))

from fakediscord import FakeDiscord, preserved_discord_urls  # noqa: E402


@pytest_asyncio.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """A fresh fake Discord (REST + gateway) on 127.0.0.1, one per test."""
    async with FakeDiscord() as fake:
        yield fake


# -- databases (rulings): SQLite always, PostgreSQL from Debian's package when it can be started -------

import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from pgserver import PostgresServer, unavailable_reason  # noqa: E402


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (skipped, with the reason, only where it cannot run)."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database of each kind, as a DATABASE_URL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rulings.sqlite3'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database("t_" + uuid.uuid4().hex[:12])


@pytest.fixture(autouse=True)
def _restore_discord_urls() -> Iterator[None]:
    """Code under test points discord.py at a fake Discord globally (``apply_api_base``); every test leaves
    discord.py's API base and default gateway as it found them."""
    with preserved_discord_urls():
        yield

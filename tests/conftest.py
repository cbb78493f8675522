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


# -- the default index: built once per run (both workers), then opened or copied by the modules that need it -------
# Building it embeds every shipped paragraph with the ONNX model (most of a minute on a busy 2-core machine);
# opening a built one takes about half a second and copying it a few hundredths.

import fcntl  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
from collections.abc import Callable  # noqa: E402


def _build_once(tmp_path_factory: pytest.TempPathFactory, name: str, *, words_only: bool) -> Path:
    """Build the shipped sources' index with the shipped model (or none), whatever the environment says (so
    that ``Engine.open(None, folder)`` under the default settings opens it as built), once for the whole
    run: into ``<run's temp folder>/<name>/index``, the first xdist worker building it under a lock while
    the other waits and then opens the same folder."""
    from glossary.loader import SHIPPED_SOURCES
    from index.build.store import POINTER
    from index.engine import Engine
    from index.text import embedding

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # <run>/popen-gwN: the run's own folder, shared by its workers and no other run
    folder = root / name / "index"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if the build raised
        if not (folder / POINTER).exists():
            Engine.open([SHIPPED_SOURCES], folder, model=None if words_only else embedding.DEFAULT_MODEL).close()
    return folder


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time: what a test must leave unchanged."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _shared(folder: Path, what: str) -> Iterator[Path]:
    """Yield a built index shared by every module of the run; fail this worker's session if a test wrote into it."""
    before = _listing(folder)
    yield folder
    after = _listing(folder)
    changed = sorted(set(before) ^ set(after) | {k for k in before.keys() & after.keys() if before[k] != after[k]})
    assert not changed, (
        f"a test wrote into the shared {what} at {folder} ({', '.join(changed[:5])}): open it read-only, or take "
        "a copy from the index_copy fixture to reload, rebuild or keep bot state beside it"
    )


@pytest.fixture(scope="session")
def default_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shipped sources' index with the shipped embedding model, built once per run. Read-only: open
    ``Engine.open(None, default_index)`` on it (an engine per module or test keeps tests apart)."""
    folder = _build_once(tmp_path_factory, "default-index", words_only=False)
    yield from _shared(folder, "default index")


@pytest.fixture(scope="session")
def words_only_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shipped sources' index without the model (``model=None`` / ``L5R_EMBEDDING_MODEL=off``), built
    once per run. Read-only, like ``default_index``."""
    folder = _build_once(tmp_path_factory, "words-only-index", words_only=True)
    yield from _shared(folder, "words-only index")


@pytest.fixture(scope="session")
def index_copy(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Callable[..., Path]:
    """``index_copy(where, words_only=False)``: a private copy of the shared index, into ``where`` when it is
    a path (a folder not there yet), else into ``<tmp>/<where>N/index``; for a module or test that reloads,
    rebuilds or runs a bot (which keeps its state in ``bot-state`` beside the index folder). It carries the
    vector cache, so a build over other sources (house rulings, an edited file) embeds only the paragraphs
    the shipped ones lack. ``cache_only=True`` copies just that cache: a folder holding no index, whose
    build (the thing under test) embeds nothing."""

    def copy(where: str | Path, *, words_only: bool = False, cache_only: bool = False) -> Path:
        from index.build.vectors import CACHE_DIR

        source: Path = request.getfixturevalue("words_only_index" if words_only else "default_index")
        folder = where if isinstance(where, Path) else tmp_path_factory.mktemp(where) / "index"
        if cache_only:
            shutil.copytree(source / CACHE_DIR, folder / CACHE_DIR)
        else:
            shutil.copytree(source, folder)
        return folder

    return copy


# -- a bounded wait for tasks left over when an event loop closes ----------------------------------------

import asyncio  # noqa: E402
import asyncio.runners  # noqa: E402

LEFTOVER_WAIT = 60.0  # seconds a closing test loop waits for its cancelled leftover tasks


def _cancel_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """``asyncio.runners._cancel_all_tasks`` with a time limit.

    When pytest-asyncio closes a test loop it cancels the tasks still pending and waits for them without a limit. Once
    in the session of 2026-11-27 a worker hung there after the last test of some module (which one was not found: the
    run was quiet and the stack showed only the wait), and a hung suite is worse than a failed one: it tells nothing.
    Here the wait ends after ``LEFTOVER_WAIT``; each task still pending is named with its stack on the real stderr, so
    the next such hang names its culprit instead of stalling the run. Errors of tasks that did end are reported as the
    original does."""
    pending = asyncio.all_tasks(loop)
    if not pending:
        return
    for task in pending:
        task.cancel()
    done, stuck = loop.run_until_complete(asyncio.wait(pending, timeout=LEFTOVER_WAIT))
    for task in stuck:
        print(f"\nleftover task ignored its cancellation for {LEFTOVER_WAIT:.0f} s: {task!r}", file=sys.__stderr__)
        task.print_stack(file=sys.__stderr__)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {"message": "unhandled exception during asyncio.run() shutdown", "exception": task.exception(),
                 "task": task})


asyncio.runners._cancel_all_tasks = _cancel_leftover_tasks  # type: ignore[attr-defined]

"""Shared pytest fixtures. Generic on purpose: other helpers' tests may use them too."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakediscord import FakeDiscord  # noqa: E402


@pytest_asyncio.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """A fresh fake Discord (REST + gateway) on 127.0.0.1, one per test."""
    async with FakeDiscord() as fake:
        yield fake

"""The suite's guard against a hung loop close (``tests/conftest.py``): a task that ignores its cancellation is named
and left behind after ``LEFTOVER_WAIT`` instead of stalling the worker for good."""

from __future__ import annotations

import asyncio
import asyncio.runners
import contextlib
import io
import sys

import pytest


async def _stubborn() -> None:
    while True:
        with contextlib.suppress(asyncio.CancelledError):  # the defect guarded against: a task that will not stop
            await asyncio.sleep(10)


def test_a_task_ignoring_cancellation_is_named_and_left_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = asyncio.runners._cancel_all_tasks  # type: ignore[attr-defined]
    assert installed.__name__ == "_cancel_leftover_tasks"  # tests/conftest.py put the guard in place
    monkeypatch.setitem(installed.__globals__, "LEFTOVER_WAIT", 0.2)  # the wait of the guard actually installed
    err = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", err)

    async def main() -> None:
        asyncio.create_task(_stubborn(), name="stubborn-task")
        await asyncio.sleep(0)

    with asyncio.Runner() as runner:
        runner.run(main())  # closing returns (it hung here without the guard)
    assert "leftover task ignored its cancellation" in err.getvalue() and "stubborn-task" in err.getvalue()


def test_tasks_that_stop_when_cancelled_close_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", err)

    async def main() -> None:
        asyncio.create_task(asyncio.sleep(10), name="polite")
        await asyncio.sleep(0)

    with asyncio.Runner() as runner:
        runner.run(main())
    assert err.getvalue() == ""

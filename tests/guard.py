"""Run a function in a fresh process and fail the test if it does not finish within a (generous) limit.

For inputs on which old code took minutes: a regex holds the GIL, so a thread cannot be timed out, and
pytest has no timeout of its own here. The limit is a guard against a hang, not a speed target (those
are in ``benchmarks/``).
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import pytest

# Far above what the linear code needs on a loaded machine (the 20,000 rulings and 40,000 copies: 7 s of CPU,
# and 30 s were exceeded once at load average 5.5 beside a CPU-bound process and a second test run), far below
# what the old code took on these inputs (the quadratic parse about 300 s idle, the regexes many minutes).
GUARD_SECONDS = 120.0


def _run(conn: Connection, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send((True, target(*args)))
    except BaseException:  # noqa: BLE001 - reported to the test
        conn.send((False, traceback.format_exc()))
    finally:
        conn.close()


def finishes(target: Callable[..., Any], *args: Any, seconds: float = GUARD_SECONDS) -> Any:
    """``target(*args)`` run in a spawned process; its return value, or a test failure if it takes too long."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run, args=(send, target, args), daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(seconds):
            pytest.fail(f"{getattr(target, '__name__', target)} did not finish within {seconds:.0f} s")
        ok, value = receive.recv()
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
    if not ok:
        raise AssertionError(f"{getattr(target, '__name__', target)} raised in the guarded process:\n{value}")
    return value

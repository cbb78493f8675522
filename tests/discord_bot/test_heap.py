"""The collector's passes around bursts (bot.discord_bot.heap): start-up's objects frozen out of them, and
full passes put off while a burst is acknowledged, for a bounded time. Driven with a hand clock."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from bot.discord_bot.heap import NEVER, FullPasses, settle


@pytest.fixture(autouse=True)
def restore_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only a collector pass frees it


def test_settle_freezes_what_is_alive_and_a_second_settle_hands_it_back_first() -> None:
    """What the first settle froze and that has since become garbage is freed by the next: it unfreezes before
    collecting. (Counting the objects frozen each time instead failed once beside a CPU-bound process: other
    threads of the test run freed some 2,800 objects between the two. And a frozen object freed by another thread
    lowers the count: a fresh clone's run saw one fewer right after settle returned, so the count is only bounded
    by what settle says it froze.)"""
    gc.unfreeze()
    node = _Node()
    gone = weakref.ref(node)
    first = settle()  # the node is alive here: frozen with the rest
    assert first > 1000 and first // 2 < gc.get_freeze_count() <= first
    del node  # now garbage, but frozen: no pass of the collector looks at it
    gc.collect()
    assert gone() is not None
    second = settle()  # handed back, collected, the living frozen again
    assert gone() is None
    assert second // 2 < gc.get_freeze_count() <= second < 2 * first  # frozen once, not twice over


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_full_passes_wait_during_a_backlog_and_resume_once_it_has_lingered_out() -> None:
    clock, young = Clock(), gc.get_threshold()[:2]
    passes = FullPasses(hold_max=10, linger=3, clock=clock)
    passes.hold()
    assert passes.held and gc.get_threshold() == (*young, NEVER) and passes.holds == 1
    clock.now += 2
    passes.hold()  # the backlog goes on: still held, the same hold
    clock.now += 2
    passes.check()  # 2 s since its last turn: not yet
    assert passes.held
    clock.now += 1.5
    passes.check()
    assert not passes.held and gc.get_threshold()[:2] == young and gc.get_threshold()[2] != NEVER
    passes.hold()  # a new burst holds again
    assert passes.held and passes.holds == 2


def test_a_backlog_that_never_ends_gets_full_passes_back_after_hold_max() -> None:
    clock = Clock()
    passes = FullPasses(hold_max=10, linger=3, clock=clock)
    for _ in range(12):  # a turn a second for 12 s
        passes.hold()
        passes.check()
        clock.now += 1
    assert not passes.held and gc.get_threshold()[2] != NEVER
    passes.hold()  # the same backlog does not hold again ...
    assert not passes.held
    clock.now += 4
    passes.check()
    passes.hold()  # ... until it has been gone for linger seconds
    assert passes.held


def test_a_second_holder_in_the_process_restores_cpythons_threshold_not_the_first_holders_never() -> None:
    clock = Clock()
    first, second = FullPasses(clock=clock), FullPasses(clock=clock)
    first.hold()
    second.hold()
    first.release()
    second.release()
    assert gc.get_threshold()[2] != NEVER

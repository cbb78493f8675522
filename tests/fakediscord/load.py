"""A bounded load against the bot through the fake Discord (loopback only): bursts and a steady rate.

Used by ``tests/discord_bot/test_load.py`` (short) and ``benchmarks/load.py`` (the full minute). Every
interaction is checked the way Discord would see it: exactly one accepted first response, within
3 seconds of the interaction's creation, and then a final answer (a deferred one must be followed
up). A "busy" reply is a valid answer, counted apart.

``/reload`` can be run in the middle with the house rulings switched from one version to another;
every ``/define terrain`` answer must then show one version's ruling whole (title and text of the
same build), never a mix and never none.

Two ways to judge a run. ``problems()`` is the benchmark's: every interaction answered in time, none
lost; how many are lost depends on the machine's speed, so it is a figure, not a test. ``violations()``
is what holds on any machine: each interaction was answered exactly once, told "busy", or skipped
because it had expired (no accepted response; the bot logged ``outcome=expired`` for it), and no
response was accepted after its deadline. ``burst(stale=...)`` adds interactions created long
enough ago (the fake's ``age=``) that the bot must skip them whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .models import FakeUser
from .server import FakeDiscord, InteractionRecord

BUSY_PREFIX = "The judge is busy right now"
WINDOW = 3.0
BURST_GROUP = 50  # interactions a burst builds per turn of the fake's event loop
PREPARE_EACH = 0.002  # seconds the fake is given to build one interaction of a burst (generous on a loaded host)
STALE_AGE = 2.9  # created this long ago, an interaction is past the bot's EXPIRE_AT (2.75 s) on arrival

RULING = """# Load test rulings

## Terrain marker ruling {version}
Date: 2026-01-01
Judge: Load Test
Applies to: Terrain

Marker text {version}: a ruling that exists only to tell index builds apart.
"""


def write_rulings(folder: Path, version: str) -> None:
    """The house-rulings folder in one of its two versions ("alpha" or "beta")."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "load-test.md").write_text(RULING.format(version=version), encoding="utf-8")


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (a value that actually occurred)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


@dataclass
class Sent:
    kind: str
    rec: InteractionRecord
    phase: str
    stale: bool = False  # delivered already expired (``age=STALE_AGE``): the bot must send nothing


def expired_by_user(log_text: str) -> Counter[int]:
    """How many ``outcome=expired`` answer lines the bot logged per user (``LOG_FORMAT=json``)."""
    out: Counter[int] = Counter()
    for line in log_text.splitlines():
        if not line.startswith("{") or '"expired"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("message") == "answer" and record.get("outcome") == "expired" and record.get("user"):
            out[int(record["user"])] += 1
    return out


@dataclass
class Workload:
    """What users send: questions, terms and autocomplete prefixes, cycled; users taken in turn."""

    fake: FakeDiscord
    questions: list[str]
    terms: list[str]
    users: int = 200
    _users: list[FakeUser] = field(default_factory=list)
    _n: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self._users = [self.fake.new_member(f"load{i}") for i in range(self.users)]

    def next_user(self) -> FakeUser:
        return self._users[next(self._n) % len(self._users)]

    def pick(self, i: int) -> tuple[str, Callable[..., Any]]:
        """The i-th interaction: 4 in 10 /ask, 3 /define (one of them /define terrain), 2 autocomplete,
        1 a click on an earlier answer's button. Made by calling the second item (``age=`` optional)."""
        fake, user = self.fake, self.next_user()
        slot = i % 10
        if slot < 4:
            q = self.questions[i % len(self.questions)][:300]
            return "ask", lambda age=0.0: fake.invoke_command("ask", {"question": q}, user=user, settle=False, age=age)
        if slot == 4:
            return "define terrain", lambda age=0.0: fake.invoke_command(
                "define", {"term": "terrain"}, user=user, settle=False, age=age
            )
        if slot < 7:
            t = self.terms[i % len(self.terms)][:200]
            return "define", lambda age=0.0: fake.invoke_command(
                "define", {"term": t}, user=user, settle=False, age=age
            )
        if slot < 9:
            prefix = self.terms[i % len(self.terms)][:4] or "ta"
            return "autocomplete", lambda age=0.0: fake.autocomplete(
                "define", "term", prefix, user=user, settle=False, age=age
            )
        message = self._clickable()
        if message is None:
            return "define", lambda age=0.0: fake.invoke_command(
                "define", {"term": "target"}, user=user, settle=False, age=age
            )
        custom_id = next(c["custom_id"] for c in fake.components_of(message) if c["custom_id"].startswith("l5r:open:"))
        return "click", lambda age=0.0: fake.click(message, custom_id, user=user, settle=False, age=age)

    def _clickable(self) -> dict[str, Any] | None:
        for msg in reversed(list(self.fake.messages.values())[-50:]):
            if any(str(c.get("custom_id", "")).startswith("l5r:open:") for c in self.fake.components_of(msg)):
                return msg
        return None


class LoadRun:
    """Sends interactions, then checks and summarises what happened to each."""

    def __init__(self, fake: FakeDiscord, workload: Workload) -> None:
        self.fake = fake
        self.workload = workload
        self.sent: list[Sent] = []
        self._i = itertools.count()
        self.reload: InteractionRecord | None = None
        self.reload_started: float | None = None
        self.late_by = 0.0  # seconds the last burst reached the bot after the instant it was created

    async def _send(self, phase: str, at: float | None = None) -> None:
        kind, make = self.workload.pick(next(self._i))
        rec = await (make() if at is None else make(age=time.time() - at))
        self.sent.append(Sent(kind, rec, phase))

    async def _send_stale(self, phase: str, at: float | None = None) -> None:
        user = self.workload.next_user()
        age = STALE_AGE + (0.0 if at is None else time.time() - at)
        rec = await self.fake.invoke_command("define", {"term": "target"}, user=user, age=age, settle=False)
        self.sent.append(Sent("define", rec, phase, stale=True))

    async def burst(self, n: int, phase: str = "burst", stale: int = 0, prepare_each: float = PREPARE_EACH) -> None:
        """``n`` interactions created in one instant and delivered together, plus ``stale`` ones spread
        among them that were created ``STALE_AGE`` seconds before it.

        Building and encoding an interaction costs the fake about a millisecond, so a burst built as it is
        sent reached the bot over seconds and took the fake's CPU from answering the bot's REST calls. So the
        instant is set ahead (``prepare_each`` seconds an interaction), every id carries it (negative
        ``age=``), the frames are kept back (``gateway_held``) and written together at that instant. If
        building overran it, the burst arrives that much late (``late_by``; the benchmark prints it).
        """
        at = time.time() + 0.2 + (n + stale) * prepare_each
        plan = [False] * n
        for k in range(stale):
            plan.insert((k + 1) * len(plan) // (stale + 1), True)
        async with self.fake.gateway_held():
            for k, is_stale in enumerate(plan):
                await (self._send_stale(phase, at) if is_stale else self._send(phase, at))
                if k % BURST_GROUP == BURST_GROUP - 1:
                    await asyncio.sleep(0)  # the fake's event loop gets a turn (REST calls, heartbeats)
            wait = at - time.time()
            self.late_by = max(0.0, -wait)
            if wait > 0:
                await asyncio.sleep(wait)

    async def steady(self, rate: float, seconds: float, phase: str = "steady", reload_at: float | None = None,
                     rulings: Path | None = None) -> None:
        """``rate`` interactions a second for ``seconds`` (open loop: sent on time whatever the bot does);
        with ``reload_at``, /reload by the owner that many seconds in, after switching ``rulings`` to beta."""
        start = time.perf_counter()
        tasks: list[asyncio.Task[None]] = []
        total = int(rate * seconds)
        for k in range(total):
            due = start + k / rate
            if reload_at is not None and self.reload is None and due - start >= reload_at:
                if rulings is not None:
                    write_rulings(rulings, "beta")
                self.reload_started = time.perf_counter()
                self.reload = await self.fake.invoke_command("reload", user=self.fake.owner, settle=False)
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(self._send(phase)))
        await asyncio.gather(*tasks)

    async def settle(self, timeout: float = 60.0) -> None:
        """Wait until every interaction has its final answer or can no longer get one (no first response
        and its window is over), or ``timeout``; the rest count as lost."""
        deadline = time.perf_counter() + timeout

        def done() -> bool:
            now = time.perf_counter()
            return all(self._final(s) or self._window_over(s, now) or now > deadline for s in self.sent)

        while not done():
            await asyncio.sleep(0.1)
        if self.reload is not None:
            await self.reload.wait_until(lambda r: r.settled, max(1.0, deadline - time.perf_counter()))

    @staticmethod
    def _window_over(s: Sent, now: float) -> bool:
        """No first response was accepted and none can be any more (the fake refuses after the window)."""
        return not s.rec.callbacks and now > s.rec.created_at + WINDOW + 0.5

    async def ensure_reloaded(self, timeout: float) -> InteractionRecord:
        """The /reload sent during the run, or, if it expired unanswered (on a slow machine it can, like
        any interaction), a new one: wait (up to ``timeout``) until one has answered and return it."""
        deadline = time.perf_counter() + timeout
        while True:
            rec = self.reload
            if rec is None or (not rec.callbacks and self._window_over(Sent("reload", rec, ""), time.perf_counter())):
                self.reload = rec = await self.fake.invoke_command("reload", user=self.fake.owner, settle=False)
            if rec.settled:
                return rec
            if time.perf_counter() > deadline:
                raise TimeoutError(f"/reload not answered in {timeout} s: {rec.describe()}")
            await asyncio.sleep(0.2)

    def _final(self, s: Sent) -> bool:
        rec = s.rec
        if rec.rejected:
            return True
        if s.kind == "autocomplete":
            return rec.response_type == 8
        return rec.settled

    # -- checks ------------------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every interaction that did not get exactly one valid first response in time and a final answer."""
        out = []
        for s in self.sent:
            rec = s.rec
            if rec.rejected:
                out.append(f"{s.kind} {rec.id}: refused {[(c.status, c.response) for c in rec.rejected][:2]}")
            elif not rec.callbacks:
                out.append(f"{s.kind} {rec.id}: no response (lost)")
            elif len(rec.callbacks) != 1:
                out.append(f"{s.kind} {rec.id}: {len(rec.callbacks)} first responses")
            elif rec.response_age is None or rec.response_age > WINDOW:
                out.append(f"{s.kind} {rec.id}: first response after {rec.response_age:.2f} s")
            elif not self._final(s):
                out.append(f"{s.kind} {rec.id}: deferred and never answered")
            elif s.kind != "autocomplete" and self._text(rec).startswith("Sorry"):
                out.append(f"{s.kind} {rec.id}: failed: {self._text(rec)[:80]}")
        return out

    def violations(self, expired: Counter[int]) -> list[str]:
        """What must hold on any machine, however slow: each interaction answered exactly once (a first
        response accepted within its window, then the final answer), told "busy", or skipped because it
        had expired. Skipped means no first response was accepted and the bot logged ``outcome=expired``
        (``expired``: those lines per user, from ``expired_by_user``); an autocomplete is dropped without
        an INFO line, so for it the closed window is enough. A stale interaction (``burst(stale=...)``)
        must get nothing at all, not even a late attempt."""
        out = []
        unexplained: Counter[int] = Counter()
        for s in self.sent:
            rec = s.rec
            what = f"{s.kind}{' (stale)' if s.stale else ''} {rec.id}"
            other = [c for c in rec.rejected if not (isinstance(c.response, dict) and c.response.get("code") == 10062)]
            if other:
                out.append(f"{what}: refused {[(c.status, c.response) for c in other][:2]}")
            elif len(rec.callbacks) > 1:
                out.append(f"{what}: {len(rec.callbacks)} first responses")
            elif s.stale and (rec.callbacks or rec.rejected):
                out.append(f"{what}: delivered expired, yet the bot responded")
            elif rec.callbacks and (rec.response_age is None or rec.response_age > WINDOW):
                out.append(f"{what}: first response accepted after {rec.response_age} s")
            elif rec.callbacks and not self._final(s):
                out.append(f"{what}: acknowledged and never answered")
            elif rec.callbacks and s.kind != "autocomplete" and self._text(rec).startswith("Sorry"):
                out.append(f"{what}: failed: {self._text(rec)[:80]}")
            elif not rec.callbacks and not self._window_over(s, time.perf_counter()):
                out.append(f"{what}: no response yet and its window still open (judged too early)")
            elif not rec.callbacks and s.kind != "autocomplete":
                unexplained[rec.user.id] += 1
        for user, n in unexplained.items():
            if n > expired[user]:
                out.append(f"user {user}: {n} interaction(s) without a response, {expired[user]} logged expired (lost)")
        return out

    def outcomes(self) -> Counter[str]:
        """How many were answered, told busy, got no first response (expired), or are unfinished."""
        busy = {id(s) for s in self.busy()}

        def outcome(s: Sent) -> str:
            if id(s) in busy:
                return "busy"
            if not s.rec.callbacks:
                return "expired"
            return "answered" if self._final(s) else "unfinished"

        return Counter(outcome(s) for s in self.sent)

    @staticmethod
    def _text(rec: InteractionRecord) -> str:
        return "\n".join(FakeDiscord.text_of(m) for m in rec.messages).strip()

    def busy(self) -> list[Sent]:
        return [s for s in self.sent if s.kind != "autocomplete" and self._text(s.rec).startswith(BUSY_PREFIX)]

    def build_problems(self) -> list[str]:
        """Each /define terrain answer shows exactly one build's ruling, title and text alike; answers
        dispatched after the reload replied show the new one."""
        out = []
        reloaded_at = self.reload.settled_at if self.reload is not None else None
        for s in self.sent:
            if s.kind != "define terrain" or not s.rec.settled or self._text(s.rec).startswith(BUSY_PREFIX):
                continue
            text = self._text(s.rec)
            versions = {v for v in ("alpha", "beta") if f"Marker text {v}" in text}
            titles = {v for v in ("alpha", "beta") if f"Terrain marker ruling {v}" in text}
            if len(versions) != 1 or versions != titles:
                out.append(f"define terrain {s.rec.id}: texts {sorted(versions)}, titles {sorted(titles)}")
            elif reloaded_at is not None and s.rec.dispatched_at > reloaded_at and versions != {"beta"}:
                out.append(f"define terrain {s.rec.id}: old build after the reload replied")
        return out

    def builds_seen(self) -> dict[str, int]:
        """How many /define terrain answers showed each version of the house ruling."""
        seen = {"alpha": 0, "beta": 0}
        for s in self.sent:
            if s.kind == "define terrain" and s.rec.settled:
                for version in seen:
                    seen[version] += f"Marker text {version}" in self._text(s.rec)
        return seen

    def summary(self, phase: str | None = None) -> dict[str, Any]:
        chosen = [s for s in self.sent if phase is None or s.phase == phase]
        first = [s.rec.response_age * 1000 for s in chosen if s.rec.response_age is not None]
        final = [
            (s.rec.settled_at - s.rec.created_at) * 1000
            for s in chosen
            if s.rec.settled_at is not None and s.kind != "autocomplete"
        ]
        busy = {id(s) for s in self.busy()}
        return {
            "phase": phase or "all",
            "sent": len(chosen),
            "answered": sum(1 for s in chosen if self._final(s) and not s.rec.rejected and id(s) not in busy),
            "busy": sum(1 for s in chosen if id(s) in busy),
            "deferred": sum(1 for s in chosen if s.rec.response_type in (5, 6)),
            "lost": sum(1 for s in chosen if not s.rec.callbacks),
            "first_p50_ms": round(percentile(first, 50), 1),
            "first_p95_ms": round(percentile(first, 95), 1),
            "first_p99_ms": round(percentile(first, 99), 1),
            "first_max_ms": round(max(first), 1) if first else math.nan,
            "final_p50_ms": round(percentile(final, 50), 1),
            "final_p95_ms": round(percentile(final, 95), 1),
            "final_p99_ms": round(percentile(final, 99), 1),
            "final_max_ms": round(max(final), 1) if final else math.nan,
            # first responses accepted per quarter second of age (how the window was used)
            "first_by_quarter": [sum(1 for f in first if q * 250 <= f < (q + 1) * 250) for q in range(12)],
        }

"""Injected REST faults: 429 rate limits, stalls that end in a 504, and delays.

Tests arm them per route name (``inject_rate_limit``, ``inject_stall``, ``inject_delay``) and
``RestMixin._rest_handler`` consumes them, so a fault hits exactly the next ``count`` calls of one route
and the bot's retry and timeout paths can be tested deterministically.
"""

from __future__ import annotations

import time
from typing import Any


class FaultInjectionMixin:
    """``FakeDiscord``'s fault controls; state in ``_rate_limits``, ``_stalls``, ``_delays`` (what was held
    is listed in ``stalled`` and ``delayed`` by the REST handler)."""

    def inject_rate_limit(
        self, count: int = 1, route: str = "callback", retry_after: float = 0.2, is_global: bool = False
    ) -> None:
        """The next ``count`` requests to ``route`` get a 429 like Discord's (body and headers)."""
        self._rate_limits[route] = [count, retry_after, is_global]

    def inject_stall(self, count: int = 1, route: str = "callback", seconds: float = 10.0) -> None:
        """The next ``count`` requests to ``route`` hang for ``seconds`` and then get a 504 without being
        carried out: a REST base (or a proxy in front of it) that times out."""
        self._stalls[route] = [count, seconds]

    def inject_delay(self, count: int = 1, route: str = "callback", seconds: float = 1.0) -> None:
        """The next ``count`` requests to ``route`` are held ``seconds``, then carried out normally."""
        self._delays[route] = [count, seconds]

    def _take_stall(self, route: str) -> float | None:
        return self._take(self._stalls, route)

    @staticmethod
    def _take(table: dict[str, list[float]], route: str) -> float | None:
        entry = table.get(route)
        if not entry or entry[0] <= 0:
            return None
        entry[0] -= 1
        return entry[1]

    def _take_rate_limit(self, route: str) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        entry = self._rate_limits.get(route)
        if not entry or entry[0] <= 0:
            return None
        entry[0] -= 1
        retry_after, is_global = entry[1], entry[2]
        headers = {
            "Retry-After": str(max(1, int(retry_after + 0.999))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Bucket": "fake-" + route,
            "X-RateLimit-Scope": "global" if is_global else "user",
            "Via": "1.1 google",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
        return 429, body, headers

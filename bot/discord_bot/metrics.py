"""Prometheus metrics of one bot process, on its own registry (several bots in one test process
don't share counters). Served as ``/metrics`` by ``bot.discord_bot.health``.

Counters and histograms are updated where answers are logged (``bot.discord_bot.logs.log_answer``); the live
figures (gateway, heartbeat, index size, lookups in flight) are read at scrape time. A custom registry gets
none of prometheus_client's default collectors, so the process (``process_*``: CPU, memory, file
descriptors), platform (``python_info``) and garbage-collector (``python_gc_*``) ones are added here.
The names and types are listed in docs/admins.md and checked against a scrape by
tests/discord_bot/test_metrics_endpoint.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, GCCollector, Histogram, PlatformCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from bot.discord_bot.client import JudgeBot

# Seconds; Discord's window is 3 s, so the buckets are dense below it.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 10.0, 30.0)


class Metrics:
    """The bot's metric families (names prefixed ``l5r_``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total, *_memory_bytes, *_fds, start time
        PlatformCollector(registry=self.registry)  # python_info
        GCCollector(registry=self.registry)  # python_gc_*
        self.answers = Counter(
            "l5r_answers",
            "Interactions handled, by command and outcome (ok, user_error, cooldown, busy, expired, error, ...)",
            ["command", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "l5r_answer_latency_seconds",
            "From receiving an interaction to its answer being sent, by command",
            ["command"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.first_response_age = Histogram(
            "l5r_first_response_age_seconds",
            "From the interaction's creation (its snowflake) to its first response (Discord allows 3 s)",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "l5r_errors",
            "Unexpected failures (the traceback is in the log), by where they happened",
            ["where"],
            registry=self.registry,
        )

    def watch(self, bot: JudgeBot) -> None:
        """Add the figures read from the running bot at each scrape."""
        self.registry.register(_LiveCollector(bot))


class _LiveCollector(Collector):
    def __init__(self, bot: JudgeBot) -> None:
        self.bot = bot

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        from bot.discord_bot.health import gateway_status

        shards = gateway_status(self.bot)
        connected = GaugeMetricFamily(
            "l5r_gateway_connected", "1 when the shard's gateway socket is open", labels=["shard"]
        )
        ack = GaugeMetricFamily(
            "l5r_gateway_heartbeat_ack_age_seconds",
            "Seconds since the gateway last acknowledged a heartbeat",
            labels=["shard"],
        )
        latency = GaugeMetricFamily(
            "l5r_gateway_latency_seconds", "Heartbeat round trip of the shard's gateway connection", labels=["shard"]
        )
        for shard_id, info in shards.items():
            connected.add_metric([str(shard_id)], 1.0 if info["connected"] else 0.0)
            if info["heartbeat_ack_age_s"] is not None:
                ack.add_metric([str(shard_id)], info["heartbeat_ack_age_s"])
            if info["latency_ms"] is not None:
                latency.add_metric([str(shard_id)], info["latency_ms"] / 1000)
        yield connected
        yield ack
        yield latency
        engine = self.bot.engine
        yield GaugeMetricFamily(
            "l5r_index_entries", "Entries in the serving index", value=len(engine.corpus.entries) if engine else 0
        )
        lookups = self.bot.lookups
        yield GaugeMetricFamily("l5r_lookups_pending", "Lookups running or waiting for a worker", value=lookups.pending)
        yield GaugeMetricFamily(
            "l5r_lookup_seconds_average", "Running average of one lookup's duration", value=lookups.seconds_per_lookup
        )
        # Running totals kept by the bot itself: counters (exposed with ``_total``), never gauges.
        yield CounterMetricFamily(
            "l5r_responses_skipped",
            "First responses not sent because the interaction's window had closed",
            value=self.bot.responder.skipped,
        )
        yield CounterMetricFamily(
            "l5r_lookups_skipped",
            "Lookups dropped before they started because their answer was no longer wanted",
            value=lookups.skipped,
        )
        health = getattr(self.bot, "health", None)  # None also while the bot is being made (auto_describe)
        yield GaugeMetricFamily(
            "l5r_health_connections_open",
            "Connections open to this health and metrics endpoint",
            value=health.guard.open_connections if health is not None else 0,
        )
        closed = CounterMetricFamily(
            "l5r_health_connections_closed",
            "Connections the endpoint closed itself: header_timeout, evicted (oldest idle at the limit), "
            "refused (at the limit, all answering), malformed (answered 400)",
            labels=["reason"],
        )
        for reason in ("header_timeout", "evicted", "refused", "malformed"):
            closed.add_metric([reason], health.guard.closed[reason] if health is not None else 0)
        yield closed
        yield GaugeMetricFamily(
            "l5r_uptime_seconds", "Seconds since the bot process started", value=time.monotonic() - self.bot.started
        )

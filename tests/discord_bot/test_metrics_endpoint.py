"""``/metrics`` matches its documentation (issue 19): the real ``python -m bot run`` against the fake Discord
is scraped, the text parsed with prometheus_client's own parser, and every metric in the table of
docs/admins.md (Health and metrics) must be there with the documented type and labels; every ``l5r_``
metric the bot exports must be in that table.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from fakediscord import FakeDiscord
from fakediscord.process import ROOT, BotProcess
from prometheus_client.parser import text_string_to_metric_families

from index.engine import Engine

pytestmark = pytest.mark.asyncio

DOC = ROOT / "docs" / "admins.md"
ROW = re.compile(r"^\| `(?P<name>[a-z0-9_]+)` \| (?P<type>counter|gauge|histogram) \| (?P<labels>[^|]*) \|", re.M)


def documented() -> dict[str, tuple[str, set[str]]]:
    """name -> (type, label names) from the metrics table of the Health and metrics section."""
    text = DOC.read_text("utf-8")
    section = text[text.index("### Health and metrics") :]
    section = section[: section.index("\n### ", 1)]
    rows = {m["name"]: (m["type"], set(re.findall(r"`([a-z_]+)`", m["labels"]))) for m in ROW.finditer(section)}
    assert len(rows) >= 20, f"the metrics table in {DOC} was not found or lost rows"
    return rows


def family_name(name: str, kind: str) -> str:
    """The name prometheus_client's parser gives a family: a counter's without its ``_total``."""
    return name.removesuffix("_total") if kind == "counter" else name


@pytest.fixture(scope="module")
def index_dir(index_copy: Callable[..., Path]) -> Path:
    """A words-only index (metrics do not depend on the embedding model), the module's own copy."""
    return index_copy("metrics", words_only=True)


async def test_metrics_endpoint_exports_every_documented_metric_with_its_type(tmp_path: Path, index_dir: Path) -> None:
    docs = documented()
    env = {"L5R_INDEX_DIR": str(index_dir), "L5R_EMBEDDING_MODEL": "off", "COOLDOWN_SECONDS": "0"}
    async with FakeDiscord() as fake, BotProcess(fake, tmp_path, env) as bot:
        await bot.wait_healthy()
        await fake.invoke_command("define", {"term": "target"})
        await fake.invoke_command("changes list", {"since": "not a date"})
        await asyncio.sleep(0.3)  # the answer's line and counters are written just after the reply
        text = await bot.metrics()
    families = {f.name: f for f in text_string_to_metric_families(text)}

    for name, (kind, labels) in docs.items():
        family = families.get(family_name(name, kind))
        assert family is not None, f"{name} is documented but not exported"
        assert family.type == kind, f"{name}: documented as {kind}, exported as {family.type}"
        for sample in family.samples:
            own = set(sample.labels) - {"le"}  # a histogram bucket's bound is not one of its labels
            if not sample.name.endswith("_created"):
                assert own == labels, f"{name}: documented labels {labels}, exported {own} ({sample})"

    documented_families = {family_name(name, kind) for name, (kind, _labels) in docs.items()}
    # prometheus_client writes each counter's and histogram's creation time as a gauge family of its own
    created = {f"{name}_created" for name in documented_families}
    exported = {name for name in families if name.startswith("l5r_") and name not in created}
    assert exported <= documented_families, f"exported but not documented: {exported - documented_families}"

    def value(name: str, **labels: str) -> float:
        family = families[family_name(name, docs[name][0])]
        wanted = name if docs[name][0] != "histogram" else name + "_count"
        return next(s.value for s in family.samples if s.name == wanted and s.labels == labels)

    # The figures are the running bot's own.
    assert value("l5r_answers_total", command="define", outcome="ok") == 1
    assert value("l5r_answers_total", command="changes list", outcome="user_error") == 1
    assert value("l5r_answer_latency_seconds", command="define") == 1
    assert value("l5r_first_response_age_seconds") == 2
    assert value("l5r_index_entries") == len(Engine.open(None, index_dir, model=None).corpus.entries)
    assert value("l5r_gateway_connected", shard="0") == 1
    assert value("l5r_responses_skipped_total") == 0
    assert value("l5r_health_connections_open") >= 1  # this scrape's own
    assert value("process_open_fds") > 5 and value("process_resident_memory_bytes") > 10_000_000
    assert value("process_cpu_seconds_total") > 0

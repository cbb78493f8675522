"""/about points at the privacy statement and states the host's own grace period (PRIVACY_URL,
L5R_DATA_GRACE_DAYS), in every front end, because Discord's terms want the policy reachable from the bot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.judge import Judge
from bot.app.renderers.discord_markdown import render as render_discord
from bot.app.renderers.text import render as render_text
from bot.app.settings import Settings
from index.engine import Engine


@pytest.fixture(scope="module")
def engine(words_only_index: Path) -> Iterator[Engine]:
    eng = Engine.open(None, words_only_index, model=None)  # /about needs no vectors
    yield eng
    eng.close()


def _privacy(answer) -> str:  # noqa: ANN001 (an Answer)
    return render_text(answer).split("Privacy", 1)[1]


def test_about_links_the_published_statement_and_the_hosts_grace_period(engine: Engine) -> None:
    settings = Settings.from_env({"PRIVACY_URL": "https://judge.example.org/privacy", "L5R_DATA_GRACE_DAYS": "7"})
    answer = Judge.from_settings(engine, settings).about()
    text = _privacy(answer)
    assert "deleted 7 days after the bot is removed" in text
    assert "https://judge.example.org/privacy" in text and "docs/privacy.md" not in text
    assert "(https://judge.example.org/privacy)" in str(render_discord(answer))  # a Markdown link in Discord


def test_without_a_published_statement_about_names_the_file_and_the_default(engine: Engine) -> None:
    answer = Judge.from_settings(engine, Settings.from_env({})).about()
    text = _privacy(answer)
    assert "deleted 30 days after the bot is removed" in text and "docs/privacy.md" in text


def test_a_grace_period_of_zero_is_said_as_at_once(engine: Engine) -> None:
    answer = Judge.from_settings(engine, Settings.from_env({"L5R_DATA_GRACE_DAYS": "0"})).about()
    assert "deleted at once after the bot is removed" in _privacy(answer)

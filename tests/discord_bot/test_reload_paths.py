"""A /reload that worked but left some source files out names them without the host's folders (issue 20,
item 7): a source error carries the path the host configured, and a reply in Discord never shows where the
host keeps its files. (A refused or failed reload: tests/discord_bot/test_bot_views.py.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from test_bot_views import fake_interaction

from bot.app.settings import Settings
from bot.discord_bot.client import EXTENSIONS, JudgeBot
from index.engine import Engine


@pytest.fixture(scope="module")
def engine(index_copy: Callable[..., Path]) -> Iterator[Engine]:
    eng = Engine.open(None, index_copy("reload-paths"))  # its own copy: the tests reload it
    yield eng
    eng.close()


async def test_a_reload_with_source_errors_names_no_host_path(engine: Engine, tmp_path: Path) -> None:
    bot = JudgeBot(Settings(state_dir=tmp_path / "state", cooldown_seconds=0), engine=engine)
    for ext in EXTENSIONS:
        await bot.load_extension(ext)
    try:
        stats = {"entries": 10, "files": ["a.md"], "errors": [
            "/srv/l5r/private/house: no such file or folder",
            "rulings.md: cannot read: [Errno 13] Permission denied: '/srv/l5r/private/rulings.md'",
        ]}  # fmt: skip
        command = bot.tree.get_command("reload")
        interaction = fake_interaction(bot, manage_guild=True)
        with mock.patch.object(bot, "reload_rules", autospec=True, return_value=stats):
            await command.callback(command.binding, interaction)
        (text,), _ = interaction.followup.send.call_args
        assert text.startswith("Reloaded 10 entries"), text
        assert "2 file(s) failed to load" in text and "/srv" not in text, text
        assert "house: no such file or folder" in text and "Permission denied: 'rulings.md'" in text, text
    finally:
        await bot.http.close()

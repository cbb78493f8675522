"""What a user typed is shown back in a reply at a bounded length, whatever length they typed (issue 20,
item 7): the console's "Unknown command" and "No entry for ...", a ruling form's unknown "Applies to"
names. Three sizes each, so a reply that grows with the input shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.compose import ECHO_LIMIT
from bot.app.console import Console
from bot.app.judge import Judge
from bot.rulings import markdown
from index.engine import Engine
from index.query.overlay import NameResolver

SIZES = [300, 5_000, 100_000]


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open(None, default_index)  # the session's default index, read-only
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def console(engine: Engine) -> Console:
    return Console(Judge(engine))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("line", ["/{x}", "/define {x}", "/history {x}", "/open {x}", "/banned {x}", "/rule {x}"])
def test_a_console_reply_echoes_at_most_a_bounded_part_of_the_input(console: Console, line: str, size: int) -> None:
    typed = "q" * size
    out = console.answer(line.format(x=typed))
    assert out  # an answer, never a traceback
    longest = max(len(run) for run in out.replace("“", " ").replace("”", " ").split())
    assert longest <= ECHO_LIMIT + 2, (line, size, longest)  # the echo is cut (with "…"), not the whole input


@pytest.mark.parametrize("size", SIZES)
def test_a_ruling_forms_unknown_names_are_quoted_cut(engine: Engine, size: int) -> None:
    name = "n" * size
    resolver = NameResolver(engine.corpus)
    _draft, problems = markdown.check_draft("Title", "Text.", "", f"{name}, Terrain, {name}x", resolver)
    assert len(problems) == 2
    assert all(len(p) <= markdown.NAME_ECHO + 60 for p in problems), [len(p) for p in problems]
    assert all("…" in p for p in problems)



def test_a_servers_not_covered_question_is_shown_back_inert(engine: Engine) -> None:
    """A question a server's judges confirmed the loaded rules do not answer is what a member typed: named in
    that server's "may not cover this" line, it pings nobody, reverses no text and stays bounded."""
    from bot.app.renderers import discord_markdown as dm
    from index.query.overlay import Kept

    typed = "@everyone do I gain honor when I destroy an enemy province \u202e" + "x" * 1_000
    overlay = engine.build_overlay("guild:9", [], 1, kept=[Kept(typed, None, None)])
    answer = Judge(engine).scoped(overlay).ask(typed)
    shown = dm.render(answer).pages[0].description
    assert "may not cover this" in shown
    assert "@everyone" not in shown.replace("@\u200beveryone", "")  # escaped: no mention
    assert "\u202e" not in shown and len(shown) <= 4_096 and "x" * (ECHO_LIMIT + 1) not in shown

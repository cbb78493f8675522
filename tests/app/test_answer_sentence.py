"""Pointing at the sentence in every front end, and a rule quoted with its example (issue 17)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.answer import Group, Quote
from bot.app.judge import Judge
from bot.app.renderers import discord_markdown as dm
from bot.app.renderers.html import HtmlRenderer
from bot.app.renderers.text import SENTENCE_CLOSE, SENTENCE_OPEN
from bot.app.renderers.text import render as to_text
from index.engine import Engine
from index.results import Hit, Passage
from tests.app.test_bot_render import assert_within_limits, make_entry

SHOOT = "can I shoot a personality that has followers"


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Iterator[Engine]:
    eng = Engine.open(None, default_index)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def judge(engine: Engine) -> Judge:
    return Judge(engine, rulebook_url="https://rules.example.org/book")


def quotes(answer) -> list[Quote]:  # type: ignore[no-untyped-def]
    blocks = [b for item in answer.items for g in item.blocks if isinstance(g, Group) for b in g.blocks]
    return [b for b in blocks if isinstance(b, Quote)]


def test_the_rule_is_quoted_before_its_example_each_with_its_own_lines(judge: Judge, engine: Engine) -> None:
    answer = judge.ask(SHOOT)
    rule1 = engine.get("obsidian-hand:cardinal-rule-1")
    assert rule1 is not None
    first = answer.items[0].blocks
    group = next(b for b in first if isinstance(b, Group))
    shown = [b for b in group.blocks if isinstance(b, Quote)]
    assert [q.paragraph for q in shown] == [0, 1] and [q.text for q in shown] == rule1.paragraphs[:2]
    text = to_text(answer)
    rule_at, example_at = text.index(rule1.paragraphs[0]), text.index(rule1.paragraphs[1])
    assert rule_at < example_at
    lines = re.findall(r"Cardinal Rule 1: Cards vs\. Rules, paragraph (\d), line (\d+)", text)
    assert [p for p, _line in lines] == ["1", "2"] and lines[0][1] != lines[1][1]  # each its own line
    assert_within_limits(dm.render(answer))


def marked_quote(answer) -> Quote:  # type: ignore[no-untyped-def]
    found = [q for q in quotes(answer) if q.sentences]
    assert found, "some quoted paragraph points at its sentence"
    return found[0]


def test_each_renderer_marks_the_answering_sentence_and_keeps_the_text_verbatim(judge: Judge) -> None:
    answer = judge.ask(SHOOT)
    q = marked_quote(answer)
    (a, b), = q.sentences[:1]
    sentence = q.text[a:b]
    assert 0 < len(sentence) < len(q.text)
    # console: between the markers; the markers removed give the source text byte for byte
    text = to_text(answer)
    assert f"{SENTENCE_OPEN}{sentence}{SENTENCE_CLOSE}" in text
    assert q.text in text.replace(SENTENCE_OPEN, "").replace(SENTENCE_CLOSE, "")
    # Discord: the sentence in bold (escaped inside), the page read back is the source text
    message = dm.render(answer)
    assert_within_limits(message)
    page = message.pages[0].description
    assert f"**{dm.escape(sentence)}**" in page
    assert q.text in dm.plain(page)
    # HTML: the sentence in <mark>
    out = HtmlRenderer().render(answer)
    assert f"<mark>{html.escape(sentence, quote=False)}</mark>" in out or \
        f"<mark>{html.escape(sentence)}</mark>" in out


def test_a_one_sentence_paragraph_has_no_mark(judge: Judge) -> None:
    answer = judge.ask(SHOOT)
    example = next(q for q in quotes(answer) if q.text.startswith("Example:"))
    assert example.sentences == ()
    assert f"{SENTENCE_OPEN}Example" not in to_text(answer)


def test_a_clipped_sentence_mark_stays_closed_within_limits() -> None:
    long = "Plain words " * 70 + "The ruling sentence, with *stars* and _lines_, " + "runs on " * 100 + "to here."
    entry = make_entry([long, "Second."])
    start = long.index("The ruling")
    q = Quote(entry, long, 0, role="hit", sentences=((start, len(long)),))
    body = dm.lines_of(q)[0]
    assert len(body) <= dm.QUOTE_CLIP["hit"] + 200
    stripped = re.sub(r"\\.", "", body)  # escapes out of the way: every bold that opens closes
    assert stripped.count("**") % 2 == 0 and "**" in stripped
    assert dm.close_bold("a **b" + dm.ELLIPSIS) == "a **b**" + dm.ELLIPSIS
    assert dm.close_bold("a **" + dm.ELLIPSIS) == "a" + dm.ELLIPSIS
    assert dm.close_bold(r"a \*\* b") == r"a \*\* b"


def test_a_chosen_rule_is_followed_by_its_example_each_cited(judge: Judge) -> None:
    rule = "A Ranged Attack targets a Follower. It never targets a Personality with Followers."
    example = "Example: a Personality with one Follower cannot be shot until the Follower is gone."
    entry = make_entry([rule, example, "Unrelated."], lines=[(3, 4), (5, 6), (7, 9)])
    start = rule.index("It never")
    hit = Hit(entry, 1.0, [(rule.index("Personality"), rule.index("Personality") + 11)], 0,
              companion=Passage(1, [(example.index("Follower"), example.index("Follower") + 8)]),
              sentence_spans=[(start, len(rule))])
    answer = judge.composer.ask("shoot a personality with followers", [hit])
    shown = quotes(answer)
    assert [q.paragraph for q in shown] == [0, 1] and shown[0].sentences == ((start, len(rule)),)
    text = to_text(answer)
    assert text.index(rule[:start]) < text.index(example)
    assert "paragraph 1, lines 3-4" in text and "paragraph 2, lines 5-6" in text
    assert_within_limits(dm.render(answer))

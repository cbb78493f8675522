"""Escaping for Discord: linear on hostile text, inert on Discord, exactly undone by ``plain``."""

from __future__ import annotations

import re

from guard import finishes
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app.compose import Composer, echo
from bot.app.renderers import discord_markdown as dm
from bot.app.renderers.discord_markdown import escape, marked, plain
from bot.app.renderers.markdown_escape import ZWSP, escape_markdown, escape_mentions
from bot.app.renderers.text import render as to_text
from glossary.model import Entry, Location
from index.results import Hit, merge_spans

# Text made mostly of what Discord's parser reacts to, plus the pieces of mentions and links.
HOSTILE = st.lists(
    st.sampled_from(list("\\*_~|`[]()<>#-+.:@!&1 \tab\n") + [ZWSP, "everyone", "here", "https://", "\u202e"]),
    max_size=200,
).map("".join)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)

_INLINE = set("*_~|`[<")
_LINE_START = re.compile(r"[ \t]*(?:[#>+\-]|\d+\.)")


def inert(out: str, *, bold: bool = False) -> str | None:
    """Why ``out`` would still do something on Discord, or None: a checker written apart from the escaper.

    Walks the text as Discord's parser would: a backslash takes the next character literally; any other
    emphasis/code/spoiler/link/mention character, a block marker at a line start or a raw @everyone/@here
    is an effect. With ``bold``, ``**`` pairs (the query words a snippet bolds) are allowed.
    """
    for m in re.finditer(r"@(everyone|here|[!&]?\d)", out):
        return f"mention {m.group()!r} at {m.start()}"
    i, line_start = 0, True
    while i < len(out):
        if line_start:
            m = _LINE_START.match(out, i)
            if m:
                return f"block marker {m.group()!r} at {i}"
        ch = out[i]
        if ch == "\\":
            i += 2
            line_start = False
            continue
        if bold and out.startswith("**", i):
            i += 2
            line_start = False
            continue
        if ch in _INLINE:
            return f"raw {ch!r} at {i}"
        line_start = ch == "\n"
        i += 1
    return None


@given(st.one_of(HOSTILE, ANY_TEXT))
def test_plain_undoes_escape_exactly(text: str) -> None:
    assert plain(escape(text)) == text


@given(st.one_of(HOSTILE, ANY_TEXT))
def test_escaped_text_is_inert(text: str) -> None:
    assert inert(escape(text)) is None


@given(HOSTILE)
def test_escaping_twice_shows_the_escaped_text(text: str) -> None:
    """Escaping escaped text again never turns an escape back into markup: it shows the first escape."""
    once = escape(text)
    assert plain(escape(once)) == once
    assert inert(escape(once)) is None


@given(HOSTILE, st.lists(st.tuples(st.integers(0, 300), st.integers(0, 20)), max_size=6))
def test_highlighted_snippets_are_inert_apart_from_bold(text: str, raw_spans: list[tuple[int, int]]) -> None:
    """``/ask`` quotes: the rule text escaped as in ``/define``, only the query words in bold."""
    spans = merge_spans([(min(a, len(text)), min(a + n, len(text))) for a, n in raw_spans])  # as a Hit has them
    shown = marked(text, spans)  # as the Discord renderer shows a quoted paragraph with its marks
    assert inert(shown, bold=True) is None
    assert plain(shown) == text


def test_discord_constructs_are_escaped() -> None:
    cases = {
        "[click](https://evil.example)": "\\[click](https://evil.example)",
        "<@123456789012345678> <@&1> <#2> <https://x.example>": "\\<@\u200b123456789012345678> \\<@\u200b&1> \\<#2> \\<https://x.example>",
        "@everyone and @here": "@\u200beveryone and @\u200bhere",
        "# Title\n## Sub\n-# small\n> quote\n>>> all\n- item\n+ item\n* item\n12. item": (
            "\\# Title\n\\## Sub\n\\-# small\n\\> quote\n\\>>> all\n\\- item\n\\+ item\n\\* item\n12\\. item"
        ),
        "**b** __u__ ~~s~~ ||spoiler|| `code` ```block```": (
            "\\*\\*b\\*\\* \\_\\_u\\_\\_ \\~\\~s\\~\\~ \\|\\|spoiler\\|\\| \\`code\\` \\`\\`\\`block\\`\\`\\`"
        ),
        "a - b, 3.5 and x#y stay": "a - b, 3.5 and x#y stay",
    }
    for text, expected in cases.items():
        assert escape(text) == expected, text
        assert escape(text) == escape_mentions(escape_markdown(text))


def test_ask_snippet_defuses_masked_links() -> None:
    """A masked link in the source text shows as text in /ask, as it does in /define."""
    text = "Pay [1 gold](https://evil.example/steal) to target it."
    spans = [(text.index("target"), text.index("target") + 6)]
    snippet = marked(text, spans)
    assert "\\[1 gold]" in snippet and "**target**" in snippet
    entry = Entry(
        id="house:x", source="house", document="House rulings", kind="ruling", title="X", section=[],
        paragraphs=[text], location=Location("x.md", 3, 3),
    )
    answer = Composer(lambda _i: None).ask("target", [Hit(entry, 1.0, spans, 0, [])])
    description = dm.render(answer).pages[0].description
    quoted = description.split("\n")[1]
    assert quoted == "> " + snippet and inert(quoted.removeprefix("> "), bold=True) is None
    assert "\n> " + text + "\n" in to_text(answer)  # the console quotes the paragraph as written


def test_echoed_input_loses_bidi_controls() -> None:
    spoof = "terrain\u202e\u2066gnirrac\u2069\u200f"
    assert echo(spoof) == "terraingnirrac"
    assert echo("**@everyone** [x](y)") == "**@everyone** [x](y)"  # echo drops bidi controls only...
    answer = Composer(lambda _i: None).ask(spoof, [])
    assert answer.title == "Rules for: terraingnirrac"
    assert "\u202e" not in to_text(answer)
    shown = dm.render(Composer(lambda _i: None).ask("**@everyone**", [])).title
    assert shown == "Rules for: \\*\\*@\u200beveryone\\*\\*"  # ...the Discord renderer escapes the rest
    assert escape(spoof) == spoof  # rule text (not echoed input) is never altered


def _escape_hostile(repeat: int) -> int:
    """Every escaping and unescaping step on the inputs that froze discord.py's escape_markdown."""
    total = 0
    for piece in ("[x](", "*a", "_", "`|~", "[" , "<@", "@everyone", "\\", "> # - 1. "):
        text = piece * repeat
        out = escape(text)
        assert plain(out) == text
        total += len(out) + len(escape_markdown(text))
    return total


def test_hostile_text_escapes_quickly() -> None:
    """``[x](`` repeated 5,000 times took discord.py about a minute; 100,000 repetitions here finish at once."""
    assert finishes(_escape_hostile, 100_000) > 0


@settings(max_examples=25)
@given(st.sampled_from(["[x](", "*a", "\\", "[", "<@", "@everyone", "- ", "1. "]))
def test_rendering_a_hostile_entry_keeps_every_character(piece: str) -> None:
    """A long hostile paragraph is paged without losing or garbling a character (console text == source)."""
    text = piece * 3000
    entry = Entry(
        id="glossary:hostile", source="glossary", document="Doc", kind="term", title="Hostile", section=[],
        paragraphs=[text], location=Location("f.txt", 1, 2),
    )
    answer = Composer(lambda _i: None).entry(entry)
    message = dm.render(answer)
    assert all(len(p.description) <= 4096 for p in message.pages)
    joined = "".join(plain(p.description).removeprefix("…").removesuffix("…") for p in message.pages)
    assert joined.replace(" ", "") == text.replace(" ", "")
    assert text in to_text(answer)  # the console: the whole paragraph, verbatim and unpaged

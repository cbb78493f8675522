"""The digest as one answer (``bot.app.digest``): paged within Discord's limits however much changed, long texts
clipped on Discord with where the whole stands and whole in text, mentions in rule text inert; and /help says
where /changes went on Discord."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from bot.app.compose import Composer
from bot.app.digest import digest, played
from bot.app.judge import Judge
from bot.app.renderers import discord_markdown as dm
from bot.app.renderers import text
from glossary.diff import diff
from glossary.loader import load_corpus


def test_a_large_digest_is_paged_within_discords_limits() -> None:
    old = load_corpus().entries
    new = [e for e in old if e.source != "glossary"]  # every glossary entry removed: 53 items
    message = dm.render(digest(diff(old, new)))
    assert len(message.pages) >= 18
    for page in message.pages:
        assert len(page.description) <= dm.DESCRIPTION_LIMIT
        assert dm.embed_size(message.title, page) <= dm.EMBED_TOTAL_LIMIT
    assert message.pages[-1].footer.endswith(f"page {len(message.pages)}/{len(message.pages)}")
    assert message.pages[0].footer.startswith("53 entries removed")


def test_a_long_paragraph_is_clipped_on_discord_and_whole_in_text() -> None:
    old = load_corpus().entries
    target = next(e for e in old if e.id == "glossary:target")
    long = "@everyone " + "targeting " * 600
    new = [replace(e, paragraphs=[long, *e.paragraphs[1:]]) if e is target else e for e in old]
    answer = digest(diff(old, new))
    page = dm.render(answer).pages[0].description
    shown = dm.plain(page)
    assert "Shortened here: the whole text is at L5R Comprehensive Rules — Glossary T › Target, paragraph 1" in shown
    assert "@everyone" not in page  # defused (a zero-width space after the @)
    assert long in text.render(answer)  # the console and `python -m bot diff` print it whole


def test_a_server_playing_no_format_gets_the_other_changes_and_one_line() -> None:
    old = load_corpus().entries
    new = [replace(e, paragraphs=[p.replace("is not targeting", "is never targeting") for p in e.paragraphs])
           for e in old if e.title != "Nanashi Mura"]  # fmt: skip
    found = diff(old, new)
    assert [e.title for e in found.banned_removed] == ["Nanashi Mura"]
    shown, left = played(found, frozenset())
    assert left == ["The Obsidian Hand Ruleset"] and shown.banned_removed == [] and len(shown.entries) == 1
    assert played(found, None) == (found, [])
    words = text.render(digest(found, playing=frozenset()))
    assert "The Obsidian Hand Ruleset also has changes; this server does not play it." in words
    assert "Nanashi Mura" not in words and "is never targeting" in words
    assert "Nanashi Mura" in text.render(digest(found, playing=frozenset({"the-obsidian-hand-ruleset"})))
    only_format = [e for e in old if e.title != "Nanashi Mura"]
    assert played(diff(old, only_format), frozenset())[0].empty  # nothing for it: the poster posts nothing


def test_help_says_changes_is_a_group_on_discord_only() -> None:
    judge = Judge.__new__(Judge)
    judge.engine = SimpleNamespace(corpus=SimpleNamespace(entries=[]))  # type: ignore[assignment]
    judge.composer = Composer(lambda _entry_id: None)
    discord_help = text.render(judge.help("discord"))
    assert "/changes list [since] [until] [source] · /changes subscribe channel · … unsubscribe channel" in discord_help
    assert "digest of what changed" in discord_help
    console_help = text.render(judge.help("console"))
    assert "/changes [since] [until] [source] — Dated rule changes, newest first." in console_help
    assert "subscribe" not in console_help

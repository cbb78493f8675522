"""House rulings in the bot's answers: their own label with judge and date, never "the format's rule";
linked to the entries they apply to; listed in /changes; picked up by a reload; rulebook anchor links.

The engine reads the shipped corpus plus a copy of the sample rulings folder (so one test can edit it).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app.judge import Judge
from bot.app.renderers.discord_markdown import citation_text
from glossary.loader import SHIPPED_SOURCES
from index.engine import Engine
from index.results import Hit
from tests.rendering import plain, to_discord, to_text

EXAMPLES = Path(__file__).resolve().parents[2] / "glossary" / "house_examples"
TERRAIN_RULING = "house:terrain-destroyed-before-battle-resolution"
RULEBOOK = "https://rules.example.org/book"


@pytest.fixture(scope="module")
def house_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("house") / "rulings"
    shutil.copytree(EXAMPLES, folder)
    return folder


@pytest.fixture(scope="module")
def engine(house_dir: Path, index_copy: Callable[..., Path]) -> Engine:
    eng = Engine.open([SHIPPED_SOURCES, house_dir], index_copy("index"))  # embeds only the house rulings
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def judge(engine: Engine) -> Judge:
    return Judge(engine, rulebook_url=RULEBOOK)


def all_text(answer) -> str:
    return to_text(answer)


def test_define_terrain_labels_house_rulings_with_judge_and_date(judge: Judge, engine: Engine) -> None:
    ruling = engine.get(TERRAIN_RULING)
    assert ruling is not None and ruling.judge == "Example Head Judge"  # the premise: the sample loaded
    answer = to_discord(judge.define("terrain"))
    assert answer.title == "Terrain"
    text = plain("\n\n".join(p.description for p in answer.pages))
    heading = "House ruling — Terrain destroyed before battle resolution (Example Head Judge, 2026-11-01):"
    assert heading in text
    assert "House ruling — Mid-battle Terrain and the Obsidian Hand format (Example Event Judge, 2026-11-15):" in text
    assert "House rulings rule" not in text
    # The format's own updates keep the format's label, and come before the house rulings.
    format_heading = (
        "In The Obsidian Hand Ruleset, the latest update about paragraph 2: Update 10/25/2015 (2015-10-25) "
        "(in that format):"
    )
    assert format_heading in text
    assert text.index(format_heading) < text.index(heading) < text.index("L5R Comprehensive Rules text:")
    assert text.count("(in that format)") == 2
    # The ruling's verbatim body follows its heading.
    assert ruling.paragraphs[-1] in text


def test_define_terrain_buttons_name_house_rulings(judge: Judge) -> None:
    labels = {link.entry_id: link.label for page in to_discord(judge.define("terrain")).pages for link in page.links}
    assert labels[TERRAIN_RULING] == "House ruling: Terrain destroyed before battle resolution"
    assert labels["obsidian-hand:update-2015-10-25"] == "Format rule: Update 10/25/2015"
    assert not any(label.startswith("Format rule:") for eid, label in labels.items() if eid.startswith("house:"))


def test_house_ruling_opened_in_full_shows_judge_date_and_applies_to(judge: Judge) -> None:
    answer = to_discord(judge.open(TERRAIN_RULING))
    page = answer.pages[0]
    fields = {f.name: plain(f.value) for f in page.fields}
    assert fields["About"] == "House ruling (Example Head Judge, 2026-11-01)\nApplies to: Terrain"
    assert fields["History"] == "Added 2026-11-01"
    assert fields["Citation"].startswith(
        "EXAMPLE house rulings (sample file, not real rulings) › Terrain destroyed before battle resolution"
    )
    assert f"rulebook <{RULEBOOK}/house.html#{TERRAIN_RULING}>" in fields["Citation"]
    assert answer.url == f"{RULEBOOK}/house.html#{TERRAIN_RULING}"
    # Linked to the entry it applies to.
    assert "glossary:terrain" in [link.entry_id for link in page.links]


def test_ask_labels_a_house_hit_and_a_glossary_hit_it_applies_to(judge: Judge) -> None:
    answer = judge.ask("terrain destroyed before battle resolution")
    text = all_text(answer)
    assert "Terrain destroyed before battle resolution — House ruling (Example Head Judge, 2026-11-01)" in text
    ruling = "Mid-battle Terrain and the Obsidian Hand format (Example Event Judge, 2026-11-15)"
    assert f"House ruling {ruling} applies:" in text


def test_ask_on_an_entry_only_house_rulings_amend_does_not_claim_a_format_rule(judge: Judge, engine: Engine) -> None:
    target = engine.get("glossary:target")
    assert target is not None
    by = {i.split(":")[0] for i in target.overridden_by}
    assert by == {"house"}  # the premise: only the sample ranged-attack ruling amends Target
    answer = judge.composer.ask("target", [Hit(entry=target, score=1.0, paragraph=0)])
    text = all_text(answer)
    assert "1. Target — L5R Comprehensive Rules" in text
    assert "In The Obsidian Hand Ruleset" not in text and "about this" not in text
    assert "House ruling Ranged attacks against a Personality who gains Followers" in text


def test_changes_lists_house_rulings_newest_first(judge: Judge) -> None:
    answer = to_discord(judge.changes(source="house"))
    assert answer.title == "Rule changes — House rulings"
    lines = plain(answer.pages[0].description).split("\n")
    assert lines == [
        "2026-11-15 · Added · House ruling › Mid-battle Terrain and the Obsidian Hand format (Example Event Judge)",
        "2026-11-08 · Added · House ruling › Ranged attacks against a Personality who gains Followers "
        "(Example Head Judge)",
        "2026-11-01 · Added · House ruling › Terrain destroyed before battle resolution (Example Head Judge)",
    ]
    everything = to_discord(judge.changes())
    assert plain(everything.pages[0].description).split("\n")[0] == lines[0]


def test_reload_picks_up_an_edited_ruling(judge: Judge, engine: Engine, house_dir: Path) -> None:
    path = house_dir / "example-rulings.md"
    original = path.read_text(encoding="utf-8")
    added = (
        "\n## Terrain played during a duel\nDate: 2026-11-20\nJudge: Test Judge\nApplies to: Terrain\n\n"
        "A Terrain cannot be played during a duel (test ruling).\n"
    )
    try:
        path.write_text(original + added, encoding="utf-8")
        engine.reload()
        text = all_text(judge.define("terrain"))
        assert "House ruling — Terrain played during a duel (Test Judge, 2026-11-20):" in text
        assert "A Terrain cannot be played during a duel (test ruling)." in text
        assert "2026-11-20 · Added · House ruling › Terrain played during a duel (Test Judge)" in all_text(
            judge.changes(source="house")
        )
    finally:
        path.write_text(original, encoding="utf-8")
        engine.reload()
    assert "Terrain played during a duel" not in all_text(judge.define("terrain"))


def test_long_rulebook_url_never_cuts_a_link_in_half(engine: Engine) -> None:
    long_url = "https://rules.example.org/" + "deep/" * 40 + "book"
    judge = Judge(engine, rulebook_url=long_url)
    ruling = engine.get(TERRAIN_RULING)
    assert ruling is not None
    citation = citation_text(judge.composer.citation(ruling), 400)
    assert len(citation) <= 400
    # A link longer than half the room is dropped whole, never cut; the citation itself stays complete.
    assert "](" not in citation and "rules.example.org" not in citation
    assert "…" not in citation and citation.startswith("EXAMPLE house rulings")
    short = citation_text(Judge(engine, rulebook_url=RULEBOOK).composer.citation(ruling), 400)
    assert short.endswith(f"[rulebook]({RULEBOOK}/house.html#{TERRAIN_RULING})")


def test_house_rulings_and_the_entries_they_amend_render_within_limits(judge: Judge, engine: Engine) -> None:
    from test_bot_render import assert_within_limits

    rulings = [e for e in engine.corpus.entries if e.source == "house"]
    assert len(rulings) == 3
    amended = {target for ruling in rulings for target in ruling.overrides}
    assert amended == {"glossary:terrain", "glossary:ranged-attack", "glossary:target", "glossary:engage"}
    for entry_id in [r.id for r in rulings] + sorted(amended):
        assert_within_limits(to_discord(judge.open(entry_id)))
    assert_within_limits(to_discord(judge.changes(source="house")))
    assert_within_limits(to_discord(judge.ask("terrain destroyed before battle resolution")))


def test_help_mentions_house_rulings_only_when_loaded(judge: Judge) -> None:
    text = all_text(judge.help())
    assert "house rulings are shown with the entries they apply to, labelled House ruling" in text


def test_autocomplete_marks_house_rulings(engine: Engine) -> None:
    from bot.discord_bot.replies import choices

    picked = choices(engine.complete("terrain d", 25))
    names = {c.value: c.name for c in picked}
    assert names[TERRAIN_RULING] == "Terrain destroyed before battle resolution (house ruling)"
    assert names["glossary:terrain"] == "Terrain"
    long_pair = [("x" * 120, "house:" + "x" * 50)]
    assert len(choices(long_pair)[0].name) <= 100

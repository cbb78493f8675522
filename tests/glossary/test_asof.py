"""An entry as the shipped sources stood on a day (glossary.asof), on the seed documents themselves."""

from __future__ import annotations

import pytest

from glossary import asof
from glossary.loader import load_corpus
from glossary.model import Corpus, Entry

OLD_NAVAL = (
    "Engage: Once per battle, target your performing unbowed Naval Personality at the current battlefield: You have "
    "the first opportunity to take a Battle action. This action must come from that Naval Personality’s unit."
)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def updates(corpus: Corpus) -> list[Entry]:
    return [e for e in corpus.entries if e.kind == "update"]


def entry(corpus: Corpus, entry_id: str) -> Entry:
    return corpus.by_id()[entry_id]


def test_an_entry_added_after_the_day_did_not_exist(corpus: Corpus) -> None:
    facing = entry(corpus, "glossary:facing")  # [ADDED February 12 2008] on its only paragraph
    before = asof.on_day(facing, "2008-01-01")
    assert not before.exists and before.added_on == "2008-02-12" and before.paragraphs == []
    assert asof.on_day(facing, "2008-02-12").exists  # in force on the day it was added
    assert before.added_after(None) == "2008-02-12"


def test_a_paragraph_added_later_is_left_out_and_one_changed_later_is_marked(corpus: Corpus) -> None:
    terrain = entry(corpus, "glossary:terrain")
    state = asof.on_day(terrain, "2008-01-01")
    assert state.exists and state.added_later == [(8, "2008-03-24")]
    assert 8 not in [p.index for p in state.paragraphs]
    changed = state.paragraph(2)
    assert changed is not None and [c.date for c in changed.later] == ["2008-05-21"]
    assert changed.earlier_from is None and changed.text == terrain.paragraphs[2]  # earlier wording not kept
    assert state.paragraph(3) is None  # the "[CHANGED 21 May 2008; …]" line itself came with that change
    assert asof.on_day(terrain, "2008-06-01").unchanged


def test_the_update_logs_old_wording_stands_before_its_date(corpus: Corpus, updates: list[Entry]) -> None:
    naval = entry(corpus, "obsidian-hand:ability-naval-invasion")
    before = asof.on_day(naval, "2015-10-26", updates)
    (paragraph,) = before.paragraphs
    assert paragraph.text == OLD_NAVAL
    assert paragraph.earlier_from is not None and paragraph.earlier_from.id == "obsidian-hand:update-2015-10-27"
    after = asof.on_day(naval, "2015-10-27", updates)
    assert after.paragraphs[0].text == naval.paragraphs[0] and after.unchanged
    # the Initial Guidelines state the ability in the same words: they read the Old wording too
    guideline = asof.on_day(entry(corpus, "obsidian-hand:guideline-player-abilities"), "2015-10-20", updates)
    assert any(OLD_NAVAL in p.text and p.earlier_from for p in guideline.paragraphs)


def test_update_records_apply_by_their_date(corpus: Corpus) -> None:
    terrain = entry(corpus, "glossary:terrain")
    rules = [entry(corpus, i) for i in terrain.overridden_by]
    now, later = asof.later_updates(rules, "2015-10-22")
    assert [r.id for r in now] == ["obsidian-hand:update-2015-10-20"]  # the clause is withdrawn
    assert [r.id for r in later] == ["obsidian-hand:update-2015-10-25"]  # one Terrain per battlefield: not yet
    now, later = asof.later_updates(rules, "2015-10-26")
    assert sorted(r.id for r in now) == ["obsidian-hand:update-2015-10-20", "obsidian-hand:update-2015-10-25"]
    assert later == []


def test_bans_by_date(corpus: Corpus) -> None:
    moshi = entry(corpus, "obsidian-hand:banned-moshi-eihime")
    assert asof.came_to_be(moshi) == "2016-02-15"
    assert not asof.in_force(moshi, "2016-01-01") and asof.in_force(moshi, "2016-02-15")
    undated = entry(corpus, "obsidian-hand:banned-hantei")
    assert asof.came_to_be(undated) is None and asof.in_force(undated, "1990-01-01")  # the list gives no date


def test_an_impossible_date_is_read_as_its_probable_date(corpus: Corpus) -> None:
    resolve = entry(corpus, "glossary:resolve")  # item 3. is stamped [CHANGED May 30 3008]
    before = asof.on_day(resolve, "2008-05-01")
    (stamp,) = before.probable
    assert (stamp.date, stamp.probable_date) == ("3008-05-30", "2008-05-30")
    item3 = before.paragraph(4)
    assert item3 is not None and [c.date for c in item3.later] == ["3008-05-30"]
    after = asof.on_day(resolve, "2008-06-01")  # not "changed later" although 3008 is after 2008
    assert after.unchanged and after.probable == [stamp]
    assert not asof.on_day(resolve, "2007-01-01").exists  # [ADDED 22 September 2007] dates the whole entry


def test_dated_changes_are_oldest_first_and_the_state_is_plain_json(corpus: Corpus) -> None:
    terrain = entry(corpus, "glossary:terrain")
    assert [c.date for c in asof.dated_changes(terrain)] == ["2008-03-24", "2008-05-21"]
    data = asof.on_day(terrain, "2008-01-01").to_dict()
    assert data["added_later"] == [{"paragraph": 8, "date": "2008-03-24"}] and data["exists"] is True
    assert data["paragraphs"][2]["later"][0]["date"] == "2008-05-21"

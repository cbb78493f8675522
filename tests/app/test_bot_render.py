"""Rendering: every shipped entry within Discord's limits, pagination, history lines, escaping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.app.answer import Relation, plain_text
from bot.app.commands import DEFINE
from bot.app.compose import ASK_LIMIT, UNSURE_NOTE, UNSURE_QUOTED, Composer, history_line
from bot.app.judge import Judge
from bot.app.renderers import discord_markdown as dm
from bot.app.renderers.discord_markdown import Message, paginate, plain, shorten, split_long
from bot.app.renderers.text import render as to_text
from glossary.model import Change, CrossRef, Entry, Location
from index.engine import Engine
from index.results import UNSURE
from index.text.analysis import fold

QUESTIONS = [
    "is a terrain an enemy card",
    "can I target a face-down card",
    "what happens when targeting fails",
    "is House of the Black Lion banned",
    "naval invasion engage battle action",
    "how many terrains per battlefield",
    "@everyone <@123456789012345678> **bold** `code`",
    "x" * 300,
]


@pytest.fixture(scope="module")
def engine(default_index: Path) -> Engine:
    eng = Engine.open(None, default_index)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def judge(engine: Engine) -> Judge:
    return Judge(engine, rulebook_url="https://rules.example.org/book")


def assert_within_limits(message: Message) -> None:
    assert message.pages, "an answer has at least one page"
    assert len(message.title) <= dm.TITLE_LIMIT
    for page in message.pages:
        assert len(page.description) <= dm.DESCRIPTION_LIMIT
        assert len(page.fields) <= dm.FIELD_COUNT_LIMIT
        for f in page.fields:
            assert 0 < len(f.name) <= dm.FIELD_NAME_LIMIT
            assert 0 < len(f.value) <= dm.FIELD_VALUE_LIMIT
        assert len(page.footer) <= dm.FOOTER_LIMIT
        assert dm.embed_size(message.title, page) <= dm.EMBED_TOTAL_LIMIT
        assert len(page.links) <= dm.MAX_LINKS
        for link in page.links:
            assert 0 < len(link.label) <= dm.BUTTON_LABEL_LIMIT


def test_every_shipped_entry_renders_within_limits(judge: Judge, engine: Engine) -> None:
    entries = engine.corpus.entries
    assert len(entries) > 100  # the shipped corpus, not an empty stand-in
    for entry in entries:
        answer = judge.open(entry.id)
        assert_within_limits(dm.render(answer))
        assert answer.hit_ids[0] == entry.id
        # Verbatim: every paragraph of the entry appears in the console text, in order.
        text = to_text(answer)
        pos = 0
        for para in entry.paragraphs:
            found = text.find(para, pos)
            assert found >= 0, (entry.id, para[:60])
            pos = found + len(para)


def test_every_question_banned_name_and_change_page_within_limits(judge: Judge, engine: Engine) -> None:
    for q in QUESTIONS:
        assert_within_limits(dm.render(judge.ask(q)))
    for entry in engine.corpus.entries:
        if entry.kind == "banned":
            answer = judge.banned(entry.title)
            # a line banning a kind of card ("Cards with the Rank (Kabuto) icon") is not called a card
            label = "Banned kind of card" if {"card", "cards"} & set(fold(entry.title).split()) else "Banned"
            assert answer.title == f"{label}: {entry.title}"  # the neutral answer holds the name as written
            message = dm.render(answer)
            assert_within_limits(message)
            assert message.title == f"{label}: {dm.escape(entry.title)}"
    changes = dm.render(judge.changes())
    assert_within_limits(changes)
    assert len(changes.pages) >= 2  # the shipped history does not fit one page of ten


def test_define_target_shows_text_dates_and_citation(judge: Judge) -> None:
    message = dm.render(judge.define("target"))
    assert message.title == "Target"
    page = message.pages[0]
    assert "The word “target” must appear as a verb or an adjective" in page.description
    fields = {f.name: f.value for f in page.fields}
    assert fields["History"] == (
        "Added 2007-09-20 (paragraph 2) · Added 2007-09-20 (paragraph 3) · Added 2007-09-25 (paragraph 4)"
    )
    assert "Target, lines 11-15 · 000\\_99c7513ab738c7d1.txt" in fields["Citation"]
    assert "[rulebook](https://rules.example.org/book/glossary.html#glossary:target)" in fields["Citation"]
    assert message.url == "https://rules.example.org/book/glossary.html#glossary:target"


def test_obsidian_hand_override_is_shown_first(judge: Judge, engine: Engine) -> None:
    overridden = [e for e in engine.corpus.entries if e.overridden_by]
    assert overridden, "the shipped corpus has format rules overriding glossary entries"
    for entry in overridden:
        answer = judge.open(entry.id)
        rule = judge.composer.overriders(entry)[0]
        assert isinstance(answer.body[0], Relation) and answer.body[0].entry is rule
        assert answer.body[0].kind in ("amends", "updates", "restates", "covers")
        heading = plain_text(answer.body[0].heading)
        assert heading.startswith(("In The Obsidian Hand Ruleset, ", "The Obsidian Hand Ruleset states ",
                                       "The Obsidian Hand Ruleset also has a rule on "))
        assert "(in that format)" in heading
        first = dm.render(answer).pages[0].description
        assert first.startswith(("**In The Obsidian Hand Ruleset, ", "**The Obsidian Hand Ruleset states ",
                                      "**The Obsidian Hand Ruleset also has a rule on "))
        assert first.index(dm.escape(rule.paragraphs[0])[:40]) < first.index("L5R Comprehensive Rules text:")
        assert {link.entry_id for link in dm.render(answer).pages[0].links} >= set(entry.overridden_by)
        text = to_text(answer)
        assert text.index(rule.paragraphs[0]) < text.index("L5R Comprehensive Rules text:")


def test_relation_heading_bold_is_not_nested(judge: Judge, engine: Engine) -> None:
    entry = next(e for e in engine.corpus.entries if e.overridden_by)
    first = dm.render(judge.open(entry.id)).pages[0].description.split("\n")[0]
    label = judge.composer.overriders(entry)[0].label
    # Either the whole heading is bold with the label inside it plain, or only the label is bold: never both.
    assert first.count("**") == 2, first
    assert label in plain(first)


def test_changes_newest_first_with_impossible_date_annotated(judge: Judge) -> None:
    text = to_text(judge.changes(source="glossary"))
    assert "3008-05-30 (as printed; probably 2008-05-30) · Changed · Glossary R › Resolve" in text
    dates = re.findall(r"^(\d{4}-\d{2}-\d{2})(?: \(as printed; probably (\d{4}-\d{2}-\d{2})\))?", text, re.M)
    effective = [probable or printed for printed, probable in dates]
    assert len(effective) > 5
    assert effective == sorted(effective, reverse=True)
    # Discord shows the same rows, the date in bold.
    first = dm.render(judge.changes(source="glossary")).pages[0].description
    assert first.startswith("**") and plain(first).split("\n")[0] == text.split("\n")[2]


def _change(kind: str, date: str | None, note: str | None = None, **kw: object) -> Change:
    return Change(kind=kind, date=date, raw=f"[{kind.upper()} {date}]", note=note, **kw)  # type: ignore[arg-type]


def test_history_line_format() -> None:
    changes = [
        _change("changed", "2008-05-21", "a Terrain's entering play is a rulebook effect"),
        _change("added", "2007-09-20"),
        _change("added", "2007-09-20", paragraph=2),
        _change("changed", "3008-05-30", anomaly="impossible year", probable_date="2008-05-30"),
    ]
    assert history_line(changes) == (
        "Added 2007-09-20 · Changed 2008-05-21: a Terrain's entering play is a rulebook effect"
        " · Changed 3008-05-30 (as printed; probably 2008-05-30)"
    )
    # Given the entry, each change says which paragraph it dates (1-based), or that it dates the whole entry.
    entry = Entry(
        id="glossary:x", source="glossary", document="D", kind="term", title="X", section=["D"],
        paragraphs=["a", "b", "c"], location=Location("f.txt", 1, 4),
    )
    assert history_line(changes, entry) == (
        "Added 2007-09-20 (whole entry) · Added 2007-09-20 (paragraph 3) · Changed 2008-05-21 (whole entry): a "
        "Terrain's entering play is a rulebook effect · Changed 3008-05-30 (as printed; probably 2008-05-30) "
        "(whole entry)"
    )
    # Under one quoted paragraph, its own changes need no label; none of another paragraph's may be passed.
    assert history_line([changes[2]], entry, paragraph=2) == "Added 2007-09-20"


def make_entry(paragraphs: list[str], **kw: object) -> Entry:
    defaults: dict[str, object] = dict(
        id="glossary:test",
        source="glossary",
        document="L5R Comprehensive Rules — Glossary T",
        kind="term",
        title="Test",
        section=["Glossary T"],
        location=Location("000_x.txt", 3, 9),
    )
    defaults.update(kw)
    return Entry(paragraphs=paragraphs, **defaults)  # type: ignore[arg-type]


def test_long_entry_split_at_paragraph_boundaries() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 150 for i in range(40)]  # ~30,000 characters
    entry = make_entry(paragraphs)
    answer = Composer(lambda _i: None).entry(entry)
    message = dm.render(answer)
    assert len(message.pages) >= 8
    assert_within_limits(message)
    for page in message.pages:
        chunks = page.description.split("\n\n")
        assert all(c.startswith("Paragraph ") for c in chunks), "a page starts and ends on whole paragraphs"
    assert message.pages[0].footer.endswith(f"page 1/{len(message.pages)}")
    joined = "\n\n".join(p.description for p in message.pages)
    assert joined == "\n\n".join(paragraphs)
    assert "\n\n".join(paragraphs) in to_text(answer)  # the console is not paged


def test_one_huge_paragraph_is_split_between_words_with_markers() -> None:
    words = [f"w{i}" for i in range(3000)]
    entry = make_entry([" ".join(words)])
    message = dm.render(Composer(lambda _i: None).entry(entry))
    assert len(message.pages) >= 3
    assert_within_limits(message)
    for i, page in enumerate(message.pages):
        d = page.description
        if i < len(message.pages) - 1:
            assert d.endswith("…")
        if i > 0:
            assert d.startswith("…")
    rebuilt = " ".join(p.description.strip("…") for p in message.pages).split()
    assert rebuilt == words  # nothing lost, no word cut


@given(
    st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=700), max_size=20),
    st.integers(min_value=60, max_value=1500),
)
def test_paginate_never_exceeds_limit(blocks: list[str], limit: int) -> None:
    for page in paginate(blocks, limit):
        assert len(page) <= limit


@given(st.text(alphabet="ab \\*_", max_size=400), st.integers(min_value=10, max_value=200))
def test_shorten_marks_every_cut(text: str, limit: int) -> None:
    out = shorten(text, limit)
    assert len(out) <= limit
    assert out == text or out.endswith("…")
    assert not out.endswith("\\…")  # a cut never leaves a dangling escape


def test_split_long_pieces_fit() -> None:
    pieces = split_long("abc " * 1000, 500)
    assert all(len(p) <= 500 for p in pieces)
    assert pieces[0].endswith("…") and pieces[-1].startswith("…")


def test_user_and_rule_text_cannot_mention_or_format(judge: Judge) -> None:
    entry = make_entry(
        ["Ping @everyone and @here and <@123456789012345678> **now** _x_ `y`"],
        see_also=[CrossRef("Look @everyone", "glossary:look")],
    )
    answer = Composer(lambda _i: None).entry(entry)
    d = dm.render(answer).pages[0].description
    assert "@everyone" not in d and "@here" not in d and "<@123456789012345678>" not in d
    assert "\\*\\*now\\*\\*" in d and "\\_x\\_" in d and "\\`y\\`" in d
    # Read back, the page gives the verbatim text (minus the zero-width space that defuses mentions)...
    assert entry.paragraphs[0] in plain(d)
    # ...and the console shows it as written, with nothing to undo.
    assert entry.paragraphs[0] in to_text(answer)
    echoed = dm.render(judge.define("<@&987654321098765432> @everyone zzqqxx"))
    assert "@everyone" not in echoed.title and "<@&987654321098765432>" not in echoed.title
    assert "@everyone" not in dm.render(judge.ask("@everyone rules")).title


def test_unknown_term_offers_candidates_as_buttons(judge: Judge, engine: Engine) -> None:
    answer = judge.define("fo")  # ambiguous: Focus, Follower, For each...
    assert answer.title == "No entry for “fo”"
    ids = [link.entry_id for link in dm.render(answer).pages[0].links]
    assert ids == [c.id for c in engine.define("fo").candidates] and "glossary:follower" in ids
    confident = judge.define("tar")  # Target, with Targeting paradoxes still offered
    assert confident.title == "Target"
    assert ("Or: Targeting paradoxes", "glossary:targeting-paradoxes") in [
        (ln.label, ln.entry_id) for ln in dm.render(confident).pages[0].links
    ]


def test_did_you_mean_rendering() -> None:
    from index.results import DefineResult

    cands = [
        make_entry(["x"], id="glossary:target", title="Target"),
        make_entry(["y"], id="glossary:terrain", title="Terrain"),
    ]
    answer = Composer(lambda _i: None).define("targ", DefineResult(None, cands, "fuzzy"))
    assert answer.title == "No entry for “targ”"
    message = dm.render(answer)
    assert message.pages[0].description == "Did you mean: **Target**, **Terrain**?"
    assert [(ln.label, ln.entry_id) for ln in message.pages[0].links] == [
        ("Target", "glossary:target"),
        ("Terrain", "glossary:terrain"),
    ]
    assert (message.kind, message.arg) == (DEFINE, "targ")
    assert "Did you mean: Target, Terrain?" in to_text(answer)  # the console shows no Markdown


def test_banned_list_within_limits_and_says_so_when_none_is_loaded(judge: Judge) -> None:
    whole = judge.banned(None)
    assert_within_limits(dm.render(whole))
    assert whole.title == "Banned list — The Obsidian Hand Ruleset" and len(whole.hit_ids) == 25
    empty = judge.composer.banned_list([])
    assert empty.title == "Banned list"
    assert "No banned list is loaded." in dm.render(empty).pages[0].description


def test_an_unsure_answer_quotes_its_three_closest_and_names_the_rest(judge: Judge, engine: Engine) -> None:
    """"do proxies count in obsidian hand" (nothing loaded says) quoted eight paragraphs under "none may answer
    it"; it quotes three now, and the others are named, each still a link to open."""
    question = "do proxies count in obsidian hand"
    hits = engine.search(question, limit=ASK_LIMIT)
    assert len(hits) > UNSURE_QUOTED
    answer = judge.ask(question)
    text = to_text(answer)
    assert text.startswith("Rules for: do proxies count") and plain_text(UNSURE_NOTE) in text
    assert text.count("\n> ") == UNSURE_QUOTED  # one quoted paragraph a result, three results
    rest = [f"{k}. {h.entry.label}" for k, h in enumerate(hits, start=1)][UNSURE_QUOTED:]
    assert "Further from the question, not quoted: " + ", ".join(rest) + "." in text
    links = [link.entry_id for item in answer.items for link in item.links]
    assert [h.entry.id for h in hits] == links  # every result can still be opened
    assert_within_limits(dm.render(answer))
    sure = judge.ask("is a terrain an enemy card")
    assert "not quoted" not in to_text(sure)


def test_ask_with_nothing_close_offers_nearest_terms(judge: Judge) -> None:
    answer = judge.ask("how do I bake sourdough bread")
    message = dm.render(answer)
    text = "\n".join(page.description for page in message.pages)
    assert "No rules text answers that question closely" in text and "Nearest terms:" in text
    assert message.pages[0].links  # the nearest terms are buttons
    assert_within_limits(message)


def test_an_answer_says_when_no_rule_stands_out(judge: Judge, engine: Engine) -> None:
    vague = "can I do that now?"  # nothing in it says what "that" is
    hits = engine.search(vague, limit=ASK_LIMIT)
    assert hits and all(h.confidence is not None and h.confidence < UNSURE for h in hits)
    note = f"*{dm.inline(UNSURE_NOTE)}*"  # italic on Discord, /define as code
    assert note.startswith("*No rule stands out") and "`/define`" in note
    assert dm.render(judge.ask(vague)).pages[0].description.startswith(note)
    assert plain_text(UNSURE_NOTE) in to_text(judge.ask(vague))
    clear = "is a terrain an enemy card"
    hits = engine.search(clear, limit=ASK_LIMIT)
    assert hits[0].entry.id == "glossary:terrain" and hits[0].confidence is not None and hits[0].confidence > 0.9
    assert sum(h.confidence or 0 for h in hits) <= 1.0 + 1e-6  # chances over all entries: the shown ones sum <= 1
    assert note not in dm.render(judge.ask(clear)).pages[0].description
    assert plain_text(UNSURE_NOTE) not in to_text(judge.ask(clear))
    assert hits[0].to_dict()["confidence"] == round(hits[0].confidence, 3)


def test_a_question_unlike_every_kept_question_says_no_rule_stands_out(judge: Judge, engine: Engine) -> None:
    """"what is the penalty for a slow player in a tournament": the loaded rules have no penalties, yet the ranking
    gives its best entry a fair chance; no kept players' question is like it, so the answer says it is unsure."""
    odd = "what is the penalty for a slow player in a tournament"
    hits = engine.search(odd, limit=ASK_LIMIT)
    assert hits and max(h.confidence or 0 for h in hits) >= UNSURE  # premise: the chance alone would not say so
    assert all(h.unlike_asked for h in hits) and hits[0].to_dict()["unlike_asked"] is True
    assert plain_text(UNSURE_NOTE) in to_text(judge.ask(odd))  # the plain note: unlike is the first reason
    # a name said alone is answered by the entries of that name, however unlike the kept questions it is
    for named in ("cavalry", "the cavalry keyword"):
        hits = engine.search(named, limit=ASK_LIMIT)
        assert hits and hits[0].entry.title == "Cavalry" and not any(h.unlike_asked for h in hits)
        assert not any(h.like_unanswered for h in hits)
        assert "No rule stands out" not in to_text(judge.ask(named))
    # a name said in passing is not: no loaded rule says what happens when a Cavalry Personality is sent home
    passing = "what happens to a Personality who has Cavalry when he is sent home"
    assert engine.search(passing, limit=ASK_LIMIT)[0].unlike_asked
    assert plain_text(UNSURE_NOTE) in to_text(judge.ask(passing))
    clear = engine.search("is a terrain an enemy card", limit=ASK_LIMIT)
    assert not clear[0].unlike_asked


def test_a_question_like_one_kept_as_not_covered_says_so_and_names_it(judge: Judge, engine: Engine) -> None:
    """The issue's "how many provinces do I start with" was answered with B. Province Strength at full
    confidence. A wording of it that no file holds is like a question kept as not covered
    (index/unanswered.json): the answer says the loaded rules may not cover it, and names that question."""
    asked = "at the start of a game, how many provinces does each player get?"
    hits = engine.search(asked, limit=ASK_LIMIT)
    assert hits[0].confidence is not None and hits[0].confidence >= UNSURE and not hits[0].unlike_asked
    like = hits[0].like_unanswered
    assert like is not None and "provinces" in like.lower()
    text = to_text(judge.ask(asked))
    assert f"The loaded rules may not cover this: a question like it, \u201c{like}\u201d, was checked" in text
    assert plain_text(UNSURE_NOTE) not in text
    description = dm.render(judge.ask(asked)).pages[0].description
    assert description.startswith("*The loaded rules may not cover this") and "`/define`" in description
    # the neighbouring question the rule answers: no note at all
    assert "may not cover" not in to_text(judge.ask("what is the starting strength of my provinces"))


def test_signals_that_each_fall_short_together_say_no_rule_stands_out(judge: Judge, engine: Engine) -> None:
    """Asked at the console as a judge: "do i lose honor when my personality is discarded from my province" (the
    loaded rules do not say) listed eight entries, Honor (Interrupt) first, with no doubt voiced. Its best chance
    (0.42), its closest kept question and its closest not-covered one each stay short of their own limits; weighed
    together (``ranking.doubtful``) they say no rule stands out. A clear question is not touched. Since the model
    was tuned again on the folded questions (2026-11-27, night) that wording's best chance alone is short of
    ``UNSURE`` (it still says no rule stands out); a rewording of it is the case of the three signals."""
    console = "do i lose honor when my personality is discarded from my province"
    assert dm.render(judge.ask(console)).pages[0].description.startswith("*No rule stands out")
    asked = "do I lose honor if my personality gets discarded from a province"
    hits = engine.search(asked, limit=ASK_LIMIT)
    assert hits and max(h.confidence or 0 for h in hits) >= UNSURE  # premise: no signal alone says so
    assert not hits[0].unlike_asked and hits[0].like_unanswered is None
    assert hits[0].doubt and hits[0].to_dict()["doubt"] is True
    assert plain_text(UNSURE_NOTE) in to_text(judge.ask(asked))
    assert dm.render(judge.ask(asked)).pages[0].description.startswith("*No rule stands out")
    for clear in ("is a terrain an enemy card", "max hand size", "can i use two tactical actions with the same guy"):
        hits = engine.search(clear, limit=ASK_LIMIT)
        assert not hits[0].doubt, clear
        assert "No rule stands out" not in to_text(judge.ask(clear)), clear

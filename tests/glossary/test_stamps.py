"""Change-stamp parsing: every stamp form seen on the rules wiki, anomalies, and robustness."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glossary.model import Change
from glossary.stamps import StampMatch, UnparsedStamp, date_problem, parse_stamps, strip_stamps

TODAY = datetime.date(2026, 1, 1)


def one(text: str) -> StampMatch:
    stamps, unparsed = parse_stamps(text, today=TODAY)
    assert unparsed == []
    assert len(stamps) == 1, stamps
    return stamps[0]


@pytest.mark.parametrize(
    ("text", "kind", "date", "note"),
    [
        ("[ADDED Sept 20 2007]", "added", "2007-09-20", None),
        ("[CHANGED 21 May 2008; reason text]", "changed", "2008-05-21", "reason text"),
        ("[CLARIFIED, 8 July 2008]", "clarified", "2008-07-08", None),
        ("[CLARIFICATION March 23 2008]", "clarified", "2008-03-23", None),
        ("[ADDED Jul 17 07]", "added", "2007-07-17", None),
        ("[ADDED 24 Sept 2007]", "added", "2007-09-24", None),
        ("[ADDED 22 September 2007]", "added", "2007-09-22", None),
        ("[Ability UPDATED 28 June 2008]", "updated", "2008-06-28", "Ability"),
        ("[ADDED material on X, March 30 2008]", "added", "2008-03-30", "material on X"),
        ("[Added 4 Oct 2009]", "added", "2009-10-04", None),
        ("[REMOVED February 2, 2009]", "removed", "2009-02-02", None),
        ("[removed 2 Feb 2009]", "removed", "2009-02-02", None),
        ("[ADDED Sept. 20, 2007]", "added", "2007-09-20", None),
        ("[ADDED December 1st 2007]", "added", "2007-12-01", None),
        ("[UPDATED Jan 5 2008]", "updated", "2008-01-05", None),
    ],
)
def test_stamp_forms(text: str, kind: str, date: str, note: str | None) -> None:
    stamp = one(f"Some rule text. {text}")
    assert (stamp.kind, stamp.date, stamp.note, stamp.raw) == (kind, date, note, text)
    assert stamp.anomaly is None and stamp.probable_date is None
    assert (stamp.start, stamp.end) == (len("Some rule text. "), len("Some rule text. ") + len(text))


def test_brace_closer_is_parsed_and_flagged() -> None:
    stamp = one("A change to targeting. [ADDED Sept 25 2007}")
    assert (stamp.kind, stamp.date, stamp.raw) == ("added", "2007-09-25", "[ADDED Sept 25 2007}")
    assert [kind for kind, _ in stamp.anomalies] == ["unbalanced-bracket"]
    assert "unbalanced bracket" in (stamp.anomaly or "")


def test_unclosed_bracket_at_end_is_parsed_and_flagged() -> None:
    stamp = one("Text [ADDED May 3 2008")
    assert stamp.date == "2008-05-03"
    assert stamp.anomalies[0][0] == "unbalanced-bracket" and "never closed" in stamp.anomalies[0][1]


def test_impossible_year_keeps_written_date_and_gives_probable() -> None:
    stamp = one("3. A duel begins to resolve... [CHANGED May 30 3008]")
    assert (stamp.kind, stamp.date, stamp.probable_date) == ("changed", "3008-05-30", "2008-05-30")
    assert stamp.anomalies == [
        ("impossible-date", "impossible date 3008-05-30 (in the future); probably 2008-05-30")
    ]


def test_future_date_relative_to_today_is_an_anomaly() -> None:
    stamps, _ = parse_stamps("[ADDED March 3 2025]", today=datetime.date(2024, 6, 1))
    assert stamps[0].date == "2025-03-03"
    assert stamps[0].anomalies[0][0] == "impossible-date"
    stamps, _ = parse_stamps("[ADDED March 3 2025]", today=datetime.date(2025, 6, 1))
    assert stamps[0].anomalies == []


def test_default_today_is_the_real_date() -> None:
    next_year = datetime.date.today().year + 1
    stamps, _ = parse_stamps(f"[ADDED March 3 {next_year}]")
    assert stamps[0].anomalies and stamps[0].anomalies[0][0] == "impossible-date"


def test_ambiguous_correction_gives_no_probable_date() -> None:
    # 2099 -> 2009 or 2019 (one digit each): no evident intended date.
    stamp = one("[ADDED Jul 17 2099]")
    assert stamp.date == "2099-07-17" and stamp.probable_date is None and stamp.anomaly


def test_date_before_the_game_existed_is_impossible() -> None:
    stamp = one("[ADDED Jul 17 1007]")
    assert (stamp.date, stamp.probable_date) == ("1007-07-17", "2007-07-17")
    assert stamp.anomaly == "impossible date 1007-07-17 (before 1995); probably 2007-07-17"


@pytest.mark.parametrize(
    ("date", "expected"),
    [
        ((2008, 5, 30), (None, None)),
        ((3008, 5, 30), ("in the future", "2008-05-30")),
        ((1008, 5, 30), ("before 1995", "2008-05-30")),
        ((2008, 2, 30), ("no such day", None)),
        ((2099, 7, 17), ("in the future", None)),  # 2009 or 2019: no evident intended year
    ],
)
def test_date_problem(date: tuple[int, int, int], expected: tuple[str | None, str | None]) -> None:
    assert date_problem(*date, TODAY) == expected


def test_nonexistent_day_is_impossible_but_kept() -> None:
    stamp = one("[ADDED Feb 30 2008]")
    assert stamp.date == "2008-02-30"
    assert stamp.anomalies == [("impossible-date", "impossible date 2008-02-30: no such day")]


def test_two_stamps_in_one_bracket() -> None:
    stamps, unparsed = parse_stamps("Text. [ADDED Oct 17 2007, CLARIFIED June 3 2008]", today=TODAY)
    assert unparsed == []
    assert [(s.kind, s.date, s.note) for s in stamps] == [
        ("added", "2007-10-17", None),
        ("clarified", "2008-06-03", None),
    ]
    assert {s.raw for s in stamps} == {"[ADDED Oct 17 2007, CLARIFIED June 3 2008]"}


def test_reason_between_two_stamps_belongs_to_the_first() -> None:
    stamps, _ = parse_stamps("[CHANGED 1 May 2008; wording, CLARIFIED 3 June 2008; example]", today=TODAY)
    assert [(s.kind, s.date, s.note) for s in stamps] == [
        ("changed", "2008-05-01", "wording"),
        ("clarified", "2008-06-03", "example"),
    ]


def test_date_inside_a_reason_is_not_a_second_stamp() -> None:
    stamp = one("[CHANGED 21 May 2008; replaces the March 3 2008 ruling]")
    assert (stamp.date, stamp.note) == ("2008-05-21", "replaces the March 3 2008 ruling")


def test_two_dates_joined_by_and_share_the_verb() -> None:
    stamps, _ = parse_stamps("[ADDED Oct 1 2007 and Nov 3 2007]", today=TODAY)
    assert [(s.kind, s.date) for s in stamps] == [("added", "2007-10-01"), ("added", "2007-11-03")]


def test_several_brackets_in_one_paragraph_in_order() -> None:
    stamps, _ = parse_stamps("A [ADDED Sept 20 2007] b [CHANGED 21 May 2008]", today=TODAY)
    assert [s.date for s in stamps] == ["2007-09-20", "2008-05-21"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[ADDED Sept 2007]", "no date in day/month/year form"),
        ("[CHANGED]", "no date in day/month/year form"),
        ("[Sept 20 2007]", "no change verb (ADDED, CHANGED, CLARIFIED, UPDATED, REMOVED) before the date"),
        ("[ADDED Sept 20 207]", "no date in day/month/year form"),
    ],
)
def test_unparsed_stamps_are_reported(text: str, reason: str) -> None:
    stamps, unparsed = parse_stamps(f"Rule text {text} more.", today=TODAY)
    assert stamps == []
    assert unparsed == [UnparsedStamp(raw=text, start=len("Rule text "), reason=reason)]


@pytest.mark.parametrize(
    "text",
    [
        'References to an action\'s "effects [plural] resolving".',
        '"Even if [a card being targeted, or a performing card] is [not at the current battlefield]"',
        'The wording "return [card] to [game area]".',
        "A [changed] stat is still a stat.",
        "No brackets at all, added on May 3 2008.",
    ],
)
def test_ordinary_brackets_are_not_stamps(text: str) -> None:
    assert parse_stamps(text, today=TODAY) == ([], [])
    assert strip_stamps(text) == text


def test_strip_stamps_leaves_text() -> None:
    assert strip_stamps("Text. [ADDED Sept 20 2007]") == "Text. "
    assert strip_stamps("[CLARIFICATION March 23 2008]") == ""
    assert strip_stamps("[ADDED Sept 25 2007}") == ""


def test_to_change() -> None:
    stamp = one("[CHANGED May 30 3008]")
    assert stamp.to_change(paragraph=3, line=43) == Change(
        kind="changed",
        date="3008-05-30",
        raw="[CHANGED May 30 3008]",
        note=None,
        paragraph=3,
        line=43,
        anomaly="impossible date 3008-05-30 (in the future); probably 2008-05-30",
        probable_date="2008-05-30",
    )


_pieces = st.sampled_from(
    [
        "[",
        "]",
        "}",
        "{",
        "ADDED",
        "Added",
        "CHANGED",
        "CLARIFICATION",
        "May",
        "Sept.",
        "30",
        "3008",
        "07",
        ",",
        ";",
        " ",
        "and",
        "1st",
        "February",
        "\n",
        "٣",
        "Ⅻ",
        "[ADDED Sept 20 2007]",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_pieces, st.text(max_size=8)), max_size=30).map("".join))
def test_parse_stamps_never_raises(text: str) -> None:
    stamps, unparsed = parse_stamps(text, today=TODAY)
    for stamp in stamps:
        assert stamp.raw == text[stamp.start : stamp.end]
        assert stamp.kind in {"added", "changed", "clarified", "updated", "removed"}
        assert stamp.date is None or len(stamp.date.split("-")) == 3
    for bad in unparsed:
        assert text[bad.start :].startswith(bad.raw)
    # every stamp-like bracket is either read or reported, and exactly those are stripped
    brackets = {(s.start, s.raw) for s in stamps} | {(b.start, b.raw) for b in unparsed}
    assert len(strip_stamps(text)) == len(text) - sum(len(raw) for _, raw in brackets)

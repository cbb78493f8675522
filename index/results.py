"""Result types returned by the search engine: the contract between ``index`` and ``bot``.

They carry whole ``Entry`` objects (so the bot can render verbatim text and citations)
plus what the query found in them. ``to_dict`` gives the documented ``--json`` form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glossary.kinds import SOURCE_LABELS
from glossary.model import Change, Entry, citation, line_span

__all__ = ["citation", "line_span"]  # the model's citation facts, as the index's callers have always found them


# Version of the ``--json`` row format. 2: ``snippet`` (Discord Markdown) became ``quote`` (the paragraph
# verbatim) plus ``spans`` (offsets of the question's words in it).
JSON_FORMAT = 2


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping or touching spans merged: what a renderer can mark without nesting."""
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


# Below this chance for every hit, no rule stands out and an answer says so. The best entry of the eval and
# held-out questions scores 0.4 or more for all but one of 293 (that one was wrong); vague questions ("my guy
# got bowed, can he still go into battle?") 0.25-0.35.
UNSURE = 0.4


@dataclass
class Passage:
    """Another paragraph of a hit's entry quoted with it: the rule an *Example* paragraph illustrates, or
    the example (exception) of a quoted rule; with its own word and sentence spans, as on ``Hit``."""

    paragraph: int
    spans: list[tuple[int, int]] = field(default_factory=list)
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Hit:
    """One ranked entry: the paragraph that answers, highlighted, and that paragraph's change stamps."""

    entry: Entry
    score: float
    # Where the question's words stand in the quoted paragraph: ``(start, end)`` character offsets into
    # ``quote`` (sorted, never overlapping). Format-neutral: each front end marks them its own way.
    spans: list[tuple[int, int]] = field(default_factory=list)
    paragraph: int | None = None  # index into entry.paragraphs of the quoted paragraph
    changes: list[Change] = field(default_factory=list)  # stamps dating that paragraph or the whole entry
    # the fitted ranking's chance that this entry answers (its softmax over all entries); None: not ranked so
    # (a server ruling, a lookup); below ``UNSURE`` for every hit when no rule stands out
    confidence: float | None = None
    # the question is unlike every kept players' question (``ranking.unlike_asked``): no rule stands out, however
    # high ``confidence`` is (the same for every hit of one question)
    unlike_asked: bool = False
    # the question kept as not covered by the sources that this question is more like than any answered one
    # (``ranking.like_unanswered``): no rule stands out, and the answer says which question it resembles
    like_unanswered: str | None = None
    # the chance, the closest kept question and the closest not-covered one, weighed together, say no rule stands
    # out though none of them alone does (``ranking.doubtful``)
    doubt: bool = False
    # found by the words of its text, not by its name or number (a section lookup that named nothing)
    by_text: bool = False
    # The sentence(s) of ``quote`` that answer (at most two; none when it is one sentence or none stands
    # out): ``(start, end)`` offsets into ``quote``, like ``spans``; a renderer marks them.
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)
    # The paragraph quoted with this one (its rule, or its example), before or after it in source order.
    companion: Passage | None = None

    @property
    def quote(self) -> str:
        """The quoted paragraph, verbatim ("" for a bare heading)."""
        e = self.entry
        if self.paragraph is not None and 0 <= self.paragraph < len(e.paragraphs):
            return e.paragraphs[self.paragraph]
        return ""

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "format": JSON_FORMAT,
            "id": e.id,
            "title": e.title,
            "source": e.source,
            "source_label": SOURCE_LABELS.get(e.source, e.source),
            "kind": e.kind,
            "section": list(e.section),
            "text": e.text,
            "quote": self.quote,
            "spans": [list(s) for s in self.spans],
            "sentence_spans": [list(s) for s in self.sentence_spans],
            "companion": None if self.companion is None else {
                "paragraph": self.companion.paragraph,
                "quote": self.entry.paragraphs[self.companion.paragraph],
                "spans": [list(s) for s in self.companion.spans],
                "sentence_spans": [list(s) for s in self.companion.sentence_spans],
                "citation": citation(e, self.companion.paragraph),
                "changes": [c.__dict__.copy() for c in e.paragraph_changes(self.companion.paragraph)],
            },
            "paragraph": self.paragraph,
            # Only the stamps dating the snippet (or the whole entry): others would misdate what is shown.
            "changes": [c.__dict__.copy() for c in self.changes],
            "citation": citation(e, self.paragraph),
            "url": e.url,
            "score": round(self.score, 4),
            "confidence": round(self.confidence, 3) if self.confidence is not None else None,
            "unlike_asked": self.unlike_asked,
            "like_unanswered": self.like_unanswered,
            "doubt": self.doubt,
        }


@dataclass
class DefineResult:
    """``define``: the entry when confident, else candidates for "did you mean"."""

    entry: Entry | None
    candidates: list[Entry] = field(default_factory=list)
    how: str = "none"  # "exact", "alias", "prefix", "fuzzy", "fulltext", "none"
    # Every entry whose title is exactly what was asked ("Ninjitsu": the Open, Reaction and Battle abilities),
    # when there are several: the answer is all of them, each told apart by its label.
    same_name: list[Entry] = field(default_factory=list)


@dataclass
class BannedResult:
    """``banned``: the matching banned-list record, or the nearest banned names."""

    query: str
    record: Entry | None
    banned_on: str | None = None  # ISO date from the update log, when known
    near: list[Entry] = field(default_factory=list)
    # "partial" when what was typed is a unique part of the record's name ("Gozoku" -> Gozoku Sensei);
    # "version" when it is the title of which the record bans one version ("Isawa Tadaka" -> "Isawa Tadaka,
    # Seven Thunder (Experienced 2CW)"): that version is banned, the card typed may be another version;
    # "other-version" when an experience level was typed and the closest banned name has none ("moshi eihime
    # exp" -> "Moshi Eihime"): no record matches, that name is the first of ``near``; "initials" when what was typed
    # is the record's initials ("HHoL" -> The High House of Light).
    how: str = "exact"
    # Several banned cards whose names contain what was typed ("Koan" -> both of Koan's cards): all banned.
    matches: list[Entry] = field(default_factory=list)
    # Lines of the list that ban a kind of card, not one title ("Unreleased Cards/Promos"): a card the list
    # does not name may still be one of those, so a "not on the list" answer names them.
    kinds: list[Entry] = field(default_factory=list)
    # The record names one version of a title (a subtitle, an experience level): other versions are not on
    # the list, whichever way the card was typed ("tadaka" as much as "Isawa Tadaka").
    one_version: bool = False
    # The record bans a kind of card ("Cards with the Rank (Kabuto) icon"), not a card of that name.
    kind_of_card: bool = False

    @property
    def is_banned(self) -> bool:
        """True when what was typed names a banned card (or several): never "not banned" while one matches."""
        return (self.record is not None and self.how != "version") or bool(self.matches)


@dataclass
class ChangeRecord:
    """One row of the change history: a stamp or update-log record, linked to its entry."""

    change: Change
    entry: Entry

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "title": self.entry.title,
            "source": self.entry.source,
            "section": list(self.entry.section),
            "citation": citation(self.entry, self.change.paragraph),
            **{k: v for k, v in self.change.__dict__.items()},
        }

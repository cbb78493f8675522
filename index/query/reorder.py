"""Results put in another order for what the rule texts themselves say, after the ranking has scored them.

The ranking (``index.query.ranking``) scores how well each entry matches a question; two things it cannot see are
settled here from the texts: of two copies of a rule the document states twice, the one that says more leads
(``fuller_first``), and a "... can I still ...?" question is answered by the rule on the condition it sets up
(``condition_first``). Both only reorder rows that the ranking already kept; neither adds nor drops one.
"""

from __future__ import annotations

import re

from glossary.model import Entry
from index.build.state import State
from index.text import analysis

# "<a condition> ... can I still <do something>?": the condition the question sets up, before "can I still"
STILL = re.compile(
    r"\b(?:can|could|may|do|does|did|is|are|will|would)\s+(?:i|he|she|it|they|we|you|my\s+\w+)?\s*still\b",
    re.IGNORECASE,
)
# a paragraph that forbids something
FORBIDS = re.compile(
    r"\b(?:may not|cannot|can not|can't|must not|does not|do not|is not|are not|never|no longer)\b", re.IGNORECASE
)


def condition_words(question: str) -> set[str]:
    """The stemmed words of the condition a "... can I still ...?" question sets up (empty for other questions)."""
    found = STILL.search(question)
    return set(analysis.terms(question[: found.start()])) if found else set()


def condition_first(st: State, condition: set[str], rows: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The rows, with the rule about the condition a "... can I still ...?" question sets up (``condition``: its
    words, ``condition_words``) put first, when that rule forbids something. "I have a Wind in play, can I still
    discard the Imperial Favor to send an attacking unit home?" describes *Favor Battle* in the words after
    "still", so that ranks first; what answers is the condition's rule, *Winds*: "While you have a Wind in play,
    you may not take rulebook Favor actions". A row moves up only when every word of its entry's title is said
    before "still", the first row's title is not, and the paragraph it quotes forbids something (``FORBIDS``).
    Over the 1,386 labelled answerable questions and judge items of 2026-11-28 it moved three, all this Winds
    case and all to the labelled line."""
    if not condition or len(rows) < 2:
        return rows

    def named(n: int) -> bool:
        title = set(analysis.terms(st.corpus.entries[n].title))
        return bool(title) and title <= condition

    if named(rows[0][0]):
        return rows
    for k, (n, p, _score) in enumerate(rows[1:], start=1):
        paragraphs = st.corpus.entries[n].paragraphs
        if named(n) and 0 <= p < len(paragraphs) and FORBIDS.search(paragraphs[p]):
            return [rows[k], *rows[:k], *rows[k + 1 :]]
    return rows


def fuller_first(st: State, rows: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The rows, with the fuller copy of a rule its document states twice put first when both copies are among
    them. The Obsidian Hand states Seppuku's protection twice: the abilities section's "these effects cannot be
    negated, delayed, or redirected." and the guidelines' same words with "; unless the action explicitly
    interacts with Seppuku." A judge quoting the shorter copy rules that nothing can negate it; the fuller one
    holds every word of the shorter and the exception besides. The shorter copy is still shown, second."""
    if len(rows) < 2:
        return rows
    n, p, _score = rows[0]
    entry = st.corpus.entries[n]
    for restatement in entry.restated:  # ``Restatement.fuller``: the other copy adds to this line
        if p not in restatement.paragraphs or restatement.paragraphs.index(p) not in restatement.fuller:
            continue
        other_n = st.order.get(restatement.entry)
        if other_n is None:
            continue
        other_p = restatement.other_paragraphs[restatement.paragraphs.index(p)]
        for k, (m, _q, score) in enumerate(rows[1:], start=1):
            if m == other_n:
                return [(m, other_p, score), *rows[1:k], rows[0], *rows[k + 1 :]]
    return rows


def forbidding(st: State, entry: Entry, paragraph: int, condition: frozenset[str]) -> list[tuple[int, int]]:
    """The sentence of a quoted paragraph that forbids something and names the question's condition ("While you
    have a Wind in play, you may not take rulebook Favor actions"), as spans; [] when none does or the
    paragraph is one sentence (it needs no mark)."""
    rows = st.sentence_rows.get((entry.id, paragraph))
    if rows is None or not condition:
        return []
    text = entry.paragraphs[paragraph]
    for a, b in rows[1]:
        said = text[a:b]
        if FORBIDS.search(said) and condition & set(analysis.terms(said)):
            return [(a, b)]
    return []

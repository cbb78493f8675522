"""Hit building: ranked rows -> ``Hit`` values at the answering paragraph, with the offsets of the
question's words in it (format-neutral spans; a renderer marks them).

The ranking itself (words and meaning, per paragraph) is in ``index.query.ranking``; the question's
analysis in ``index.query.parsing``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from glossary.model import Entry, introduces_list, is_list_item, parent_item
from index.build.state import State
from index.query import ranking, reorder, sentences
from index.query.ranking import Evidence
from index.results import Hit, Passage, merge_spans


def search(st: State, question: str, limit: int = 5, source: str | None = None, since: str | None = None) -> list[Hit]:
    """Rank entries for a natural-language question, each at its answering paragraph (see ``index.query.ranking``).

    Only answers close to the best one are returned (possibly fewer than ``limit``); nothing when nothing
    is close. Bad filters raise ValueError; odd text never raises.
    """
    return search_with_evidence(st, question, limit, source, since)[0]


def search_with_evidence(
    st: State, question: str, limit: int = 5, source: str | None = None, since: str | None = None
) -> tuple[list[Hit], Evidence | None]:
    """``search``, and the evidence behind it (its question vector and paragraph cosines place server rulings,
    ``index.query.overlay``, without embedding the question again)."""
    limit = max(1, min(int(limit), 100))
    rows, ev, _close = ranking.ranked(st, question or "", limit, source, since)
    terms = ev.terms if ev is not None else {}
    entries = st.corpus.entries
    chance = ev.chance if ev is not None else None
    unlike = ev is not None and ranking.unlike_asked(ev)
    like = ranking.like_unanswered(st, ev) if ev is not None else None
    doubt = ev is not None and ranking.doubtful(ev)
    hits = []
    for k, (n, p, score) in enumerate(rows):
        also = ranking.runner_up(st, ev, n, p) if ev is not None and k == 0 else None
        # a stamp alone on its line answers nothing: the paragraph it dates is quoted, under that date
        p = entries[n].rule_paragraph(p) if p >= 0 else p
        also = entries[n].rule_paragraph(also) if also is not None else None
        also = None if also == p else also
        # a question that only names the entry, or asks what it is, is answered by its whole opening paragraph: no
        # sentence of it is closer in meaning than the name itself, so the words decide (usually: none stands out)
        named = ev is None or ev.names_only or ev.defines == n
        hit = make_hit(st, entries[n], score, terms, paragraph=p, also=also, query=None if named else ev.query)
        if ev is not None and k == 0 and n == ev.condition and hit.paragraph is not None:
            # first for the condition the question sets: the sentence that forbids is the one that answers
            forbids = reorder.forbidding(st, entries[n], hit.paragraph, ev.condition_words)
            hit.sentence_spans = forbids or hit.sentence_spans
        if chance is not None and ev is not None and (n in ev.dated or n in ev.answers_when or n in ev.in_months):
            # named by its date ("the 10/20/2015 update") or month ("the Dec 2015 update"), or the change a "when was
            # X changed" question asks the date of: a lookup, as sure as a title said
            hit.confidence = 1.0
        elif chance is not None:
            hit.confidence = float(chance[n])
            hit.unlike_asked = unlike
            hit.like_unanswered = like
            hit.doubt = doubt
        hits.append(hit)
    return hits, ev


def make_hit(
    st: State,
    entry: Entry,
    score: float,
    weights: dict[str, float],
    paragraph: int | None = None,
    also: int | None = None,
    query: np.ndarray | None = None,
) -> Hit:
    """The hit at ``paragraph`` (else the paragraph with the most idf-weighted query terms), query words bold;
    with the rule or example that goes with it, else with paragraph ``also`` (``ranking.runner_up``). The
    sentence(s) that answer are pointed at by ``query`` (the question's vector) where given, else by words."""
    if not entry.paragraphs:
        return Hit(entry, score, [], None, list(entry.changes))
    numbered: Iterable[tuple[int, Tokens]]
    if paragraph is not None and 0 <= paragraph < len(entry.paragraphs):
        numbered = [(paragraph, st.paragraph_tokens_at(entry, paragraph))]  # only the quoted one is analysed
    else:
        numbered = enumerate(st.paragraph_tokens(entry))
    weight = {t: st.idf.get(t, 1.0) * w for t, w in weights.items()}
    best, _score, spans = choose(numbered, weight)
    hit = Hit(entry, score, spans, best, entry.paragraph_changes(best))
    toks = st.paragraph_tokens_at(entry, best)
    hit.sentence_spans = pointed_at(st, entry, best, toks, weight, query)
    # one companion a hit: a paragraph too close to call (``also``) says more than a list's lead-in
    other = companion(entry.paragraphs, best, lambda k: _weighs(st.paragraph_tokens_at(entry, k), weight),
                      lists=also is None)
    if other is None and also is not None and also != best and 0 <= also < len(entry.paragraphs):
        otoks = st.paragraph_tokens_at(entry, also)
        pointed = pointed_at(st, entry, also, otoks, weight, query)
        hit.companion = Passage(also, merge_spans([(a, b) for t, a, b in otoks if t in weight]), pointed)
    elif other is not None:
        otoks = st.paragraph_tokens_at(entry, other)
        # the rule before an example is context (its words matched or not): only an example that followed the
        # chosen rule for its own words points at its sentence
        pointed = pointed_at(st, entry, other, otoks, weight, query) if other > best else []
        hit.companion = Passage(other, merge_spans([(a, b) for t, a, b in otoks if t in weight]), pointed)
    return hit


def pointed_at(
    st: State, entry: Entry, paragraph: int, tokens: Tokens, weight: Mapping[str, float], query: np.ndarray | None
) -> list[tuple[int, int]]:
    """The sentence(s) of one quoted paragraph that answer: the closest in meaning to the question when the
    build has its sentences' vectors (``sentences.closest``), else those with the most question words
    (``sentences.answering``: no model, or a paragraph of one sentence)."""
    text = entry.paragraphs[paragraph]
    rows = st.sentence_rows.get((entry.id, paragraph))
    if rows is None or st.sentence_vectors is None or query is None:
        return sentences.answering(text, tokens, weight)
    start, spans = rows
    cosines = st.sentence_vectors[start : start + len(spans)] @ query
    return sentences.closest(text, spans, cosines, tokens=tokens, weight=weight)


# A paragraph that illustrates or qualifies the rule paragraph just before it in the same entry.
# "Note that …" qualifies it too (Tactical: "Note that … this can only give one Force bonus to each Tactician per
# turn" under "Tactical Battle: Any number of times per turn …", which read alone says the opposite), and
# "Likewise, …" extends it (Experienced: "Likewise, more than three Experienced cards with the same title may be
# included ..." reads as the whole rule only under "Even if they are Unique, Experienced cards with the same title
# but different experience levels may be included in the same deck.").
ILLUSTRATES = re.compile(
    r"\s*\(?(?:examples?\b|for (?:example|instance)\b|exceptions?\b|however,|note that\b|likewise,|similarly,)",
    re.IGNORECASE,
)


def companion(
    paragraphs: list[str], chosen: int, matches: Callable[[int], bool], lists: bool = True
) -> int | None:
    """The paragraph to quote with ``chosen``: the rule it illustrates when it is an example (exception)
    paragraph, since an example read alone misleads; else its example when that follows it and also holds
    question words (``matches``); else, for an item nested in a list, the item it is a sub-point of
    (``parent_item``); else, with ``lists``, for a list item, the sentence that introduces the list
    (``lead_in``). ``None`` when none of these."""
    if ILLUSTRATES.match(paragraphs[chosen]):
        if chosen > 0 and not ILLUSTRATES.match(paragraphs[chosen - 1]):
            return chosen - 1
        return None
    after = chosen + 1
    if after < len(paragraphs) and ILLUSTRATES.match(paragraphs[after]) and matches(after):
        return after
    parent = parent_item(paragraphs, chosen)  # a sub-point is read under its point, whatever is close
    if parent is not None:
        return parent
    return lead_in(paragraphs, chosen) if lists else None


def lead_in(paragraphs: list[str], chosen: int) -> int | None:
    """For a list item, the paragraph that introduces its list: the nearest one before it that is not an item,
    when it ends with a colon. "– Hare Clan: Shiro Usagi" alone says nothing; under "The following Keywords are
    considered Clan Alignments only if their respective Stronghold is in play:" it is the ruling. A long item
    is a rule of its own, but still the rest of a sentence: "- A Personality's destruction for having 0 Chi comes
    from ..." is one of the exceptions that "There are three exceptions:" ends the rule with, and "- A simultaneous
    Ranged Attack will not destroy a Follower in time ..." is a consequence of the default the paragraph above it
    states ("If not specified, they are simultaneous"). ``None`` for a paragraph that is not an item, or a list
    with no such lead-in."""
    if not is_list_item(paragraphs[chosen]):
        return None
    k = chosen - 1
    while k >= 0 and is_list_item(paragraphs[k]):
        k -= 1
    if k < 0 or not introduces_list(paragraphs, k):
        return None
    # "These cards are:" only points back: the paragraph before it says which cards, and why they are listed
    # ("However, some cards share a name despite being separate cards. ..."), so that one is quoted with the item
    if POINTER.match(paragraphs[k]) and k > 0 and not is_list_item(paragraphs[k - 1]):
        return k - 1
    return k


# A lead-in that only points back to the paragraph before it: "These cards are:", "This consists of:".
POINTER = re.compile(r"\s*(?:this|these|those|they)\b(?:\s+\S+){0,2}\s*:\s*$", re.IGNORECASE)


def _weighs(tokens: Tokens, weight: Mapping[str, float]) -> bool:
    return any(t in weight for t, _a, _b in tokens)


Tokens = list[tuple[str, int, int]]  # (stemmed term, start, end) of a paragraph, in order


def choose(
    numbered: Iterable[tuple[int, Tokens]], weight: Mapping[str, float]
) -> tuple[int, float, list[tuple[int, int]]]:
    """The paragraph whose distinct query terms weigh most (the first on a tie), that weight, and where the
    query terms stand in it: how every hit picks and marks its paragraph, the shared index's and a scope's
    own rulings' alike (``index.query.overlay``)."""
    best, best_score, best_spans = 0, -1.0, []
    for n, toks in numbered:
        spans = [(a, b) for t, a, b in toks if t in weight]
        s = sum(weight[t] for t in {t for t, _a, _b in toks if t in weight})
        if s > best_score + 1e-9:
            best, best_score, best_spans = n, s, spans
    return best, best_score, merge_spans(best_spans)

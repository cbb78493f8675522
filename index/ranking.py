"""Hybrid ranking: word and meaning evidence fused per paragraph, then grouped by entry, then cut off.

The answer to a ruling question is a paragraph, so every paragraph gets a word score
(its own BM25, plus its entry's title, section and whole-text matches as context) and a
meaning score (cosine between the question's and the paragraph's embeddings). Each is
scaled to the question's best, and the two are mixed; an entry scores as its best
paragraph, which becomes the snippet. Results stop where scores fall well below the best
answer, and when nothing comes close the caller is told so instead of being handed noise.

Players' words the rules do not use ("castle", "archers") are bridged by a small thesaurus
(``index.thesaurus``, written blind): its rule words are added as evidence of their own,
weighted by ``Weights.expand``. Within an entry, the paragraph quoted is the best one once the
entry's own title words are left out: every paragraph of "Ranged Attack" says "ranged attack",
so those words chose the entry and say nothing about which of its paragraphs answers.

The weights in ``Weights`` were chosen by k-fold cross-validation over the questions in
``benchmarks/eval_questions.json`` (``python -m index eval`` re-runs it and prints the
held-out figures); they are not tuned to any single question.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from index import analysis, expansion, fulltext, lexical
from index.analysis import STOPS
from index.state import State

TOP_UNITS = 600  # paragraphs considered for grouping (the best entry needs only its best paragraph in here)


@dataclass(frozen=True)
class Weights:
    """How the evidence is mixed. ``semantic`` 0 ranks by words only, 1 by meaning only."""

    semantic: float = 0.4
    meaning_entry: float = 1.0  # the entry's best paragraph meaning, added to each of its paragraphs' meaning
    body: float = 2.0  # the whole entry's BM25, added to each of its paragraphs
    title: float = 3.0  # share-of-title match, weighted by word rarity
    section: float = 0.0  # question words in the entry's section path
    exact: float = 0.5  # a whole title or alias said inside the question
    expand: float = 1.5  # the thesaurus' rule words (``index.thesaurus``), relative to the player's own words
    cutoff: float = 0.7  # keep entries scoring at least this fraction of the best one
    floor: float = 0.3  # best cosine below this, with few question words found: nothing is close


DEFAULT = Weights()


@dataclass
class Evidence:
    """Everything one question yields before mixing (kept apart so evaluation can re-mix it cheaply)."""

    terms: dict[str, float]  # weighted stemmed query terms (for highlighting)
    n_content: int  # distinct content words in the question
    lexical: np.ndarray  # per paragraph: paragraph BM25 (context added in ``fuse``)
    lexical_own: np.ndarray  # per paragraph: the part of ``lexical`` from its own entry's title/alias words
    body: np.ndarray  # per entry
    title: np.ndarray  # per entry
    section: np.ndarray  # per entry
    exact: np.ndarray  # per entry: 1 when the question contains its whole title or alias
    matched: int  # distinct query terms found in the index
    known: int  # query words found in the index as typed, or mapped to index words by the thesaurus (no typos)
    semantic: np.ndarray | None  # per paragraph cosine; None without a model
    allowed: np.ndarray | None  # per entry: passes the source/date filters (None: no filter)
    expanded: lexical.Components | None = None  # the thesaurus' rule words that the question does not use itself


def evidence(
    st: State, question: str, source: str | None = None, since: str | None = None, semantic: bool = True
) -> Evidence | None:
    """Word and meaning evidence for a question (``semantic=False``: words only); None when it has neither."""
    allowed = _filter(st, source, since)
    terms, raw_words = fulltext.query_terms(st, question or "")
    content = {w for w in raw_words if w not in STOPS}
    if not terms and not content:
        return None
    lex = st.lex
    assert lex is not None
    comps = lex.score(terms)
    phrases, recognised = expansion.expand(question or "")
    extra = {t: 1.0 for p in phrases for t in analysis.terms(p) if t not in terms}
    expanded = lex.score(extra) if extra else None
    known = sum(1 for weight in terms.values() if weight >= 1.0)
    if expanded is not None and expanded.matched:
        known += recognised  # "teacher" is a players' word for a rule word, not a typo: it counts as known
    exact = np.zeros(lex.n_entries, dtype=np.float32)
    for n in _exact_titles(st, raw_words):
        exact[n] = 1.0
    cosines = None
    if semantic and st.embedder is not None and st.vectors is not None and content:
        asked = fulltext.DOCUMENT_NAMES.sub(" ", question[: fulltext.MAX_QUERY_CHARS])  # where to look is not what
        q = st.embedder.embed_query(" ".join(asked.split()) or " ".join(question.split()))
        cosines = st.vectors @ q
    if not comps.matched and cosines is None and not (expanded is not None and expanded.matched):
        return None
    return Evidence(
        terms,
        len(content),
        comps.para,
        comps.para_own if comps.para_own is not None else np.zeros_like(comps.para),
        comps.body,
        comps.title,
        comps.section,
        exact,
        comps.matched,
        known,
        cosines,
        allowed,
        expanded,
    )


def _exact_titles(st: State, raw_words: list[str]) -> set[int]:
    """Entries whose whole title or alias is said in the question ("is a terrain an enemy card")."""
    found: set[int] = set()
    for n in range(1, 5):
        for i in range(len(raw_words) - n + 1):
            span = raw_words[i : i + n]
            if span[0] in STOPS or span[-1] in STOPS:
                continue
            for key in (" ".join(span), "".join(span)):
                for eid in st.exact.get(key, {}):
                    found.add(st.order[eid])
    return found


def _filter(st: State, source: str | None, since: str | None) -> np.ndarray | None:
    if not source and not since:
        return None
    mask = np.ones(len(st.ids), dtype=bool)
    if source:
        mask &= st.entry_source == fulltext.check_source(source)
    if since:
        # An entry passes when any of its dates is on or after ``since``: its latest date is.
        mask &= st.entry_latest >= fulltext.check_date(since, "since")
    return mask


def fuse(st: State, ev: Evidence, w: Weights = DEFAULT) -> np.ndarray:
    """Per-paragraph fused score in [0, 1] (filtered-out paragraphs get -1)."""
    return fuse_and_choose(st, ev, w)[0]


def fuse_and_choose(st: State, ev: Evidence, w: Weights = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    """The fused score per paragraph, and the score that chooses among one entry's paragraphs.

    The second is the first without the paragraph's matches on its own entry's title words (see the
    module docstring); it only ever compares paragraphs of the same entry.
    """
    lex = st.lex
    assert lex is not None
    ue = lex.unit_entry
    words = ev.lexical + (w.body * ev.body + w.title * ev.title + w.section * ev.section + w.exact * ev.exact)[ue]
    own = ev.lexical_own
    x = ev.expanded
    if x is not None and w.expand:
        words = words + w.expand * (x.para + (w.body * x.body + w.title * x.title + w.section * x.section)[ue])
        if x.para_own is not None:
            own = own + w.expand * x.para_own
    if ev.allowed is not None:
        keep = ev.allowed[ue]
        words = np.where(keep, words, 0.0)
        own = np.where(keep, own, 0.0)
    top = float(words.max()) if len(words) else 0.0
    if top > 0:
        words, own = words / top, own / top
    if ev.semantic is None or w.semantic <= 0:
        fused = words
    else:
        sem = ev.semantic if ev.allowed is None else np.where(ev.allowed[ue], ev.semantic, -1.0)
        best = float(sem.max())
        base = float(np.median(sem))
        meaning = np.clip((sem - base) / (best - base), 0.0, None) if best > base else np.zeros_like(sem)
        if w.meaning_entry:
            meaning = (meaning + w.meaning_entry * np.maximum.reduceat(meaning, lex.entry_starts)[ue]) / (
                1 + w.meaning_entry
            )
        fused = w.semantic * meaning + (1 - w.semantic) * words
        own = (1 - w.semantic) * own
    if ev.allowed is not None:
        fused = np.where(ev.allowed[ue], fused, -1.0)
    return fused.astype(np.float32), (fused - own).astype(np.float32)


def group(
    st: State, fused: np.ndarray, limit: int, choose: np.ndarray | None = None
) -> list[tuple[int, int, float]]:
    """(entry index, paragraph index or -1, score) for the best entries, each at its answering paragraph.

    Entries rank by their best paragraph's ``fused`` score; the paragraph shown is the one with the best
    ``choose`` score within the entry (``fuse_and_choose``), or the best fused one when it is None.
    """
    lex = st.lex
    assert lex is not None
    n = len(fused)
    if n == 0:
        return []
    k = min(n, max(TOP_UNITS, limit * 8))
    cand = np.argpartition(-fused, k - 1)[:k] if k < n else np.arange(n)
    cand = cand[np.argsort(-fused[cand], kind="stable")]
    out: list[tuple[int, int, float]] = []
    seen: set[int] = set()
    for u in cand.tolist():
        score = float(fused[u])
        if score <= 0:
            break
        e = int(lex.unit_entry[u])
        if e in seen:
            continue
        seen.add(e)
        if choose is not None:
            start = int(lex.entry_starts[e])
            end = int(lex.entry_starts[e + 1]) if e + 1 < len(lex.entry_starts) else n
            u = start + int(np.argmax(choose[start:end]))
        out.append((e, int(lex.unit_para[u]), score))
        if len(out) >= limit:
            break
    return out


def is_close(ev: Evidence, w: Weights = DEFAULT) -> bool:
    """Whether anything answers the question closely enough to show.

    With a model: the best paragraph's cosine reaches ``floor``, the question names an entry outright, or at
    least half its content words are rule words as typed (a typo-corrected word is no evidence here:
    "weather" is one letter from "water"; the model reads only a long paste's start). Without a model:
    any question word is found.
    """
    if ev.semantic is None:
        return ev.matched > 0
    best = float(ev.semantic.max()) if len(ev.semantic) else 0.0
    return best >= w.floor or bool(ev.exact.any()) or (ev.known > 0 and 2 * ev.known >= ev.n_content)


def ranked(
    st: State, question: str, limit: int, source: str | None = None, since: str | None = None, w: Weights = DEFAULT
) -> tuple[list[tuple[int, int, float]], Evidence | None, bool]:
    """The cut-off ranking, the evidence behind it, and whether anything was close enough to show."""
    ev = evidence(st, question, source, since)
    if ev is None:
        return [], None, False
    fused, choose = fuse_and_choose(st, ev, w)
    rows = group(st, fused, limit, choose)
    if not rows:
        return [], ev, False
    if not is_close(ev, w):
        return [], ev, False
    best = rows[0][2]
    # Close to the best answer, or named outright in the question ("ninjitsu" lists every Ninjitsu entry).
    return [r for r in rows if r[2] >= w.cutoff * best or ev.exact[r[0]] > 0], ev, True

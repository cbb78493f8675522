"""Free-text questions: our own tokens -> a Whoosh query -> hits with the answering paragraph in bold.

No user text ever reaches a query parser: the question is analysed with the index's own
tokenizer, unknown words are corrected against the index vocabulary, and the query is
built from term objects, so "OR OR (" or "title:x" are just words.
"""

from __future__ import annotations

import re
from datetime import date

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein
from whoosh import query as wq

from glossary.model import SOURCE_LABELS, Entry
from index.analysis import STOPS, WORDS, stem
from index.markdown import escape_markdown
from index.results import Hit
from index.state import FIELD_BOOSTS, State

OR_SCALE = 0.9  # coordination bonus, as qparser.OrGroup.factory(0.9) would build
SMALL_INDEX = 1000  # below this many documents, per-term unions beat Whoosh's preloaded arrays
MAX_QUERY_CHARS = 20000  # only the start of a huge paste is even tokenized
MAX_QUERY_WORDS = 48  # a 5,000-character paste is cut to its first words, not searched whole
MAX_WORD = 40  # longer "words" are noise (base64, URLs), never rule vocabulary
EXACT_BOOST = 4.0  # a whole title said inside the question
PAIR_BOOST = 0.8  # two words that are one indexed word when joined ("face down" -> "facedown")
FUZZY_WEIGHT = 0.7  # a typo-corrected word counts for less than one typed right
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def md_escape(text: str) -> str:
    """Escape Markdown so rule text shows literally on Discord (a "* Seppuku" bullet stays a star, a masked
    link ``[text](url)`` stays text): the bot's own escaping, one linear pass."""
    return escape_markdown(text)


def check_date(value: str, name: str) -> str:
    """A YYYY, YYYY-MM or YYYY-MM-DD that is a real calendar date, else ValueError with a readable message."""
    v = (value or "").strip()
    ok = bool(_DATE.match(v))
    if ok:  # the shape is right; is it a real calendar date ("2015-13" and "2015-02-30" are not)?
        parts = [int(x) for x in v.split("-")]
        try:
            date(parts[0], *(parts[1:] + [1] * (3 - len(parts))))
        except ValueError:
            ok = False
    if not ok:
        raise ValueError(f"{name} must be a date like 2008-03-16 (or 2008-03, 2008), not {value!r}")
    return v


def check_source(source: str) -> str:
    if source not in SOURCE_LABELS:
        raise ValueError(f"unknown source {source!r} (use one of: {', '.join(SOURCE_LABELS)})")
    return source


def query_terms(st: State, text: str) -> tuple[dict[str, float], list[str]]:
    """Stemmed terms with weights (typos corrected against the words field) and the raw words in order."""
    raw_words: list[str] = []
    distinct: dict[str, None] = {}
    for tok in WORDS(text[:MAX_QUERY_CHARS]):
        if len(tok.text) >= MAX_WORD:
            continue
        raw_words.append(tok.text)
        if tok.text not in STOPS:
            distinct.setdefault(tok.text, None)
        if len(distinct) >= MAX_QUERY_WORDS:
            break
    raw_words = raw_words[: MAX_QUERY_WORDS * 4]
    weights: dict[str, float] = {}

    def add(term: str, weight: float) -> None:
        weights[term] = max(weights.get(term, 0.0), weight)

    content = list(distinct)
    for w in content:
        s = stem(w)
        if s in st.vocab:
            add(s, 1.0)
        elif w.isalpha() and len(w) >= 4 and w not in st.words_set:
            for c in _correct(st, w):
                if (cs := stem(c)) in st.vocab:
                    add(cs, FUZZY_WEIGHT)
    for a, b in zip(content, content[1:], strict=False):
        if (joined := stem(a + b)) in st.vocab:
            add(joined, PAIR_BOOST)
    return weights, raw_words


def _correct(st: State, word: str) -> list[str]:
    """Nearest vocabulary words by edit distance (1 for short words, 2 for long), or a split in two."""
    maxdist = 1 if len(word) <= 5 else 2
    found = process.extract(word, st.words, scorer=Levenshtein.distance, score_cutoff=maxdist, limit=5)
    if found:
        best = min(d for _w, d, _i in found)
        return [w for w, d, _i in found if d == best and w[0] == word[0]][:3]
    for i in range(2, len(word) - 1):
        if word[:i] in st.words_set and word[i:] in st.words_set:
            return [word[:i], word[i:]]
    return []


def _build_query(st: State, weights: dict[str, float], raw_words: list[str]) -> wq.Query | None:
    subs: list[wq.Query] = []
    for term, w in weights.items():
        per_field = wq.Or([wq.Term(f, term, boost=b * w) for f, b in FIELD_BOOSTS.items()])
        if len(st.ids) < SMALL_INDEX:
            # Whoosh preloads each Or into doc-count-sized arrays on indexes under 5,000 documents;
            # on the shipped corpus a plain union of four term matchers is 2-3x faster (measured).
            per_field.matcher_type = wq.Or.DEFAULT_MATCHER
        subs.append(per_field)
    # Whole titles said inside a question ("is a terrain an enemy card") count as strong evidence.
    spans: set[str] = set()
    for n in range(1, 5):
        for i in range(len(raw_words) - n + 1):
            span = raw_words[i : i + n]
            if span[0] in STOPS or span[-1] in STOPS:
                continue
            spans.add(" ".join(span))
            spans.add("".join(span))
    subs += [wq.Term("exact", span, boost=EXACT_BOOST) for span in spans if span in st.exact]
    return wq.Or(subs, scale=OR_SCALE) if subs else None


def _filter(source: str | None, since: str | None) -> wq.Query | None:
    parts: list[wq.Query] = []
    if source:
        parts.append(wq.Term("source", check_source(source)))
    if since:
        parts.append(wq.TermRange("dates", check_date(since, "since"), None))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)


def search(st: State, question: str, limit: int = 5, source: str | None = None, since: str | None = None) -> list[Hit]:
    """Rank all entries for a natural-language question; bad filters raise ValueError, odd text never raises."""
    limit = max(1, min(int(limit), 100))
    filt = _filter(source, since)
    weights, raw_words = query_terms(st, question or "")
    q = _build_query(st, weights, raw_words)
    if q is None:
        return []
    with st.lock:
        # optimize=False: block-quality skipping costs more than it saves on an index this size
        results = st.searcher.search(q, limit=limit, filter=filt, optimize=False)
        rows = [(hit.docnum, hit.score) for hit in results]
    entries = ((st.by_id.get(st.ids[docnum]), score) for docnum, score in rows)
    return [make_hit(st, entry, score, weights) for entry, score in entries if entry is not None]


def make_hit(st: State, entry: Entry, score: float, weights: dict[str, float]) -> Hit:
    """Pick the paragraph that best answers (idf-weighted query terms), bold the query words."""
    if not entry.paragraphs:
        return Hit(entry, score, "", None, list(entry.changes))
    best, best_score, best_spans = 0, -1.0, []
    for n, toks in enumerate(st.paragraph_tokens(entry)):
        spans = [(a, b) for t, a, b in toks if t in weights]
        matched = {t for t, _a, _b in toks if t in weights}
        s = sum(st.idf.get(t, 1.0) * weights[t] for t in matched)
        if s > best_score + 1e-9:
            best, best_score, best_spans = n, s, spans
    snippet = highlight(entry.paragraphs[best], best_spans)
    changes = [c for c in entry.changes if c.paragraph is None or c.paragraph == best]
    return Hit(entry, score, snippet, best, changes)


def highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """Wrap spans in **bold** (merged when they overlap); Markdown in the rule text itself is escaped."""
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos = [], 0
    for s, e in merged:
        out.append(md_escape(text[pos:s]))
        out.append(f"**{md_escape(text[s:e])}**")
        pos = e
    out.append(md_escape(text[pos:]))
    return "".join(out)

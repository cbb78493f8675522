"""Name lookups over the in-memory tables: define, autocomplete, and ruleset sections.

A judge types a name, not a question, so these match folded titles and aliases first
(exact, prefix, stemmed, typo-tolerant) and fall back to full text only when no name fits.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler

from glossary.model import Entry
from index.build.state import CODE, KIND_PRIORITY, ROMAN, SECTION_KINDS, Completer, State
from index.query import parsing, passages
from index.results import DefineResult, Hit
from index.text.analysis import STOPS, fold, stem

MAX_KEY = 200  # characters of a name that are looked at
FUZZY_COMPLETE_CUTOFF = 80  # rapidfuzz ratio for "one typo away" suggestions


def _rank_key(st: State, i: str, how: dict[str, int]) -> tuple[int, int, float, int]:
    return (KIND_PRIORITY.get(st.by_id[i].kind, 9), how.get(i, 0), -st.importance.get(i, 0), st.order[i])


def _rank(st: State, ids: Iterable[str], how: dict[str, int] | None = None) -> list[str]:
    """Definitions before mentions, titles before aliases, then the more widely referenced, then corpus order."""
    how = how or {}
    return sorted(dict.fromkeys(ids), key=lambda i: _rank_key(st, i, how))


def _confident(
    st: State, ranked: list[str], how: str, limit: int, how_rank: dict[str, int] | None = None
) -> DefineResult:
    """One clear winner -> entry; a tie between equally good candidates -> None + candidates."""
    how_rank = how_rank or {}
    entries = [st.by_id[i] for i in ranked]
    if len(entries) == 1:
        return DefineResult(entries[0], [], how)
    ka = _rank_key(st, entries[0].id, how_rank)
    kb = _rank_key(st, entries[1].id, how_rank)
    tie = ka[:2] == kb[:2] and (
        how in ("exact", "alias") or st.importance.get(entries[0].id, 0) < 2 * st.importance.get(entries[1].id, 0)
    )
    if tie:
        return DefineResult(None, entries[:limit], how)
    return DefineResult(entries[0], entries[1:limit], how)


def define(st: State, term: str, limit: int = 5) -> DefineResult:
    """Exact title/alias, then prefix, then plural/typo tolerant, then full text; see ``_lookup``.

    When no single entry wins and the leading candidates share one title ("enlightned": both Enlightened
    abilities), they are all the answer (``same_name``), each told apart by its label.
    """
    result = _lookup(st, term, limit)
    if result.entry is None and not result.same_name and len(result.candidates) > 1:
        title = fold(result.candidates[0].title)
        alike = [c for c in result.candidates if fold(c.title) == title]
        if len(alike) > 1:
            result.same_name = alike
    return result


def _lookup(st: State, term: str, limit: int = 5) -> DefineResult:
    """Exact title/alias, then prefix, then plural/typo tolerant, then full text."""
    key = fold(term or "")[:MAX_KEY]
    if not key:
        return DefineResult(None, [], "none")
    how_rank = st.exact.get(key) or st.exact.get(key.replace(" ", ""))
    if how_rank:
        ranked = _rank(st, how_rank, how_rank)
        result = _confident(st, ranked, "exact" if how_rank[ranked[0]] == 0 else "alias", limit, how_rank)
        titled = [i for i in ranked if how_rank[i] == 0]
        if len(titled) > 1:  # "Ninjitsu": three abilities by that very name; a judge needs to see them all
            result.same_name = [st.by_id[i] for i in titled]
        return result
    found: list[str] = []
    if len(key) >= 2:
        i = bisect.bisect_left(st.name_keys, key)
        while i < len(st.name_keys) and st.name_keys[i].startswith(key) and len(found) < 200:
            found.extend(st.name_ids[i])
            i += 1
    # A title typed with an ending is that title ("targeting" is Target, before Targeting paradoxes, which
    # the prefix finds): those entries lead, the prefix's follow as "did you mean". Only a title the typed
    # word extends counts ("face" stays Face-down/Face-up, not Facing, though the stems agree).
    stem_key = " ".join(stem(w) for w in key.split())
    extended = [i for i in st.stemmed.get(stem_key, []) if key.startswith(fold(st.by_id[i].title))]
    if extended:
        ranked = _rank(st, extended)
        return _confident(st, ranked + [i for i in _rank(st, found) if i not in ranked], "fuzzy", limit)
    if found:
        return _confident(st, _rank(st, found), "prefix", limit)
    if stem_key in st.stemmed:
        return _confident(st, _rank(st, st.stemmed[stem_key]), "fuzzy", limit)
    # A typo of an inflection ("targting"): each unknown word corrected against the index's words, then
    # the stems compared again.
    corrected = " ".join(w if w in st.words_set else next(iter(parsing.correct(st, w)), w) for w in key.split())
    corrected_stem = " ".join(stem(w) for w in corrected.split())
    if corrected != key and corrected_stem in st.stemmed:
        return _confident(st, _rank(st, st.stemmed[corrected_stem]), "fuzzy", limit)
    fuzzy = _fuzzy_names(st, key, limit)
    if fuzzy:
        return fuzzy
    found = passages.search(st, term, limit=limit)
    if not found:
        return DefineResult(None, [], "none")
    if len(found) == 1 or found[0].score >= 1.5 * found[1].score:
        return DefineResult(found[0].entry, [h.entry for h in found[1:]], "fulltext")
    return DefineResult(None, [h.entry for h in found], "fulltext")


def _fuzzy_names(st: State, key: str, limit: int) -> DefineResult | None:
    """Typo-tolerant name match: edit similarity, with Jaro-Winkler for dropped/swapped letters."""
    if len(key) < 3:
        return None
    names = st.name_keys
    pool = {idx for _n, _s, idx in process.extract(key, names, scorer=fuzz.ratio, limit=12, score_cutoff=65)}
    pool |= {
        idx for _n, _s, idx in process.extract(key, names, scorer=JaroWinkler.similarity, limit=12, score_cutoff=0.85)
    }
    if not pool:
        return None
    scored = sorted(
        (
            (
                max(fuzz.ratio(key, names[i]), 100 * JaroWinkler.similarity(key, names[i]) - 5),
                fuzz.WRatio(key, names[i]),
                i,
            )
            for i in pool
        ),
        key=lambda x: (-x[0], -x[1]),
    )
    # Every word typed must be near some word of the name: "cannot rise" is one letter-run away from
    # "cannot fall" but names the opposite rule.
    scored = [row for row in scored if _words_agree(key, names[row[2]])]
    if not scored:
        return None
    best = scored[0]
    if best[0] < 70:
        return None
    ids: list[str] = []
    for sim, _w, idx in scored:
        if sim >= 75 or idx == best[2]:
            ids.extend(_rank(st, st.name_ids[idx]))
    ids = list(dict.fromkeys(ids))
    top = _rank(st, st.name_ids[best[2]])
    runner_up = next((r for r, _w, idx in scored[1:] if set(st.name_ids[idx]) - set(top)), 0)
    clear = len(top) == 1 or _rank_key(st, top[0], {})[0] < _rank_key(st, top[1], {})[0]
    if best[0] >= 80 and best[0] - runner_up >= 4 and clear:
        return DefineResult(st.by_id[top[0]], [st.by_id[i] for i in ids if i != top[0]][:limit], "fuzzy")
    return DefineResult(None, [st.by_id[i] for i in ids][:limit], "fuzzy")


WORD_CUTOFF = 75  # rapidfuzz ratio for one typed word against one word of a name


def _words_agree(key: str, name: str) -> bool:
    """Each content word of ``key`` is close to (or a prefix of) some word of ``name``."""
    name_words = name.split()
    for word in key.split():
        if word in STOPS:
            continue
        if not any(w.startswith(word) or fuzz.ratio(word, w) >= WORD_CUTOFF for w in name_words):
            return False
    return True


def complete(c: Completer, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
    """(shown name, id) for a typed prefix: name starts, then word starts, then names one typo away."""
    key = fold(prefix or "")[:100]
    limit = max(1, min(int(limit), 25))
    if not key:
        return [(c.display[i], i) for i in c.default[:limit]]
    lo = bisect.bisect_left(c.keys, (key,))
    found: list[tuple[int, int, int, str]] = []
    i = lo
    while i < len(c.keys) and c.keys[i][0].startswith(key) and len(found) < 400:
        k, rank, order, eid = c.keys[i]
        found.append((rank, len(k), order, eid))
        i += 1
    found.sort()
    out: dict[str, None] = {}
    for _r, _l, _o, eid in found:
        out.setdefault(eid, None)
        if len(out) >= limit:
            break
    if len(out) < limit and len(key) >= 4:
        # A judge typing "targt" still deserves suggestions: names whose start (or whole) is one typo away.
        # One batch call per form (rapidfuzz's cdist, in C) instead of a Python loop over every name.
        n = len(key) + 1
        eids, full = c.folded_ids, c.folded_names
        starts = process.cdist([key], [name[:n] for name in full], scorer=fuzz.ratio, dtype=np.uint8)[0]
        whole = process.cdist([key], full, scorer=fuzz.ratio, dtype=np.uint8)[0]
        best = np.maximum(starts, whole)
        scored = [
            (-int(best[i]), len(full[i]), eids[i])
            for i in np.flatnonzero(best >= FUZZY_COMPLETE_CUTOFF).tolist()
            if eids[i] not in out
        ]
        for _s, _l, eid in sorted(scored)[: limit - len(out)]:
            out.setdefault(eid, None)
    return [(c.display[i], i) for i in out]


def section(st: State, ref: str, limit: int = 5) -> list[Hit]:
    """A ruleset section by number ("II.F", "Cardinal Rule 2") or name ("deck construction")."""
    key = fold(ref or "")[:MAX_KEY]
    if not key:
        return []
    ranked = st.section_keys.get(key, []) + st.section_keys.get(key.replace(" ", ""), [])
    ranked += _numbered_and_named(st, ref)
    # word-boundary prefixes: "cardinal rule 2" -> "cardinal rule 2 cards vs cards"
    for s in st.sections:
        if s.key.startswith(key + " "):
            ranked += s.ids
    ref_stems = {stem(w) for w in key.split() if w not in STOPS}
    if ref_stems:
        # every word of the ref in the key, tightest keys first
        covering = sorted((s for s in st.sections if ref_stems <= s.stems), key=lambda s: len(s.stems))
        for s in covering:
            ranked += s.ids
    ranked = list(dict.fromkeys(ranked))
    if not ranked and re.search(r"\d", key):
        return []  # "Cardinal Rule 5" that does not exist: say so (``family``), never show another number's text
    if not ranked:
        code = _section_code(ref)
        if CODE.match(code):
            # A section number that names no section: its sub-sections ("II" -> II.A ... II.F), else nothing,
            # rather than whatever merely mentions the numeral.
            ranked = [
                e.id
                for e in st.corpus.entries
                if e.kind in SECTION_KINDS
                and any(a.upper() == code or a.upper().startswith(code + ".") for a in e.aliases)
            ]
            if not ranked:
                return []
    if ranked:
        # A heading is answered by its contents: the matched section's sub-sections follow it.
        head = st.by_id[ranked[0]]
        path = head.section if head.section and head.section[-1] == head.title else [*head.section, head.title]
        children = [
            e.id
            for e in st.corpus.entries
            if e.id != head.id and len(e.section) > len(path) - 1 and e.section[: len(path)] == path
        ]
        ranked = list(dict.fromkeys([ranked[0], *children, *ranked[1:]]))
    weights, _raw = parsing.query_terms(st, ref)
    hits = [passages.make_hit(st, st.by_id[i], 100.0 - n, weights) for n, i in enumerate(ranked[:limit])]
    numbered = bool(ranked) and (CODE.match(_section_code(ref)) is not None or re.search(r"\d", key) is not None)
    # a section asked by number is answered by it and what is under it; one found by its name, by it and the other
    # sections of that name ("/rule dishonor" no longer adds "Also: Performing, This" for the word in their text);
    # only a name no section has is answered by the words of the text, and says so
    if not hits and not numbered:
        seen = {h.entry.id for h in hits}
        extra = [h for h in passages.search(st, ref, limit=limit * 3) if h.entry.id not in seen]
        extra.sort(key=lambda h: 0 if h.entry.kind in SECTION_KINDS else 1)
        for h in extra:
            h.by_text = True  # the answer must say no section has that name
        hits += extra[: limit - len(hits)]
    return hits


_PRINTED_HEADING = re.compile(r"^\s*([IVXLC]+)\s*\.\s*[^–—-]*[–—-]\s*([A-Z])\s*[.)]\s+(.+)$", re.IGNORECASE)
_CODE_THEN_NAME = re.compile(r"^\s*(?:section\s+)?([IVXLC]+\s*\.\s*[A-Z]|[IVXLC]+)\b[\s.:–—-]+(.+)$", re.IGNORECASE)


def _numbered_and_named(st: State, ref: str) -> list[str]:
    """The section a reference gives both the number and the name of ("II.C Maximum Hand Size", "II. F - Deck
    Constructions", or as printed, "II. THE PLAYER – B. Family Honor"; a part's own printed heading, "II. THE
    PLAYER", is the sections under it, as "II" is): the section of that number whose name holds the words given. A
    number and a name that disagree name nothing here (the number alone is answered by the other rules)."""
    part = fold(ref or "")
    numeral = re.match(r"\s*([IVXLC]+)\b", ref or "", re.IGNORECASE)
    if numeral and any(e.section and fold(e.section[0]) == part for e in st.corpus.entries):
        code = numeral[1].upper()  # the part's own heading: what its number names
        return [e.id for e in st.corpus.entries if e.kind in SECTION_KINDS
                and any(a.upper() == code or a.upper().startswith(code + ".") for a in e.aliases)]
    printed = _PRINTED_HEADING.match(ref or "")
    m = _CODE_THEN_NAME.match(ref or "")
    if printed:  # "II. THE PLAYER – B. Family Honor", the heading as the ruleset prints it
        code, name = f"{printed[1]}.{printed[2]}".upper(), printed[3]
    elif m:
        code, name = re.sub(r"\s+", "", m[1]).upper(), m[2]
    else:
        return []
    words = {stem(w) for w in fold(name).split() if w not in STOPS}
    if not words:
        return []
    return [
        s_id
        for section in st.sections
        if words <= section.stems
        for s_id in section.ids
        if any(a.upper() == code for a in st.by_id[s_id].aliases)
    ]


def _section_code(ref: str) -> str:
    """A reference as a section number would be written: "section ii . f" -> "II.F"."""
    return re.sub(r"\s+", "", ref.strip().upper().removeprefix("SECTION").strip())


_CARDINAL_REF = re.compile(r"^(?:cardinal\s+rules?|rules?)\b")


def family(st: State, ref: str) -> list[tuple[str, Entry]]:
    """What a section reference that matched nothing could have meant, for "no such section" answers: every
    cardinal rule for "Cardinal Rule 5", every numbered part for "II.Z" or "IV"; nothing for other names.
    Each comes with the name autocomplete shows for it ("II.A Clan Alignment")."""
    key = fold(ref or "")[:MAX_KEY]
    code = _section_code(ref or "")
    if _CARDINAL_REF.match(key):
        found = [e for e in st.corpus.entries if e.kind == "cardinal-rule"]
    elif CODE.match(code):
        found = [
            e
            for e in st.corpus.entries
            if e.kind == "section"
            and len(e.section) <= 2  # numbered parts ("I.", "II.A"), not lettered sub-headings below them
            and (any("." in a and CODE.match(a.upper()) for a in e.aliases) or ROMAN.match(e.title))
        ]
    else:
        found = []
    return [(st.section_names.display.get(e.id, e.title), e) for e in found]


def children(st: State, entry_id: str) -> list[Entry]:
    """Entries under an entry's heading (sub-headings and their own sub-headings), in document order.

    A heading with no text of its own ("I. CARDINAL RULES") is answered by these, never by an empty quote.
    """
    head = st.by_id.get(entry_id)
    if head is None or head.kind not in SECTION_KINDS:
        return []
    path = head.section if head.section and head.section[-1] == head.title else [*head.section, head.title]
    depth = len(path)
    return [
        e
        for e in st.corpus.entries
        if e.id != head.id and e.source == head.source and e.section[:depth] == path and len(e.section) >= depth
    ]

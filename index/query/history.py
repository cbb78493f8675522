"""Dated changes and the banned list: "what changed since..." and "is this card banned?"."""

from __future__ import annotations

from rapidfuzz import fuzz, process

from glossary.model import Entry, clip
from glossary.versions import names_level, spelled_out, without_level
from index.build import store
from index.build.state import State
from index.query.names import FUZZY_COMPLETE_CUTOFF, MAX_KEY
from index.query.parsing import check_date, check_source
from index.results import BannedResult, ChangeRecord
from index.text.analysis import STOPS, fold


def changes(
    st: State, since: str | None = None, until: str | None = None, source: str | None = None
) -> list[ChangeRecord]:
    """Every dated change, newest first (impossible dates placed by their probable date).

    ``until`` compares at its own precision, so ``until="2008"`` includes all of 2008.
    """
    lo = check_date(since, "since") if since else None
    hi = check_date(until, "until") if until else None
    if source:
        check_source(source)
    out = []
    for rec in st.changes:
        if source and rec.entry.source != source:
            continue
        d = store.effective_date(rec.change)
        if (lo or hi) and (not d or (lo and d < lo) or (hi and d[: len(hi)] > hi)):
            continue
        out.append(rec)
    return out


def banned(st: State, card: str) -> BannedResult:
    """Is this card on the banned list? Exact or close spelling counts; near misses are offered."""
    key = fold(card or "")[:MAX_KEY]
    if not key or not st.banned_names:
        return BannedResult(card, None)
    record_id: str | None = None
    spaceless = key.replace(" ", "")
    spelled = spelled_out(key)  # "isawa tadaka exp 2cw": the listed version's name without its subtitle
    for name, eid in zip(st.banned_names, st.banned_ids, strict=True):
        if name in (key, spelled) or name.replace(" ", "") == spaceless:
            record_id = eid
            break
    initials = _by_initials(st, key) if record_id is None else None
    record_id = record_id or initials
    if record_id is None:
        pick = process.extractOne(key, st.banned_names, scorer=fuzz.ratio, score_cutoff=85) or process.extractOne(
            key, st.banned_names, scorer=fuzz.token_sort_ratio, score_cutoff=88
        )
        if pick:
            record_id = st.banned_ids[pick[2]]
    how = "initials" if initials else "exact"
    other_version = _other_version(st, key, record_id)
    if other_version is not None:
        record_id, how = None, "other-version"
    partial: list[str] = []
    if record_id is None and other_version is None:
        # "Gozoku" is part of exactly one banned name (Gozoku Sensei): that card. Part of several ("Koan"):
        # every one of them is banned, so the answer lists them; it never says "not banned".
        partial = _containing(st, key)
        if len(partial) == 1:
            record_id, partial = partial[0], []
            # "Isawa Tadaka" against "Isawa Tadaka, Seven Thunder (Experienced 2CW)": the list bans that one
            # version; the card typed may be another version, which is a different card.
            how = "version" if key in _base_names(st.by_id[record_id].title) else "partial"
    near_ids: list[str] = [other_version] if other_version else []
    for _name, _score, idx in process.extract(key, st.banned_names, scorer=fuzz.WRatio, limit=10, score_cutoff=60):
        eid = st.banned_ids[idx]
        if eid != record_id and eid not in near_ids and eid not in partial:
            near_ids.append(eid)
    near = [st.by_id[i] for i in near_ids[:5]]
    matches = [st.by_id[i] for i in partial]
    if record_id is None:
        kinds = [] if matches else _by_kind(st)
        return BannedResult(
            card, None, None, near, how if other_version else "partial" if matches else "none", matches, kinds
        )
    record = st.by_id[record_id]
    result = BannedResult(card, record, _banned_on(record), near, how)
    result.one_version = bool(_base_names(record.title))
    result.kind_of_card = record in _by_kind(st)
    return result


def _by_initials(st: State, key: str) -> str | None:
    """The banned card whose initials were typed: "hhol" (The High House of Light), "lll" (Lies, Lies, Lies). One
    word of three letters or more, against names of three words or more, with or without their small words
    ("hhl") and their leading "the"; a player's abbreviation is that card, never "not named"."""
    if " " in key or len(key) < 3:
        return None
    for name, eid in zip(st.banned_names, st.banned_ids, strict=True):
        words = name.split()
        if len(words) < 3:
            continue
        content = [w for w in words if w not in STOPS]
        unthe = words[1:] if words[0] == "the" else words
        if key in {"".join(w[0] for w in ws) for ws in (words, unthe, content) if ws}:
            return eid
    return None


def _other_version(st: State, key: str, matched: str | None) -> str | None:
    """The banned line that names, with no experience level, the card typed with one: "moshi eihime exp" (one
    spelling away from "Moshi Eihime") and "hantei experienced" (that name and a level). A card's identity is its
    title and experience level (the ruleset's Cardinal Rule 2), so the card typed is not the card named: it is
    answered as not named, and that line comes first among the closest names. None otherwise."""
    if not names_level(key):
        return None
    if matched is not None:
        return None if names_level(st.by_id[matched].title) else matched
    base = without_level(key)
    return next(
        (
            eid
            for name, eid in zip(st.banned_names, st.banned_ids, strict=True)
            if name == base and not names_level(name)
        ),
        None,
    )


def _base_names(title: str) -> set[str]:
    """The title a banned line names one version of: before its subtitle comma or its "(Experienced …)"."""
    names = set()
    if "," in title:
        names.add(fold(title.split(",")[0]))
    if "(" in title and "exp" in fold(title.split("(", 1)[1]):
        names.add(fold(title.split("(")[0]))
    return names - {fold(title)}


def _by_kind(st: State) -> list[Entry]:
    """Banned-list lines naming a kind of card rather than a title: "Cards with the Rank (Kabuto) icon"."""
    ids = dict.fromkeys(st.banned_ids)
    return [st.by_id[i] for i in ids if {"card", "cards"} & set(fold(st.by_id[i].title).split())]


def _containing(st: State, key: str) -> list[str]:
    """Banned records whose name holds the typed words as whole consecutive words ("gozoku", "black lion")."""
    words = [w for w in key.split() if w not in STOPS]
    if not words:
        return []
    needle = f" {key} "
    found = [eid for name, eid in zip(st.banned_names, st.banned_ids, strict=True) if needle in f" {name} "]
    return sorted(dict.fromkeys(found), key=st.order.__getitem__)


def _banned_on(record: Entry) -> str | None:
    """The date a card joined the list: its earliest "added" change (the update log says when)."""
    added = [c for c in record.changes if c.kind == "added"] or list(record.changes)
    dates = sorted(d for d in (store.effective_date(c) for c in added) if d)
    return dates[0] if dates else None


def banned_list(st: State) -> list[BannedResult]:
    """The whole banned list in document order (so grouped by category as printed), each with its date."""
    ids = sorted(dict.fromkeys(st.banned_ids), key=lambda eid: st.order[eid])
    return [BannedResult(st.by_id[eid].title, st.by_id[eid], _banned_on(st.by_id[eid])) for eid in ids]


def complete_banned(st: State, prefix: str, limit: int = 25) -> list[tuple[str, str]]:
    """Banned card names for a typed prefix: name starts, word starts, then one typo or word away."""
    key = fold(prefix or "")[:100]
    limit = max(1, min(int(limit), 25))
    ranked = []
    for name, eid in zip(st.banned_names, st.banned_ids, strict=True):
        if not key or name.startswith(key):
            ranked.append((0, st.order[eid], eid))
        elif f" {key}" in f" {name}":
            ranked.append((1, st.order[eid], eid))
        elif len(key) >= 4 and (
            fuzz.ratio(key, name[: len(key) + 1]) >= FUZZY_COMPLETE_CUTOFF
            or (" " in key and fuzz.token_set_ratio(key, name) >= 90)
        ):
            ranked.append((2, st.order[eid], eid))  # "moshi eihme", "house of black"
    out = list(dict.fromkeys(eid for _r, _o, eid in sorted(ranked)))[:limit]
    return [(clip(st.by_id[eid].title), eid) for eid in out]

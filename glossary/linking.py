"""Corpus-wide linking: cross-reference targets, format overrides, duplicate ids and titles.

Parsers see one file at a time; links between files (a glossary "See Glossary, Look" naming an
entry on another page, an Obsidian Hand rule amending a glossary topic, a house ruling's
"Applies to") can only be made once everything is loaded. Links are made by exact
(normalised) names only: a wrong link in front of a judge is worse than a missing one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container

from rapidfuzz import fuzz, process

from glossary.model import Anomaly, Change, Corpus, Entry

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})
_PREFIXES = re.compile(r"^(?:the\s+)?glossary\s*,\s*", re.IGNORECASE)
_ORDINAL = re.compile(r"^(?:[ivx]+|[a-z])\.\s+", re.IGNORECASE)
_SUGGEST_SCORE = 85  # rapidfuzz ratio: "terain" -> "terrain" is 92; unrelated names stay well below


def unique_id(base: str, taken: Container[str], counters: dict[str, int] | None = None) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever is not taken yet.

    Two entries with one id would shadow each other in the index; every place that renames a
    duplicate uses this, so a renamed id can never collide with another entry's own id. ``counters``
    (one dict per pass over a file or corpus) remembers where each base's count got to, so a file with
    thousands of copies of one title is renamed in linear time rather than recounting from 2 each time.
    """
    if base not in taken:
        return base
    n = counters.get(base, 2) if counters is not None else 2
    while f"{base}-{n}" in taken:
        n += 1
    if counters is not None:
        counters[base] = n + 1
    return f"{base}-{n}"


def normalise(name: str) -> str:
    """Case-, accent-, quote- and punctuation-insensitive form of a name, for exact matching."""
    text = unicodedata.normalize("NFKD", name.translate(_QUOTES)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[\"'.,;:!?()]", " ", text.lower())
    return " ".join(text.split())


def _name_index(entries: list[Entry]) -> dict[str, str]:
    """Title and alias -> id; a title wins over an alias, and the first source loaded wins a tie."""
    names: dict[str, str] = {}
    for entry in entries:
        names.setdefault(normalise(entry.title), entry.id)
    for entry in entries:
        for alias in entry.aliases:
            names.setdefault(normalise(alias), entry.id)
    return names


def _resolve(text: str, names: dict[str, str], by_source: dict[str, str]) -> str | None:
    """The entry a reference names, preferring the referring entry's own source ("Look" on a glossary page
    is the glossary's Look), with and without a "Glossary," prefix; None rather than a guess."""
    for candidate in (text, _PREFIXES.sub("", text)):
        key = normalise(candidate)
        if key in by_source:
            return by_source[key]
        if key in names:
            return names[key]
    return None


def _did_you_mean(text: str, names: dict[str, str], by_id: dict[str, Entry]) -> str:
    """"; did you mean 'Terrain'?" for a judge's misspelt name (``Applies to: Terain``), or nothing when
    no loaded name is close: a suggestion, never a silent fix (the reference stays unresolved)."""
    found = process.extractOne(normalise(text), list(names), scorer=fuzz.ratio, score_cutoff=_SUGGEST_SCORE)
    if found is None:
        return ""
    entry = by_id.get(names[found[0]])
    return f"; did you mean '{entry.title if entry else found[0]}'?"


def _topic_names(entry: Entry) -> list[str]:
    """Normalised names a format rule's topic goes by, most specific first.

    Its own title ("B. Family Honor" -> "family honor"), then, for a sub-heading, the title followed
    by the first word of its parent heading: "Enlightenment" under "E. Victory Conditions" is the
    glossary's "Enlightenment victory".
    """
    title = _ORDINAL.sub("", entry.title)
    names = [normalise(title)]
    if entry.kind == "section" and len(entry.section) >= 2 and entry.section[-1] == entry.title:
        parent = _ORDINAL.sub("", entry.section[-2]).split()
        if parent:
            names.append(normalise(f"{title} {parent[0]}"))
    return names


#: Consecutive words a format rule must share with a glossary entry to count as restating it. On the
#: shipped corpus the one restatement shares 14 words and the closest unrelated pair 7.
RESTATED_WORDS = 12
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(normalise(text))


def shingles(text: str) -> set[tuple[str, ...]]:
    """Every run of RESTATED_WORDS consecutive words: two texts share one iff they share such a run."""
    words = _words(text)
    return {tuple(words[i : i + RESTATED_WORDS]) for i in range(len(words) - RESTATED_WORDS + 1)}


def _shingle_index(glossary: list[Entry]) -> dict[tuple[str, ...], list[str]]:
    index: dict[tuple[str, ...], list[str]] = {}
    for other in glossary:
        for shingle in shingles(other.text):
            index.setdefault(shingle, []).append(other.id)
    return index


def _restated(entry: Entry, index: dict[tuple[str, ...], list[str]]) -> list[str]:
    """Glossary entries whose wording ``entry`` repeats for at least RESTATED_WORDS consecutive words."""
    found: dict[str, None] = {}
    for shingle in shingles(entry.text):
        for other in index.get(shingle, ()):
            found.setdefault(other, None)
    return list(found)


def _dedupe_ids(corpus: Corpus) -> None:
    """Two entries with one id would shadow each other in the index: keep both, rename the later, report it.

    Links a parser already made inside the renamed entry's file (an Obsidian Hand stub, an update's
    ``update_id``) are renamed with it, so a second copy of a document links to its own entries.
    """
    taken = {e.id for e in corpus.entries}
    seen: set[str] = set()
    renamed: dict[str, dict[str, str]] = {}  # file -> original id -> new id
    counters: dict[str, int] = {}
    for entry in corpus.entries:
        if entry.id in seen:
            original = entry.id
            entry.id = unique_id(original, taken, counters)
            taken.add(entry.id)
            renamed.setdefault(entry.location.file, {})[original] = entry.id
            corpus.anomalies.append(
                Anomaly(
                    entry.location.file,
                    entry.location.first_line,
                    "duplicate-title",
                    f"'{entry.title}' is defined more than once (also as {original}); this one is {entry.id}",
                )
            )
        seen.add(entry.id)
    for entry in corpus.entries:
        mapping = renamed.get(entry.location.file)
        if not mapping:
            continue
        for ref in entry.see_also:
            if ref.target is not None:
                ref.target = mapping.get(ref.target, ref.target)
        for change in entry.changes:
            if change.update_id is not None:
                change.update_id = mapping.get(change.update_id, change.update_id)
        for restatement in entry.restated:
            restatement.entry = mapping.get(restatement.entry, restatement.entry)
        entry.overrides = [mapping.get(i, i) for i in entry.overrides]
        entry.overridden_by = [mapping.get(i, i) for i in entry.overridden_by]


_NUMBERING = re.compile(r"^\s*(?:[IVXLC]+|[A-Z])\s*[.)]\s+")


def _plain_heading(text: str) -> str:
    """A heading without its numbering, in title case when written in capitals ("II. THE PLAYER" -> "The Player")."""
    plain = _NUMBERING.sub("", text).strip()
    return plain.title() if plain.isupper() else plain


def _context(entry: Entry) -> str:
    """What tells an entry apart from others of the same title: its group, else the heading it lives under."""
    if entry.source == "house":
        return "house ruling"
    if entry.source == "glossary":
        return "Glossary"
    if entry.group:
        return entry.group
    parent = next((p for p in reversed(entry.section) if p != entry.title), "")
    return _plain_heading(parent) or entry.document


def label_entries(entries: list[Entry]) -> None:
    """Give same-titled entries distinct labels ("Ninjitsu (Open)", "Ninjitsu (Reaction)", "Equip (Glossary)").

    A judge asking for "Ninjitsu" must be shown which Ninjitsu each answer is; the title alone would list
    "Ninjitsu, Ninjitsu, Ninjitsu". Entries whose title is unique keep it as their label. If the group or
    heading still leaves two alike, the document and then the entry's line tell them apart.
    """
    by_title: dict[str, list[Entry]] = {}
    for entry in entries:
        entry.label = entry.title
        by_title.setdefault(normalise(entry.title), []).append(entry)
    for same in by_title.values():
        if len(same) < 2:
            continue
        labels = {e.id: f"{e.title} ({_context(e)})" for e in same}
        counts: dict[str, int] = {}
        for text in labels.values():
            counts[text] = counts.get(text, 0) + 1
        for e in same:
            text = labels[e.id]
            if counts[text] > 1:
                text = f"{e.title} ({_context(e)}, {e.location.file} line {e.location.first_line})"
            e.label = text


def _stamp_date(change: Change) -> str | None:
    """A change's date as a judge reads it (an impossible printed date counts as its probable one)."""
    return change.probable_date or change.date


def _changed_after(ruling: Entry, by_id: dict[str, Entry], corpus: Corpus) -> None:
    """A house ruling made (or last updated) before a later change stamp of a rule it applies to: lint reports
    it, and answers say it was made before the rule changed (``Entry.changed_since``), as for server rulings."""
    own = [d for c in ruling.changes if (d := _stamp_date(c))]
    if not own:
        return
    made = max(own)
    for ref in ruling.see_also:
        target = by_id.get(ref.target) if ref.target else None
        if target is None or target.source == "house":
            continue
        later = [d for c in target.changes if (d := _stamp_date(c)) and d > made]
        if not later:
            continue
        when = max(later)
        ruling.changed_since = max(ruling.changed_since or when, when)
        corpus.anomalies.append(
            Anomaly(
                ruling.location.file,
                ref.line or ruling.location.first_line,
                "rule-changed-after-ruling",
                f"'{ruling.title}' applies to '{target.title}': rule changed on {when} after this ruling of "
                f"{made}; check it still stands, then give it an 'Updated:' date",
            )
        )


def link_corpus(corpus: Corpus) -> None:
    """Resolve cross-references, link format overrides both ways, label same-titled entries apart, and report
    what points nowhere."""
    _dedupe_ids(corpus)
    label_entries(corpus.entries)
    by_id = corpus.by_id()
    sources = {e.source for e in corpus.entries}
    names_by_source = {s: _name_index([e for e in corpus.entries if e.source == s]) for s in sources}
    names_all = _name_index(corpus.entries)
    glossary_titles: dict[str, str] = {}  # the first page loaded wins, as in _name_index
    for e in corpus.entries:
        if e.source == "glossary":
            glossary_titles.setdefault(normalise(e.title), e.id)
    restatements = _shingle_index([e for e in corpus.entries if e.source == "glossary"])

    for entry in corpus.entries:
        for ref in entry.see_also:
            if ref.target is not None and ref.target not in by_id:
                ref.target = None
            if ref.target is None:
                ref.target = _resolve(ref.text, names_all, names_by_source.get(entry.source, {}))
            if ref.target is None:
                corpus.anomalies.append(
                    Anomaly(
                        entry.location.file,
                        ref.line or entry.location.first_line,
                        "dangling-reference",
                        f"'{entry.title}' refers to '{ref.text}', which no loaded entry defines"
                        + (_did_you_mean(ref.text, names_all, by_id) if entry.source == "house" else ""),
                        # rule text citing an unloaded rulebook chapter is info; a judge's own
                        # "Applies to" naming nothing is a mistake in that file
                        severity="warning" if entry.source == "house" else "info",
                    )
                )

    for entry in corpus.entries:
        if entry.source == "glossary":
            continue
        targets: list[str] = []
        if entry.source == "obsidian-hand" and entry.kind in {"section", "ability", "guideline", "cardinal-rule"}:
            # Same topic: an Obsidian Hand rule titled like a glossary term ("Equip", "B. Family Honor"),
            # or one restating a glossary rule in the same words ("Tactical Advantage" <- "Tactical").
            targets += [glossary_titles[k] for k in _topic_names(entry) if k in glossary_titles][:1]
            targets += _restated(entry, restatements)
        if entry.kind == "update":
            # An update-log record that names a glossary entry amends it within the format.
            targets += [r.target for r in entry.see_also if r.target and by_id[r.target].source == "glossary"]
        if entry.kind == "ruling":
            # A house ruling amends whatever rules it applies to: glossary terms and format rules alike.
            targets += [r.target for r in entry.see_also if r.target and by_id[r.target].source != "house"]
        for target in dict.fromkeys(targets):
            if target not in entry.overrides:
                entry.overrides.append(target)
            overridden = by_id[target].overridden_by
            if entry.id not in overridden:
                overridden.append(entry.id)
        if entry.kind == "ruling":
            _changed_after(entry, by_id, corpus)

    # Titles that differ only in case or punctuation (so their ids differ) in the same place. An entry
    # renamed ``<first id>-N`` is skipped: it was reported where it was renamed.
    seen_titles: dict[tuple[str, str, tuple[str, ...]], Entry] = {}
    for entry in corpus.entries:
        key = (entry.source, normalise(entry.title), tuple(normalise(s) for s in entry.section))
        first = seen_titles.setdefault(key, entry)
        if first is not entry and not entry.id.startswith(first.id + "-"):
            corpus.anomalies.append(
                Anomaly(
                    entry.location.file,
                    entry.location.first_line,
                    "duplicate-title",
                    f"'{entry.title}' also defined at {first.location.file}:{first.location.first_line}",
                )
            )

"""A server's formats in its answers: the rules, bans and amendments of formats it does not play are left out.

A server chooses the formats it plays (``/ruling config formats``; the console's ``--formats`` or
``L5R_FORMATS``); the choice is one field of its scope (``Overlay.formats``), ``None`` when it chose nothing,
and then every format is shown, as in direct messages. ``FormatView`` is that choice applied to results
before they are composed: the same answers, with fewer texts in them, and one line saying so when a left-out
format would have answered or amended the question ("The Obsidian Hand Ruleset also has a rule on this; this
server does not play it."). The composer leaves out a relation to a rule of such a format the same way
(``Composer.shows``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from bot.app.answer import Answer, Note, runs
from glossary.formats import Format, formats, plays
from glossary.model import Corpus, Entry
from index.results import BannedResult, ChangeRecord, DefineResult, Hit

ALL = "all"  # the choice that shows every format (the same as never choosing)
NONE = "none"  # the choice of playing no format
_ALL_WORDS = frozenset({"all", "every", "everything", "any", "default", "reset"})
_NONE_WORDS = frozenset({"none", "no", "nothing", "no format", "no formats"})
_SPLIT = re.compile(r"\s*[,;\n]+\s*")


class FormatChoiceError(ValueError):
    """A choice of formats that names no loaded format; the message lists the loaded ones."""


_KNOWN: dict[int, tuple[Corpus, list[Format]]] = {}


def loaded(corpus: Corpus) -> list[Format]:
    """The formats of the loaded corpus (computed once per corpus: a reload brings a new one)."""
    found = _KNOWN.get(id(corpus))
    if found is None or found[0] is not corpus:
        if len(_KNOWN) > 8:
            _KNOWN.clear()
        found = (corpus, formats(corpus.entries))
        _KNOWN[id(corpus)] = found
    return found[1]


def _squeeze(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def parse_choice(text: str, known: Sequence[Format]) -> tuple[str, ...] | None:
    """The format ids a typed choice names: ``all`` -> None (every format shown), ``none`` -> () (no format),
    else a comma-separated list, each by id, title, or a part of one title ("obsidian hand")."""
    said = " ".join((text or "").split())
    if not said or said.lower() in _ALL_WORDS:
        return None
    if said.lower() in _NONE_WORDS:
        return ()
    chosen: list[str] = []
    for part in (p for p in _SPLIT.split(said) if p):
        key = _squeeze(part)
        exact = [f for f in known if key in (_squeeze(f.id), _squeeze(f.title))]
        partial = [f for f in known if len(key) >= 4 and key in _squeeze(f.title)]
        found = exact or partial
        if len(found) != 1:
            names = "; ".join(f"{f.title} ({f.id})" for f in known) or "none is loaded"
            why = "names several formats" if found else "is not a loaded format"
            shown = part if len(part) <= 60 else part[:59] + "…"
            raise FormatChoiceError(
                f"“{shown}” {why}. The formats loaded: {names}. Or `{ALL}` (show every format) or `{NONE}`."
            )
        chosen.append(found[0].id)
    return tuple(dict.fromkeys(chosen))


def describe(chosen: Iterable[str] | None, known: Sequence[Format]) -> str:
    """What a choice means for answers, in one or two sentences (the reply to ``/ruling config formats``)."""
    if chosen is None:
        listed = ", ".join(f.title for f in known) or "none is loaded"
        return f"This server has not chosen its formats: answers show every format's rules ({listed})."
    ids = list(chosen)
    titles = {f.id: f.title for f in known}
    played = [titles[i] for i in ids if i in titles]
    gone = [i for i in ids if i not in titles]
    left = [f.title for f in known if f.id not in ids]
    if played:
        text = f"This server plays {_and(played)}: answers show its rules, bans and amendments"
        text += f" and leave out {_and(left)}." if left else "."
    else:
        text = "This server plays no format: answers show the glossary and house rulings, and leave out "
        text += f"{_and(left)}." if left else "every format."
    if gone:
        text += f" Chosen but not loaded now: {', '.join(gone)}."
    return text


def left_out_line(documents: Sequence[str], what: str = "a rule on this") -> str:
    """The one line an answer carries when formats the server does not play would answer or amend it."""
    if len(documents) == 1:
        return f"{documents[0]} also has {what}; this server does not play it."
    plural = "banned lists" if what == "a banned list" else "rules on this"
    return f"{_and(list(documents))} also have {plural}; this server does not play them."


def noted(answer: Answer, documents: Sequence[str], what: str = "a rule on this") -> Answer:
    """``answer`` with the left-out line, where a reader meets it first (atop its first result, else its body)."""
    if not documents:
        return answer
    note = Note(runs(left_out_line(list(dict.fromkeys(documents)), what)), "formats")
    blocks = answer.items[0].blocks if answer.items else answer.body
    at = next((i for i, b in enumerate(blocks) if not isinstance(b, Note)), len(blocks))  # after "no rule stands out"
    blocks.insert(at, note)
    return answer


def complete(current: str, known: Sequence[Format], limit: int = 25) -> list[tuple[str, str]]:
    """Autocomplete for a choice: (name, value) pairs; the parts typed before the last comma are kept."""
    head, _, last = (current or "").rpartition(",")
    prefix = f"{head.strip()}, " if head.strip() else ""
    key = _squeeze(last)
    out: list[tuple[str, str]] = []
    if not head.strip():
        out += [("all — every format (as if none were chosen)", ALL), ("none — play no format", NONE)]
    out += [(f"{prefix}{f.title}", f"{prefix}{f.id}") for f in known]
    return [(n, v) for n, v in out if not key or key in _squeeze(n) or key in _squeeze(v)][:limit]


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


@dataclass(frozen=True)
class FormatView:
    """One server's choice (``chosen``: format ids; None: every format) applied to results; ``lookup`` and
    ``scope`` are the judge's (an entry by id; the paragraphs a linked rule concerns)."""

    chosen: frozenset[str] | None
    lookup: Callable[[str], Entry | None]
    scope: Callable[[str, str], tuple[int, ...] | None]

    def shows(self, entry: Entry) -> bool:
        return plays(entry, self.chosen)

    def bearing(self, entry: Entry, paragraph: int | None = None) -> list[str]:
        """Documents of left-out formats whose rules bear on ``entry`` (on ``paragraph`` when given): what the
        composer would have shown as amending or restating it."""
        if self.chosen is None:
            return []
        out: list[str] = []
        for rule_id in entry.overridden_by:
            rule = self.lookup(rule_id)
            if rule is None or self.shows(rule):
                continue
            scope = self.scope(rule.id, entry.id)
            if paragraph is not None and scope is not None and paragraph not in scope:
                continue
            out.append(rule.document)
        return list(dict.fromkeys(out))

    def entries(self, entries: Iterable[Entry]) -> tuple[list[Entry], list[str]]:
        """The entries shown, and the documents of those left out."""
        listed = list(entries)
        kept = [e for e in listed if self.shows(e)]
        return kept, list(dict.fromkeys(e.document for e in listed if not self.shows(e)))

    def hits(self, hits: Sequence[Hit]) -> tuple[list[Hit], list[str]]:
        """Search results from played formats (and the glossary, rulings), and the documents of those left out
        or bearing on a kept result's quoted paragraph."""
        if self.chosen is None:
            return list(hits), []
        kept = [h for h in hits if self.shows(h.entry)]
        left = [h.entry.document for h in hits if not self.shows(h.entry)]
        for hit in kept:
            left += self.bearing(hit.entry, hit.paragraph)
        return kept, list(dict.fromkeys(left))

    def define(self, result: DefineResult) -> tuple[DefineResult, list[str]]:
        """A name lookup without the entries of left-out formats (the best guess, candidates, same names)."""
        if self.chosen is None:
            return result, []
        named = [e for e in [result.entry, *result.same_name] if e is not None]
        _shown, left = self.entries(named)
        candidates, _others = self.entries(result.candidates)
        same, _gone = self.entries(result.same_name)
        entry = result.entry if result.entry is not None and self.shows(result.entry) else None
        if entry is None and same:
            entry = same[0]
        if entry is not None:
            left += self.bearing(entry)
        how = result.how if entry is not None else "none"
        return replace(result, entry=entry, candidates=candidates, same_name=same if len(same) > 1 else [],
                       how=how), list(dict.fromkeys(left))  # fmt: skip

    def records(self, records: Sequence[ChangeRecord]) -> tuple[list[ChangeRecord], list[str]]:
        """Change rows of played formats only: a row of a left-out format's entry, or one an update of it made
        on a glossary entry, is left out."""
        if self.chosen is None:
            return list(records), []
        kept: list[ChangeRecord] = []
        left: list[str] = []
        for record in records:
            update = self.lookup(record.change.update_id) if record.change.update_id else None
            for entry in (record.entry, update):
                if entry is not None and not self.shows(entry):
                    left.append(entry.document)
                    break
            else:
                kept.append(record)
        return kept, list(dict.fromkeys(left))

    def history(self, entry: Entry) -> tuple[Entry, list[str]]:
        """``entry`` for ``/history`` without the change stamps a left-out format's updates put on it (a copy, for
        this answer only), and the documents of those formats."""
        if self.chosen is None:
            return entry, []
        kept = []
        left = self.bearing(entry)
        for change in entry.changes:
            update = self.lookup(change.update_id) if change.update_id else None
            if update is not None and not self.shows(update):
                left.append(update.document)
            else:
                kept.append(change)
        if len(kept) == len(entry.changes):
            return entry, list(dict.fromkeys(left))
        return replace(entry, changes=kept), list(dict.fromkeys(left))

    def banned_lists(self, corpus: Corpus) -> tuple[list[Format], list[Format]]:
        """The loaded formats with a banned list that the server plays, and those it does not."""
        with_list = [f for f in loaded(corpus) if f.banned_list]
        if self.chosen is None:
            return with_list, []
        return [f for f in with_list if f.id in self.chosen], [f for f in with_list if f.id not in self.chosen]

    def banned(self, result: BannedResult) -> tuple[BannedResult, list[str]]:
        """A banned-list answer from played formats only: a left-out format's record is "not on the list"."""
        if self.chosen is None:
            return result, []
        left = [e.document for e in [result.record, *result.matches] if e is not None and not self.shows(e)]
        if result.record is not None and not self.shows(result.record):
            result = replace(result, record=None, banned_on=None, how="none", matches=[])
        matches, _m = self.entries(result.matches)
        near, _n = self.entries(result.near)
        kinds, _k = self.entries(result.kinds)
        return replace(result, matches=matches, near=near, kinds=kinds), list(dict.fromkeys(left))


def shown_choices(
    found: Sequence[tuple[str, str]], lookup: Callable[[str], Entry | None], chosen: frozenset[str] | None
) -> list[tuple[str, str]]:
    """Autocomplete choices (name, entry id) without the entries of formats a server does not play."""
    if chosen is None:
        return list(found)
    return [(name, i) for name, i in found if (entry := lookup(i)) is None or plays(entry, chosen)]

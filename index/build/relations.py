"""Which paragraphs of an entry a format rule, update or ruling concerns: a fact of each build.

The parsers link a format rule to the glossary entry it bears on (``Entry.overridden_by``), but a judge
quotes one paragraph: "the 10/25/2015 update amends this" is only true under the paragraph it is about
(one Terrain per battlefield), not under every paragraph of Terrain. This module works out, once per
build, the paragraphs each link concerns, from what the texts themselves show:

1. an entry of one paragraph: that paragraph;
2. a rule that repeats the entry's words (a run of ``RESTATED_WORDS`` words): the paragraphs it repeats;
3. otherwise the paragraph whose meaning is clearly the closest to the rule's (the shipped model's
   cosine, best ahead of the second by ``MARGIN``);
4. an update record that says it is "in relation to the previous change" shares its scope with the
   previous record on the same entry, where one of them is clear and the other is not.

Where none of these decides, the scope is ``None``: the rule concerns the entry and it is not clear which
paragraph, and answers say exactly that. Without the model only 1, 2 and 4 apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from glossary.linking import shingles
from glossary.model import Corpus, Entry, sort_date

MARGIN = 0.04  # cosine lead of the best paragraph over the second for it to count as clear (a judgement:
# on the shipped links the clear cases lead by 0.047 (Terrain, 10/25/2015) and 0.18 (Tactical))
_FOLLOWS = re.compile(r"\bprevious (?:change|update)", re.IGNORECASE)

Scope = tuple[int, ...] | None
Scopes = dict[tuple[str, str], Scope]  # (rule id, entry id) -> the entry's paragraphs it concerns


def relation_kind(rule: Entry, of: Entry | None = None) -> str:
    """How a linked rule bears on the entry ``of`` it is linked to, claiming no more than the texts show.

    A house ruling applies to it. An update-log record that gives Old/New wording amends a text in its
    format; one without (the Terrain updates: "One Terrain per battlefield will be returned") is an update
    *on* the topic, and whether it changes what the entry says is for the judge to read, so it is never
    called an amendment. A format's own rule restates the entry where it repeats a run of its words
    (Tactical Advantage and Tactical); one linked by its name alone (B. Family Honor) also covers the topic.
    """
    if rule.kind == "ruling":
        return "house-ruling"
    if rule.kind == "update":
        return "amends" if rule.old_wording or rule.new_wording else "updates"
    if of is not None and not _repeated(rule, of):
        return "covers"
    return "restates"


def _repeated(rule: Entry, entry: Entry) -> tuple[int, ...]:
    """The entry's paragraphs that share a run of words with the rule's text."""
    theirs = shingles(rule.text)
    return tuple(k for k, p in enumerate(entry.paragraphs) if shingles(p) & theirs)


def _closest(
    rule: Entry, entry: Entry, vectors: np.ndarray | None, first_unit: Mapping[str, int]
) -> Scope:
    """The entry's paragraph clearly closest in meaning to the rule (best of the rule's paragraphs)."""
    if vectors is None or entry.id not in first_unit or rule.id not in first_unit:
        return None
    mine = vectors[first_unit[entry.id] : first_unit[entry.id] + len(entry.paragraphs)]
    theirs = vectors[first_unit[rule.id] : first_unit[rule.id] + max(1, len(rule.paragraphs))]
    cos = (mine @ theirs.T).max(axis=1)
    if len(cos) < 2:
        return (0,) if len(cos) else None
    order = np.argsort(-cos)
    if float(cos[order[0]] - cos[order[1]]) >= MARGIN:
        return (int(order[0]),)
    return None


def compute(corpus: Corpus, vectors: np.ndarray | None, units: tuple[np.ndarray, np.ndarray]) -> Scopes:
    """The scope of every (rule, entry) link in ``corpus``; ``vectors``/``units`` as the build has them."""
    unit_entry, unit_para = units
    first_unit: dict[str, int] = {}
    if vectors is not None and len(vectors) == len(unit_entry):
        for u, (n, p) in enumerate(zip(unit_entry.tolist(), unit_para.tolist(), strict=True)):
            if p == 0:
                first_unit.setdefault(corpus.entries[n].id, u)
    else:
        vectors = None
    by_id = corpus.by_id()
    scopes: Scopes = {}
    for entry in corpus.entries:
        for rule_id in entry.overridden_by:
            rule = by_id.get(rule_id)
            if rule is None:
                continue
            scope: Scope
            if rule.kind == "ruling":
                scope = None  # a judge's "Applies to" names the entry, not a paragraph of it
            elif len(entry.paragraphs) <= 1:
                scope = (0,) if entry.paragraphs else None
            else:
                scope = _repeated(rule, entry) or _closest(rule, entry, vectors, first_unit)
            scopes[(rule_id, entry.id)] = scope
        _share_follow_ups(entry, by_id, scopes)
    return scopes


def _share_follow_ups(entry: Entry, by_id: Mapping[str, Entry], scopes: Scopes) -> None:
    """Updates on ``entry`` that say they relate to the previous change share its scope (rule 4)."""
    updates = sorted(
        (by_id[i] for i in entry.overridden_by if i in by_id and by_id[i].kind == "update"),
        key=lambda e: min((sort_date(c) for c in e.changes), default=""),
    )
    for before, after in zip(updates, updates[1:], strict=False):
        if not _FOLLOWS.search(after.text):
            continue
        a, b = scopes.get((before.id, entry.id)), scopes.get((after.id, entry.id))
        if a is None and b is not None:
            scopes[(before.id, entry.id)] = b
        elif b is None and a is not None:
            scopes[(after.id, entry.id)] = a

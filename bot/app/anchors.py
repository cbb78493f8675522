"""Where an entry, and each of its paragraphs, stands in the exported HTML rulebook (``bot.app.rulebook``).

One page per source (``glossary.html``, ``obsidian-hand.html``, ``house.html``); on it every entry is an
element whose id is exactly the entry id, and every paragraph one whose id is ``<entry id>-p<N>`` (N counts
``Entry.paragraphs`` from 1). ``RULEBOOK_URL`` (ending in ``/``) + ``paragraph_href(entry, index)`` links an
answer to the paragraph it quotes.

Its own module, below both the composer (``bot.app.compose``, which links answers into the rulebook) and
the rulebook that renders the answers it composes, so neither imports the other to know an address.
"""

from __future__ import annotations

from urllib.parse import quote

from glossary.model import Entry


def page_for(source: str) -> str:
    """The file name of a source's page (``obsidian-hand`` -> ``obsidian-hand.html``)."""
    return f"{source}.html"


def fragment(element_id: str) -> str:
    """The URL fragment of an element id: percent-encoded except for the ``:``."""
    return quote(element_id, safe=":")


def entry_href(entry: Entry) -> str:
    """Relative URL of an entry's anchor; ``RULEBOOK_URL`` (ending in ``/``) + this links an answer."""
    return f"{page_for(entry.source)}#{fragment(entry.id)}"


def paragraph_id(entry: Entry, index: int) -> str:
    """The element id of paragraph ``index`` (0-based, into ``entry.paragraphs``): ``glossary:terrain-p3``
    for the third. Numbers count every paragraph the entry holds (a bullet, a stamp on its own line) from 1,
    the same numbers "(paragraph N)" and the ``¶N`` beside each paragraph show."""
    return f"{entry.id}-p{index + 1}"


def paragraph_href(entry: Entry, index: int | None) -> str:
    """Relative URL of one paragraph's anchor (the entry's anchor when ``index`` is None or out of range)."""
    if index is None or not 0 <= index < len(entry.paragraphs):
        return entry_href(entry)
    return f"{page_for(entry.source)}#{fragment(paragraph_id(entry, index))}"

"""The --json form of a hit: its changes are those dating the paragraph shown, never the entry's others."""

from __future__ import annotations

from glossary.loader import SHIPPED_SOURCES, load_corpus
from index.results import Hit, citation


def test_hit_changes_are_only_those_of_the_snippet_paragraph() -> None:
    terrain = load_corpus([SHIPPED_SOURCES]).by_id()["glossary:terrain"]
    dated = [c for c in terrain.changes if c.paragraph == 2]
    assert [c.date for c in dated] == ["2008-05-21"]
    shown = Hit(terrain, 1.0, terrain.paragraphs[2], 2, dated).to_dict()
    assert [c["date"] for c in shown["changes"]] == ["2008-05-21"]
    undated = Hit(terrain, 1.0, terrain.paragraphs[1], 1, []).to_dict()
    assert undated["changes"] == []
    # The citation leads with document and entry, gives the quoted paragraph's own line, then the file.
    assert undated["citation"] == citation(terrain, 1) == (
        "L5R Comprehensive Rules — Glossary T › Terrain, paragraph 2, line 24 · 000_99c7513ab738c7d1.txt"
    )
    assert citation(terrain) == "L5R Comprehensive Rules — Glossary T › Terrain, lines 22-31 · 000_99c7513ab738c7d1.txt"

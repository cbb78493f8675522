"""Hostile sources parse in time proportional to their size, and still parse right.

Each document below holds a line on which a parser pattern used to be quadratic (a long whitespace
run where a lazy group or a leading ``\\s+`` re-scanned it from every position), or a shape the
parsers handled with quadratic bookkeeping (thousands of rulings or copies of one title). At the
sizes used here the old code took minutes; the guard (``tests/guard.py``) only catches a hang,
speed figures are in ``benchmarks/hostile_inputs.py``.
"""

from __future__ import annotations

from pathlib import Path

from guard import finishes

from glossary.house import parse_house_rulings
from glossary.limits import MAX_LINE_CHARS
from glossary.loader import load_corpus
from glossary.mediawiki import derive_aliases, find_cross_refs, parse_glossary_page
from glossary.obsidian import parse_obsidian
from glossary.stamps import parse_stamps
from index.build.state import strip_numbering

RUN = 200_000  # spaces in one run: the old patterns needed (RUN**2)/2 steps, i.e. minutes


def glossary_page(*lines: str) -> str:
    return "Glossary T\n[edit] Term\n" + "\n".join(lines) + "\nBack to the Comprehensive Rules\n"


def glossary_heading(heading: str) -> str:
    return f"Glossary T\n{heading}\nSome text.\nBack to the Comprehensive Rules\n"


def obsidian(*lines: str) -> str:
    return "The Obsidian Hand Ruleset\n\n" + "\n".join(lines) + "\n"


def hostile_documents(n: int) -> dict[str, tuple[str, str]]:
    """name -> (parser, text): one pattern each (the regex that used to blow up is named)."""
    s = " " * n
    return {
        "_SEE_RE/_REF_PURPOSE_RE": (
            "glossary",
            glossary_page("See A" + s + "b", "See Glossary, Look" + s + "for details."),
        ),
        "_SEE_RE quoted": ("glossary", glossary_page("See “x " * (n // 7))),
        "_heading_title": ("glossary", glossary_page("a" + s + "b [edit]x")),
        "_GLUED_SUFFIX_RE": ("glossary", glossary_heading("[edit] " + "a" * n + "(" + "b" * n)),
        "_QUALIFIER_RE": ("glossary", glossary_heading("[edit] Result" + s + "of a duel")),
        "_SEPARATOR_ONLY": ("glossary", glossary_page("[ADDED Oct 1 2007" + s + "x Nov 3 2007]")),
        "_DATE_RE": ("glossary", glossary_page("[ADDED Oct 1" + s + "x]")),
        "_ROMAN": ("obsidian", obsidian("I. A" + s + "x", "I. CARDINAL RULES", "Cardinal Rule 1: A", "Text.")),
        "_CATEGORY": ("obsidian", obsidian("Banned Cards", "Intro.", "*** a" + s + "b", "A Card")),
        "_GROUP": ("obsidian", obsidian("I. CARDINAL RULES", "** a" + s + "b", "Text.")),
        "_CARDINAL": ("obsidian", obsidian("I. CARDINAL RULES", "Cardinal Rule 2: a" + s + "b", "Text.")),
        "_SUBJECTS": ("obsidian", obsidian("Updates", "[02/15/2016]", "a" + s + "b", "I. CARDINAL RULES", "x.")),
        "_SUBJECT_SPLIT": ("obsidian", obsidian("Updates", "[02/15/2016]", "a" + s + ", b – x", "I. A B", "x.")),
    }


PARSERS = {"glossary": parse_glossary_page, "obsidian": parse_obsidian}


def parse_hostile(n: int) -> dict[str, list[tuple[str, list[str]]]]:
    """Every hostile document parsed: entry titles (first 40 characters) and cross-reference texts."""
    out = {}
    for name, (kind, text) in hostile_documents(n).items():
        doc = PARSERS[kind](text, "hostile.txt")
        out[name] = [(e.title[:40], [r.text[:40] for r in e.see_also]) for e in doc.entries]
    out["strip_numbering"] = [(strip_numbering("II. A" + " " * n + "b – C. Dee"), [])]
    # The paragraph patterns themselves, past the line cap the parsers apply.
    spaces = " " * n
    refs = find_cross_refs(
        ["See A" + spaces + "b", "See Glossary, Look" + spaces + "for details.", "See “x " * (n // 7)]
        + ["See Glossary, Tap," + spaces + "and Glossary, Bow."]  # _REF_SPLIT_RE
    )
    out["find_cross_refs"] = [(r.text[:40], []) for r in refs]
    stamps, unparsed = parse_stamps("[ADDED Oct 1 2007" + spaces + "x Nov 3 2007] [ADDED Oct 1" + spaces + "x]")
    out["parse_stamps"] = [(s.date or "", []) for s in stamps] + [(u.reason, []) for u in unparsed]
    out["derive_aliases"] = [(a[:40], []) for a in derive_aliases("Result" + spaces + "(of a duel)", [])]
    return out


def test_whitespace_runs_parse_in_linear_time() -> None:
    parsed = finishes(parse_hostile, RUN)
    # Still parsed the way short lines are (the same shapes with one space are the reference).
    reference = parse_hostile(1)
    assert parsed["_SEE_RE/_REF_PURPOSE_RE"] == [("Term", ["A", "Look"])]  # "b" is past the line cap
    assert reference["_SEE_RE/_REF_PURPOSE_RE"] == [("Term", ["A b", "Look"])]
    assert parsed["find_cross_refs"] == [("A" + " " * 39, []), ("Look", []), ("Tap", []), ("Bow", [])]
    assert parsed["parse_stamps"] == [("2007-10-01", []), ("no date in day/month/year form", [])]
    assert parsed["derive_aliases"] == [("result", []), ("result of a duel", [])]
    assert parsed["_QUALIFIER_RE"][0][0] == "Result" + " " * 34
    assert parsed["_CARDINAL"] == [("I. CARDINAL RULES", []), ("Cardinal Rule 2: a" + " " * 22, [])]
    assert parsed["strip_numbering"] == [("Dee", [])] == reference["strip_numbering"]
    for name in ("_ROMAN", "_CATEGORY", "_GROUP", "_SUBJECTS", "_SUBJECT_SPLIT", "_GLUED_SUFFIX_RE"):
        assert len(parsed[name]) == len(reference[name]), name


def many_rulings_and_copies(rulings_count: int, count: int) -> tuple[int, int, str]:
    """A house file of ``rulings_count`` rulings, and a glossary page with ``count`` copies of one title."""
    body = (f"## Ruling {i}\nDate: 2026-01-01\n\nText {i}.\n\n- a\n- b" for i in range(rulings_count))
    rulings = "# R\n\n" + "\n\n".join(body)
    house = parse_house_rulings(rulings + "\n", "house.md")
    copies = "Glossary T\n" + "[edit] Term\nText.\n" * count + "Back to the Comprehensive Rules\n"
    page = parse_glossary_page(copies, "page.txt")
    return len(house.entries), len(page.entries), page.entries[-1].id


def test_many_rulings_and_duplicate_titles_parse_in_linear_time() -> None:
    """4,000 rulings took 7 s and 8,000 copies of one title 5 s (both quadratic): here 20,000 and 40,000."""
    rulings, copies, last_id = finishes(many_rulings_and_copies, 20_000, 40_000)
    assert (rulings, copies, last_id) == (20_000, 40_000, "glossary:term-40000")


def test_long_lines_are_reported_and_quoted_in_full(tmp_path: Path) -> None:
    long = "Long text " * (MAX_LINE_CHARS // 5) + "[ADDED Sept 20 2007]"
    (tmp_path / "page.txt").write_text(glossary_page("See Tap.", long), encoding="utf-8")
    corpus = load_corpus([tmp_path])
    entry = corpus.entries[0]
    assert entry.paragraphs[1] == long  # quoted verbatim, however long
    assert not entry.changes  # the stamp lies past the analysed part of the line...
    found = [a for a in corpus.anomalies if a.kind == "long-line"]
    assert [(a.file, a.line) for a in found] == [("page.txt", 4)]  # ...and lint says so
    assert f"{len(long):,} characters" in found[0].message


def test_house_ruling_citations_never_show_the_hosts_path(tmp_path: Path) -> None:
    """Citations are posted in Discord: a ruling is cited relative to the configured folder."""
    import shutil

    from bot.app.compose import Composer
    from bot.app.renderers import discord_markdown
    from bot.app.renderers.text import render as to_text
    from glossary.house import EXAMPLES_DIR
    from glossary.loader import SHIPPED_SOURCES
    from index.results import citation

    house = tmp_path / "srv" / "judge-secrets" / "rulings"
    shutil.copytree(EXAMPLES_DIR, house)
    corpus = load_corpus([SHIPPED_SOURCES, house.resolve()])
    rulings = [e for e in corpus.entries if e.source == "house"]
    assert rulings and {e.location.file for e in rulings} == {"example-rulings.md"}
    answer = Composer(corpus.by_id().get).entry(rulings[0])
    message = discord_markdown.render(answer)
    on_discord = "\n".join(discord_markdown.page_text(message, n) for n in range(len(message.pages)))
    for shown in (to_text(answer), on_discord, citation(rulings[0])):
        assert " · example-rulings.md" in shown and str(tmp_path) not in shown and "judge-secrets" not in shown
    assert str(tmp_path) not in " ".join(corpus.files)

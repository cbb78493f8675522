"""Reloads and damaged builds: never freeze the caller, never serve less, never serve damaged bytes.

* /reload parses and builds in a child process; the caller's event loop keeps running.
* A reload that loses a source file or most entries is refused; the serving build stays.
* Every build has a SHA-256 manifest checked on open; a failed check rebuilds, with a log line.
* A query failing inside the index rebuilds it once, not once per query.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from whoosh import index as whoosh_index

import glossary.loader
from glossary.loader import SHIPPED_SOURCES
from index.build import store
from index.engine import Engine, ReloadRefused

OBSIDIAN = "004_f05ef39847fd66e3.txt"


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    folder = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, folder)
    return folder


@pytest.fixture
def engine(sources: Path, tmp_path: Path, index_copy: Callable[..., Path]) -> Engine:
    eng = Engine.open([sources], index_copy(tmp_path / "ix"))  # the same sources' bytes: opened, not rebuilt
    yield eng
    eng.close()


# -- reloads run elsewhere --------------------------------------------------------------------------


def test_reload_parses_and_builds_in_another_process(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    def not_here(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("parsed or built in the serving process")

    monkeypatch.setattr(glossary.loader, "load_corpus", not_here)
    monkeypatch.setattr(store, "build", not_here)
    before = engine.stats()["index_path"]
    stats = engine.reload()
    assert stats["rebuilt"] and stats["index_path"] != before and stats["entries"] == 146
    assert stats["reload_seconds"] >= stats["build_seconds"] > 0  # the whole reload, not just the build
    assert engine.search("is a terrain an enemy card?")[0].entry.id == "glossary:terrain"


async def test_event_loop_keeps_running_while_a_hostile_source_reloads(engine: Engine, sources: Path) -> None:
    """A page on which the old parser spent most of a minute in one regex (holding the GIL in the bot)."""
    hostile = "Glossary Z\n[edit] Zeal\n" + "\n".join(
        ["See A" + " " * 80_000 + "b", "a" + " " * 80_000 + "b [edit]x", "Text."]
    ) + "\nBack to the Comprehensive Rules\n"
    (sources / "hostile.txt").write_text(hostile, encoding="utf-8")
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    try:
        stats = await asyncio.to_thread(engine.reload)
    finally:
        done.set()
        await tick
    assert stats["entries"] == 147 and engine.get("glossary:zeal") is not None
    assert len(gaps) > 10 and max(gaps) < 2.0, f"the event loop stalled for {max(gaps):.1f} s"


# -- reloads that would serve less ---------------------------------------------------------------


def test_reload_losing_a_file_keeps_the_serving_build(
    engine: Engine, sources: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = engine.stats()
    (sources / OBSIDIAN).rename(sources.parent / OBSIDIAN)  # moved away mid-edit
    with caplog.at_level(logging.WARNING, logger="index"), pytest.raises(ReloadRefused, match=OBSIDIAN):
        engine.reload()
    assert "reload refused" in caplog.text and OBSIDIAN in caplog.text
    after = engine.stats()
    assert (after["index_path"], after["entries"]) == (before["index_path"], before["entries"])
    assert engine.banned("moshi eihime").record is not None  # still served


def test_reload_of_an_unreadable_folder_keeps_the_serving_build(engine: Engine, sources: Path) -> None:
    shutil.rmtree(sources)  # briefly missing (a sync, a remount)
    with pytest.raises(ReloadRefused, match="no such file or folder"):
        engine.reload(isolated=False)
    assert engine.stats()["entries"] == 146


def test_reload_losing_most_entries_is_refused(engine: Engine, sources: Path) -> None:
    ruleset = sources / OBSIDIAN  # saved half-written: only its update log (93 entries -> 8)
    text = ruleset.read_text(encoding="utf-8")
    ruleset.write_text(text[: text.index("Initial Guidelines")], encoding="utf-8")
    with pytest.raises(ReloadRefused, match=r"the sources now give 61 entries, fewer than half of the 146 being"):
        engine.reload(isolated=False)
    assert engine.stats()["entries"] == 146


def test_a_smaller_edit_reloads(engine: Engine, sources: Path) -> None:
    page = sources / "000_99c7513ab738c7d1.txt"
    text = page.read_text(encoding="utf-8")
    first, second = [i for i, line in enumerate(text.split("\n")) if line.startswith("[edit]")][:2]
    lines = text.split("\n")
    page.write_text("\n".join(lines[:first] + lines[second:]), encoding="utf-8")  # one entry removed
    assert engine.reload(isolated=False)["entries"] == 145


# -- checksums ------------------------------------------------------------------------------------


def _segment(build: Path) -> Path:
    return next(build.glob("*.seg"))


def _flip(path: Path, offset: int, count: int = 32) -> None:
    with path.open("r+b") as f:
        f.seek(offset)
        data = f.read(count)
        f.seek(offset)
        f.write(bytes(b ^ 0xFF for b in data))


def test_every_build_file_is_in_the_manifest(engine: Engine) -> None:
    build = Path(engine.stats()["index_path"])
    assert store.check_manifest(build) is None
    (build / "vectors.bin").write_bytes(b"\0" * 8)  # a file another part of the build might add
    assert store.check_manifest(build) == "vectors.bin is not in the checksum manifest"
    store.write_manifest(build)
    assert store.check_manifest(build) is None
    (build / "vectors.bin").write_bytes(b"\1" * 8)
    assert store.check_manifest(build) == "vectors.bin does not match its checksum"


@pytest.mark.parametrize("where", [0.12, 0.5, 0.99])
def test_flipped_bytes_in_a_segment_rebuild_on_open(
    engine: Engine, sources: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, where: float
) -> None:
    build = Path(engine.stats()["index_path"])
    engine.close()
    segment = _segment(build)
    _flip(segment, int(segment.stat().st_size * where))
    with caplog.at_level(logging.WARNING, logger="index"):
        reopened = Engine.open([sources], tmp_path / "ix")
    try:
        assert "failed its checksum check" in caplog.text and "does not match its checksum" in caplog.text
        assert reopened.stats()["rebuilt"] is True and reopened.stats()["index_path"] != str(build)
        assert reopened.search("when does a duel stop resolving?")[0].entry.id == "glossary:resolve"
    finally:
        reopened.close()


def _postings_offset(build: Path, field: str, term: str) -> int:
    """Where a term's postings start inside the segment file (Whoosh 3 compound segment)."""
    ix = whoosh_index.open_dir(str(build))
    reader = ix.reader()
    try:
        compound = reader.segment().open_compound_file(ix.storage)
        pst = next(v["offset"] for name, v in compound._dir.items() if name.endswith(".pst"))
        compound.close()
        return pst + reader.term_info(field, term)._offset
    finally:
        reader.close()
        ix.close()


def test_query_failing_inside_the_index_rebuilds_once(
    engine: Engine, sources: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage the checksum cannot see (here: switched off): the first failing query rebuilds, then answers.

    The build's search arrays are damaged on disk so that they still load but the section-path postings
    point past the last entry: a question with a word of a section heading fails at query time, inside
    the index.
    """
    import numpy as np

    from index.build import lexical

    build = Path(engine.stats()["index_path"])
    engine.close()
    arrays = dict(np.load(build / lexical.FILE))
    term = arrays["terms"].tolist().index("card")
    assert arrays["section_ptr"][term + 1] > arrays["section_ptr"][term]  # the premise: "card" heads a section
    arrays["section_doc"][:] = 10**6
    np.savez(build / lexical.FILE, **arrays)
    monkeypatch.setattr(store, "check_manifest", lambda _folder: None)
    damaged = Engine.open([sources], tmp_path / "ix")
    try:
        assert damaged.stats()["index_path"] == str(build)  # opened as it is
        with caplog.at_level(logging.ERROR, logger="index"):
            first = damaged.search("is a terrain an enemy card?")
            again = damaged.search("terrain")
        assert first[0].entry.id == "glossary:terrain" and again[0].entry.id == "glossary:terrain"
        assert caplog.text.count("a query failed inside the index") == 1
        assert "IndexError" in caplog.text
        assert damaged.stats()["index_path"] != str(build)
    finally:
        damaged.close()


def test_a_fault_that_rebuilding_does_not_fix_is_raised_not_looped(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    rebuilt_paths: list[str] = []

    def broken(*_args: object, **_kwargs: object) -> None:
        raise IndexError("index 1000000 is out of bounds")

    from index.build.lexical import Lexical

    original = Lexical.score
    try:
        Lexical.score = broken  # type: ignore[method-assign]
        with caplog.at_level(logging.ERROR, logger="index"):
            for _ in range(5):
                with pytest.raises(IndexError):
                    engine.search("terrain")
                rebuilt_paths.append(engine.stats()["index_path"])
    finally:
        Lexical.score = original  # type: ignore[method-assign]
    assert caplog.text.count("a query failed inside the index") == 1  # one rebuild, then the error is raised
    assert len(set(rebuilt_paths)) == 1
    assert engine.search("terrain")[0].entry.id == "glossary:terrain"
    with pytest.raises(ValueError):
        engine.search("terrain", source="nowhere")  # bad input is the caller's: no rebuild for it


def test_a_reopened_build_that_fails_to_load_is_rebuilt(
    engine: Engine, sources: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damage that passes the checksum but breaks reading the term tables (it used to crash the start)."""
    import struct

    import index.engine as engine_module

    build = engine.stats()["index_path"]
    engine.close()
    real = engine_module.build_state

    def damaged(corpus, opened, rebuilt, *rest):  # type: ignore[no-untyped-def]
        if not rebuilt:
            raise struct.error("unpack requires a buffer of 2 bytes")  # what flipped term bytes raise
        return real(corpus, opened, rebuilt, *rest)

    monkeypatch.setattr(engine_module, "build_state", damaged)
    with caplog.at_level(logging.WARNING, logger="index"):
        reopened = Engine.open([sources], tmp_path / "ix")
    try:
        assert "is unreadable (error: unpack requires a buffer of 2 bytes); rebuilding" in caplog.text
        assert reopened.stats()["index_path"] != build
        assert reopened.search("terrain")[0].entry.id == "glossary:terrain"
    finally:
        reopened.close()

"""The on-disk index: analyzer, schema, atomic builds, stale and corrupt indexes, concurrent reload."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Corpus
from index.build import store
from index.engine import Engine
from index.text.analysis import STEMMED, WORDS, compact, fold, terms, words

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def sources(tmp_path: Path) -> Path:
    """A private copy of the shipped sources that a test may edit."""
    dst = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, dst)
    return dst


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, index_copy: Callable[..., Path]) -> tuple[Path, Path]:
    """Sources copy + an index of it (the session's default index copied, then opened: the same sources'
    bytes, so no rebuild), shared by the read-only tests of this module."""
    base = tmp_path_factory.mktemp("built")
    src = base / "sources"
    shutil.copytree(SHIPPED_SOURCES, src)
    ix = index_copy(base / "ix")
    Engine.open([src], ix).close()
    return src, ix


@pytest.fixture()
def built_copy(built: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """Sources + a private copy of the built index folder, for a test that damages, rebuilds or reloads it."""
    src, ix0 = built
    ix = tmp_path / "ix"
    shutil.copytree(ix0, ix)
    return src, ix


# ------------------------------------------------------------------------------------ analysis
def test_importing_whoosh_emits_no_warning() -> None:
    code = "import whoosh, whoosh.index, whoosh.fields, whoosh.query, whoosh.qparser, index.engine"
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_hyphenated_spaced_and_joined_forms_meet() -> None:
    assert set(terms("face-down")) == {"face", "down", "facedown"}
    assert set(terms("face down")) == {"face", "down"}
    assert terms("facedown") == ["facedown"]
    for dash in ("\u2011", "\u2013", "\u2212", "\u00ad"):  # non-breaking hyphen, en dash, minus, soft hyphen
        assert set(terms(f"Face{dash}Down")) == {"face", "down", "facedown"}, repr(dash)
    assert terms("can\u2019t") == terms("can`t") == ["cant"]


def test_typography_case_accents_folded() -> None:
    assert terms("\u201cTargeting\u201d") == ["target"]
    assert terms("Koan\u2019s R\u00e9sum\u00e9") == ["koan", "resum"]
    assert fold("\u201cFace\u2013Down\u201d") == "face down"
    assert compact("Face-down") == compact("face down") == "facedown"


def test_question_and_stop_words_dropped_rule_words_stemmed() -> None:
    assert terms("When does a duel stop resolving?") == ["duel", "stop", "resolv"]
    assert terms("What happens if I can't do this?") == ["cant"]
    assert terms("Is a Terrain an enemy card") == ["terrain", "enemi", "card"]


def test_words_field_is_unstemmed_and_keeps_offsets() -> None:
    assert words("Targeting paradoxes") == ["targeting", "paradoxes"]
    toks = [(t.text, t.startchar, t.endchar) for t in STEMMED("a face-down card", chars=True)]
    assert toks == [("face", 2, 6), ("down", 7, 11), ("facedown", 2, 11), ("card", 12, 16)]
    assert [t.text for t in WORDS("Ranged Attacks")] == ["ranged", "attacks"]


def test_schema_fields() -> None:
    schema = store.make_schema()
    for name in (
        "id",
        "title",
        "aliases",
        "exact",
        "section",
        "body",
        "words",
        "source",
        "kind",
        "change_kinds",
        "dates",
    ):
        assert name in schema.names()
    body = [t.text for t in schema["body"].analyzer("Targeting")]
    raw = [t.text for t in schema["words"].analyzer("Targeting")]
    assert body == ["target"] and raw == ["targeting"]


def test_default_index_dir_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("L5R_INDEX_DIR", str(tmp_path / "x"))
    assert store.default_index_dir() == tmp_path / "x"
    monkeypatch.delenv("L5R_INDEX_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert store.default_index_dir() == tmp_path / "cache" / "l5r-judge" / "index"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert store.default_index_dir() == Path.home() / ".cache" / "l5r-judge" / "index"


# ------------------------------------------------------------------------------------ lifecycle
def test_build_writes_pointer_and_second_open_reuses(built: tuple[Path, Path]) -> None:
    src, ix = built
    pointer = json.loads((ix / "CURRENT").read_text())
    assert (ix / pointer["dir"] / "meta.json").exists()
    meta = json.loads((ix / pointer["dir"] / "meta.json").read_text())
    assert meta["entries"] == 146 and len(meta["fingerprint"]) == 64
    engine = Engine.open([src], ix)
    try:
        stats = engine.stats()
        assert stats["rebuilt"] is False
        assert stats["fingerprint"] == pointer["fingerprint"]
        assert engine.search("terrain enemy")[0].entry.id == "glossary:terrain"
    finally:
        engine.close()


def test_fingerprint_depends_on_names_and_bytes(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("one")
    fp1 = store.fingerprint([a])
    a.write_text("two")
    fp2 = store.fingerprint([a])
    b = tmp_path / "b.txt"
    b.write_text("two")
    assert len({fp1, fp2, store.fingerprint([b])}) == 3
    assert store.fingerprint([a]) == fp2


def test_stale_index_rebuilt_when_a_source_changes(
    sources: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, index_copy: Callable[..., Path]
) -> None:
    ix = index_copy(tmp_path / "ix")  # the shipped sources' index: current until the edit below
    first = Engine.open([sources], ix)
    fp1 = first.stats()["fingerprint"]
    assert first.define("tessen").how != "exact"
    first.close()
    page = sources / "000_99c7513ab738c7d1.txt"
    text = page.read_text("utf-8")
    page.write_text(
        text.replace(
            "Back to the Comprehensive Rules",
            "[edit] Tessen\nA war fan carried by a Tactician.\nBack to the Comprehensive Rules",
        ),
        "utf-8",
    )
    with caplog.at_level(logging.INFO, logger="index"):
        second = Engine.open([sources], ix)
    try:
        assert second.stats()["rebuilt"] is True
        assert second.stats()["fingerprint"] != fp1
        assert "sources changed" in caplog.text
        r = second.define("tessen")
        assert r.how == "exact" and r.entry is not None and r.entry.id == "glossary:tessen"
        assert second.search("war fan")[0].entry.id == "glossary:tessen"
    finally:
        second.close()


def _garble_pointer(ix: Path) -> None:
    (ix / "CURRENT").write_bytes(b"\x00\xffnot json at all")


def _garble_segments(ix: Path) -> None:
    for f in (ix / json.loads((ix / "CURRENT").read_text())["dir"]).iterdir():
        if f.name != "meta.json":
            f.write_bytes(os.urandom(64))


def _point_outside(ix: Path) -> None:
    (ix / "CURRENT").write_text(json.dumps({"dir": "..", "fingerprint": "x"}))


@pytest.mark.parametrize("garble", [_garble_pointer, _garble_segments, _point_outside])
def test_garbage_index_rebuilt_with_log_line(
    built_copy: tuple[Path, Path], caplog: pytest.LogCaptureFixture, garble: Callable[[Path], None]
) -> None:
    src, ix = built_copy
    garble(ix)
    with caplog.at_level(logging.WARNING, logger="index"):
        engine = Engine.open([src], ix)
    try:
        assert "unreadable" in caplog.text
        assert engine.stats()["rebuilt"] is True
        assert engine.search("duel stop resolving")[0].entry.id == "glossary:resolve"
    finally:
        engine.close()


def test_corpus_digest_covers_everything_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = load_corpus([SHIPPED_SOURCES])
    before = store.corpus_digest(corpus)
    entry = next(e for e in corpus.entries if e.kind == "update")
    edited = Corpus(entries=[replace(e, new_wording="a new wording") if e is entry else e for e in corpus.entries])
    assert store.corpus_digest(edited) != before  # a field only the body indexes
    monkeypatch.setattr(store, "SCHEMA_VERSION", store.SCHEMA_VERSION + 1)
    assert store.corpus_digest(corpus) != before  # from_corpus indexes have no file fingerprint to catch this


def test_failed_build_leaves_previous_index_serving(
    built_copy: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, ix = built_copy
    pointer_before = (ix / "CURRENT").read_text()
    engine = Engine.open([src], ix)

    def boom(n: int) -> None:
        if n == 40:
            raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "after_document", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        engine.reload(isolated=False)  # in this process, where the test hook is set
    monkeypatch.setattr(store, "after_document", None)
    try:
        assert (ix / "CURRENT").read_text() == pointer_before
        assert not list(ix.glob(".tmp-*"))
        assert engine.search("is a terrain an enemy card?")[0].entry.id == "glossary:terrain"
        again = Engine.open([src], ix)
        assert again.stats()["rebuilt"] is False
        again.close()
    finally:
        engine.close()


def test_killed_build_leaves_previous_index_serving(built_copy: tuple[Path, Path], tmp_path: Path) -> None:
    src, ix = built_copy
    pointer_before = (ix / "CURRENT").read_text()
    marker = tmp_path / "midway"
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from index.build import store
        from index.engine import Engine
        engine = Engine.open([Path({str(src)!r})], Path({str(ix)!r}))
        def pause(n):
            if n == 30:
                Path({str(marker)!r}).write_text("x")
                time.sleep(60)
        store.after_document = pause
        engine.reload(isolated=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "child never reached the middle of its build"
        assert list(ix.glob(".tmp-*")), "a half-written build should exist while the child is paused"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (ix / "CURRENT").read_text() == pointer_before
    engine = Engine.open([src], ix)
    try:
        assert engine.stats()["rebuilt"] is False
        assert engine.search("when does a duel stop resolving?")[0].entry.id == "glossary:resolve"
        engine.reload()  # the next build clears the dead builder's temp folder
        assert not list(ix.glob(".tmp-*"))
    finally:
        engine.close()


def test_reload_swaps_while_readers_keep_working(built_copy: tuple[Path, Path]) -> None:
    src, ix = built_copy
    engine = Engine.open([src], ix)
    errors: list[BaseException] = []
    answers: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                answers.append(engine.search("is a terrain an enemy card?")[0].entry.id)
                engine.define("targt")
                engine.complete("fa")
                time.sleep(0.01)
            except BaseException as exc:  # noqa: BLE001 - the test reports any failure
                errors.append(exc)
                return

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        before = engine.stats()["index_path"]
        stats = engine.reload()
        n_before_end = len(answers)
        time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join()
        engine.close()
    assert not errors, errors
    assert len(answers) > n_before_end and set(answers) == {"glossary:terrain"}
    assert stats["index_path"] != before and stats["rebuilt"] is True


def test_concurrent_reloads_are_serialized(built_copy: tuple[Path, Path]) -> None:
    src, ix = built_copy
    engine = Engine.open([src], ix)
    results: list[dict | BaseException] = []

    def reload() -> None:
        try:
            results.append(engine.reload())
        except BaseException as exc:  # noqa: BLE001 - the test reports any failure
            results.append(exc)

    threads = [threading.Thread(target=reload) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert all(isinstance(r, dict) for r in results), results
        serving = ix / json.loads((ix / "CURRENT").read_text())["dir"]
        assert engine.stats()["index_path"] == str(serving)  # the last build published is the one CURRENT names
        assert len({r["index_path"] for r in results}) == 3  # type: ignore[index]
        assert len(list(ix.glob("build-*"))) == 2 and not list(ix.glob(".tmp-*"))
    finally:
        engine.close()


def test_unwritable_index_dir_falls_back_to_memory(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.ERROR, logger="index"):
        engine = Engine.open([SHIPPED_SOURCES], blocker / "ix")
    try:
        assert "in-memory" in caplog.text
        assert engine.stats()["index_path"] is None
        assert engine.search("when does a duel stop resolving?")[0].entry.id == "glossary:resolve"
    finally:
        engine.close()

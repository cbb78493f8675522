"""The rulebook's offline search (``bot.app.rulebook_search``): the export writes a Pagefind index holding one
record per entry that links to the entry's anchor, made of the entry's own words; without search the site is
as before; a Pagefind that cannot run stops the export with one line. (In a browser: ``test_browser.py``.)"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bot.app.rulebook import entry_href, export_rulebook
from bot.app.rulebook_search import SearchIndexError
from glossary.house import EXAMPLES_DIR
from glossary.kinds import label
from glossary.loader import SHIPPED_SOURCES, load_corpus
from glossary.model import Entry

SIGNATURE = b"pagefind_dcd"  # what Pagefind writes before the JSON of a record, gzipped


@pytest.fixture(scope="module")
def corpus_entries() -> list[Entry]:
    return load_corpus([SHIPPED_SOURCES, EXAMPLES_DIR]).entries


def _records(bundle: Path) -> list[dict[str, Any]]:
    """Every record Pagefind wrote (its fragments: gzipped JSON after a signature), as the browser reads them."""
    records = []
    for path in sorted((bundle / "fragment").glob("*.pf_fragment")):
        data = gzip.decompress(path.read_bytes())
        assert data.startswith(SIGNATURE), path.name
        records.append(json.loads(data[len(SIGNATURE):]))
    return records


def test_export_indexes_every_entry_at_its_anchor(corpus_entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(corpus_entries, tmp_path)
    bundle = tmp_path / "pagefind"
    entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
    assert entry["languages"]["en"]["page_count"] == len(corpus_entries) > 100
    for name in ("pagefind.js", "pagefind-ui.js", "pagefind-ui.css"):
        assert (bundle / name).is_file(), name

    records = _records(bundle)
    by_url = {r["meta"]["url"]: r for r in records}
    assert len(by_url) == len(records)
    assert set(by_url) == {entry_href(e) for e in corpus_entries}
    for e in corpus_entries:
        meta = by_url[entry_href(e)]["meta"]
        assert meta == {"title": e.label, "url": entry_href(e), "source": label(e.source)}, e.id

    terrain = str(by_url["glossary.html#glossary:terrain"]["content"])
    assert "no player can play another Terrain there." in terrain
    # Only the entry's own words: not the updates quoted under its paragraphs, citations or dates.
    update = next(e for e in corpus_entries if e.id == "obsidian-hand:update-2015-10-25")
    assert update.paragraphs[-1][:40] not in terrain
    assert "¶" not in terrain and "line 25" not in terrain


def test_search_js_hides_the_box_until_it_runs_and_says_how_to_serve_a_file(
    corpus_entries: list[Entry], tmp_path: Path
) -> None:
    export_rulebook(corpus_entries[:3], tmp_path)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert '<div class="search" id="search" hidden></div>' in index
    assert "<noscript>" in index  # without JavaScript: a note, and the A–Z lists
    script = (tmp_path / "search.js").read_text(encoding="utf-8")
    assert 'root.protocol === "file:"' in script and "python -m http.server" in script
    assert "box.hidden = false" in script


def test_without_search_no_script_box_or_index(corpus_entries: list[Entry], tmp_path: Path) -> None:
    written = export_rulebook(corpus_entries, tmp_path, search=False)
    assert [p.name for p in written][-1] == "style.css"
    assert not (tmp_path / "pagefind").exists() and not (tmp_path / "search.js").exists()
    for path in tmp_path.glob("*.html"):
        html_text = path.read_text(encoding="utf-8")
        assert "<script" not in html_text and 'id="search"' not in html_text and "<noscript>" not in html_text


def test_a_new_export_replaces_the_old_index(corpus_entries: list[Entry], tmp_path: Path) -> None:
    export_rulebook(corpus_entries, tmp_path)
    export_rulebook(corpus_entries[:5], tmp_path)
    records = _records(tmp_path / "pagefind")
    assert sorted(r["meta"]["url"] for r in records) == sorted(entry_href(e) for e in corpus_entries[:5])


def test_a_missing_pagefind_stops_the_export_with_one_line(
    corpus_entries: list[Entry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(tmp_path / "no-such-pagefind"))
    with pytest.raises(SearchIndexError) as raised:
        export_rulebook(corpus_entries[:3], tmp_path / "site")
    message = str(raised.value)
    assert message.startswith("Pagefind cannot run (") and "no-such-pagefind" in message
    assert "\n" not in message
    assert isinstance(raised.value, OSError)  # what `python -m bot export` reports as one line


def test_a_failing_pagefind_is_named_with_its_own_words(
    corpus_entries: list[Entry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "pagefind"
    broken.write_text("#!/bin/sh\necho 'pagefind: cannot start on this machine' >&2\nexit 3\n", encoding="utf-8")
    broken.chmod(0o755)
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(broken))
    with pytest.raises(SearchIndexError, match=r"exit status 3: pagefind: cannot start on this machine$"):
        export_rulebook(corpus_entries[:3], tmp_path / "site")


def test_export_writes_nothing_in_the_working_folder(
    corpus_entries: list[Entry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving Pagefind's ``async with`` writes the bundle again to its configured path (./pagefind by
    default): an export must not leave a stray copy in the folder it was run from."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    export_rulebook(corpus_entries, tmp_path / "site")
    assert list(cwd.iterdir()) == []
    assert (tmp_path / "site" / "pagefind" / "pagefind-entry.json").is_file()


def test_an_index_whose_entry_file_is_not_whole_is_built_again(
    corpus_entries: list[Entry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty pagefind-entry.json right after Pagefind said it wrote (once, on a loaded machine): the export
    indexes again rather than ship a site without search; a second failure is one clear error."""
    import bot.app.rulebook_search as search

    real, runs = search._run_apart, []

    def flaky(pages: Path, out: Path) -> int:
        done = real(pages, out)
        runs.append(out)
        if len(runs) == 1:
            (out / "pagefind-entry.json").write_text("", encoding="utf-8")  # as found that once
        return done

    monkeypatch.setattr(search, "_run_apart", flaky)
    real_written = search._written
    monkeypatch.setattr(search, "_written", lambda out, wait=0.0: real_written(out, 0.0))  # no waiting here
    export_rulebook(corpus_entries[:5], tmp_path / "site")
    assert len(runs) == 2
    assert json.loads((tmp_path / "site" / "pagefind" / "pagefind-entry.json").read_text(encoding="utf-8"))

    runs.clear()
    monkeypatch.setattr(search, "_written", lambda out, wait=0.0: False)
    with pytest.raises(SearchIndexError, match="Pagefind indexed"):
        export_rulebook(corpus_entries[:5], tmp_path / "again")
    assert len(runs) == 2


def test_the_service_is_closed_only_once_its_files_are_whole_on_disk(
    corpus_entries: list[Entry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind's service may answer "written" before its files are on disk, and closing it stops its writing:
    simulated here by a write that finishes 0.5 s late and is cut off when the service closes. Seen for real
    in a suite run beside a CPU-bound process (an empty entry file, twice in a row)."""
    import asyncio

    from pagefind.index import PagefindIndex
    from pagefind.service import PagefindService

    late: list[asyncio.Task[None]] = []
    real_write, real_close = PagefindIndex.write_files, PagefindService.close

    async def lagging_write(self: PagefindIndex, output_path: str | None = None) -> None:
        await real_write(self, output_path)
        entry = Path(output_path or self._config["output_path"]) / "pagefind-entry.json"  # type: ignore[index]
        whole = entry.read_bytes()
        entry.write_bytes(b"")

        async def finish() -> None:
            await asyncio.sleep(0.5)
            entry.write_bytes(whole)

        late.append(asyncio.get_running_loop().create_task(finish()))

    async def close(self: PagefindService) -> None:
        for task in late:
            task.cancel()  # the service is gone: what it had not written stays unwritten
        await real_close(self)

    monkeypatch.setattr(PagefindIndex, "write_files", lagging_write)
    monkeypatch.setattr(PagefindService, "close", close)
    export_rulebook(corpus_entries[:5], tmp_path / "site")
    assert json.loads((tmp_path / "site" / "pagefind" / "pagefind-entry.json").read_text(encoding="utf-8"))

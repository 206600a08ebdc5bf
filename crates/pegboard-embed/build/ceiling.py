#!/usr/bin/env python3
"""How far a static embedding of all-MiniLM-L6-v2 can take hybrid tool search: the teacher itself.

Runs the full transformer (mean pooling, as sentence-transformers does; numpy, distill.py's
forward pass) on every tool text and request that `examples/hybrid_dump.rs` wrote, and fuses
its cosine with the same lexical (BM25F) hits as the Rust hybrid ranking does:
`w * bm25 / best_bm25 + (1 - w) * cosine`. The static table (`../data`) is scored the same way,
which checks this script against `examples/hybrid_recall.rs`. Columns as there: hit@1 and
hit@5 (a request counts when a tool it needs is first / among the first five), recall@1 and
recall@5 (the share of its needed tools found), MRR.

    cargo run --release -p pegboard-embed --example hybrid_dump -- /tmp/dump
    venv/bin/python ceiling.py /tmp/dump ../data

A few CPU-minutes (about 5,600 texts through the transformer, one at a time).
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import distill

MAX_LEN = 256  # all-MiniLM-L6-v2's max_seq_length


def static_table(data: Path) -> np.ndarray:
    b = (data / "vectors.bin").read_bytes()
    rows, dims = struct.unpack("<II", b[8:16])
    scales = np.frombuffer(b[16:16 + 4 * rows], "<f4")
    q = np.frombuffer(b[16 + 4 * rows:], np.int8).reshape(rows, dims).astype(np.float32)
    return q * scales[:, None]


def normalise(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def print_row(set_name: str, model: str, qs: list, cos: np.ndarray, w: float) -> None:
    """Score `qs` (with their lexical hits and relevant tools) by `w * bm25 / best + (1 - w) *
    cos` and print the table's row: hit@1, hit@5, R@1, R@5, MRR."""
    r1 = r5 = hit1 = hit5 = mrr = 0.0
    for q, c in zip(qs, cos):
        s = (1 - w) * c
        best = max([h[1] for h in q["hits"]], default=0.0)
        if best > 0:
            for i, score in q["hits"]:
                s[i] += w * score / best
        top = list(np.argsort(-s, kind="stable")[:10])
        rel = q["relevant"]
        r1 += sum(r in top[:1] for r in rel) / len(rel)
        r5 += sum(r in top[:5] for r in rel) / len(rel)
        hit1 += any(r in top[:1] for r in rel)
        hit5 += any(r in top[:5] for r in rel)
        mrr += next((1 / (k + 1) for k, t in enumerate(top) if t in rel), 0.0)
    k = len(qs)
    what = "embedding only" if w == 0 else f"hybrid, lexical {w}"
    print(f"| {set_name} ({k}) | {model} | {what} | {100 * hit1 / k:.1f}% | "
          f"{100 * hit5 / k:.1f}% | {100 * r1 / k:.1f}% | {100 * r5 / k:.1f}% | "
          f"{mrr / k:.3f} |", flush=True)


def main():
    dump, data = Path(sys.argv[1]), Path(sys.argv[2])
    src = distill.model_dir()
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    vocab = [line.rstrip("\n") for line in open(src / "vocab.txt", encoding="utf-8")]
    unk, sep = vocab.index("[UNK]"), vocab.index("[SEP]")
    bert = distill.Bert(load_file(str(src / "model.safetensors")))
    table = static_table(data)

    def teacher(text: str) -> np.ndarray:
        ids = tok.encode(text).ids[:MAX_LEN]
        ids[-1] = sep
        return normalise(bert(np.array([ids]))[0].mean(0))

    def static(text: str) -> np.ndarray:
        ids = [i for i in tok.encode(text, add_special_tokens=False).ids if i != unk]
        return normalise(table[ids].sum(0)) if ids else np.zeros(table.shape[1], np.float32)

    for name in ["bfcl", "metatool"]:
        d = json.loads((dump / f"{name}.json").read_text(encoding="utf-8"))
        n = len(d["tools"])
        models = {"static table": static, "teacher transformer": teacher}
        vectors = {m: np.array([f(t["text"]) for t in d["tools"]]) for m, f in models.items()}
        print(f"{name}: {n} tools embedded", file=sys.stderr, flush=True)
        for split in ["tuning", "held-out"]:
            qs = [q for q in d["queries"] if q["split"] == split and q["relevant"]]
            if not qs:
                continue
            for m, f in models.items():
                cos = np.array([f(q["text"]) for q in qs]) @ vectors[m].T
                for w in [0.0, 0.3, 0.4, 0.5, 0.6]:
                    print_row(f"{name} {split}", m, qs, cos, w)

if __name__ == "__main__":
    main()

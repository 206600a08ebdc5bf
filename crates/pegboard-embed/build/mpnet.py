"""all-mpnet-base-v2's forward pass in numpy (transformers' MPNetModel: inference, no padding),
for `ceiling_mpnet.py`: BERT's layers plus MPNet's relative position bias (32 buckets, distance
128, shared by all layers), positions counted from 2 (after the padding index), layer norm eps 1e-5.
"""
import math
import numpy as np

from distill import gelu, layer_norm

HEADS = 12
BUCKETS = 32
MAX_DISTANCE = 128
EPS = 1e-5  # layer norm (BERT's is 1e-12)


def bucket(relative):
    """transformers' `MPNetEncoder.relative_position_bucket` (bidirectional)."""
    ret = np.zeros_like(relative)
    n = -relative
    nb = BUCKETS // 2
    ret += (n < 0).astype(relative.dtype) * nb
    n = np.abs(n)
    max_exact = nb // 2
    small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (np.log(np.maximum(n, 1).astype(np.float64) / max_exact)
                             / math.log(MAX_DISTANCE / max_exact) * (nb - max_exact)).astype(relative.dtype)
    large = np.minimum(large, nb - 1)
    ret += np.where(small, n, large)
    return ret


class MPNet:
    def __init__(self, weights):
        self.w = {k: v.astype(np.float32) for k, v in weights.items()}
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))

    def __call__(self, ids):
        w = self.w
        n, length = ids.shape
        pos = np.arange(length) + 2  # padding_idx 1, no padding
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos][None]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], EPS)
        rel = np.arange(length)[None, :] - np.arange(length)[:, None]
        bias = w["encoder.relative_attention_bias.weight"][bucket(rel)].transpose(2, 0, 1)[None]
        hidden = x.shape[-1]
        head = hidden // HEADS
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name, v):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin("attention.attn.q", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            k = lin("attention.attn.k", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            v = lin("attention.attn.v", x).reshape(n, length, HEADS, head).transpose(0, 2, 1, 3)
            scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(head)) + bias
            scores -= scores.max(-1, keepdims=True)
            attn = np.exp(scores)
            attn /= attn.sum(-1, keepdims=True)
            ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = layer_norm(x + lin("attention.attn.o", ctx),
                           w[p + "attention.LayerNorm.weight"], w[p + "attention.LayerNorm.bias"], EPS)
            h = gelu(lin("intermediate.dense", x))
            x = layer_norm(x + lin("output.dense", h), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], EPS)
        return x

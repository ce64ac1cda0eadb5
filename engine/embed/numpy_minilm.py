"""The bundled MiniLM (6-layer BERT) forward pass in numpy: query vectors without importing torch.

Answering a question needs one short encode; importing torch + transformers for it costs ~6 s
of an 8.5 s cold `ask`. This reads the same `model.safetensors` and `tokenizer.json` and computes
what sentence-transformers computes for all-MiniLM-L6-v2 (modules.json: Transformer -> mean
Pooling -> Normalize; max_seq_length 256 from sentence_bert_config.json): token + position +
type embeddings, 6 post-LayerNorm encoder layers with exact (erf) GELU, the mean of the token
states under the attention mask, L2 normalised. tests/engine/llm/test_light_encoder.py holds it to the
torch model's vectors (max abs difference <= 1e-4 on real questions).

The weights are read-only after loading and numpy releases the GIL inside its matrix products,
so threads share one instance without a lock (concurrent visitors do not queue on each other).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

#: sentence_bert_config.json of the bundled model; longer inputs are cut, as sentence-transformers does
MAX_SEQ_LENGTH = 256
#: Places in a forward pass's attention grid (batch x longest text). The attention scores are batch x 12 heads x
#: tokens^2 floats, and numpy's softmax makes several passes over them: at 32 texts of 256
#: tokens that is 100 MB per pass and the encode runs ~3x slower than in batches of 4 (measured on
#: the 59 longest of 315 HotpotQA chunks: 32 -> 16-24 s, 8 -> 9-14 s, 4 -> 8-9 s; torch 14-17 s).
BATCH_TOKENS = 1024
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (abs error <= 1.5e-7): numpy has no erf, and BERT's GELU
    is the exact erf form, not the tanh approximation (which would be off by ~1e-3). |x| is capped
    at 5 (erf(5) = 1 - 2e-12): past it exp(-x*x) turns denormal, which is ~100x slower on x86."""
    a = np.minimum(np.abs(x), np.float32(5.0))
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    poly = t * np.float32(1.061405429) + np.float32(-1.453152027)
    for c in (1.421413741, -0.284496736, 0.254829592):
        poly *= t
        poly += np.float32(c)
    poly *= t
    np.negative(a, out=t)
    t *= a
    np.exp(t, out=t)
    poly *= t
    np.subtract(1.0, poly, out=poly)
    return np.copysign(poly, x, out=poly)


def _gelu(x: np.ndarray) -> np.ndarray:
    y = _erf(x * np.float32(1.0 / math.sqrt(2.0)))
    y += 1.0
    y *= x
    y *= np.float32(0.5)
    return y


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + _EPS) * w + b


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The file's tensors as read-only views of one memory map (8-byte header length, a JSON
    header, then raw little-endian data): only the embedding rows a question uses are paged in."""
    dtypes = {"F32": np.float32, "I64": np.int64, "F16": np.float16}
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(n))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = raw[start:end].view(dtypes[info["dtype"]]).reshape(info["shape"])
    return out


class _Layer:
    """One encoder layer's weights, transposed once for `x @ w` (Q, K and V in one product)."""

    def __init__(self, w: dict[str, np.ndarray], i: int):
        p = f"encoder.layer.{i}."

        def t(name: str) -> np.ndarray:
            return np.ascontiguousarray(w[p + name + ".weight"].T, dtype=np.float32)

        def v(name: str) -> np.ndarray:
            return np.array(w[p + name], dtype=np.float32)

        sa = "attention.self."
        self.qkv = np.concatenate([t(sa + "query"), t(sa + "key"), t(sa + "value")], axis=1)
        self.qkv_b = np.concatenate([v(sa + "query.bias"), v(sa + "key.bias"), v(sa + "value.bias")])
        self.attn_out, self.attn_out_b = t("attention.output.dense"), v("attention.output.dense.bias")
        self.ln1 = (v("attention.output.LayerNorm.weight"), v("attention.output.LayerNorm.bias"))
        self.up, self.up_b = t("intermediate.dense"), v("intermediate.dense.bias")
        self.down, self.down_b = t("output.dense"), v("output.dense.bias")
        self.ln2 = (v("output.LayerNorm.weight"), v("output.LayerNorm.bias"))

    def __call__(self, x: np.ndarray, bias: np.ndarray, at: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
        """`x` is (tokens, hidden), the texts' tokens one after another with no padding, so the
        dense products (nearly all of the arithmetic) run once per real token. Only attention
        needs them per text: `at` places each token in a (texts, longest) grid for it (None: one
        text, no grid); `bias` masks the grid's empty places."""
        d = x.shape[1]
        hd = d // _HEADS
        qkv = x @ self.qkv + self.qkv_b
        b, n = bias.shape[0], bias.shape[-1]
        if at is not None:
            grid = np.zeros((b, n, 3 * d), dtype=np.float32)
            grid[at] = qkv
            qkv = grid
        qkv = qkv.reshape(b, n, 3, _HEADS, hd).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (texts, heads, tokens, head_dim)
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / math.sqrt(hd))
        scores += bias
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, d)
        ctx = ctx[at] if at is not None else ctx.reshape(n, d)
        x = _layer_norm(ctx @ self.attn_out + self.attn_out_b + x, *self.ln1)
        h = _gelu(x @ self.up + self.up_b)
        return _layer_norm(h @ self.down + self.down_b + x, *self.ln2)


class NumpyMiniLM:
    """all-MiniLM-L6-v2 sentence vectors from a model folder, with numpy and `tokenizers` only."""

    def __init__(self, model_dir: Path):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # the file pads to 128 and cuts at 128; sentence-transformers pads to the batch's longest
        # and cuts at max_seq_length (256): do the same
        self._tok.no_padding()
        self._tok.enable_truncation(MAX_SEQ_LENGTH)
        w = read_safetensors(model_dir / "model.safetensors")
        self._words = w["embeddings.word_embeddings.weight"]  # stays mapped: rows gathered per call
        self._pos = np.array(w["embeddings.position_embeddings.weight"][:MAX_SEQ_LENGTH], dtype=np.float32)
        self._type0 = np.array(w["embeddings.token_type_embeddings.weight"][0], dtype=np.float32)
        self._ln = (
            np.array(w["embeddings.LayerNorm.weight"], dtype=np.float32),
            np.array(w["embeddings.LayerNorm.bias"], dtype=np.float32),
        )
        self._layers = [_Layer(w, i) for i in range(_LAYERS)]
        self.dim = int(self._words.shape[1])

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length float32 rows; texts are grouped by length so the attention grid pads little
        (the dense products, nearly all the arithmetic, run on the real tokens only)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # one by one: `encode_batch` starts a rayon thread pool (contending with the matrix products,
        # and warning after any later fork) to save microseconds on a question's few texts
        ids = [self._tok.encode(t).ids for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            # sorted ascending, so the last text of a batch is its longest: grow the batch while
            # batch x longest stays within the token budget
            end = start + 1
            while (
                end < len(order)
                and end - start < batch_size
                and (end - start + 1) * len(ids[order[end]]) <= BATCH_TOKENS
            ):
                end += 1
            part = order[start:end]
            out[part] = self._forward([ids[i] for i in part])
            start = end
        return out

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        lens = np.array([len(s) for s in seqs])
        n = int(lens.max())
        mask = np.arange(n)[None, :] < lens[:, None]  # (texts, longest): which places hold a token
        rows, cols = np.nonzero(mask)  # row-major: the tokens in the order they are packed
        ids = np.concatenate([np.asarray(s, dtype=np.int64) for s in seqs])
        x = self._words[ids].astype(np.float32) + self._pos[cols] + self._type0
        x = _layer_norm(x, *self._ln)
        # empty places get the most negative float added, as transformers' extended attention mask does
        bias = ((~mask).astype(np.float32) * np.finfo(np.float32).min)[:, None, None, :]
        grid = (rows, cols) if len(seqs) > 1 else None
        for layer in self._layers:
            x = layer(x, bias, grid)
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        pooled = np.add.reduceat(x, starts, axis=0) / lens[:, None].astype(np.float32)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

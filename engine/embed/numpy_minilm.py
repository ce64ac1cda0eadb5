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
#: Tokens per forward pass (batch x longest text). The attention scores are batch x 12 heads x
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

    def __call__(self, x: np.ndarray, bias: np.ndarray, b: int, n: int) -> np.ndarray:
        """`x` is (batch * tokens, hidden): the dense products run as one 2-D matrix product each."""
        d = x.shape[1]
        hd = d // _HEADS
        qkv = (x @ self.qkv + self.qkv_b).reshape(b, n, 3, _HEADS, hd).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (batch, heads, tokens, head_dim)
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / math.sqrt(hd))
        scores += bias
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, d)
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
        """Unit-length float32 rows; texts are grouped by length so a batch pads little."""
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
        n = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), n), dtype=np.int64)
        mask = np.zeros((len(seqs), n), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1.0
        x = self._words[ids].astype(np.float32) + self._pos[:n] + self._type0
        x = _layer_norm(x.reshape(len(seqs) * n, self.dim), *self._ln)
        # padded keys get the most negative float added, as transformers' extended attention mask does
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in self._layers:
            x = layer(x, bias, len(seqs), n)
        x = x.reshape(len(seqs), n, self.dim)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

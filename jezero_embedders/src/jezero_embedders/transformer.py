"""The forward pass of a BERT encoder (all-MiniLM-L6-v2: 6 layers, 384 wide, 12 heads) in numpy,
from its safetensors weights. `prepare` runs it once per vocabulary token; the benchmark runs it on
whole texts as the reference the static table is measured against. No torch: the weights are a
hundred arrays and the arithmetic is a few matrix products per layer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

# Abramowitz and Stegun 7.1.26: erf to within 1.5e-7, enough for the exact ("gelu", not the tanh
# form) activation BERT was trained with; numpy has no erf and scipy is not worth a dependency.
_AS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_AS_P = 0.3275911
_SQRT_HALF = 1.0 / math.sqrt(2.0)  # a Python float: a numpy float64 would make float32 arrays float64


def _gelu(x: np.ndarray) -> np.ndarray:
    """x * Phi(x), with erf by A&S 7.1.26, written so that x is overwritten and only two
    temporaries are made (the activation of 4,096 positions x 1,536 is 25 MB a layer; the plain
    formula made a dozen such arrays and cost as much as the layer's matrix products):
    gelu(x) = relu(x) - |x| / 2 * poly(t) * exp(-x^2 / 2), t = 1 / (1 + p |x| / sqrt 2)."""
    a = np.abs(x)
    t = a * (_AS_P * _SQRT_HALF)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * _AS[4]
    for c in (_AS[3], _AS[2], _AS[1]):
        poly += c
        poly *= t
    poly += _AS[0]
    poly *= t
    np.square(x, out=t)
    t *= -0.5
    np.exp(t, out=t)
    poly *= t
    poly *= a
    poly *= 0.5
    np.maximum(x, 0.0, out=x)
    x -= poly
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    x = x - mean
    var = np.square(x).mean(-1, keepdims=True)
    x /= np.sqrt(var + eps)
    x *= weight
    x += bias
    return x


class Encoder:
    """A BERT encoder read from a folder holding `config.json` and `model.safetensors`."""

    def __init__(self, folder: Path):
        config = json.loads((folder / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"{folder}: not a BERT encoder with gelu ({config.get('model_type')!r})")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.max_positions = int(config["max_position_embeddings"])
        self.w = {k.removeprefix("bert."): v for k, v in load_file(folder / "model.safetensors").items()}
        self._prepare_weights()

    @property
    def word_embeddings(self) -> np.ndarray:
        return self.w["embeddings.word_embeddings.weight"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        # One matrix product over every position (batch * length rows): numpy would otherwise
        # make one small product per text of the batch, several times slower.
        flat = x.reshape(-1, x.shape[-1]) @ self._t[name]
        flat += self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _prepare_weights(self) -> None:
        """Each layer's weights transposed once (x @ W.T becomes x @ Wt, contiguous), and the
        query, key and value projections joined into one product of three times the width. The
        originals are dropped: the encoder holds one copy of the weights (87 MB)."""
        self._t: dict[str, np.ndarray] = {}
        for name in {k.rsplit(".", 1)[0] for k in self.w if k.endswith(".weight") and self.w[k].ndim == 2
                     and k.startswith("encoder.")}:
            self._t[name] = np.ascontiguousarray(self.w.pop(f"{name}.weight").T)
        for i in range(self.layers):
            p = f"encoder.layer.{i}.attention.self"
            parts = [f"{p}.{n}" for n in ("query", "key", "value")]
            self._t[f"{p}.qkv"] = np.concatenate([self._t.pop(n) for n in parts], axis=1)
            self.w[f"{p}.qkv.bias"] = np.concatenate([self.w[f"{n}.bias"] for n in parts])

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The last hidden states, (batch, length, width), for token ids (batch, length) padded
        where `mask` is 0."""
        w = self.w
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        width = x.shape[-1]
        head = width // self.heads
        # Padding attends nowhere: a large negative score before the softmax.
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(x.dtype)
        scale = 1.0 / math.sqrt(head)
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            qkv = self._linear(x, f"{p}.attention.self.qkv").reshape(batch, length, 3, self.heads, head)
            # (batch, heads, length, head), each contiguous: numpy hands contiguous stacks of
            # matrices to BLAS, and loops in C over strided ones (the attention was a third of
            # the time before).
            q, k, v = (np.ascontiguousarray(qkv[:, :, j].transpose(0, 2, 1, 3)) for j in range(3))
            q *= scale
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            out = self._linear(context, f"{p}.attention.output.dense")
            out += x
            x = _layer_norm(out, w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            out = self._linear(inner, f"{p}.output.dense")
            out += x
            x = _layer_norm(out, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], self.eps)
        return x

    def mean_pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The mean of the hidden states over the unpadded positions, (batch, width): the pooling
        all-MiniLM-L6-v2 was trained with (1_Pooling/config.json: mean tokens)."""
        h = self.hidden(ids, mask)
        m = mask[..., None].astype(h.dtype)
        return (h * m).sum(1) / np.maximum(m.sum(1), 1.0)

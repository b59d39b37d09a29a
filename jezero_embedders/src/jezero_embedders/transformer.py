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


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * a)
    poly = t * (_AS[0] + t * (_AS[1] + t * (_AS[2] + t * (_AS[3] + t * _AS[4]))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    # math.sqrt, a Python float: a numpy float64 scalar would turn float32 arrays into float64.
    return 0.5 * x * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


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

    @property
    def word_embeddings(self) -> np.ndarray:
        return self.w["embeddings.word_embeddings.weight"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        # One matrix product over every position (batch * length rows): numpy would otherwise
        # make one small product per text of the batch, several times slower.
        flat = x.reshape(-1, x.shape[-1]) @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1)

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
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t):
                return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            x = _layer_norm(x + self._linear(context, f"{p}.attention.output.dense"),
                            w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(x + self._linear(inner, f"{p}.output.dense"),
                            w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], self.eps)
        return x

    def mean_pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The mean of the hidden states over the unpadded positions, (batch, width): the pooling
        all-MiniLM-L6-v2 was trained with (1_Pooling/config.json: mean tokens)."""
        h = self.hidden(ids, mask)
        m = mask[..., None].astype(h.dtype)
        return (h * m).sum(1) / np.maximum(m.sum(1), 1.0)

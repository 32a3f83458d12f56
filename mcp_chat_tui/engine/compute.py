"""The dtype a model computes in: on MLX's CPU backend, float32 where that is faster than the stored weights.

MLX's CPU kernels for float16 and bfloat16 are slow, and only float32 products go through the
optimized BLAS (``engine.blas``): half-precision weights are cast to float32 at load, and
quantized ones made dense float32, when memory allows; a quantized model too big for that
computes with float32 scales and biases. Why, with the figures: docs/cpu.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_chat_tui.engine.loading import evaluate_in_steps, no_stop

AUTO = "auto"  # EngineSettings.compute_dtype: float32 where measured faster on the CPU
STORED = "stored"  # compute in the dtype the weights are stored in
FLOAT32_ON_CPU = {"float16", "bfloat16", "4-bit", "8-bit"}  # stored weight types computed faster in float32
MEMORY_SHARE = 0.5  # the cast may take at most this share of the memory available now


@dataclass(frozen=True)
class ComputeChoice:
    """The weights as stored and the dtype the model computes in."""

    weights: str  # "float16", "bfloat16", "float32", "4-bit", ...
    dtype: str  # "float32", or the stored floating dtype
    dense: bool = False  # quantized weights made dense at load
    note: str = ""  # why a faster way was not taken ("" when nothing stood in the way)

    def label(self) -> str:
        """``float32 from float16``, ``float32 from 4-bit``, ``4-bit, float32: ...``, ``float16: ...``."""
        if self.weights.endswith("-bit") and not self.dense:
            text = f"{self.weights}, {self.dtype}"
        else:
            text = f"{self.dtype} from {self.weights}" if self.dtype != self.weights else self.dtype
        return f"{text}: {self.note}" if self.note else text


@dataclass(frozen=True)
class ModelFacts:
    """What the choice depends on, read from a loaded model and the machine."""

    weights: str  # the stored weight type
    floating: str  # the dtype of the floating parameters (quantized models: their scales)
    cast_bytes: int  # what casting the floating parameters to float32 adds
    dense_bytes: int  # what making every weight dense float32 adds (quantized models; else cast_bytes)
    on_cpu: bool  # MLX computes on its CPU backend
    available_bytes: int | None  # memory available now (None when unknown)


def decide(facts: ModelFacts, setting: str) -> ComputeChoice:
    """What to compute in (see the module's docstring); ``setting``: ``auto``, ``stored`` or a dtype name."""
    weights, floating = facts.weights, facts.floating
    if setting == STORED or (setting == AUTO and not facts.on_cpu):
        return ComputeChoice(weights, floating)
    wanted = setting if setting != AUTO else ("float32" if weights in FLOAT32_ON_CPU else floating)
    if wanted != "float32":
        return ComputeChoice(weights, wanted)

    def fits(extra: int) -> bool:
        return facts.available_bytes is None or extra <= facts.available_bytes * MEMORY_SHARE

    quantized = weights.endswith("-bit")
    if quantized and fits(facts.dense_bytes):
        return ComputeChoice(weights, "float32", dense=True)
    if fits(facts.cast_bytes):
        note = f"dense float32 needs {facts.dense_bytes / 1e9:.1f} GB more memory" if quantized else ""
        return ComputeChoice(weights, "float32", note=note)
    return ComputeChoice(weights, floating, note=f"float32 needs {facts.cast_bytes / 1e9:.1f} GB more memory")


def model_facts(model: Any) -> ModelFacts:
    """The facts ``decide`` needs about a loaded mlx-lm model (on the MLX thread)."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten

    quantized = [m for _, m in model.named_modules() if isinstance(m, (nn.QuantizedLinear, nn.QuantizedEmbedding))]
    params = [v for _, v in tree_flatten(model.parameters())]
    floating = [v for v in params if mx.issubdtype(v.dtype, mx.floating)]
    dtypes = [_name(v.dtype) for v in floating]
    dtype = max(set(dtypes), key=dtypes.count) if dtypes else "float32"
    cast = sum(v.size * (4 - v.itemsize) for v in floating)
    packed = sum(m.weight.size * (32 // m.bits) for m in quantized)  # the weights' values, unpacked
    dense = 4 * (packed + sum(v.size for v in floating)) - sum(v.nbytes for v in params)
    weights = f"{max(m.bits for m in quantized)}-bit" if quantized else dtype
    on_cpu = mx.default_device().type == mx.DeviceType.cpu
    return ModelFacts(weights, dtype, cast, dense if quantized else cast, on_cpu, available_memory())


def prepare(model: Any, setting: str, check: Callable[[], None] = no_stop) -> ComputeChoice:
    """Choose the compute dtype for ``model`` and convert it in place (on the MLX thread), in steps with
    ``check`` before each (it raises when the load is cancelled)."""
    import mlx.core as mx

    facts = model_facts(model)
    choice = decide(facts, setting)
    if choice.dense:
        from mlx_lm.utils import dequantize_model

        dequantize_model(model)  # replaces the quantized layers of ``model`` itself
    if choice.dtype != facts.floating or choice.dense:
        model.set_dtype(getattr(mx, choice.dtype))
        evaluate_in_steps(model, check)
    return choice


def available_memory() -> int | None:
    """Bytes of memory available now (Linux: MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]

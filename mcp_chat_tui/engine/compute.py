"""The dtype a model computes in: on MLX's CPU backend, float32 where that is faster than the stored weights.

MLX's CPU kernels for float16 and bfloat16 are slow, and only float32 matmuls go through the
optimized BLAS (``engine.blas``): unquantized half-precision weights are cast to float32 at load
when memory allows. For quantized weights the cast touches only their scales and biases (so
the activations are float32). The per-type choice comes from measurements: bench/README.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

AUTO = "auto"  # EngineSettings.compute_dtype: float32 where measured faster on the CPU
STORED = "stored"  # compute in the dtype the weights are stored in
FLOAT32_ON_CPU = {"float16", "bfloat16", "4-bit", "8-bit"}  # stored weight types computed faster in float32
MEMORY_SHARE = 0.5  # the cast may take at most this share of the memory available now


@dataclass(frozen=True)
class ComputeChoice:
    """The weights as stored and the dtype the model computes in."""

    weights: str  # "float16", "bfloat16", "float32", "4-bit", ...
    dtype: str  # "float32", or the stored floating dtype
    note: str = ""  # why a faster dtype was not used ("" when nothing stood in the way)

    @property
    def cast(self) -> bool:
        return self.dtype != self.weights and not self.weights.endswith("-bit")

    def label(self) -> str:
        """``float32 (from float16)``, ``4-bit, float32``, ``float16 (float32 needs 2.1 GB more memory)``."""
        if self.weights.endswith("-bit"):
            text = f"{self.weights}, {self.dtype}"
        else:
            text = f"{self.dtype} (from {self.weights})" if self.cast else self.dtype
        return f"{text} ({self.note})" if self.note else text


def decide(
    weights: str, floating: str, setting: str, on_cpu: bool, extra_bytes: int, available_bytes: int | None
) -> ComputeChoice:
    """What to compute in, from facts only (no MLX): see the module's docstring.

    Args:
        weights: the stored weight type ("float16", "4-bit", ...).
        floating: the dtype of the model's floating parameters (quantized models: their scales).
        setting: ``auto``, ``stored``, or a dtype name such as ``float32``.
        on_cpu: whether MLX computes on its CPU backend.
        extra_bytes: what casting the floating parameters to float32 would add.
        available_bytes: memory available now (None when unknown).
    """
    if setting == STORED or (setting == AUTO and not on_cpu):
        return ComputeChoice(weights, floating)
    wanted = setting if setting != AUTO else ("float32" if weights in FLOAT32_ON_CPU else floating)
    if wanted == floating:
        return ComputeChoice(weights, floating)
    if wanted == "float32" and available_bytes is not None and extra_bytes > available_bytes * MEMORY_SHARE:
        return ComputeChoice(weights, floating, f"float32 needs {extra_bytes / 1e9:.1f} GB more memory")
    return ComputeChoice(weights, wanted)


def weight_type(model: Any) -> tuple[str, str]:
    """(stored weight type, dtype of the floating parameters) of a loaded mlx-lm model."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten

    bits = {m.bits for _, m in model.named_modules() if isinstance(m, (nn.QuantizedLinear, nn.QuantizedEmbedding))}
    floating = [v.dtype for _, v in tree_flatten(model.parameters()) if mx.issubdtype(v.dtype, mx.floating)]
    dtype = _name(max(set(floating), key=floating.count)) if floating else "float32"
    return (f"{max(bits)}-bit" if bits else dtype), dtype


def prepare(model: Any, setting: str) -> ComputeChoice:
    """Choose the compute dtype for ``model`` and cast its floating parameters to it (on the MLX thread)."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    weights, floating = weight_type(model)
    on_cpu = mx.default_device().type == mx.DeviceType.cpu
    params = [v for _, v in tree_flatten(model.parameters()) if mx.issubdtype(v.dtype, mx.floating)]
    extra = sum(v.size * (4 - v.itemsize) for v in params)
    choice = decide(weights, floating, setting, on_cpu, extra, available_memory())
    if choice.dtype != floating:
        model.set_dtype(getattr(mx, choice.dtype))
        mx.eval(model.parameters())
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

"""What ``MlxEngine`` is told: how it generates and what it computes in, one object so a new setting is one field."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_chat_tui.engine.compute import AUTO


@dataclass
class EngineSettings:
    """The local engine's settings; ``MlxEngine(model, settings, **overrides)``."""

    # Generation (engine/generation.py): None means not set, so the model's generation_config.json or the app's default applies.
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    prefill_step_size: int = 2048
    compute_dtype: str = AUTO  # "auto": float32 on the CPU where measured faster; "stored"; or a dtype name
    quantized_kv_start: int = 5000  # with kv_bits: the cache is quantized once it holds this many tokens (mlx-lm's)
    # Below: None means not set (the model's own default, or the app's). config/model_options.py documents them.
    min_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    seed: int | None = None
    context_length: int | None = None
    kv_bits: int | None = None
    kv_group_size: int | None = None
    draft_model: str | None = None
    num_draft_tokens: int | None = None
    tool_prompt: str | None = None
    thinking: bool | None = None  # the chat template's ``enable_thinking`` (None: the template's default)
    sources: dict[str, str] = field(default_factory=dict)  # where each set value came from: "config.toml", "flag"

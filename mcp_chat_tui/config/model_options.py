"""``[model]`` and ``[models."<id>"]`` in ``config.toml``: how a model samples, how long it may write,
and what it runs with.

``[model]`` holds the settings for every model; ``[models."<id>"]`` those for one model (its name as
given with ``--model``, or a folder's path), over ``[model]``. A key left out means the model's own
default (its ``generation_config.json``) or the app's.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

ToolPrompt = Literal["template", "text"]
KvBits = Literal[1, 2, 3, 4, 5, 6, 8]  # what MLX quantizes to (mx.quantize)
KvGroupSize = Literal[32, 64, 128]  # the group sizes MLX quantizes in
KV_BITS: tuple[int, ...] = get_args(KvBits)
KV_GROUP_SIZES: tuple[int, ...] = get_args(KvGroupSize)


class ModelOptions(BaseModel):
    """One table of model settings; every key optional (``None``: not set here)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    min_p: float | None = Field(None, ge=0, le=1)
    top_k: int | None = Field(None, ge=0)
    repetition_penalty: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = Field(None, ge=0)
    context_length: int | None = Field(None, ge=1)
    kv_bits: KvBits | None = None
    kv_group_size: KvGroupSize | None = None
    draft_model: str | None = Field(None, min_length=1)
    num_draft_tokens: int | None = Field(None, ge=1)
    tool_prompt: ToolPrompt | None = None
    thinking: bool | None = None  # False: the chat template's enable_thinking switch off (where it has one)

    def over(self, base: ModelOptions) -> ModelOptions:
        """These options where set, ``base``'s elsewhere."""
        return base.model_copy(update=self.model_dump(exclude_none=True))

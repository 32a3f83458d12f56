"""A model's context length (how many tokens a prompt and its reply may hold), read from its own files,
and the error for a prompt that cannot fit."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from mcp_chat_tui.engine.events import EngineError

# A tokenizer saved without a limit says 1e30 (transformers' VERY_LARGE_INTEGER): no real model takes that many.
SANE_MODEL_MAX_LENGTH = 10_000_000
CHARS_PER_TOKEN = 4  # the estimate where no tokenizer counts: about four characters a token in English text


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` by estimate (a character count over ``CHARS_PER_TOKEN``, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def context_length_from_files(folder: Path, tokenizer: Any) -> int | None:
    """``max_position_embeddings`` of the folder's config.json (or of its ``text_config``), else the
    tokenizer's ``model_max_length`` when it is a real limit; None when neither says."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    for table in (config, config.get("text_config") if isinstance(config, dict) else None):
        if isinstance(table, dict):
            value = table.get("max_position_embeddings")
            if _positive_int(value):
                return value
    value = getattr(tokenizer, "model_max_length", None)
    if _positive_int(value) and value < SANE_MODEL_MAX_LENGTH:
        return value
    return None


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class TokenCounter:
    """Counts tokens with a model's ``tokenizer`` once one is set, else estimates (``estimate_tokens``).

    The loop counts while the MLX thread may render a prompt with the same tokenizer: both hold ``lock``.
    """

    def __init__(self) -> None:
        self.tokenizer: Any = None
        self.lock = threading.Lock()

    def __call__(self, text: str) -> int:
        tokenizer = self.tokenizer
        if tokenizer is None:
            return estimate_tokens(text)
        with self.lock:
            return len(tokenizer.encode(text, add_special_tokens=False))


def check_fits(model: str, prompt_tokens: int, context_length: int | None) -> None:
    """Raise ``PromptTooLong`` when the prompt leaves no room for a reply in the context."""
    if context_length is not None and prompt_tokens >= context_length:
        raise PromptTooLong(model, prompt_tokens, context_length)


class PromptTooLong(EngineError):
    """The prompt alone takes the whole context: the message names the figures and what to do."""

    def __init__(self, model: str, prompt_tokens: int, context_length: int) -> None:
        super().__init__(
            f"the prompt is {prompt_tokens:,} tokens and model '{model}' takes {context_length:,} "
            "(prompt and reply): send fewer turns (a smaller max_turns in config.toml, or /compact to "
            "summarise old ones), start a new conversation, or, if the model takes more, set a larger "
            "context_length ([model] in config.toml or --context-length)"
        )
        self.prompt_tokens = prompt_tokens
        self.context_length = context_length

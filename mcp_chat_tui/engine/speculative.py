"""The options a user turns on for the local model's KV cache: quantized (``kv_bits``, ``kv_group_size``)
and shared with a draft model for speculative decoding (``draft_model``, ``num_draft_tokens``).

With a draft model the engine's cache is one list: the model's layers, then the draft's (the shape
mlx-lm's ``speculative_generate_step`` takes). Both parts always hold the same tokens: they are
prefilled together, trimmed together and reset together. Runs on the MLX thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_chat_tui.engine.events import EngineError, LoadProgress
from mcp_chat_tui.engine.loading import load_model_and_tokenizer, looks_like_path, resolve_model
from mcp_chat_tui.engine.settings import EngineSettings

DEFAULT_KV_GROUP_SIZE = 64  # mlx-lm's
DEFAULT_NUM_DRAFT_TOKENS = 3  # mlx-lm's (mlx_lm.generate --num-draft-tokens)
DRAFT_KEY = "draft_model in config.toml, or --draft-model"
KV_KEYS = "kv_bits and kv_group_size in config.toml, or --kv-bits and --kv-group-size"


@dataclass
class CacheOptions:
    """What the cache is made of: the model, the draft model if any, and the quantization settings."""

    model: Any
    draft: Any = None
    kv_bits: int | None = None
    kv_group_size: int = DEFAULT_KV_GROUP_SIZE
    quantized_kv_start: int = 0
    num_draft_tokens: int = DEFAULT_NUM_DRAFT_TOKENS

    @classmethod
    def of(cls, model: Any, draft: Any, settings: EngineSettings) -> CacheOptions:
        return cls(
            model,
            draft,
            settings.kv_bits,
            settings.kv_group_size or DEFAULT_KV_GROUP_SIZE,
            settings.quantized_kv_start,
            settings.num_draft_tokens or DEFAULT_NUM_DRAFT_TOKENS,
        )

    @property
    def model_layers(self) -> int:
        """How many of the cache's entries are the model's (the rest are the draft's)."""
        return len(self.model.layers)

    def new_cache(self) -> list[Any]:
        """An empty cache: the model's, then the draft's."""
        from mlx_lm.models.cache import make_prompt_cache

        cache = make_prompt_cache(self.model)
        return cache + make_prompt_cache(self.draft) if self.draft is not None else cache

    def quantize(self, cache: list[Any]) -> None:
        """Turn each part of ``cache`` that holds ``quantized_kv_start`` tokens into a quantized one, in place."""
        from mlx_lm.generate import maybe_quantize_kv_cache

        maybe_quantize_kv_cache(cache, self.quantized_kv_start, self.kv_group_size, self.kv_bits)

    def stream_kwargs(self) -> dict[str, Any]:
        """What ``stream_generate`` is given for these options.

        Without a draft, mlx-lm quantizes the cache as it grows (in the list it is given). With one it
        would quantize copies of the list's two halves, so the engine quantizes between steps itself.
        """
        if self.draft is not None:
            return {"draft_model": self.draft, "num_draft_tokens": self.num_draft_tokens}
        if self.kv_bits is None:
            return {}
        return {
            "kv_bits": self.kv_bits,
            "kv_group_size": self.kv_group_size,
            "quantized_kv_start": self.quantized_kv_start,
        }

    def prefill(self, cache: list[Any], tokens: list[int], step: int, on_progress: Callable[[int, int], None]) -> None:
        """Compute ``tokens`` into the model's and the draft's (if any) parts of ``cache``, ``step`` at a time.

        ``on_progress(done, total)`` follows each step (``total`` counts one token more: the one
        generation starts from), and may raise to stop; both parts then hold the same tokens.
        """
        import mlx.core as mx
        from mlx_lm.generate import generation_stream

        main, draft = cache[: self.model_layers], cache[self.model_layers :]
        done, total = 0, len(tokens) + 1
        on_progress(0, total)
        with mx.stream(generation_stream):
            while done < len(tokens):
                chunk = mx.array(tokens[done : done + step])[None]
                self.model(chunk, cache=main)
                if self.draft is not None:
                    self.draft(chunk, cache=draft)
                self.quantize(main)
                self.quantize(draft)
                mx.eval([c.state for c in main + draft])
                cache[:] = main + draft  # quantizing replaced entries of the two lists
                done += chunk.shape[1]
                on_progress(done, total)
                mx.clear_cache()

    def settle(self, cache: list[Any], tokens: list[int]) -> list[int] | None:
        """After a generation: the tokens ``cache`` holds, its parts trimmed to the same length.

        None when a part holds more than ``tokens`` (tokens nobody knows: the cache must be rebuilt).
        """
        offsets = [getattr(part[0], "offset", None) for part in self._parts(cache) if part]
        if None in offsets:
            return tokens
        if max(offsets) > len(tokens):
            return None
        length = min(offsets)
        for part, offset in zip(self._parts(cache), offsets, strict=True):
            if offset > length:
                for entry in part:
                    entry.trim(offset - length)
        return tokens[:length]

    def _parts(self, cache: list[Any]) -> list[list[Any]]:
        if self.draft is None:
            return [cache]
        return [cache[: self.model_layers], cache[self.model_layers :]]

    def label(self, draft_name: str | None) -> str:
        """The options that are on, for the status bar: ``KV 4-bit · draft smol (3 tokens)``."""
        parts = []
        if self.kv_bits is not None:
            group = "" if self.kv_group_size == DEFAULT_KV_GROUP_SIZE else f", groups of {self.kv_group_size}"
            parts.append(f"KV {self.kv_bits}-bit{group}")
        if self.draft is not None and draft_name:
            parts.append(f"draft {short_name(draft_name)} ({self.num_draft_tokens} tokens)")
        return " · ".join(parts)


def short_name(name: str) -> str:
    """A folder by its last part, a Hugging Face repo id as it is."""
    return Path(name).expanduser().name if looks_like_path(name) or Path(name).expanduser().exists() else name


def load_draft(
    name: str, tokenizer: Any, model_name: str, report: Callable[[LoadProgress], None], check: Callable[[], None]
) -> Any:
    """Load the draft model ``name``; it must share the tokenizer of ``model_name``, whose ``tokenizer`` is given;
    ``check`` before each step of reading its weights raises when the load is cancelled.

    Raises:
        EngineError: naming the setting, when it cannot be loaded or does not share the tokenizer.
    """
    try:
        path = resolve_model(name, report)
        report(LoadProgress("load", 0, None, f"loading the draft model {short_name(name)}"))
        draft, draft_tokenizer = load_model_and_tokenizer(name, path, check)
    except EngineError as exc:
        raise EngineError(f"{DRAFT_KEY}: {exc}") from None
    different = vocabulary_difference(tokenizer, draft_tokenizer)
    if different:
        raise EngineError(
            f"{DRAFT_KEY}: the draft model '{name}' does not share the tokenizer of '{model_name}' ({different}); "
            "speculative decoding needs a draft model with the same tokenizer, usually a smaller model of the same family"
        )
    return draft


def vocabulary_difference(tokenizer: Any, draft_tokenizer: Any) -> str:
    """How two tokenizers' vocabularies differ ("" when every token has the same id in both)."""
    ours, theirs = tokenizer.get_vocab(), draft_tokenizer.get_vocab()
    if ours == theirs:
        return ""
    if len(ours) != len(theirs):
        return f"{len(ours)} tokens against the draft's {len(theirs)}"
    differing = sum(1 for token, index in ours.items() if theirs.get(token) != index)
    return f"{differing} of {len(ours)} tokens have other ids"


def check_options(options: CacheOptions, model_name: str, draft_name: str | None) -> None:
    """Run one token through a cache made with ``options``, so a setting the model cannot take
    fails at load with a message naming it, not at the first reply.

    Raises:
        EngineError: the KV quantization does not fit the model, or a cache cannot be trimmed for the draft.
    """
    import mlx.core as mx
    from mlx_lm.models.cache import can_trim_prompt_cache

    cache = options.new_cache()
    if options.draft is not None and not can_trim_prompt_cache(cache):
        raise EngineError(
            f"{DRAFT_KEY}: speculative decoding with '{draft_name}' needs KV caches that can be trimmed, and the "
            f"cache of '{model_name}' or of the draft cannot be"
        )
    if options.kv_bits is None:
        return
    probe = CacheOptions(options.model, options.draft, options.kv_bits, options.kv_group_size, quantized_kv_start=0)
    probe.quantize(cache)
    try:
        token = mx.array([[0]])
        outputs = [options.model(token, cache=cache[: options.model_layers])]
        if options.draft is not None:
            outputs.append(options.draft(token, cache=cache[options.model_layers :]))
        mx.eval(outputs)
    except Exception as exc:  # noqa: BLE001 - mlx raises ValueError or RuntimeError
        raise EngineError(
            f"{KV_KEYS}: a {options.kv_bits}-bit KV cache in groups of {options.kv_group_size} does not work with "
            f"'{model_name}' ({exc}); choose a kv_group_size that divides the model's attention head size"
        ) from None

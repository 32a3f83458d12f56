"""How a reply is sampled and how long it may be: each setting's value in effect and where it came from.

Precedence, lowest first: the app's default, the model's own ``generation_config.json``, config.toml
(``[model]``, ``[models."<id>"]``), a flag (``--temp``, ``--max-tokens``, ``--seed``). The MLX engine
turns the result into mlx-lm's sampler and logits processors; the remote engine sends it in the request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT = "default"
MODEL_FILE = "model file"
CONFIG = "config.toml"
FLAG = "flag"
GIVEN = "set"  # a value given in code (a test, a bench), with no source named
REQUEST = "request"  # a request's own value for its one reply (a server's sampling request)

GENERATION_KEYS = ("temperature", "top_p", "min_p", "top_k", "repetition_penalty", "max_tokens", "seed")
APP_DEFAULTS: dict[str, float | int | None] = {
    "temperature": 0.0,  # greedy: the same prompt gives the same reply
    "top_p": 1.0,  # off
    "min_p": 0.0,  # off
    "top_k": 0,  # off
    "repetition_penalty": 1.0,  # off
    "max_tokens": 4096,
    "seed": None,  # MLX's own random state
}
SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p")  # what a model file sets only with do_sample
_CHECKS = {  # what a model file's value must be to be taken (else it is left out, as a file with a typo)
    "temperature": lambda v: v >= 0,
    "top_p": lambda v: 0 < v <= 1,
    "min_p": lambda v: 0 <= v <= 1,
    "top_k": lambda v: v >= 0 and float(v).is_integer(),
    "repetition_penalty": lambda v: v > 0,
    "max_tokens": lambda v: v >= 1 and float(v).is_integer(),
}


@dataclass(frozen=True)
class GenerationSettings:
    """The generation settings in effect: ``values[key]`` and ``sources[key]`` for each of ``GENERATION_KEYS``."""

    values: dict[str, Any] = field(default_factory=lambda: dict(APP_DEFAULTS))
    sources: dict[str, str] = field(default_factory=lambda: dict.fromkeys(GENERATION_KEYS, DEFAULT))

    def __getattr__(self, key: str) -> Any:
        if key in GENERATION_KEYS:
            return self.values[key]
        raise AttributeError(key)

    def recorded(self) -> dict[str, Any]:
        """What a transcript keeps with a reply: every value not the app's default (absent: the default)."""
        return {
            key: self.values[key]
            for key in GENERATION_KEYS
            if self.sources[key] != DEFAULT and self.values[key] is not None
        }

    def summary(self) -> str:
        """The settings not at their default, each with its source, in one line: ``temperature 0.7 (flag)``."""
        return " · ".join(
            f"{key} {shown_value(key, self.values[key])} ({self.sources[key]})" for key in self.recorded()
        )

    def rows(self) -> list[tuple[str, str, str]]:
        """``(setting, value, source)`` for each setting, as the model detail lists them."""
        return [(key, shown_value(key, self.values[key]), self.sources[key]) for key in GENERATION_KEYS]


@dataclass(frozen=True)
class ReplyOverrides:
    """What one request asks of its own reply, over the engine's settings (a server's sampling request:
    ``maxTokens``, ``temperature``, ``stopSequences``); the conversation's settings stay as they are."""

    max_tokens: int | None = None  # a cap: the reply is never longer than the engine's own maximum
    temperature: float | None = None
    stop: tuple[str, ...] = ()  # the reply ends before the first of these it writes
    seed: int | None = None  # a reply asked again (``/retry``): sampled from another seed

    def applied_to(self, settings: GenerationSettings) -> GenerationSettings:
        """``settings`` with this request's ``max_tokens`` (never above theirs) and ``temperature``."""
        values, sources = dict(settings.values), dict(settings.sources)
        if self.max_tokens is not None and self.max_tokens < values["max_tokens"]:
            values["max_tokens"], sources["max_tokens"] = max(1, self.max_tokens), REQUEST
        if self.temperature is not None:
            values["temperature"], sources["temperature"] = max(0.0, float(self.temperature)), REQUEST
        if self.seed is not None:
            values["seed"], sources["seed"] = self.seed, REQUEST
        return GenerationSettings(values, sources)


def retry_seed(settings: GenerationSettings | None, attempt: int) -> int | None:
    """The seed a reply asked again (``/retry``, the ``attempt``-th time) is sampled from: the set seed
    plus ``attempt``, or a random one when none is set (recorded with the reply, so it can be made
    again). None when the reply is not sampled (greedy, or an engine without settings): the same
    prompt gives the same reply, and no seed changes that."""
    if settings is None or not settings.temperature:
        return None
    base = settings.seed if settings.seed is not None else int.from_bytes(os.urandom(4), "little")
    return (int(base) + attempt) & 0xFFFFFFFF


def applied(overrides: ReplyOverrides | None, settings: GenerationSettings) -> GenerationSettings:
    """The settings one reply is generated with: ``settings``, with ``overrides`` when a request has them."""
    return overrides.applied_to(settings) if overrides is not None else settings


def shown_value(key: str, value: Any) -> str:
    """A value as a person reads it: ``0.7``, ``4096``, and what "off" values mean."""
    if value is None:
        return "random" if key == "seed" else "off"
    if key == "temperature" and value == 0:
        return "0 (greedy)"
    if (key, value) in (("top_p", 1.0), ("min_p", 0.0), ("top_k", 0), ("repetition_penalty", 1.0)):
        return f"{value:g} (off)"
    return f"{value:g}" if isinstance(value, float) else str(value)


def resolve(
    given: Mapping[str, Any], given_sources: Mapping[str, str], model_file: Mapping[str, Any] | None = None
) -> GenerationSettings:
    """The settings in effect: ``given`` (config.toml or flags, each named in ``given_sources``) over
    ``model_file``'s (``read_model_defaults``) over the app's defaults."""
    values, sources = dict(APP_DEFAULTS), dict.fromkeys(GENERATION_KEYS, DEFAULT)
    for key, value in (model_file or {}).items():
        values[key], sources[key] = value, MODEL_FILE
    for key in GENERATION_KEYS:
        if given.get(key) is not None:
            values[key], sources[key] = given[key], given_sources.get(key, GIVEN)
    return GenerationSettings(values, sources)


def read_model_defaults(folder: Path) -> dict[str, Any]:
    """The settings a model's ``generation_config.json`` gives (none when it has no such file, or a broken one).

    As in transformers, the sampling keys (temperature, top_p, top_k, min_p) count only when the
    file turns sampling on (``do_sample``; then a temperature left out is 1.0); ``repetition_penalty``
    counts either way; ``max_new_tokens`` is the reply's maximum length. ``max_length`` is not taken:
    it counts the prompt too, and transformers' default of 20 often stands in it.
    """
    try:
        config = json.loads((Path(folder) / "generation_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(config, dict):
        return {}
    wanted = ["repetition_penalty"] + (list(SAMPLING_KEYS) if config.get("do_sample") is True else [])
    found = {key: config.get(key) for key in wanted}
    found["max_tokens"] = config.get("max_new_tokens")
    if config.get("do_sample") is True and found.get("temperature") is None:
        found["temperature"] = 1.0
    return {key: _number(key, value) for key, value in found.items() if _usable(key, value)}


def _usable(key: str, value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and _CHECKS[key](value)


def _number(key: str, value: float | int) -> float | int:
    return int(value) if key in ("top_k", "max_tokens") else float(value)


def make_sampling(settings: GenerationSettings) -> tuple[Any, list[Any]]:
    """mlx-lm's sampler and logits processors for ``settings`` (greedy and none by default)."""
    from mlx_lm.sample_utils import make_logits_processors, make_sampler

    sampler = make_sampler(temp=settings.temperature, top_p=settings.top_p, min_p=settings.min_p, top_k=settings.top_k)
    penalty = settings.repetition_penalty
    processors = make_logits_processors(repetition_penalty=penalty if penalty != 1.0 else None)
    return sampler, processors

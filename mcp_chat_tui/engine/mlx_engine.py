"""Run a local model with mlx-lm on the MLX thread, reusing the KV cache across requests.

A new prompt keeps the longest common prefix of the cached tokens; the cache is trimmed to it
(or rebuilt if it cannot be) and only the rest is prefilled; ``keep_cache_in`` keeps it beside the conversation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.paths import model_display_name
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.blas import blas_in_use, fast_path_hint, load_blas
from mcp_chat_tui.engine.cache_file import CacheFile, CacheKeeper, common_prefix, model_key
from mcp_chat_tui.engine.compute import ComputeChoice
from mcp_chat_tui.engine.compute import prepare as prepare_compute
from mcp_chat_tui.engine.context import TokenCounter, check_fits, context_length_from_files
from mcp_chat_tui.engine.events import Done, EngineError, LoadProgress, Stats
from mcp_chat_tui.engine.generation import (
    GenerationSettings,
    ReplyOverrides,
    applied,
    make_sampling,
    read_model_defaults,
    resolve,
)
from mcp_chat_tui.engine.loading import (
    LoadStop,
    has_thinking_switch,
    load_model_and_tokenizer,
    reading_weights,
    resolve_model,
    template_supports_tools,
)
from mcp_chat_tui.engine.message_shapes import for_template, has_tool_turns, system_in_first_user
from mcp_chat_tui.engine.mlx_request import Cancelled, Failure, GenerationStream, Request, Run
from mcp_chat_tui.engine.mlx_thread import MLX_THREAD
from mcp_chat_tui.engine.prefix_cache import PrefixStore, static_prefix_length
from mcp_chat_tui.engine.settings import EngineSettings
from mcp_chat_tui.engine.special_tokens import SpecialTokenText, add_end_of_turn, special_tokens
from mcp_chat_tui.engine.speculative import CacheOptions, check_options, load_draft
from mcp_chat_tui.engine.text_tools import TEXT, calls_in_text, with_tools_in_text
from mcp_chat_tui.engine.thread_load import ThreadLoad
from mcp_chat_tui.engine.toolcalls import ToolCallStream, tool_names


class MlxEngine(Engine):
    """The local engine: ``await load()``, then ``async for event in stream(messages, tools)``."""

    def __init__(self, model: str, settings: EngineSettings | None = None, **overrides: Any) -> None:
        """``overrides`` are ``EngineSettings`` fields (``max_tokens=12``) set over ``settings``."""
        load_blas()  # before anything imports mlx.core; a no-op when the entry point did it
        self.model_name = model
        self.shown_name = model_display_name(model)  # in messages: as the status bar names it, not a path
        self.supports_tools = False
        self.settings = replace(settings or EngineSettings(), **overrides)
        self.compute: ComputeChoice | None = None  # what the model computes in, once loaded
        self._model_defaults: dict[str, Any] = {}  # the model's generation_config.json's settings, once loaded
        self.generation = self._generation()  # the settings in effect
        self._model: Any = None
        self._tokenizer: Any = None
        self._special_tokens: dict[int, str] = {}  # id to text: never shown, never in the transcript
        self._options: CacheOptions | None = None  # the KV cache's make-up: quantized, shared with a draft model
        self._cache: list[Any] | None = None
        self._cache_tokens: list[int] = []
        self._cache_file: CacheFile | None = None
        self._cache_keeper = CacheKeeper()  # on the MLX thread: the file's key and what it holds
        self._prefixes = PrefixStore("")  # the system prompt's and tools' caches, kept across conversations
        self.context_length, self.count_tokens = self.settings.context_length, TokenCounter()  # completed by load
        self._busy = False  # the MLX thread is running a job of this engine
        self.thread_load = ThreadLoad()  # how much of the time generating keeps the MLX thread running
        self._live: set[Request] = set()  # submitted and not finished: close() stops them all
        self._closed = False
        self._load_stop = LoadStop(self.shown_name)  # cancel_load() sets it; the load looks between its steps

    # -- public -------------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def max_tokens(self) -> int:
        return self.generation.max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self.settings.max_tokens = value
        self.generation = self._generation()

    def _generation(self) -> GenerationSettings:
        """The settings in effect: those given (config.toml, flags) over the model file's over the app's defaults."""
        return resolve(vars(self.settings), self.settings.sources, self._model_defaults)

    @property
    def tools_in_text(self) -> bool:
        """Tools are described in the system prompt, not given to the template (``tool_prompt = "text"``)."""
        return self.settings.tool_prompt == TEXT

    @property
    def compute_label(self) -> str:
        """What the model computes with, for the status bar: ``float32 from float16 · OpenBLAS``, then
        the cache options that are on (``KV 4-bit · draft smol (3 tokens)``)."""
        blas = blas_in_use()
        parts = [self.compute.label()] if self.compute is not None else []
        options = self._options.label(self.settings.draft_model) if self._options is not None else ""
        return " · ".join(parts + ([blas.name] if blas is not None else []) + ([options] if options else []))

    @property
    def busy(self) -> bool:
        """True while the MLX thread is loading or generating for this engine."""
        return self._busy

    @property
    def cached_tokens(self) -> tuple[int, ...]:
        """The token sequence the KV cache holds now (prompt and reply of the last request)."""
        return tuple(self._cache_tokens)

    @property
    def tokenizer(self) -> Any:
        """mlx-lm's ``TokenizerWrapper`` once loaded (for counting tokens; use from one thread at a time)."""
        return self._tokenizer

    async def load(self, on_progress: Callable[[LoadProgress], None] | None = None) -> None:
        """Download if needed and load the model on the MLX thread; raise ``EngineError`` on failure."""
        loop = asyncio.get_running_loop()

        def report(progress: LoadProgress) -> None:
            self._load_stop.check()  # on the loading thread: a cancelled load ends at its next report
            if on_progress is not None:
                try:
                    loop.call_soon_threadsafe(on_progress, progress)
                except RuntimeError:
                    pass

        await asyncio.wrap_future(self._submit_call(lambda: self._load_on_thread(report)))

    def cancel_load(self) -> None:
        """See ``Engine.cancel_load``: the load stops at its next step, between weight reads."""
        self._load_stop.cancel()

    def stream(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        known_tools: set[str] | None = None,
        aside: bool = False,
        overrides: ReplyOverrides | None = None,
    ) -> GenerationStream:
        """Generate a reply to ``messages``; see ``Engine.stream``."""
        if self._closed:
            raise EngineError(f"model '{self.shown_name}' was closed")
        if not self.loaded:
            raise EngineError(f"model '{self.shown_name}' is not loaded yet")
        if tools and self.tools_in_text:
            messages = with_tools_in_text(messages, tools)
        elif not self.supports_tools and has_tool_turns(messages):
            messages = calls_in_text(
                messages
            )  # calls and results as text: a template without tools has no place for them
        # Copied now, in the shape the template wants, so later changes by the caller cannot race the thread.
        return GenerationStream(
            self._submit_generation,
            for_template(messages),
            tools,
            known_tools,
            aside=aside,
            generation=applied(overrides, self.generation) if overrides is not None else None,
            stop=overrides.stop if overrides is not None else (),
        )

    def keep_cache_in(self, conversation: Path | None, *, save: bool = True) -> None:
        """Keep the KV cache beside the file ``conversation`` (None: nowhere): the next reply starts
        from it when it matches, and each finished reply writes it (unless ``save`` is False)."""
        self._cache_file = None if conversation is None else CacheFile(conversation, save)

    async def close(self) -> None:
        """Stop any generation and free the model (on the MLX thread, after this engine's jobs)."""
        if self._closed:
            return
        self._closed = True
        for request in list(self._live):
            request.stop.set()
        await asyncio.wrap_future(MLX_THREAD.call(self._release))

    # -- on the MLX thread ----------------------------------------------------------------------

    def _release(self) -> None:
        if self._model is not None:
            import mlx.core as mx

            self._model = self._tokenizer = self._cache = self._options = None
            self._cache_tokens = []
            mx.clear_cache()

    def _job(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            self._busy = True
            try:
                return fn()
            finally:
                self._busy = False

        return run

    def _submit_call(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        if self._closed:
            raise EngineError(f"model '{self.shown_name}' was closed")
        return MLX_THREAD.call(self._job(fn))

    def _submit_generation(self, request: Request) -> None:
        if self._closed:
            raise EngineError(f"model '{self.shown_name}' was closed")
        request.cache_file = None if request.aside else self._cache_file
        self._live.add(request)
        MLX_THREAD.stop_events.add(request.stop)

        def generate() -> None:
            try:
                self._generate(request)
            finally:
                self._live.discard(request)

        MLX_THREAD.submit(self._job(generate))

    def _load_on_thread(self, report: Callable[[LoadProgress], None]) -> None:
        name = self.model_name
        path = resolve_model(name, report)
        size = sum(f.stat().st_size for f in path.glob("model*.safetensors"))
        report(LoadProgress("load", 0, size, f"loading {name}"))
        model, tokenizer = load_model_and_tokenizer(name, path, self._load_stop.check, reading_weights(report, name))
        self.compute = prepare_compute(model, self.settings.compute_dtype, self._load_stop.check)
        self.speed_hint = fast_path_hint(path)
        self._model_defaults = read_model_defaults(path)
        self.generation = self._generation()
        self._model, self._tokenizer = model, tokenizer
        options = CacheOptions.of(model, self._load_draft(tokenizer, report), self.settings)
        check_options(options, name, self.settings.draft_model)
        self._model, self._tokenizer, self._options = model, tokenizer, options
        self._learn_tokens(tokenizer)
        self.context_length = self.settings.context_length or context_length_from_files(path, tokenizer)
        self.count_tokens.tokenizer = tokenizer
        self._cache, self._cache_tokens = None, []
        self._cache_keeper = CacheKeeper(model_key(path, self.compute, self.settings))
        self._prefixes = PrefixStore(self._cache_keeper.key)
        report(LoadProgress("load", size, size, f"loaded {name}"))
        report(LoadProgress("ready", size, size, f"{name} is ready"))

    def _learn_tokens(self, tokenizer: Any) -> None:
        """What the tokenizer's template and special tokens tell: tools, where a turn ends, text never shown."""
        self.supports_tools = template_supports_tools(tokenizer)
        add_end_of_turn(tokenizer)
        self._special_tokens = special_tokens(tokenizer)

    def _load_draft(self, tokenizer: Any, report: Callable[[LoadProgress], None]) -> Any:
        """The draft model of ``settings.draft_model`` (None without one), computing as the model does."""
        if not self.settings.draft_model:
            return None
        draft = load_draft(self.settings.draft_model, tokenizer, self.model_name, report, self._load_stop.check)
        prepare_compute(draft, self.settings.compute_dtype, self._load_stop.check)
        return draft

    def _render(self, request: Request) -> list[int]:
        """The prompt tokens for the request, through the model's chat template."""
        tokenizer = self._tokenizer
        messages = request.messages
        if not getattr(tokenizer, "has_chat_template", True):
            text = "".join(f"{m.get('role', 'user')}: {m.get('content', '')}\n\n" for m in messages) + "assistant:"
            return list(tokenizer.encode(text))
        kwargs: dict[str, Any] = {}
        if request.tools and self.supports_tools and not self.tools_in_text:
            kwargs["tools"] = request.tools
        if self.settings.thinking is not None and has_thinking_switch(tokenizer):
            kwargs["enable_thinking"] = self.settings.thinking
        try:
            with self.count_tokens.lock:
                tokens = tokenizer.apply_chat_template(messages, add_generation_prompt=True, **kwargs)
        except Exception as exc:
            if not messages or messages[0].get("role") != "system":
                raise self._unrenderable(exc) from None
            try:  # a template that takes no system role: the system prompt opens the first user message
                with self.count_tokens.lock:
                    folded = system_in_first_user(messages)
                    tokens = tokenizer.apply_chat_template(folded, add_generation_prompt=True, **kwargs)
            except Exception:
                raise self._unrenderable(exc) from None
        if isinstance(tokens, dict) or hasattr(tokens, "input_ids"):
            tokens = tokens["input_ids"]
        return [int(t) for t in tokens]

    def _unrenderable(self, exc: Exception) -> EngineError:
        return EngineError(f"the chat template of model '{self.shown_name}' cannot render this conversation: {exc}")

    def _recogniser(self, request: Request, prompt: list[int]) -> ToolCallStream:
        tokenizer = self._tokenizer
        has_thinking = getattr(tokenizer, "has_thinking", False)
        think_start = tokenizer.think_start if has_thinking else "<think>"
        think_end = tokenizer.think_end if has_thinking else "</think>"
        tail = tokenizer.decode(prompt[-8:]) if prompt else ""
        known = request.known_tools if request.known_tools is not None else tool_names(request.tools)
        has_calls = getattr(tokenizer, "has_tool_calling", False)
        return ToolCallStream(
            known,
            tools=request.tools,
            tool_call_start=tokenizer.tool_call_start if has_calls else None,
            tool_call_end=tokenizer.tool_call_end if has_calls else None,
            tool_parser=tokenizer.tool_parser if has_calls else None,
            think_start=think_start,
            think_end=think_end,
            in_thinking=bool(think_start) and tail.rstrip().endswith(think_start),
        )

    def _reuse_cache(self, prompt: list[int]) -> int:
        """Make the cache hold a prefix of ``prompt``; return that prefix's length (always < len(prompt))."""
        from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

        cached = self._cache_tokens
        if self._cache is None:
            self._cache, self._cache_tokens = self._options.new_cache(), []
            return 0
        common = 0
        limit = min(len(cached), len(prompt) - 1)  # at least one prompt token must be computed
        while common < limit and cached[common] == prompt[common]:
            common += 1
        excess = len(cached) - common
        if excess == 0:
            return common
        if common > 0 and can_trim_prompt_cache(self._cache):
            trimmed = trim_prompt_cache(self._cache, excess)
            if trimmed == excess:
                self._cache_tokens = cached[:common]
                return common
        self._cache, self._cache_tokens = self._options.new_cache(), []
        return 0

    def _generate(self, request: Request) -> None:
        """Run one request on the MLX thread, posting events to its channel; one ``aside`` in a cache of its own."""
        if not request.aside:
            self._generate_in_cache(request)
            return
        kept = self._cache, self._cache_tokens
        self._cache, self._cache_tokens = None, []
        try:
            self._generate_in_cache(request)
        finally:
            self._cache, self._cache_tokens = kept

    def _generate_in_cache(self, request: Request) -> None:
        """Generate for ``request`` after the part of its prompt the KV cache holds, keeping what it computes there."""
        post = request.channel.put
        if request.stop.is_set():
            post([Done("cancelled")])
            return
        try:
            prompt = self._render(request)
            check_fits(self.shown_name, len(prompt), self.context_length)
            recogniser = self._recogniser(request, prompt)
        except EngineError as exc:
            post([Failure(exc)])
            return
        except Exception as exc:
            post([Failure(EngineError(f"model '{self.shown_name}' cannot prepare the prompt: {exc}"))])
            return
        self._resume_from_file(request, prompt)
        prefix = self._static_prefix(request, prompt)
        self._resume_from_prefix(prompt, prefix)
        reused = self._reuse_cache(prompt)
        run = Run(request, recogniser, SpecialTokenText(self._special_tokens, recogniser.markers))
        try:
            reused = self._keep_prefix(prompt, prefix, reused, run)
            self._stream_tokens(prompt[reused:], run)
        except Cancelled:
            run.cancelled = True
        except Exception as exc:
            self._cache, self._cache_tokens = None, []
            post([Failure(EngineError(f"generation with model '{self.shown_name}' failed: {exc}"))])
            return
        self._remember(prompt[: reused + run.prefilled] + run.generated)
        post(self._closing_events(run, len(prompt)))
        if not run.recogniser.calls_proposed:  # a reply that calls tools is followed by the next at once
            self._save_to_file(request)

    def _resume_from_file(self, request: Request, prompt: list[int]) -> None:
        """Start from the conversation's cache file when it holds more of ``prompt`` than memory does."""
        resumed = self._cache_keeper.resume(request.cache_file, prompt, self._cache_tokens, self._options.new_cache)
        if resumed is not None:
            self._cache, self._cache_tokens = resumed

    def _static_prefix(self, request: Request, prompt: list[int]) -> int:
        """How many leading tokens of ``prompt`` any conversation with this system prompt and these tools
        starts with, when worth keeping across conversations (engine/prefix_cache.py); 0 for a request aside."""
        if request.aside:
            return 0
        head = [m for m in request.messages[:1] if m.get("role") == "system"]
        identity = json.dumps([head, request.tools], sort_keys=True, default=str)
        probe = lambda: static_prefix_length(lambda ms: self._render(replace(request, messages=ms)), head)  # noqa: E731
        return self._prefixes.length(prompt, probe, identity)

    def _resume_from_prefix(self, prompt: list[int], prefix: int) -> None:
        """Start from the kept cache of the prompt's static prefix when memory holds less of it."""
        if not prefix or common_prefix(self._cache_tokens, prompt, prefix) >= prefix:
            return
        cache = self._prefixes.load(prompt[:prefix], self._options.new_cache())
        if cache is not None:
            self._cache, self._cache_tokens = cache, prompt[:prefix]

    def _keep_prefix(self, prompt: list[int], prefix: int, reused: int, run: Run) -> int:
        """Prefill the static prefix apart and keep it, when no file holds it yet; the prompt's tokens now cached."""
        if reused >= prefix or self._prefixes.has(prompt[:prefix]):
            return reused
        total = len(prompt) - reused
        self._options.prefill(
            self._cache,
            prompt[reused:prefix],
            self.settings.prefill_step_size,
            lambda done, _: run.on_prefill(done, total),
        )
        self._cache_tokens = prompt[:prefix]
        run.prefilled_before = prefix - reused
        self._prefixes.save(prompt[:prefix], self._cache)
        return prefix

    def _save_to_file(self, request: Request) -> None:
        """Keep the KV cache in the conversation's cache file (when it has one)."""
        self._cache_keeper.save(request.cache_file, self._cache, self._cache_tokens)

    def _stream_tokens(self, suffix: list[int], run: Run) -> None:
        """Prefill ``suffix`` after the cached tokens and decode, feeding each token to ``run``."""
        import mlx.core as mx
        from mlx_lm.generate import stream_generate

        generation = run.request.generation or self.generation
        sampler, processors = make_sampling(generation)
        if generation.seed is not None:
            mx.random.seed(generation.seed)  # for each reply: a seeded reply is the same every time
        options, prompt_tokens = self._options, len(suffix)
        if options.draft is not None:  # mlx-lm's speculative prefill reports no progress: it cannot be stopped
            options.prefill(self._cache, suffix[:-1], self.settings.prefill_step_size, run.on_prefill)
            options.quantize(self._cache)
            suffix = suffix[-1:]
        responses = stream_generate(
            self._model,
            self._tokenizer,
            mx.array(suffix),
            max_tokens=generation.max_tokens,
            sampler=sampler,
            logits_processors=processors,
            prompt_cache=self._cache,
            prefill_step_size=self.settings.prefill_step_size,
            prompt_progress_callback=run.on_prefill,
            **options.stream_kwargs(),
        )
        try:
            for response in responses:
                if run.first_token_at is None:
                    run.prefilled = prompt_tokens
                if not run.take(response, self.thread_load):
                    break
        finally:
            responses.close()

    @staticmethod
    def _peak_memory_gb() -> float:
        import mlx.core as mx

        return mx.get_peak_memory() / 1e9

    def _closing_events(self, run: Run, prompt_tokens: int) -> list[Any]:
        """The recogniser's last events, the figures, and ``Done`` with why generation ended."""
        events: list[Any] = run.last_events()
        finish = run.finish
        if run.cancelled:
            finish = "cancelled"
        elif run.recogniser.calls_proposed:
            finish = "tool_calls"
        first, last = run.first_token_at, run.last_token_at
        events.append(
            Stats(
                prompt_tokens=prompt_tokens,
                prefilled_tokens=run.prefilled_before + run.prefilled,
                generated_tokens=len(run.generated),
                drafted_tokens=run.drafted,
                time_to_first_token=(first - run.request.submitted) if first is not None else 0.0,
                tokens_per_second=run.tokens_per_second,
                peak_memory_gb=self._peak_memory_gb(),
                prefill_time=(first - run.started_at) if first is not None else 0.0,
                decode_time=(last - first) if first is not None and last is not None else 0.0,
            )
        )
        events.append(Done(finish))
        return events

    def _remember(self, tokens: list[int]) -> None:
        """Record what the cache now holds, checking it against the cache's own length (and the
        draft's part against the model's)."""
        if self._cache:
            settled = self._options.settle(self._cache, tokens)
            if settled is None:  # the cache holds tokens we do not know: start afresh next time
                self._cache, settled = None, []
            tokens = settled
        self._cache_tokens = tokens

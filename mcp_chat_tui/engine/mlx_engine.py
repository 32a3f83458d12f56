"""Run a local model with mlx-lm on the MLX thread, reusing the KV cache across requests.

A new prompt keeps the longest common prefix of the cached tokens; the cache is trimmed to it
(or rebuilt if it cannot be) and only the rest is prefilled; ``keep_cache_in`` keeps it beside the conversation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcp_chat_tui.engine.blas import blas_in_use, load_blas
from mcp_chat_tui.engine.cache_file import CacheFile, CacheKeeper, model_key
from mcp_chat_tui.engine.channel import ThreadChannel
from mcp_chat_tui.engine.compute import ComputeChoice
from mcp_chat_tui.engine.compute import prepare as prepare_compute
from mcp_chat_tui.engine.context import TokenCounter, check_fits, context_length_from_files
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    EngineEvent,
    LoadProgress,
    Stats,
    TextDelta,
    ThinkingDelta,
    Throughput,
)
from mcp_chat_tui.engine.loading import (
    load_model_and_tokenizer,
    resolve_model,
    template_supports_tools,
)
from mcp_chat_tui.engine.messages import for_template
from mcp_chat_tui.engine.mlx_thread import MLX_THREAD
from mcp_chat_tui.engine.settings import EngineSettings
from mcp_chat_tui.engine.text_tools import TEXT, with_tools_in_text
from mcp_chat_tui.engine.thread_load import ThreadLoad
from mcp_chat_tui.engine.toolcalls import ToolCallStream, tool_names

THROUGHPUT_INTERVAL = 1.0  # seconds between live rate reports while a reply is generated
STREAM_INTERVAL = 0.1  # seconds: text reaches the loop in batches at most this often (after the first): as often as the chat redraws a streaming reply at most


class _Cancelled(Exception):
    """Raised inside prefill when the consumer stopped listening."""


@dataclass
class _Failure:
    error: BaseException


@dataclass(eq=False)
class _Request:
    messages: list[dict]
    tools: list[dict] | None
    known_tools: set[str] | None
    channel: ThreadChannel
    submitted: float
    stop: threading.Event = field(default_factory=threading.Event)
    cache_file: CacheFile | None = None  # the conversation's, when it keeps its KV cache in a file


@dataclass(eq=False)
class _Run:
    """One generation as it goes, on the MLX thread: what was prefilled and generated, and when."""

    request: _Request
    recogniser: ToolCallStream
    prefilled: int = 0
    generated: list[int] = field(default_factory=list)
    finish: str = "stop"
    cancelled: bool = False
    first_token_at: float | None = None
    tokens_per_second: float = 0.0
    first_text: bool = True
    rate_reported_at: float = 0.0

    def on_prefill(self, done: int, total: int) -> None:
        """mlx-lm's prefill progress; stops prefill once the consumer stopped listening."""
        self.prefilled = done
        if done < total and self.request.stop.is_set():
            raise _Cancelled

    def take(self, response: Any, load: ThreadLoad) -> bool:
        """Handle one generated token; False when generation should stop."""
        self.generated.append(response.token)
        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()
            load.start(self.first_token_at)
        events = self.recogniser.feed(response.text) if response.text else []
        if len(self.generated) % 8 == 0:  # the clock is read every few tokens, not on each
            now = time.perf_counter()
            load.sample(now)
            if now - max(self.rate_reported_at, self.first_token_at) >= THROUGHPUT_INTERVAL:
                events.append(Throughput(len(self.generated), response.generation_tps))
                self.rate_reported_at = now
        if events:
            self.request.channel.put(events, self.first_text)
            self.first_text = False
        if response.finish_reason is not None:
            self.finish = response.finish_reason
        self.tokens_per_second = response.generation_tps
        if self.request.stop.is_set():
            self.cancelled = True
            return False
        return True


class MlxEngine:
    """The local engine: ``await load()``, then ``async for event in stream(messages, tools)``."""

    def __init__(self, model: str, settings: EngineSettings | None = None, **overrides: Any) -> None:
        """``overrides`` are ``EngineSettings`` fields (``max_tokens=12``) set over ``settings``."""
        load_blas()  # before anything imports mlx.core; a no-op when the entry point did it
        self.model_name = model
        self.supports_tools = False
        self.settings = replace(settings or EngineSettings(), **overrides)
        self.compute: ComputeChoice | None = None  # what the model computes in, once loaded
        self._model: Any = None
        self._tokenizer: Any = None
        self._cache: list[Any] | None = None
        self._cache_tokens: list[int] = []
        self._cache_file: CacheFile | None = None
        self._cache_keeper = CacheKeeper()  # on the MLX thread: the file's key and what it holds
        self.context_length, self.count_tokens = self.settings.context_length, TokenCounter()  # completed by load
        self._busy = False  # the MLX thread is running a job of this engine
        self.thread_load = ThreadLoad()  # how much of the time generating keeps the MLX thread running
        self._live: set[_Request] = set()  # submitted and not finished: close() stops them all
        self._closed = False

    # -- public -------------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def max_tokens(self) -> int:
        return self.settings.max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self.settings.max_tokens = value

    @property
    def tools_in_text(self) -> bool:
        """Tools are described in the system prompt, not given to the template (``tool_prompt = "text"``)."""
        return self.settings.tool_prompt == TEXT

    @property
    def compute_label(self) -> str:
        """What the model computes with, for the status bar: ``float32 from float16 · OpenBLAS``."""
        blas = blas_in_use()
        parts = [self.compute.label()] if self.compute is not None else []
        return " · ".join(parts + ([blas.name] if blas is not None else []))

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
            if on_progress is not None:
                try:
                    loop.call_soon_threadsafe(on_progress, progress)
                except RuntimeError:
                    pass

        await asyncio.wrap_future(self._submit_call(lambda: self._load_on_thread(report)))

    def stream(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        known_tools: set[str] | None = None,
    ) -> _GenerationStream:
        """Generate a reply to ``messages``; see ``Engine.stream``."""
        if self._closed:
            raise EngineError(f"model '{self.model_name}' was closed")
        if not self.loaded:
            raise EngineError(f"model '{self.model_name}' is not loaded yet")
        if tools and self.tools_in_text:
            messages = with_tools_in_text(messages, tools)
        # Copied now, in the shape the template wants, so later changes by the caller cannot race the thread.
        return _GenerationStream(self, for_template(messages), tools, known_tools)

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

            self._model = self._tokenizer = self._cache = None
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
            raise EngineError(f"model '{self.model_name}' was closed")
        return MLX_THREAD.call(self._job(fn))

    def _submit_generation(self, request: _Request) -> None:
        if self._closed:
            raise EngineError(f"model '{self.model_name}' was closed")
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
        model, tokenizer = load_model_and_tokenizer(name, path)
        self.compute = prepare_compute(model, self.settings.compute_dtype)
        self._model, self._tokenizer = model, tokenizer
        self.supports_tools = template_supports_tools(tokenizer)
        self.context_length = self.settings.context_length or context_length_from_files(path, tokenizer)
        self.count_tokens.tokenizer = tokenizer
        self._cache, self._cache_tokens = None, []
        self._cache_keeper = CacheKeeper(model_key(path, self.compute, self.settings))
        report(LoadProgress("load", size, size, f"loaded {name}"))
        report(LoadProgress("ready", size, size, f"{name} is ready"))

    def _render(self, request: _Request) -> list[int]:
        """The prompt tokens for the request, through the model's chat template."""
        tokenizer = self._tokenizer
        messages = request.messages
        if not getattr(tokenizer, "has_chat_template", True):
            text = "".join(f"{m.get('role', 'user')}: {m.get('content', '')}\n\n" for m in messages) + "assistant:"
            return list(tokenizer.encode(text))
        kwargs: dict[str, Any] = {}
        if request.tools and self.supports_tools and not self.tools_in_text:
            kwargs["tools"] = request.tools
        try:
            with self.count_tokens.lock:
                tokens = tokenizer.apply_chat_template(messages, add_generation_prompt=True, **kwargs)
        except Exception as exc:
            raise EngineError(
                f"the chat template of model '{self.model_name}' cannot render this conversation: {exc}"
            ) from None
        if isinstance(tokens, dict) or hasattr(tokens, "input_ids"):
            tokens = tokens["input_ids"]
        return [int(t) for t in tokens]

    def _recogniser(self, request: _Request, prompt: list[int]) -> ToolCallStream:
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
        from mlx_lm.models.cache import can_trim_prompt_cache, make_prompt_cache, trim_prompt_cache

        cached = self._cache_tokens
        if self._cache is None:
            self._cache, self._cache_tokens = make_prompt_cache(self._model), []
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
        self._cache, self._cache_tokens = make_prompt_cache(self._model), []
        return 0

    def _generate(self, request: _Request) -> None:
        """Run one request on the MLX thread, posting events to its channel."""
        post = request.channel.put
        if request.stop.is_set():
            post([Done("cancelled")])
            return
        try:
            prompt = self._render(request)
            check_fits(self.model_name, len(prompt), self.context_length)
            recogniser = self._recogniser(request, prompt)
        except EngineError as exc:
            post([_Failure(exc)])
            return
        except Exception as exc:
            post([_Failure(EngineError(f"model '{self.model_name}' cannot prepare the prompt: {exc}"))])
            return
        resumed = self._cache_keeper.resume(request.cache_file, prompt, self._cache_tokens, self._model)
        if resumed is not None:
            self._cache, self._cache_tokens = resumed
        reused = self._reuse_cache(prompt)
        run = _Run(request, recogniser)
        try:
            self._stream_tokens(prompt[reused:], run)
        except _Cancelled:
            run.cancelled = True
        except Exception as exc:
            self._cache, self._cache_tokens = None, []
            post([_Failure(EngineError(f"generation with model '{self.model_name}' failed: {exc}"))])
            return
        self._remember(prompt[: reused + run.prefilled] + run.generated)
        post(self._closing_events(run, len(prompt)))
        if not run.recogniser.calls_proposed:  # a reply that calls tools is followed by the next at once
            self._cache_keeper.save(request.cache_file, self._cache, self._cache_tokens)

    def _stream_tokens(self, suffix: list[int], run: _Run) -> None:
        """Prefill ``suffix`` after the cached tokens and decode, feeding each token to ``run``."""
        import mlx.core as mx
        from mlx_lm.generate import stream_generate
        from mlx_lm.sample_utils import make_sampler

        settings = self.settings
        responses = stream_generate(
            self._model,
            self._tokenizer,
            mx.array(suffix),
            max_tokens=settings.max_tokens,
            sampler=make_sampler(temp=settings.temperature, top_p=settings.top_p),
            prompt_cache=self._cache,
            prefill_step_size=settings.prefill_step_size,
            prompt_progress_callback=run.on_prefill,
        )
        try:
            for response in responses:
                if run.first_token_at is None:
                    run.prefilled = len(suffix)
                if not run.take(response, self.thread_load):
                    break
        finally:
            responses.close()

    def _closing_events(self, run: _Run, prompt_tokens: int) -> list[Any]:
        """The recogniser's last events, the figures, and ``Done`` with why generation ended."""
        import mlx.core as mx

        events: list[Any] = list(run.recogniser.finish())
        finish = run.finish
        if run.cancelled:
            finish = "cancelled"
        elif run.recogniser.calls_proposed:
            finish = "tool_calls"
        first = run.first_token_at
        events.append(
            Stats(
                prompt_tokens=prompt_tokens,
                prefilled_tokens=run.prefilled,
                generated_tokens=len(run.generated),
                time_to_first_token=(first - run.request.submitted) if first is not None else 0.0,
                tokens_per_second=run.tokens_per_second,
                peak_memory_gb=mx.get_peak_memory() / 1e9,
            )
        )
        events.append(Done(finish))
        return events

    def _remember(self, tokens: list[int]) -> None:
        """Record what the cache now holds, checking it against the cache's own length."""
        offset = getattr(self._cache[0], "offset", None) if self._cache else None
        if offset is not None and offset != len(tokens):
            if offset < len(tokens):
                tokens = tokens[:offset]
            else:  # the cache holds tokens we do not know: start afresh next time
                self._cache, tokens = None, []
        self._cache_tokens = tokens


_MERGED = (TextDelta, ThinkingDelta)


class _GenerationStream:
    """The async iterator ``MlxEngine.stream`` returns; closing or dropping it stops the generation."""

    def __init__(
        self, engine: MlxEngine, messages: list[dict], tools: list[dict] | None, known_tools: set[str] | None
    ) -> None:
        self._engine = engine
        self._messages, self._tools, self._known_tools = messages, tools, known_tools
        self._request: _Request | None = None
        self._ready: deque[EngineEvent] = deque()
        self._error: BaseException | None = None
        self._finished = False

    def __aiter__(self) -> _GenerationStream:
        return self

    async def __anext__(self) -> EngineEvent:
        if self._request is None and not self._finished:
            self._start()
        while not self._ready:
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if self._finished:
                raise StopAsyncIteration
            assert self._request is not None
            try:
                items = await self._request.channel.get()
            except BaseException:
                self._stop()
                raise
            for item in items:
                if isinstance(item, _Failure):  # raised once the events before it are taken
                    self._error, self._finished = item.error, True
                    break
                last = self._ready[-1] if self._ready else None
                if type(item) in _MERGED and type(last) is type(item):
                    # the tokens of one batch reach the agent as one piece of text
                    self._ready[-1] = type(item)(last.text + item.text)
                    continue
                self._ready.append(item)
                if isinstance(item, Done):
                    self._finished = True
        return self._ready.popleft()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._request = _Request(
            messages=self._messages,
            tools=self._tools,
            known_tools=self._known_tools,
            channel=ThreadChannel(loop, STREAM_INTERVAL),
            submitted=time.perf_counter(),
            cache_file=self._engine._cache_file,
        )
        self._engine._submit_generation(self._request)

    def _stop(self) -> None:
        if self._request is not None:
            self._request.stop.set()
        self._finished = True

    async def aclose(self) -> None:
        """Stop generating; the MLX thread finishes the current token and becomes free."""
        self._stop()
        self._ready.clear()

    def __del__(self) -> None:
        request = getattr(self, "_request", None)
        if request is not None:
            request.stop.set()

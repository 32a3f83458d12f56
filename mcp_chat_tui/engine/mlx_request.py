"""One request to ``MlxEngine`` on its way: what the MLX thread is given, what it tracks while it
generates, and the async iterator the agent reads its events from."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_chat_tui.engine.cache_file import CacheFile
from mcp_chat_tui.engine.channel import ThreadChannel
from mcp_chat_tui.engine.events import Done, EngineEvent, TextDelta, ThinkingDelta, Throughput
from mcp_chat_tui.engine.generation import GenerationSettings
from mcp_chat_tui.engine.special_tokens import SpecialTokenText
from mcp_chat_tui.engine.stops import STOP_SEQUENCE, StopSequences
from mcp_chat_tui.engine.thread_load import ThreadLoad
from mcp_chat_tui.engine.toolcalls import ToolCallStream

THROUGHPUT_INTERVAL = 1.0  # seconds between live rate reports while a reply is generated
STREAM_INTERVAL = 0.1  # seconds: text reaches the loop in batches at most this often (after the first): as often as the chat redraws a streaming reply at most


class Cancelled(Exception):
    """Raised inside prefill when the consumer stopped listening."""


@dataclass
class Failure:
    """An error the MLX thread hands to the stream, raised there once the events before it are taken."""

    error: BaseException


@dataclass(eq=False)
class Request:
    """One generation asked of the MLX thread."""

    messages: list[dict]
    tools: list[dict] | None
    known_tools: set[str] | None
    channel: ThreadChannel
    submitted: float
    stop: threading.Event = field(default_factory=threading.Event)
    aside: bool = False  # outside the conversation: the conversation's KV cache is left as it was
    cache_file: CacheFile | None = None  # the conversation's, when it keeps its KV cache in a file
    generation: GenerationSettings | None = None  # this reply's own settings (None: the engine's)
    stop_sequences: tuple[str, ...] = ()  # the reply ends before the first of these it writes


@dataclass(eq=False)
class Run:
    """One generation as it goes, on the MLX thread: what was prefilled and generated, and when."""

    request: Request
    recogniser: ToolCallStream
    special: SpecialTokenText = field(
        default_factory=lambda: SpecialTokenText({})
    )  # the model's special tokens' text is dropped
    prefilled: int = 0
    prefilled_before: int = 0  # prompt tokens computed before generation began (a static prefix kept apart)
    generated: list[int] = field(default_factory=list)
    drafted: int = 0  # generated tokens the draft model proposed
    finish: str = "stop"
    cancelled: bool = False
    first_token_at: float | None = None
    last_token_at: float | None = None
    started_at: float = field(default_factory=time.perf_counter)  # when the MLX thread began computing it
    tokens_per_second: float = 0.0
    first_text: bool = True
    rate_reported_at: float = 0.0
    stops: StopSequences = field(init=False)

    def __post_init__(self) -> None:
        self.stops = StopSequences(self.request.stop_sequences)

    def last_events(self) -> list[Any]:
        """The recogniser's events for the text held back at the end (a possible stop sequence that
        was not one), then its last ones."""
        rest = self.stops.rest()
        return [*(self.recogniser.feed(rest) if rest else []), *self.recogniser.finish()]

    def on_prefill(self, done: int, total: int) -> None:
        """mlx-lm's prefill progress; stops prefill once the consumer stopped listening."""
        self.prefilled = done
        if done < total and self.request.stop.is_set():
            raise Cancelled

    def take(self, response: Any, load: ThreadLoad) -> bool:
        """Handle one generated token; False when generation should stop."""
        self.generated.append(response.token)
        self.drafted += bool(getattr(response, "from_draft", False))
        self.last_token_at = time.perf_counter()
        if self.first_token_at is None:
            self.first_token_at = self.last_token_at
            load.start(self.first_token_at)
        # "stop": the token ended the turn and its text was never added; the piece may still hold special tokens' text
        token = response.token if response.finish_reason != "stop" else -1
        text = self.special.take(token, response.text or "")
        text = self.stops.feed(text) if text else ""
        events = self.recogniser.feed(text) if text else []
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
        if self.stops.matched is not None:
            self.finish = STOP_SEQUENCE
            return False
        if self.request.stop.is_set():
            self.cancelled = True
            return False
        return True


MERGED = (TextDelta, ThinkingDelta)


class GenerationStream:
    """The async iterator ``MlxEngine.stream`` returns; closing or dropping it stops the generation."""

    def __init__(
        self,
        submit: Callable[[Request], None],
        messages: list[dict],
        tools: list[dict] | None,
        known_tools: set[str] | None,
        *,
        aside: bool = False,
        generation: GenerationSettings | None = None,
        stop: tuple[str, ...] = (),
    ) -> None:
        self._submit = submit  # hands the request to the MLX thread
        self._messages, self._tools, self._known_tools = messages, tools, known_tools
        self._aside = aside
        self._generation, self._stop_sequences = generation, stop
        self._request: Request | None = None
        self._ready: deque[EngineEvent] = deque()
        self._error: BaseException | None = None
        self._finished = False

    def __aiter__(self) -> GenerationStream:
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
                if isinstance(item, Failure):  # raised once the events before it are taken
                    self._error, self._finished = item.error, True
                    break
                last = self._ready[-1] if self._ready else None
                if type(item) in MERGED and type(last) is type(item):
                    # the tokens of one batch reach the agent as one piece of text
                    self._ready[-1] = type(item)(last.text + item.text)
                    continue
                self._ready.append(item)
                if isinstance(item, Done):
                    self._finished = True
        return self._ready.popleft()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._request = Request(
            messages=self._messages,
            tools=self._tools,
            known_tools=self._known_tools,
            aside=self._aside,
            generation=self._generation,
            stop_sequences=self._stop_sequences,
            channel=ThreadChannel(loop, STREAM_INTERVAL),
            submitted=time.perf_counter(),
        )
        self._submit(self._request)

    def _stop(self) -> None:
        if self._request is not None:
            self._request.stop.set()
        self._finished = True

    def cut(self) -> None:
        """Stop generating after the current token, and go on to the reply's closing events: the
        figures of what it generated, then ``Done("cancelled")`` (the agent cuts a reply that repeats
        calls, and still counts its tokens in the turn's figures)."""
        if self._request is not None:
            self._request.stop.set()

    async def aclose(self) -> None:
        """Stop generating; the MLX thread finishes the current token and becomes free."""
        self._stop()
        self._ready.clear()

    def __del__(self) -> None:
        request = getattr(self, "_request", None)
        if request is not None:
            request.stop.set()

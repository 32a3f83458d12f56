"""An engine that talks to an OpenAI-compatible chat-completions server (mlx_lm.server, vLLM, llama.cpp).

Streams with SSE (``data:`` lines): ``choices[0].delta.content`` goes through the same
tool-call recogniser as the local engine (servers often pass tool calls through as
text), ``delta.tool_calls`` pieces are joined by index and checked when the reply ends,
``delta.reasoning_content``/``reasoning`` becomes thinking. Speaks HTTP with ``httpx2``
(the client the mcp SDK depends on) and reads the events with its ``EventSource``.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mcp_chat_tui.core.redact import shown_url, without_url_secrets
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    EngineEvent,
    LoadProgress,
    Stats,
    ThinkingDelta,
)
from mcp_chat_tui.engine.generation import DEFAULT, GenerationSettings, ReplyOverrides, applied, resolve
from mcp_chat_tui.engine.message_shapes import for_wire
from mcp_chat_tui.engine.settings import EngineSettings
from mcp_chat_tui.engine.special_tokens import TurnMarkup
from mcp_chat_tui.engine.stops import STOP_SEQUENCE, StopSequences
from mcp_chat_tui.engine.text_tools import TEXT, with_tools_in_text
from mcp_chat_tui.engine.toolcalls import ToolCallStream, tool_names

if TYPE_CHECKING:
    import ssl

    import httpx2

_CHAT_PATH = "/chat/completions"


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one TLS context of the process's requests to endpoints, as httpx2 builds its default (the
    system's CA certificates). Each new client built its own, reading them again: 10-20 ms of CPU a
    request, three or more in a ``-p`` run (issue 32)."""
    import httpx2

    return httpx2.create_ssl_context()


class OpenAIEngine(Engine):
    """Chat completions over HTTP: ``OpenAIEngine("http://127.0.0.1:8080/v1", "my-model")``."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        *,
        settings: EngineSettings | None = None,
        timeout: float = 600.0,
        **overrides: Any,
    ) -> None:
        """``settings``: config.toml's and the flags' (the generation ones count here); ``overrides``
        are ``EngineSettings`` fields (``max_tokens=12``) set over them."""
        self._address = endpoint.rstrip("/")  # as given, credentials included: for requests only
        self.endpoint = shown_url(self._address)  # as every message names it: no credentials
        self.model_name = model
        self.api_key_env = api_key_env
        self.supports_tools = True  # the server decides; it ignores tools its template cannot show
        self.settings = replace(settings or EngineSettings(), **overrides)
        self.timeout = timeout
        self.tools_in_text = self.settings.tool_prompt == TEXT  # the tools go in the system prompt, not in ``tools``
        self.context_length = self.settings.context_length  # config.toml's or --context-length; the server does not say

    @property
    def generation(self) -> GenerationSettings:
        """The settings in effect: those given over the app's defaults (the server keeps the model's own file)."""
        return resolve(vars(self.settings), self.settings.sources)

    @property
    def max_tokens(self) -> int:
        return self.generation.max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self.settings.max_tokens = value

    def _sampling(self, overrides: ReplyOverrides | None = None) -> dict[str, Any]:
        """The request's generation fields: the OpenAI ones always, the ones other servers read (mlx_lm.server,
        vLLM: ``top_k``, ``min_p``, ``repetition_penalty``) and ``seed`` only when set; ``stop`` when
        ``overrides`` gives stop sequences."""
        generation = applied(overrides, self.generation)
        fields = {key: generation.values[key] for key in ("max_tokens", "temperature", "top_p")}
        for key in ("seed", "top_k", "min_p", "repetition_penalty"):
            if generation.sources[key] != DEFAULT and generation.values[key] is not None:
                fields[key] = generation.values[key]
        if overrides is not None and overrides.stop:
            fields["stop"] = list(overrides.stop)
        return fields

    @property
    def url(self) -> str:
        """The chat-completions URL: the endpoint itself if it ends in /chat/completions, else endpoint + that
        (a ``user:password@`` in the endpoint is sent as Basic auth, not in the URL, so no log line holds it)."""
        address = _without_userinfo(self._address)
        return address if address.endswith(_CHAT_PATH) else address + _CHAT_PATH

    def _client(self, timeout: float) -> httpx2.AsyncClient:
        """A client for one request, sending the API key if its variable is set, and the endpoint's
        ``user:password@`` as Basic auth."""
        import httpx2

        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        parts = httpx2.URL(self._address)
        auth = (parts.username, parts.password) if parts.username or parts.password else None  # both unquoted
        timeout_settings = httpx2.Timeout(timeout, connect=min(timeout, 15.0))
        return httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout_settings, verify=tls_context())

    def _said(self, text: str) -> str:
        """``text`` (an error from the HTTP library, a server's message) without the endpoint's credentials."""
        return without_url_secrets(text, self._address)

    async def load(self, on_progress: Callable[[LoadProgress], None] | None = None) -> None:
        """Check that the server answers (GET .../models); raise ``EngineError`` saying what to check if not."""
        base = self.url[: -len(_CHAT_PATH)]
        timeout = min(self.timeout, 15.0)
        with self._transport_errors(timeout):
            async with self._client(timeout) as client:
                response = await client.get(base + "/models")
        if response.status_code in (401, 403) or response.status_code >= 500:
            raise self._http_error(response.status_code, response.text[:2000])
        if on_progress is not None:
            on_progress(LoadProgress("ready", 0, None, f"{self.model_name} at {self.endpoint}"))

    async def served_models(self) -> list[str]:
        """The ids of the models the server serves (``GET .../models``: OpenAI's ``data[].id``, or
        Ollama-style ``models[].name``); ``EngineError`` when it cannot be asked."""
        base = self.url[: -len(_CHAT_PATH)]
        timeout = min(self.timeout, 15.0)
        with self._transport_errors(timeout):
            async with self._client(timeout) as client:
                response = await client.get(base + "/models")
        if response.status_code >= 400:
            raise self._http_error(response.status_code, response.text[:2000])
        try:
            listing = response.json()
        except ValueError:
            raise EngineError(f"the model server at {self.endpoint} listed its models in something not JSON") from None
        entries = (listing.get("data") or listing.get("models") or []) if isinstance(listing, dict) else []
        ids = [entry.get("id") or entry.get("name") for entry in entries if isinstance(entry, dict)]
        return [self._said(str(model_id)) for model_id in ids if model_id]

    def stream(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        known_tools: set[str] | None = None,
        aside: bool = False,
        overrides: ReplyOverrides | None = None,
    ) -> AsyncIterator[EngineEvent]:
        """Generate a reply on the server; see ``Engine.stream`` (``aside`` changes nothing: the server keeps no
        cache of ours). Stop sequences are sent, and also matched here, for servers that ignore ``stop``."""
        in_text = bool(tools) and self.tools_in_text
        if in_text:
            messages = with_tools_in_text(messages, tools or [])
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": for_wire(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            **self._sampling(overrides),
        }
        if tools and not in_text:
            body["tools"] = tools
        if self.settings.thinking is not None:  # servers that render templates take their switches here
            body["chat_template_kwargs"] = {"enable_thinking": self.settings.thinking}
        known = known_tools if known_tools is not None else tool_names(tools)
        stops = StopSequences(overrides.stop if overrides is not None else ())
        return self._stream(body, ToolCallStream(known, tools=tools), stops)

    async def close(self) -> None:
        """Nothing is held between requests."""

    async def _stream(
        self, body: dict[str, Any], recogniser: ToolCallStream, stops: StopSequences
    ) -> AsyncIterator[EngineEvent]:
        reply = _ReplyTally()
        events = self._event_data(body)
        ended = False
        try:
            async for data in events:
                if data.strip() == "[DONE]":
                    ended = True
                    break
                for event in reply.take(self._decode(data), recogniser, stops):
                    yield event
                if stops.matched is not None:  # the rest of the reply is not wanted: stop reading it
                    ended, reply.finish = True, STOP_SEQUENCE
                    break
                if reply.markup.ended:  # the model's end-of-turn token came as text: its turn is over
                    ended, reply.finish = True, reply.finish or "stop"
                    break
        finally:
            await events.aclose()
        rest = stops.feed(reply.markup.rest()) + stops.rest()
        for event in recogniser.feed(rest) if rest else []:
            yield event
        if not ended and reply.finish is None:
            raise EngineError(
                f"the model server at {self.endpoint} ended its stream before the reply was complete "
                "(no finish_reason and no [DONE]); its own log may say why"
            )

        for event in recogniser.finish(model_ended=reply.finish == "stop"):
            yield event
        for index in sorted(reply.calls):
            entry = reply.calls[index]
            call = {"id": entry["id"], "name": entry["name"], "arguments": entry["arguments"]}
            raw = json.dumps({"name": entry["name"], "arguments": entry["arguments"]}, ensure_ascii=False)
            yield recogniser.validate(call, raw)
        yield reply.stats()
        if recogniser.calls_proposed:
            yield Done("tool_calls")
        else:
            yield Done(reply.finish if reply.finish in ("length", STOP_SEQUENCE) else "stop")

    def _decode(self, data: str) -> dict[str, Any]:
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            raise EngineError(
                f"the model server at {self.endpoint} sent data that is not JSON: {data[:200]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise EngineError(f"the model server at {self.endpoint} sent an unexpected reply: {data[:200]!r}")
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise EngineError(self._said(f"the model server at {self.endpoint} reported an error: {message}"))
        return chunk

    # -- the wire -------------------------------------------------------------------------------

    async def _event_data(self, body: dict[str, Any]) -> AsyncIterator[str]:
        """POST the request and yield the data of each server-sent event of the reply."""
        with self._transport_errors(self.timeout):
            async with self._client(self.timeout) as client:
                # No size limit on one event: a tool call's arguments may arrive whole, and be large.
                # The body is ASCII JSON: a lone surrogate the server sent before goes back as \udXXX
                # (httpx2's own encoding writes text as UTF-8, which cannot hold one).
                content = json.dumps(body).encode("ascii")
                headers = {"Content-Type": "application/json"}
                async with client.sse(
                    self.url, method="POST", content=content, headers=headers, max_event_size=None
                ) as source:
                    response = source.response
                    if response.status_code >= 400:
                        await response.aread()
                        raise self._http_error(response.status_code, response.text[:2000])
                    async for event in source:
                        yield event.data

    @contextmanager
    def _transport_errors(self, timeout: float) -> Iterator[None]:
        """Turn httpx2's errors into an ``EngineError`` that says what went wrong and what to check."""
        import httpx2

        try:
            yield
        except httpx2.TimeoutException:
            raise EngineError(
                f"the model server at {self.endpoint} did not answer within {timeout:g} s "
                "(check that it is not overloaded, or raise the timeout)"
            ) from None
        except httpx2.ConnectError as exc:
            raise self._network_error(exc) from None
        except httpx2.SSEError as exc:
            raise EngineError(
                self._said(f"the model server at {self.endpoint} did not stream its reply as events: {exc}")
            ) from None
        except httpx2.TransportError as exc:
            raise EngineError(
                self._said(f"the connection to the model server at {self.endpoint} broke: {type(exc).__name__}: {exc}")
            ) from None

    # -- errors that say what to check ----------------------------------------------------------

    def _network_error(self, reason: Any) -> EngineError:
        return EngineError(
            self._said(
                f"cannot reach the model server at {self.endpoint}: {reason}. "
                "Check that the server is running and that the address and port are right."
            )
        )

    def _http_error(self, status: int, body: str) -> EngineError:
        detail = body.strip().replace("\n", " ")[:300]
        if status in (401, 403):
            hint = f"check the API key in the environment variable {self.api_key_env}"
        elif status == 404:
            hint = f"check the endpoint URL (it usually ends in /v1) and the model name '{self.model_name}'"
        elif status >= 500:
            hint = "the server failed; its own log says why"
        else:
            hint = "the server rejected the request"
        said = f"the model server at {self.endpoint} answered HTTP {status}: {hint}. {detail}".rstrip()
        return EngineError(self._said(said))


@dataclass
class _ReplyTally:
    """What a streamed reply has brought so far: its timing, usage, finish reason and native tool-call pieces."""

    started: float = field(default_factory=time.perf_counter)
    first_at: float | None = None
    last_at: float | None = None
    pieces: int = 0
    finish: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    markup: TurnMarkup = field(default_factory=TurnMarkup)  # special tokens' strings at the start and end

    def take(self, chunk: dict[str, Any], recogniser: ToolCallStream, stops: StopSequences) -> Iterator[EngineEvent]:
        """The events of one chunk: thinking, and text (up to a stop sequence) through the tool-call recogniser."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            content = delta.get("content")
            if reasoning or content or delta.get("tool_calls"):
                self.pieces += 1
                self.last_at = time.perf_counter()
                self.first_at = self.first_at or self.last_at
            if isinstance(reasoning, str) and reasoning:
                yield ThinkingDelta(reasoning)
            if isinstance(content, str) and content:
                yield from recogniser.feed(stops.feed(self.markup.feed(content)))
            _merge_tool_call_pieces(self.calls, delta.get("tool_calls"))
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def stats(self) -> Stats:
        """The reply's figures: the server's usage where it sent one, else the pieces counted."""
        ended = time.perf_counter()
        prompt_tokens = int(self.usage.get("prompt_tokens") or 0)
        cached = int((self.usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        generated = int(self.usage.get("completion_tokens") or self.pieces)
        decode_time = ended - self.first_at if self.first_at is not None else 0.0
        return Stats(
            prompt_tokens=prompt_tokens,
            prefilled_tokens=max(0, prompt_tokens - cached),
            generated_tokens=generated,
            time_to_first_token=(self.first_at - self.started) if self.first_at is not None else 0.0,
            tokens_per_second=generated / decode_time if decode_time > 0 else 0.0,
            peak_memory_gb=0.0,
            prefill_time=(self.first_at - self.started) if self.first_at is not None else 0.0,
            decode_time=(self.last_at - self.first_at) if self.first_at is not None and self.last_at else 0.0,
        )


def _without_userinfo(url: str) -> str:
    scheme, separator, rest = url.partition("//")
    if not separator:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}//{authority.rpartition('@')[2]}{slash}{path}"


def _merge_tool_call_pieces(calls: dict[int, dict[str, Any]], pieces: Any) -> None:
    """Join streamed ``delta.tool_calls`` pieces by their index."""
    if not isinstance(pieces, list):
        return
    for piece in pieces:
        if not isinstance(piece, dict):
            continue
        index = piece.get("index")
        if not isinstance(index, int):
            index = len(calls)
        entry = calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
        if isinstance(piece.get("id"), str) and piece["id"]:
            entry["id"] = piece["id"]
        function = piece.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name and name != entry["name"]:
            entry["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            entry["arguments"] += arguments
        elif isinstance(arguments, dict):
            entry["arguments"] = json.dumps(arguments, ensure_ascii=False)

"""The interface every engine offers to the agent layer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

from mcp_chat_tui.engine.events import EngineEvent, LoadProgress
from mcp_chat_tui.engine.generation import ReplyOverrides


@runtime_checkable
class Engine(Protocol):
    """Turns chat messages plus tool schemas into a stream of ``EngineEvent``.

    ``messages`` are in OpenAI chat shape (system / user / assistant with optional
    ``tool_calls`` / tool with ``tool_call_id``, ``name``, ``content``); ``tools`` are
    OpenAI function tools. ``known_tools`` are the names the model may call (default:
    the names in ``tools``); a call naming any other tool becomes ``ToolCallMalformed``.
    A reply ends with ``Stats`` then ``Done``. To stop, break out of the iterator,
    ``aclose()`` it or cancel the task: generation stops within one token and the
    engine is ready for the next ``stream``. A stream may also offer ``cut()``: stop within one
    token and still end with the reply's ``Stats`` (then ``Done("cancelled")``). ``aside``: a request outside the conversation (a
    summary, a server's sample) that leaves what the engine keeps of the conversation (its KV
    cache, in memory and in its file) as it was. ``overrides`` (``engine/generation.py``
    ``ReplyOverrides``): this one reply's own ``max_tokens`` (a cap under the engine's),
    ``temperature`` and stop sequences (the reply ends before the first it writes, with
    ``Done("stop_sequence")``); the engine's settings are unchanged after.

    An engine whose generation runs Python on a thread of this process may also offer
    ``thread_load``, an object whose ``share`` (0 to 1) says how much of the time that thread
    is running while it generates, and whose ``spare_cores`` says how many cores the process
    leaves idle meanwhile (none if absent; see ``engine/thread_load.py``): the chat
    redraws less often the busier they show the model to be. Engines without it (a remote
    server) are taken not to compete.

    An engine may also offer ``tools_in_text``: True when it describes ``tools`` in the system
    prompt instead of giving them to the chat template or the server (``tool_prompt = "text"``,
    engine/text_tools.py); the agent then offers tools even where ``supports_tools`` is False.
    An engine may also offer ``generation`` (``engine/generation.py`` ``GenerationSettings``): the
    generation settings in effect and where each came from, which the model detail shows and each
    reply's record in the transcript keeps.

    ``context_length`` is how many tokens a prompt and its reply may hold (None: not known);
    a local engine knows it once loaded. An engine with a tokenizer may also offer
    ``count_tokens(text) -> int``; without it the agent estimates (``engine/context.py``).
    """

    model_name: str
    supports_tools: bool
    context_length: int | None

    async def load(self, on_progress: Callable[[LoadProgress], None] | None = None) -> None: ...

    def stream(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        known_tools: set[str] | None = None,
        aside: bool = False,
        overrides: ReplyOverrides | None = None,
    ) -> AsyncIterator[EngineEvent]: ...

    async def close(self) -> None: ...

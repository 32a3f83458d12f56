"""The base every engine extends: what it offers the agent layer, with defaults for what only some engines have."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

from mcp_chat_tui.engine.context import estimate_tokens
from mcp_chat_tui.engine.events import EngineEvent, LoadProgress
from mcp_chat_tui.engine.generation import GenerationSettings, ReplyOverrides
from mcp_chat_tui.engine.thread_load import ThreadLoad


class Engine:
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

    The optional members below have the defaults of an engine that has none of them (a remote
    server's); an engine overrides what it has. An engine whose generation runs Python on a
    thread of this process has ``thread_load``, an object whose ``share`` (0 to 1) says how much of the time that thread
    is running while it generates, and whose ``spare_cores`` says how many cores the process
    leaves idle meanwhile (none if absent; see ``engine/thread_load.py``): the chat
    redraws less often the busier they show the model to be. Without it (None) an engine is taken not to compete.

    ``tools_in_text``: True when it describes ``tools`` in the system
    prompt instead of giving them to the chat template or the server (``tool_prompt = "text"``,
    engine/text_tools.py); the agent then offers tools even where ``supports_tools`` is False.
    ``generation`` (``engine/generation.py`` ``GenerationSettings``): the
    generation settings in effect and where each came from, which the model detail shows and each
    reply's record in the transcript keeps.

    ``context_length`` is how many tokens a prompt and its reply may hold (None: not known);
    a local engine knows it once loaded. ``count_tokens(text)`` counts with the engine's tokenizer
    (by default an estimate, ``engine/context.py``). ``compute_label`` says what the model computes
    with, ``endpoint`` the server a remote engine asks, ``loaded`` whether the model is in memory,
    ``keep_cache_in`` where a local engine keeps its KV cache (``engine/cache_file.py``).
    """

    model_name: str = ""
    supports_tools: bool = False
    context_length: int | None = None
    tools_in_text: bool = False
    generation: GenerationSettings | None = None  # None: the engine has no settings of its own
    thread_load: ThreadLoad | None = None
    compute_label: str = ""
    endpoint: str | None = None  # a remote engine's address, as shown (no credentials)
    loaded: bool = True
    speed_hint: str = ""  # how to make this engine faster on this machine, said once after load ("": nothing)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def keep_cache_in(self, conversation: Path | None, *, save: bool = True) -> None:
        """Keep the KV cache beside the file ``conversation``; an engine without a cache of its own has none to keep."""

    async def load(self, on_progress: Callable[[LoadProgress], None] | None = None) -> None:
        """Make the engine ready to ``stream`` (an engine with nothing to load is ready)."""

    def cancel_load(self) -> None:
        """Stop a ``load`` under way at its next step (it then raises ``LoadCancelled``, an ``EngineError``);
        an engine whose load has no steps to stop between finishes it."""

    async def served_models(self) -> list[str]:
        """The models a remote engine's server serves (a local engine serves none)."""
        return []

    def stream(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        *,
        known_tools: set[str] | None = None,
        aside: bool = False,
        overrides: ReplyOverrides | None = None,
    ) -> AsyncIterator[EngineEvent]:
        raise NotImplementedError(f"{type(self).__name__} does not stream")

    async def close(self) -> None:
        """Free what the engine holds (nothing by default)."""

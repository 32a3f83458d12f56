"""A scripted engine for agent and UI tests: replies are given up front, prompts are recorded.

It extends the real ``Engine`` base; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator
from pathlib import Path

from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ToolCallMalformed, ToolCallProposed


def call(name: str, arguments: dict, call_id: str = "call_1") -> ToolCallProposed:
    return ToolCallProposed(call_id, name, arguments)


class ScriptedEngine(Engine):
    """Each ``stream`` plays the next scripted reply: a list of events or a plain string."""

    def __init__(
        self,
        replies: list,
        *,
        supports_tools: bool = True,
        delay: float = 0.0,
        context_length: int | None = None,
        prompt_tokens: int = 10,
    ) -> None:
        self.model_name = "scripted"
        self.supports_tools = supports_tools
        self.context_length = context_length
        self.prompt_tokens = prompt_tokens  # what each reply's Stats say the prompt took
        self.replies = list(replies)
        self.delay = delay
        self.prompts: list[list[dict]] = []
        self.tools_sent: list[list[dict] | None] = []
        self.overrides_sent: list = []  # each stream's ReplyOverrides (None: the engine's own settings)
        self.closed_streams = 0

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None) -> AsyncIterator:
        self.prompts.append(copy.deepcopy(messages))
        self.overrides_sent.append(overrides)
        self.tools_sent.append(tools)
        reply = self.replies.pop(0) if self.replies else "(no more script)"
        events = [TextDelta(piece) for piece in _words(reply)] if isinstance(reply, str) else list(reply)
        calls = 0
        try:
            for event in events:
                if self.delay:
                    await asyncio.sleep(self.delay)
                if isinstance(event, ToolCallProposed) and known_tools is not None and event.name not in known_tools:
                    event = ToolCallMalformed(event.id, event.name, f"unknown tool {event.name!r}")
                calls += isinstance(event, ToolCallProposed)
                yield event
            yield Stats(self.prompt_tokens, self.prompt_tokens, len(events), 0.01, 100.0, 0.0)
            yield Done("tool_calls" if calls else "stop")
        finally:
            self.closed_streams += 1


def _words(text: str) -> list[str]:
    pieces = text.split(" ")
    return [piece + (" " if index < len(pieces) - 1 else "") for index, piece in enumerate(pieces)]


class FakeHubDownload:
    """Stands in for ``huggingface_hub.snapshot_download`` (the hub cannot be reached here): copies
    the files of a local model into ``target`` in 64 KiB pieces, ``pause`` seconds apart, driving
    the ``tqdm_class`` it is given as the real one does (a byte bar per transfer, one per file
    count). ``calls`` receives the repository and the file patterns asked for."""

    def __init__(self, source: Path, target: Path, calls: dict | None = None, pause: float = 0.02) -> None:
        self.source, self.target, self.pause = source, target, pause
        self.calls = calls if calls is not None else {}

    def __call__(self, repo_id, *, allow_patterns=None, tqdm_class=None, **kwargs) -> str:
        self.calls.update(repo_id=repo_id, allow_patterns=allow_patterns)
        files = sorted(p for p in self.source.iterdir() if p.is_file())
        total = sum(p.stat().st_size for p in files)
        self.target.mkdir(parents=True, exist_ok=True)
        transfer = tqdm_class(desc="Downloading bytes", total=0, initial=0, unit="B", unit_scale=True)
        written = tqdm_class(desc="Reconstructing", total=0, initial=0, unit="B", unit_scale=True)
        with tqdm_class(desc=f"Fetching {len(files)} files", total=len(files)) as files_bar:
            for path in files:
                written.total += path.stat().st_size
                transfer.total += path.stat().st_size
                data = path.read_bytes()
                with open(self.target / path.name, "wb") as out:
                    for start in range(0, len(data), 65536):
                        piece = data[start : start + 65536]
                        out.write(piece)
                        transfer.update(len(piece) // 2)
                        written.update(len(piece))
                        time.sleep(self.pause)
                files_bar.update(1)
        assert written.n == total
        return str(self.target)

"""A server's sampling request answered by the bundled demo model on the real MLX engine: its own
``maxTokens`` caps the reply, a stop sequence ends it, its temperature is the one sampled with, and
the conversation's settings are unchanged after. The real hub and tests/servers/sampling_server.py,
which asks through the SDK's ``create_message`` and echoes the result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcp_chat_tui.demo.server as demo
from mcp_chat_tui.agent.asking_requests import AskingClientRequests, YesAsker
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.servers import ServerHub

pytestmark = pytest.mark.slow

MODEL_DIR = str(Path(demo.__file__).with_name("model"))
SAMPLING_SERVER = str(Path(__file__).parent / "servers" / "sampling_server.py")
PROMPT = "hello"


async def greedy_reply(prompt: str, max_tokens: int) -> str:
    """The demo model's greedy reply to ``prompt`` as a sampled reply has it (text, and calls of tools
    it was not offered as they were written), from an engine at the app's defaults."""
    engine = MlxEngine(MODEL_DIR, max_tokens=max_tokens)
    await engine.load()
    text = ""
    async for event in engine.stream([{"role": "user", "content": prompt}], None):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, ToolCallMalformed):
            text += event.raw
    await engine.close()
    return text


async def test_the_demo_model_answers_a_sampling_request_with_the_requests_own_settings():
    full = await greedy_reply(PROMPT, 100)
    stop = max(full.split(), key=full.index)  # the word the reply writes last for the first time
    assert len(full.split()) > 5 and full.index(stop) > len(full) // 3
    engine = MlxEngine(MODEL_DIR, temperature=5.0, seed=7, max_tokens=200)  # the conversation's: far from greedy
    await engine.load()
    config = ServerConfig(name="sampler", type="stdio", command=sys.executable, args=[SAMPLING_SERVER])
    events: list = []
    try:
        async with ServerHub([config]) as hub:
            hub.client_requests = AskingClientRequests(engine, YesAsker(None), events.append)  # type: ignore[arg-type]
            await hub.start_all()

            async def ask(**settings) -> dict:
                result = await hub.call_tool("sampler", "ask_model", {"prompt": PROMPT, **settings})
                assert result.ok, result.for_model()
                return json.loads(result.for_model())

            capped = await ask(max_tokens=5, temperature=0)
            stopped = await ask(max_tokens=100, temperature=0, stop=[stop])
            whole = await ask(max_tokens=100, temperature=0)
        tokens = engine.tokenizer.encode(capped["content"]["text"], add_special_tokens=False)
    finally:
        await engine.close()
    assert capped["stopReason"] == "maxTokens"
    assert full.startswith(capped["content"]["text"]) and capped["content"]["text"] != full
    assert 0 < len(tokens) <= 5
    assert stopped == {**stopped, "stopReason": "stopSequence"}
    assert stopped["content"]["text"] == full[: full.index(stop)]
    assert whole["content"]["text"] == full  # temperature 0: greedy
    assert engine.generation.temperature == 5.0 and engine.generation.max_tokens == 200  # the conversation's

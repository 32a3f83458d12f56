"""The demo model is trained on what the app sends it: the requests of a whole conversation, built by
scripts/demo_memory.py for training, are token for token those the real agent sends the engine with
the real demo server (the system message, the tools, the window, the summaries message, the summary
requests, the tool results and their error wording).

The model's side is scripted here with the very replies the training data teaches, so the two
conversations are the same one; the demo model's own replies are tested in test_demo_conversation.py.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.memory_window import SUMMARY_INSTRUCTION
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.message_shapes import for_template
from mcp_chat_tui.servers import ServerHub
from tests.helpers import demo_config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from demo_conversations import (  # noqa: E402
    README_QUESTIONS,
    SEARCH_TOPICS,
    SEARCH_WORDS,
    Conversations,
    ToolRunner,
    demo_server_listing,
    demo_zones,
)
from demo_memory import play, summary_line, system_text  # noqa: E402

NOW = "2026-03-14T15:09:00+00:00"
QUESTIONS = [
    *README_QUESTIONS,
    ("convert_units", "convert 5 km/h to miles", {"value": 5, "from_unit": "km/h", "to_unit": "miles"}),  # an error
    ("web_search", "search the web for MLX", {"query": "MLX"}),
    ("chat", "thanks", {}),
]


class TrainedReplies(Engine):
    """An engine that replies what the training data teaches: the turn's call, its answer, a turn's
    summary line; it keeps every request (messages and tools) it is sent."""

    model_name = "trained replies"
    supports_tools = True

    def __init__(self, turns: list[list[dict]]):
        self.turns = turns
        self.requests: list[tuple[list[dict], list[dict] | None]] = []

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None):
        self.requests.append(([dict(m) for m in messages], tools))
        if messages[0]["content"] == SUMMARY_INSTRUCTION:
            [turn] = [t for t in self.turns if f"User: {t[0]['content']}\n" in messages[1]["content"] + "\n"]
            yield TextDelta(summary_line(turn))
        else:
            turn = next(t for t in self.turns if t[0]["content"] == _last_user(messages))
            if messages[-1]["role"] == "user" and len(turn) > 2:
                function = turn[1]["tool_calls"][0]["function"]
                yield ToolCallProposed("call_x", function["name"], _arguments(function["arguments"]))
            else:
                yield TextDelta(turn[-1]["content"])
        yield Done("stop")


def _last_user(messages: list[dict]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def _arguments(arguments) -> dict:
    return json.loads(arguments) if isinstance(arguments, str) else dict(arguments)


def _training_turns(workdir: Path) -> list[list[dict]]:
    maker = Conversations(random.Random(0), ToolRunner(workdir), demo_zones(), SEARCH_TOPICS, SEARCH_WORDS)
    moment = datetime.fromisoformat(NOW)
    return [maker.turn(kind, (text, arguments), moment) for kind, text, arguments in QUESTIONS]


async def _app_requests(turns: list[list[dict]]) -> tuple[TrainedReplies, str]:
    """The conversation through the real agent and the real demo server: the engine's requests, and
    the system prompt's part for the servers' instructions."""
    engine = TrainedReplies(turns)
    hub = ServerHub([demo_config(env={"MCP_CHAT_TUI_DEMO_NOW": NOW})])
    async with hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("auto"), max_turns=3)
        for _, text, _ in QUESTIONS:
            await agent.run_turn(text, lambda event: None)
            await agent.write_summaries(lambda event: None)
        return engine, hub.instructions_prompt()


@pytest.mark.slow
def test_the_app_sends_the_demo_model_what_it_was_trained_on():
    from mlx_lm.tokenizer_utils import load as load_tokenizer

    with tempfile.TemporaryDirectory() as scratch:
        turns = _training_turns(Path(scratch))
    tools, instructions = demo_server_listing()  # as the training script reads them
    engine, system = asyncio.run(_app_requests(turns))
    assert system_text(instructions) == system
    tokenizer = load_tokenizer(Path(demo_model_path()))

    def tokens(messages: list[dict], offered) -> list[int]:
        return tokenizer.apply_chat_template(for_template(messages), tools=offered, add_generation_prompt=True)

    taught = []  # each request of the training data: the messages before a reply it teaches
    for view in play(turns, system_text(instructions), random.Random(0), max_turns=3):
        for index in range(view.taught, len(view.messages)):
            if view.messages[index]["role"] == "assistant":
                taught.append(tokens(view.messages[:index], tools if view.tools else None))
    sent = [tokens(messages, offered) for messages, offered in engine.requests]
    assert len(sent) == len(taught) == 2 * len(QUESTIONS) - 1 + (len(QUESTIONS) - 2)  # "thanks" calls nothing
    for number, (app, trained) in enumerate(zip(sent, taught, strict=True)):
        assert app == trained, (
            f"request {number}:\n{tokenizer.decode(app)}\n---- trained on:\n{tokenizer.decode(trained)}"
        )
    summaries = [m for m, _ in engine.requests if m[0]["content"] == SUMMARY_INSTRUCTION]
    assert len(summaries) == len(QUESTIONS) - 2
    assert "Result of convert_units: Error: Error executing tool convert_units: cannot convert" in str(summaries)

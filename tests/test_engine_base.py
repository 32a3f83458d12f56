"""The engine base class: the members only some engines have get their defaults there, so the layers
above read them as attributes (and mypy checks them) instead of probing with getattr."""

from __future__ import annotations

import ast
from pathlib import Path

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import TurnEnd
from mcp_chat_tui.conversation.recording import recorded_settings
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, Stats, TextDelta
from mcp_chat_tui.engine.llama_engine import LlamaCppEngine
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.remote import OpenAIEngine
from mcp_chat_tui.servers import ServerHub
from tests.source_ast import parse
from tests.test_agent import Recorder

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_chat_tui"
ENGINE_MEMBERS = {name for name in vars(Engine) if not name.startswith("_")}


def engine_probes() -> list[str]:
    """Every ``getattr(<something named engine>, "<a member of Engine>", ...)`` in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"):
                continue
            target, name = node.args[0], node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and name.value in ENGINE_MEMBERS and "engine" in ast.unparse(target):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_layer_probes_an_engine_for_its_members() -> None:
    assert engine_probes() == []


def test_every_engine_the_app_builds_extends_the_base() -> None:
    for engine_class in (MlxEngine, LlamaCppEngine, OpenAIEngine):
        assert issubclass(engine_class, Engine), engine_class


class OnlyStreams(Engine):
    """An engine that gives nothing but its replies: every other member is the base's default."""

    model_name = "only streams"

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None):
        yield TextDelta("an answer")
        yield Stats(12, 12, 2, 0.01, 100.0, 0.0)
        yield Done("stop")


async def test_an_engine_with_only_a_stream_runs_a_whole_turn() -> None:
    engine = OnlyStreams()
    async with ServerHub([]) as hub:
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        assert await agent.run_turn("hello", Recorder()) == TurnEnd.ANSWERED
    assert agent.messages[-1] == {"role": "assistant", "content": "an answer"}
    assert engine.count_tokens("12345678") >= 1 and engine.context_length is None and not engine.tools_in_text
    assert recorded_settings(engine) == {}  # no settings of its own: none recorded
    engine.keep_cache_in(Path("nowhere.md"))  # nothing to keep, nothing written

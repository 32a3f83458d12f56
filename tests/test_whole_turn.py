"""Whole turns through the real parts: the bundled demo model and the demo server over stdio.

Each test runs twice: with ``MlxEngine`` in the process, and with ``OpenAIEngine`` talking to a
real ``mlx_lm.server`` that serves the same model on 127.0.0.1."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import CallFinished, CallProposed, TurnEnd
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.remote import OpenAIEngine
from mcp_chat_tui.servers import ServerHub
from tests.helpers import demo_config, mentions, mlx_lm_server


@pytest.fixture(scope="module")
def served_demo_model(tmp_path_factory):
    """The demo model behind a real ``mlx_lm.server``: its /v1 URL."""
    with mlx_lm_server(demo_model_path(), tmp_path_factory.mktemp("mlx-server") / "server.log") as url:
        yield url


@pytest.fixture(scope="module", params=["local", "remote"])
def demo_engine(request):
    if request.param == "local":
        return MlxEngine(demo_model_path())
    return OpenAIEngine(request.getfixturevalue("served_demo_model"), str(demo_model_path()))


@pytest.fixture
async def demo_agent(demo_engine):
    # a fixed clock for current_time (an arbitrary moment), so the Tokyo turn is the same every run
    hub = ServerHub([demo_config(env={"MCP_CHAT_TUI_DEMO_NOW": "2026-03-14T15:09:00+00:00"})])
    async with hub:
        if not getattr(demo_engine, "loaded", False):  # MlxEngine loads once per module
            await demo_engine.load()
        await hub.start_all()
        yield Agent(demo_engine, hub, ApprovalPolicy("auto")), hub


CASES = [
    ("what is 12 * 7?", "calculator", {"expression": "12 * 7"}, "84"),
    pytest.param(
        "what is 345 + 89?",
        "calculator",
        {"expression": "345 + 89"},
        "434",
        marks=pytest.mark.xfail(
            strict=True,
            reason="a regression of the demo model trained on conversations: it writes 'assistant' and a "
            "wrong number into the expression (the earlier model got this one right)",
        ),
    ),
    ("search the web for the speed of light", "web_search", {"query": "the speed of light"}, "299,792,458"),
]


@pytest.mark.parametrize("prompt, tool, arguments, in_answer", CASES)
async def test_the_demo_model_calls_the_right_tool_and_answers_from_its_result(
    demo_agent, prompt, tool, arguments, in_answer
):
    agent, hub = demo_agent
    events = []
    end = await agent.run_turn(prompt, events.append)
    assert end == TurnEnd.ANSWERED
    [proposed] = [e for e in events if isinstance(e, CallProposed)]
    assert (proposed.call.server, proposed.call.tool) == ("demo", tool)
    assert proposed.call.arguments == arguments
    [finished] = [e for e in events if isinstance(e, CallFinished)]
    assert finished.status == CallState.DONE and in_answer in finished.result.text
    assert hub.status("demo").call_count == 1
    tool_message = agent.messages[2]
    assert tool_message["role"] == "tool" and in_answer in tool_message["content"]
    answer = agent.messages[-1]
    assert answer["role"] == "assistant" and "tool_calls" not in answer
    assert mentions(answer["content"], in_answer), f"the answer does not use the result: {answer['content']!r}"


async def test_time_in_tokyo_goes_through_current_time(demo_agent):
    agent, _ = demo_agent
    events = []
    await agent.run_turn("what time is it in Tokyo?", events.append)
    [proposed] = [e for e in events if isinstance(e, CallProposed)]
    assert proposed.call.tool == "current_time"
    assert proposed.call.arguments.get("timezone") in ("Tokyo", "Asia/Tokyo")
    [finished] = [e for e in events if isinstance(e, CallFinished)]
    hour_minute = finished.result.text.split(" ")[1]  # "2026-11-22 10:15 in Asia/Tokyo (UTC+0900)"
    assert hour_minute in agent.messages[-1]["content"]

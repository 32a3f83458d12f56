"""Tasks against the reference server-everything (Node, over stdio): its task-only research tool, with
and without the user's answer midway, cancelled; and its tools that send the client sampling and
elicitation requests as tasks, which only a client that declares those tasks is offered.

Installed on first use (tests/everything.py); skipped, saying why, where Node or npm is missing.
"""

from __future__ import annotations

import asyncio

import mcp_types
import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.servers import ServerHub
from tests.everything import install
from tests.helpers import eventually


class Answers:
    """The user's answers to the server's requests: a choice in its form, a reply of the model."""

    def __init__(self) -> None:
        self.forms: list[str] = []
        self.samples: list[object] = []

    async def elicit(self, server, params):
        self.forms.append(params.message)
        properties = params.requested_schema.get("properties", {})
        if "interpretation" in properties:
            return mcp_types.ElicitResult(action="accept", content={"interpretation": "snake"})
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada", "favoriteColor": "Blue"})

    async def sample(self, server, params):
        self.samples.append(params.task)
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(text="a sampled hello"), model="scripted"
        )


@pytest.fixture
async def everything():
    node, index = install()  # skips, saying why, where it cannot be had
    config = ServerConfig(name="everything", type="stdio", command=node, args=[str(index)])
    async with ServerHub([config], init_timeout=30) as hub:
        hub.client_requests = answers = Answers()
        await hub.start_all()
        assert hub.status("everything").state.usable, hub.status("everything").reason
        yield hub, answers


def offered(hub: ServerHub) -> dict[str, str]:
    return {spec.name: spec.task_support for spec in hub.tools()}


async def test_the_research_tool_runs_as_a_task_with_its_stages_shown(everything):
    hub, _ = everything
    assert offered(hub)["simulate-research-query"] == "required"
    states: list[TaskState] = []
    result = await hub.call_tool("everything", "simulate-research-query", {"topic": "tides"}, on_task=states.append)
    assert result.ok and "Research Report: tides" in result.text
    messages = [state.message for state in states]
    assert "Gathering sources..." in messages and "Generating report..." in messages
    assert states[-1].status == "completed" and result.task is not None and result.task.status == "completed"


async def test_the_research_tool_asks_the_user_midway_and_uses_the_answer(everything):
    hub, answers = everything
    states: list[TaskState] = []
    result = await hub.call_tool(
        "everything", "simulate-research-query", {"topic": "python", "ambiguous": True}, on_task=states.append
    )
    assert result.ok and "python (snake)" in result.text
    assert "input_required" in [state.status for state in states]
    assert answers.forms and "could have multiple interpretations" in answers.forms[0]


async def test_cancelling_the_research_cancels_its_task(everything):
    hub, _ = everything
    states: list[TaskState] = []
    call = asyncio.ensure_future(
        hub.call_tool("everything", "simulate-research-query", {"topic": "tides"}, on_task=states.append)
    )
    assert await eventually(lambda: states, timeout=20), "the task was never created"
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert states[-1].status == "cancelled" and states[-1].message == "Client cancelled task execution."


async def test_sampling_and_elicitation_sent_as_tasks_are_run_by_the_client(everything):
    hub, answers = everything
    names = offered(hub)
    assert "trigger-sampling-request-async" in names and "trigger-elicitation-request-async" in names
    sampled = await hub.call_tool("everything", "trigger-sampling-request-async", {"prompt": "hi"})
    assert sampled.ok and sampled.text.startswith("[COMPLETED]") and "a sampled hello" in sampled.text
    assert answers.samples and answers.samples[0] is not None, "the request did not ask for a task"
    asked = await hub.call_tool("everything", "trigger-elicitation-request-async", {})
    assert asked.ok and asked.text.startswith("[COMPLETED]") and '"name": "Ada"' in asked.text

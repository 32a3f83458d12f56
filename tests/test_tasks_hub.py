"""Tool calls run as tasks (2025-11-25) through the hub, against tests/servers/task_server.py, a real
SDK server in a process of its own: created, followed with their status and progress, failed,
cancelled at the server (and left to run when the app ends), asking the user midway, followed again
by a resumed conversation; and the server's own requests run as tasks by the client.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import mcp_types
import pytest

from mcp_chat_tui.agent.asking_requests import AskingClientRequests
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tasks import TaskState
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.task_session import TaskSession
from tests.fakes import ScriptedEngine
from tests.helpers import eventually
from tests.test_url_required import PageAsker

TASK_SERVER = str(Path(__file__).parent / "servers" / "task_server.py")


def task_config(log: Path, name: str = "films") -> ServerConfig:
    """tests/servers/task_server.py, always a process: it changes the SDK's runner for the whole
    process (tasks are 2025-11-25's) and keeps its log and poll interval in module globals."""
    return ServerConfig(name=name, type="stdio", command=sys.executable, args=[TASK_SERVER, "--log", str(log)])


def logged(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@pytest.fixture
async def films(tmp_path):
    log = tmp_path / "server.log"
    async with ServerHub([task_config(log)]) as hub:
        await hub.start_all()
        assert hub.status("films").state.usable, hub.status("films").reason
        yield hub, log


class Heard:
    """What a call's listeners heard: its task's states and its progress."""

    def __init__(self) -> None:
        self.tasks: list[TaskState] = []
        self.progress: list = []

    def task(self, state: TaskState) -> None:
        self.tasks.append(state)

    @property
    def statuses(self) -> list[str]:
        return [state.status for state in self.tasks]


async def test_a_tool_that_needs_a_task_is_offered_and_runs_as_one(films):
    hub, log = films
    assert "render" in [spec.name for spec in hub.tools()] and not hub.status("films").unsupported_tools
    heard = Heard()
    result = await hub.call_tool(
        "films", "render", {"frames": 3, "frame_seconds": 0.3}, on_task=heard.task, on_progress=heard.progress.append
    )
    assert result.ok and result.text == "rendered 3 frames"
    task_id = heard.tasks[0].task_id
    assert heard.statuses[0] == "working" and heard.statuses[-1] == "completed"
    assert any(state.message.startswith("frame ") for state in heard.tasks), "no status message was shown"
    assert result.task is not None and result.task.task_id == task_id and result.task.status == "completed"
    assert result.progress is not None and (result.progress.progress, result.progress.total) == (3, 3)
    assert logged(log) == [f'created render {task_id} {{"frame_seconds": 0.3, "frames": 3}}', f"completed {task_id}"]


async def test_a_tool_that_may_run_as_a_task_runs_as_one(films):
    hub, _ = films
    heard = Heard()
    result = await hub.call_tool("films", "count", {"to": 2}, on_task=heard.task)
    assert result.ok and result.text == "counted to 2 as a task"  # the server's task path, not its plain call
    assert heard.statuses[-1] == "completed"


async def test_a_failed_task_is_an_error_result_that_keeps_its_task(films):
    hub, _ = films
    result = await hub.call_tool("films", "broken_render", {})
    assert result.is_error and result.failure is None
    assert result.for_model() == "Error: the renderer ran out of film"
    assert result.task is not None and result.task.status == "failed"


async def test_a_task_that_ends_with_an_error_instead_of_a_result_is_an_error_result(films):
    hub, _ = films
    result = await hub.call_tool("films", "crashing_render", {})
    assert result.is_error and result.failure is None
    assert result.for_model() == "Error: the task failed at the server: the projector caught fire"


async def test_a_stopped_call_cancels_its_task_at_the_server(films):
    hub, log = films
    heard = Heard()
    call = asyncio.ensure_future(hub.call_tool("films", "endless_render", {}, on_task=heard.task))
    assert await eventually(lambda: heard.tasks), "the task was never created"
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    task_id = heard.tasks[0].task_id
    assert f"cancelled {task_id}" in logged(log)
    assert heard.statuses[-1] == "cancelled"
    status = hub.status("films")
    assert status.calls_in_flight == 0 and status.state.value == "ready"


async def test_a_task_is_left_to_run_when_the_app_is_ending(films):
    hub, log = films
    heard = Heard()
    hub.leaving = True
    call = asyncio.ensure_future(hub.call_tool("films", "render", {"frames": 4}, on_task=heard.task))
    assert await eventually(lambda: heard.tasks), "the task was never created"
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    task_id = heard.tasks[0].task_id
    assert await eventually(lambda: f"completed {task_id}" in logged(log)), logged(log)
    assert f"cancelled {task_id}" not in logged(log)


async def test_a_task_is_not_cancelled_by_the_shutdown_of_an_app_that_ends(tmp_path):
    """The app ends as ``action_quit`` does: its turn is stopped, then the hub shuts down at once."""
    log = tmp_path / "server.log"
    hub = ServerHub([task_config(log)])
    await hub.start_all()
    heard = Heard()
    call = asyncio.ensure_future(hub.call_tool("films", "render", {"frames": 4}, on_task=heard.task))
    assert await eventually(lambda: heard.tasks), "the task was never created"
    call.cancel()
    await hub.shutdown()
    await asyncio.gather(call, return_exceptions=True)
    assert "cancelled" not in heard.statuses, "the task was cancelled (or tried to be) on the way out"
    assert not [line for line in logged(log) if line.startswith("cancelled")]


class Answering:
    """Answers the server's form once the call's task says it waits for input."""

    def __init__(self, heard: Heard) -> None:
        self.heard = heard
        self.asked: list[str] = []

    async def elicit(self, server, params):
        self.asked.append(params.message)
        assert await eventually(lambda: "input_required" in self.heard.statuses), "the task never said it waits"
        return mcp_types.ElicitResult(action="accept", content={"format": "webm"})

    async def sample(self, server, params):
        return mcp_types.ErrorData(code=-1, message="not here")


async def test_a_task_that_needs_the_users_answer_asks_and_goes_on(films):
    hub, _ = films
    heard = Heard()
    hub.client_requests = Answering(heard)
    result = await hub.call_tool("films", "render_after_asking", {}, on_task=heard.task)
    assert result.ok and result.text == "rendered in webm"
    assert heard.statuses.index("input_required") < heard.statuses.index("completed")
    assert hub.client_requests.asked == ["Which format should the film be rendered in?"]


async def test_a_resumed_call_follows_the_task_an_earlier_run_created(films):
    hub, log = films
    heard = Heard()
    hub.leaving = True  # the earlier run ends while its task runs
    call = asyncio.ensure_future(hub.call_tool("films", "render", {"frames": 2}, on_task=heard.task))
    assert await eventually(lambda: heard.tasks)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    task_id = heard.tasks[0].task_id
    assert await eventually(lambda: f"completed {task_id}" in logged(log))
    hub.leaving = False

    again = Heard()
    result = await hub.resume_task("films", "render", {"frames": 2}, task_id, on_task=again.task)
    assert result.ok and result.text == "rendered 2 frames"
    assert result.task is not None and result.task.finished_while_closed and result.task.status == "completed"
    assert again.tasks[0].finished_while_closed and "finished while the app was closed" in again.tasks[0].describe()
    assert [line for line in logged(log) if line.startswith("created")] == [
        f'created render {task_id} {{"frames": 2}}'
    ], "the call was made again"


async def test_a_resumed_call_whose_task_is_gone_is_lost_and_says_why(films):
    hub, log = films
    result = await hub.resume_task("films", "render", {}, "no-such-task")
    assert result.failure is not None and result.failure.kind is FailureKind.TASK_LOST
    assert "no-such-task" in result.failure.message and "not known to the server" in result.failure.message
    assert not [line for line in logged(log) if line.startswith("created")]


async def test_a_resumed_call_whose_server_is_not_running_is_lost(films):
    hub, _ = films
    await hub.stop("films")
    result = await hub.resume_task("films", "render", {}, "some-task")
    assert result.failure is not None and result.failure.kind is FailureKind.TASK_LOST
    assert "stopped" in result.failure.message


class ClientSide:
    """The user's answers to the server's requests (which it sends as tasks); ``hold`` keeps them waiting."""

    def __init__(self, hold: bool = False) -> None:
        self.hold = hold
        self.withdrawn = asyncio.Event()

    async def _wait(self) -> None:
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn.set()
                raise

    async def elicit(self, server, params):
        await self._wait()
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, server, params):
        await self._wait()
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(text="hello"), model="scripted"
        )


@pytest.mark.parametrize("kind", ["elicitation", "sampling"])
async def test_the_client_runs_a_servers_request_as_a_task(films, kind):
    hub, _ = films
    hub.client_requests = ClientSide()
    result = await hub.call_tool("films", "ask_client", {"kind": kind})
    assert result.ok, result.for_model()
    said = json.loads(result.text)
    task_id = said["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
    assert said["statuses"][0] == "working" and said["statuses"][-1] == "completed"
    assert task_id in said["listed"]
    if kind == "elicitation":
        assert said["result"]["action"] == "accept" and said["result"]["content"] == {"name": "Ada"}
    else:
        assert said["result"]["content"] == {"type": "text", "text": "hello"}


async def test_a_server_cancels_the_task_it_asked_the_client_for(films):
    hub, _ = films
    hub.client_requests = answers = ClientSide(hold=True)
    result = await hub.call_tool("films", "ask_client", {"kind": "elicitation", "cancel": True})
    assert json.loads(result.text) == {"cancelled": "cancelled"}
    assert await eventually(answers.withdrawn.is_set), "the question to the user was not withdrawn"


def test_the_client_declares_tasks_only_where_the_protocol_has_them():
    async def sample(context, params):
        return None

    session = TaskSession(read_stream=object(), write_stream=object(), sampling_callback=sample)  # type: ignore[arg-type]
    tasks = session._build_capabilities("2025-11-25").tasks  # noqa: SLF001
    assert tasks is not None and tasks.cancel is not None and tasks.list is not None
    assert tasks.requests.sampling.create_message is not None and tasks.requests.elicitation.create is not None
    assert session._build_capabilities("2026-07-28").tasks is None  # noqa: SLF001


async def test_a_task_tool_that_needs_a_page_visited_first_runs_as_a_task_once_it_is(films):
    """-32042 answers the task's tools/call before any task exists: the page is shown, and the call
    is sent again as a task."""
    hub, log = films
    asker, heard = PageAsker(), Heard()
    hub.client_requests = AskingClientRequests(ScriptedEngine([]), asker, lambda event: None)
    result = await hub.call_tool("films", "gated_render", {"frames": 2, "frame_seconds": 0.05}, on_task=heard.task)
    assert result.ok, result.failure
    assert result.for_model() == "rendered 2 frames"
    assert asker.seen == [
        ("url", "films", "Unlock the projector", "https://auth.example/projector"),
        ("page_done", "films", "gated_render", "https://auth.example/projector"),
    ]
    assert heard.statuses[0] == "working" and heard.statuses[-1] == "completed"
    assert [line.split()[:2] for line in logged(log) if line.startswith("created")] == [["created", "gated_render"]]

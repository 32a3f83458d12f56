"""An MCP server whose tools run as tasks (2025-11-25): ``render`` must run as one (progress and a
status message per frame), ``count`` may (an ordinary call otherwise), ``broken_render`` fails (an
error result), ``crashing_render`` fails with a JSON-RPC error instead of a result,
``endless_render`` runs until it is cancelled, ``render_after_asking`` asks the client a question
(an elicitation tied to its task) before it finishes, ``gated_render`` is answered "URL elicitation
required" (-32042) the first time it is called, before any task is created. ``ask_client`` is an ordinary tool that sends
the client a sampling or elicitation request as a task and polls the client for its result.

Written with the SDK's MCPServer: the SDK defines the task types but serves none of the task
requests, so a middleware answers a ``tools/call`` that asks for a task (a ``CreateTaskResult``) and
the ``initialize`` result's capabilities, and request handlers serve ``tasks/get``,
``tasks/result``, ``tasks/cancel`` and ``tasks/list``. Tasks are kept by the process, across its
sessions (an HTTP client that comes back after a restart finds its task). Every connection speaks
2025-11-25, where tasks are. ``--log FILE`` gets a line per task event (created, completed,
failed, cancelled), which tests read to see what happened at the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mcp_types as t
from mcp.server import runner
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

RELATED_TASK = "io.modelcontextprotocol/related-task"
TASK_SUPPORT = {
    "render": "required",
    "broken_render": "required",
    "endless_render": "required",
    "render_after_asking": "required",
    "crashing_render": "required",
    "gated_render": "required",
    "count": "optional",
}
TERMINAL = ("completed", "failed", "cancelled")
GATE_VISITED: list[bool] = []  # gated_render asked for its page once
LOG: Path | None = None
POLL_MS = 200


def note(line: str) -> None:
    if LOG is not None:
        with LOG.open("a", encoding="utf-8") as log:
            log.write(line + "\n")


def now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class ServerTask:
    """One task this server runs: its wire state, and the result (or error) once it is over."""

    task_id: str
    tool: str
    ttl: int | None
    status: str = "working"
    message: str = "starting"
    created: str = field(default_factory=now)
    updated: str = field(default_factory=now)
    result: dict[str, Any] | None = None
    error: MCPError | None = None
    over: asyncio.Event = field(default_factory=asyncio.Event)
    work: asyncio.Task[None] | None = None

    def wire(self) -> dict[str, Any]:
        task = {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttl": self.ttl,
            "pollInterval": POLL_MS,
        }
        return task

    def move(self, status: str, message: str) -> None:
        if self.status in TERMINAL:
            return
        self.status, self.message, self.updated = status, message, now()
        if status in TERMINAL:
            self.over.set()
            note(f"{status} {self.task_id}")


TASKS: dict[str, ServerTask] = {}  # by task id, across sessions


def text_result(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


class Reporter:
    """What a task's work may do: report progress with the call's token, ask the client."""

    def __init__(self, ctx: Any, task: ServerTask, token: str | int | None) -> None:
        self.session = ctx.session
        self.task = task
        self.token = token

    async def progress(self, done: int, total: int, message: str) -> None:
        self.task.move("working", message)
        if self.token is not None:
            await self.session.send_progress_notification(self.token, done, total, message)

    async def elicit(self, message: str) -> t.ElicitResult:
        self.task.move("input_required", "waiting for the user's answer")
        request = t.ElicitRequest(
            params=t.ElicitRequestFormParams(
                message=message,
                requested_schema={"type": "object", "properties": {"format": {"type": "string"}}},
                _meta={RELATED_TASK: {"taskId": self.task.task_id}},
            )
        )
        answer = await self.session.send_request(request, t.ElicitResult)
        self.task.move("working", "the user answered")
        return answer


async def render(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    frames, seconds = int(args.get("frames", 3)), float(args.get("frame_seconds", 0.2))
    for frame in range(1, frames + 1):
        await asyncio.sleep(seconds)
        await report.progress(frame, frames, f"frame {frame} of {frames}")
    return text_result(f"rendered {frames} frames")


async def count(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    to = int(args.get("to", 3))
    for number in range(1, to + 1):
        await asyncio.sleep(float(args.get("step_seconds", 0.1)))
        await report.progress(number, to, f"counted {number}")
    return text_result(f"counted to {to} as a task")


async def broken_render(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    await report.progress(1, 2, "frame 1 of 2")
    return text_result("the renderer ran out of film", error=True)


async def crashing_render(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    await report.progress(1, 3, "the projector sparks")
    raise MCPError(code=t.INTERNAL_ERROR, message="the projector caught fire")


async def endless_render(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    frame = 0
    while True:
        frame += 1
        await report.progress(frame, frame + 1, f"frame {frame}")
        await asyncio.sleep(0.1)


async def render_after_asking(args: dict[str, Any], report: Reporter) -> dict[str, Any]:
    answer = await report.elicit("Which format should the film be rendered in?")
    chosen = (answer.content or {}).get("format", "none") if answer.action == "accept" else answer.action
    return text_result(f"rendered in {chosen}")


WORK: dict[str, Callable[[dict[str, Any], Reporter], Awaitable[dict[str, Any]]]] = {
    "render": render,
    "gated_render": render,
    "count": count,
    "broken_render": broken_render,
    "endless_render": endless_render,
    "crashing_render": crashing_render,
    "render_after_asking": render_after_asking,
}


async def run_task(task: ServerTask, arguments: dict[str, Any], report: Reporter) -> None:
    try:
        result = await WORK[task.tool](arguments, report)
    except asyncio.CancelledError:
        return
    except MCPError as exc:
        task.error = exc
        task.move("failed", str(exc))
        return
    task.result = result
    task.move("failed" if result.get("isError") else "completed", "done")


async def start_task(ctx: Any) -> dict[str, Any]:
    params = dict(ctx.params or {})
    name = params.get("name", "")
    if TASK_SUPPORT.get(name) is None:
        raise MCPError(code=t.METHOD_NOT_FOUND, message=f"{name} cannot run as a task")
    if name == "gated_render" and not GATE_VISITED:
        GATE_VISITED.append(True)
        page = t.ElicitRequestURLParams(
            message="Unlock the projector", url="https://auth.example/projector", elicitation_id="projector"
        )
        raise UrlElicitationRequiredError([page])
    requested = params.get("task") or {}
    task = ServerTask(task_id=str(uuid.uuid4()), tool=name, ttl=requested.get("ttl"))
    TASKS[task.task_id] = task
    note(f"created {name} {task.task_id} {json.dumps(params.get('arguments') or {}, sort_keys=True)}")
    token = (params.get("_meta") or {}).get("progressToken")
    report = Reporter(ctx, task, token)
    task.work = asyncio.get_running_loop().create_task(run_task(task, params.get("arguments") or {}, report))
    return {"task": task.wire()}


async def tasks_middleware(ctx: Any, call_next: Any) -> Any:
    """The task parts of the protocol the SDK's server does not serve."""
    if ctx.method == "server/discover":  # 2026-07-28 has no tasks: the client falls back to 2025-11-25
        raise MCPError(code=t.METHOD_NOT_FOUND, message="this server speaks 2025-11-25 only")
    if ctx.method == "initialize":
        result = dict(await call_next(ctx))
        capabilities = dict(result.get("capabilities") or {})
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        result["capabilities"] = capabilities
        return result
    if ctx.method == "tools/call" and ctx.params and ctx.params.get("task") is not None:
        return await start_task(ctx)
    if ctx.method == "tools/call" and ctx.params and TASK_SUPPORT.get(ctx.params.get("name")) == "required":
        raise MCPError(code=t.METHOD_NOT_FOUND, message=f"{ctx.params.get('name')} must be called as a task")
    return await call_next(ctx)


def find(task_id: str) -> ServerTask:
    task = TASKS.get(task_id)
    if task is None:
        raise MCPError(code=t.INVALID_PARAMS, message=f"Failed to retrieve task: no task {task_id}")
    return task


async def get_task(ctx: Any, params: t.GetTaskRequestParams) -> dict[str, Any]:
    return find(params.task_id).wire()


async def task_result(ctx: Any, params: t.GetTaskPayloadRequestParams) -> dict[str, Any]:
    task = find(params.task_id)
    await task.over.wait()
    if task.error is not None:
        raise task.error
    if task.result is None:
        raise MCPError(code=t.INVALID_PARAMS, message=f"task {task.task_id} was {task.status}: no result")
    return {**task.result, "_meta": {RELATED_TASK: {"taskId": task.task_id}}}


async def cancel_task(ctx: Any, params: t.CancelTaskRequestParams) -> dict[str, Any]:
    task = find(params.task_id)
    if task.status in TERMINAL:
        raise MCPError(code=t.INVALID_PARAMS, message=f"task {task.task_id} is already {task.status}")
    task.move("cancelled", "cancelled at the client's request")
    if task.work is not None:
        task.work.cancel()
    return task.wire()


async def list_tasks(ctx: Any, params: t.PaginatedRequestParams) -> dict[str, Any]:
    return {"tasks": [task.wire() for task in TASKS.values()]}


class TaskServer(MCPServer):
    """Lists each tool's task support."""

    async def list_tools(self) -> list[t.Tool]:
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in TASK_SUPPORT:
                tool.execution = t.ToolExecution(task_support=TASK_SUPPORT[tool.name])  # type: ignore[arg-type]
        return tools


async def ask_client_as_task(ctx: Context, kind: str, cancel: bool) -> str:
    """Send the client a sampling or elicitation request as a task, poll it, fetch its result."""
    if kind == "sampling":
        method = "sampling/createMessage"
        params: dict[str, Any] = {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
            "maxTokens": 20,
        }
    else:
        method = "elicitation/create"
        params = {
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }
    params["task"] = {"ttl": 60000}
    outbound = ctx.session._connection.outbound  # noqa: SLF001 - the SDK's send_request would refuse a CreateTaskResult
    created = await outbound.send_raw_request(method, params, None)
    task_id = created["task"]["taskId"]
    seen = [created["task"]["status"]]
    if cancel:
        cancelled = await ctx.session.send_request(
            t.CancelTaskRequest(params=t.CancelTaskRequestParams(task_id=task_id)), t.CancelTaskResult
        )
        return json.dumps({"cancelled": cancelled.status})
    while True:
        state = await ctx.session.send_request(
            t.GetTaskRequest(params=t.GetTaskRequestParams(task_id=task_id)), t.GetTaskResult
        )
        if state.status != seen[-1]:
            seen.append(state.status)
        if state.status in TERMINAL:
            break
        await asyncio.sleep((state.poll_interval or 100) / 1000)
    listed = await ctx.session.send_request(t.ListTasksRequest(), t.ListTasksResult)
    try:
        raw = await outbound.send_raw_request("tasks/result", {"taskId": task_id}, None)
    except MCPError as exc:
        raw = {"error": exc.error.message}
    return json.dumps({"statuses": seen, "listed": [task.task_id for task in listed.tasks], "result": raw})


def build() -> MCPServer:
    server = TaskServer(name="tasks", version="1.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def render(frames: int = 3, frame_seconds: float = 0.2) -> str:
        """Render a short film, one frame at a time (long: runs as a task)."""
        raise RuntimeError("render runs only as a task")

    @server.tool(structured_output=False)
    async def count(ctx: Context, to: int = 3, step_seconds: float = 0.1) -> str:
        """Count to a number, slowly (may run as a task)."""
        for number in range(1, to + 1):
            await asyncio.sleep(step_seconds)
            await ctx.report_progress(number, to, f"counted {number}")
        return f"counted to {to}"

    @server.tool(structured_output=False)
    def broken_render() -> str:
        """Render with a broken renderer (runs as a task, and fails)."""
        raise RuntimeError("broken_render runs only as a task")

    @server.tool(structured_output=False)
    def endless_render() -> str:
        """Render until told to stop (runs as a task)."""
        raise RuntimeError("endless_render runs only as a task")

    @server.tool(structured_output=False)
    def crashing_render() -> str:
        """Render on a projector that catches fire (runs as a task; its result is an error)."""
        raise RuntimeError("crashing_render runs only as a task")

    @server.tool(structured_output=False)
    def gated_render(frames: int = 3, frame_seconds: float = 0.2) -> str:
        """Render once the projector is unlocked on a page (runs as a task)."""
        raise RuntimeError("gated_render runs only as a task")

    @server.tool(structured_output=False)
    def render_after_asking() -> str:
        """Ask which format, then render (runs as a task)."""
        raise RuntimeError("render_after_asking runs only as a task")

    @server.tool(structured_output=False)
    async def ask_client(ctx: Context, kind: str = "sampling", cancel: bool = False) -> str:
        """Ask the client for a sample of its model or a form answer, as a task the client runs."""
        return await ask_client_as_task(ctx, kind, cancel)

    lowlevel = server._lowlevel_server  # noqa: SLF001
    lowlevel.middleware.append(tasks_middleware)
    lowlevel.add_request_handler("tasks/get", t.GetTaskRequestParams, get_task)
    lowlevel.add_request_handler("tasks/result", t.GetTaskPayloadRequestParams, task_result)
    lowlevel.add_request_handler("tasks/cancel", t.CancelTaskRequestParams, cancel_task)
    lowlevel.add_request_handler("tasks/list", t.PaginatedRequestParams, list_tasks)
    return server


def main() -> None:
    global LOG, POLL_MS
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", default="")
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--poll-ms", type=int, default=200)
    args = parser.parse_args()
    LOG = Path(args.log) if args.log else None
    POLL_MS = args.poll_ms
    runner._has_modern_envelope = lambda params: False  # noqa: SLF001 - tasks are 2025-11-25's
    server = build()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()

"""The SDK client with what 2025-11-25 tasks need and the SDK v2 does not do.

The SDK defines the task types only (2026-07-28 moved tasks out of the core protocol): its session
checks a ``tools/call`` answer as a ``CallToolResult`` (a ``CreateTaskResult`` fails the check),
declares no ``tasks`` capability, refuses a server's ``tasks/*`` requests, and answers a sampling or
elicitation request only with its result. ``TaskSession`` adds these on the SDK's own request path
(its per-version stamp and its dispatcher, as ``listing.py`` reads a tool page), never by hand:

- ``call_tool_as_task`` sends ``tools/call`` with a ``task`` field and reads the ``CreateTaskResult``;
- on 2025-11-25 connections it declares ``tasks`` (``tasks/list``, ``tasks/cancel``, and sampling and
  elicitation as tasks), and a server's sampling or elicitation request that asks for a task is
  answered with one (``client_tasks.py``) whose result is what the same callbacks answer;
- ``notifications/tasks/status`` goes to ``on_task_status``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, cast

import mcp_types
from mcp import Client
from mcp.client.session import ClientRequestContext, ClientResponse, ClientSession
from mcp.shared.dispatcher import DispatchContext
from mcp.shared.exceptions import MCPError
from mcp_types import methods as sdk_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_chat_tui.servers.client_tasks import TASK_METHODS, ClientTasks
from mcp_chat_tui.servers.sdk_private import LEGACY_VERSION, evicting_message_handler, negotiated_version, send_raw

log = logging.getLogger(__name__)

TASKABLE_REQUESTS = ("sampling/createMessage", "elicitation/create")
TaskStatusListener = Callable[[mcp_types.Task], Awaitable[None]]
CLIENT_TASKS = mcp_types.ClientTasksCapability(
    list=mcp_types.TasksListCapability(),
    cancel=mcp_types.TasksCancelCapability(),
    requests=mcp_types.ClientTasksRequestsCapability(
        sampling=mcp_types.TasksSamplingCapability(create_message=mcp_types.TasksCreateMessageCapability()),
        elicitation=mcp_types.TasksElicitationCapability(create=mcp_types.TasksCreateElicitationCapability()),
    ),
)


class TaskSession(ClientSession):
    """``ClientSession`` with tasks (the module's docstring says which parts)."""

    def __init__(self, *args: Any, on_task_status: TaskStatusListener | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_task_status = on_task_status
        self.client_tasks = ClientTasks()

    def _modern(self) -> bool:
        return negotiated_version(self) in MODERN_PROTOCOL_VERSIONS

    async def call_tool_as_task(
        self, name: str, arguments: dict[str, Any], *, ttl_ms: int, meta: dict[str, Any] | None = None
    ) -> mcp_types.CreateTaskResult:
        """Send ``tools/call`` asking for a task; the server's ``CreateTaskResult``."""
        request = mcp_types.CallToolRequest(
            params=mcp_types.CallToolRequestParams(
                name=name, arguments=arguments, task=mcp_types.TaskMetadata(ttl=ttl_ms), _meta=meta
            )
        )
        raw = await self._send_unchecked(request)
        return mcp_types.CreateTaskResult.model_validate(raw, by_name=False)

    async def _send_unchecked(self, request: mcp_types.Request[Any, Any]) -> dict[str, Any]:
        """``send_request`` without its check of the answer against the method's usual result."""
        raw: dict[str, Any] = dict(await send_raw(self, request))
        return raw

    def _build_capabilities(self, version: str) -> mcp_types.ClientCapabilities:
        capabilities = super()._build_capabilities(version)
        if version not in MODERN_PROTOCOL_VERSIONS:
            capabilities.tasks = CLIENT_TASKS
        return capabilities

    async def _on_request(
        self, dctx: DispatchContext[Any], method: str, params: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if method in TASK_METHODS and not self._modern():
            return await self.client_tasks.serve(method, dict(params or {}))
        if method in TASKABLE_REQUESTS and params and params.get("task") is not None and not self._modern():
            return self._start_client_task(dctx, method, params)
        return await super()._on_request(dctx, method, params)

    def _start_client_task(self, dctx: DispatchContext[Any], method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A sampling or elicitation request asking for a task: the task now, the answer as its result."""
        version = negotiated_version(self) or LEGACY_VERSION
        try:
            request = cast(Any, sdk_methods.parse_server_request(method, version, params))
        except (KeyError, ValidationError) as exc:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"Invalid {method} request: {exc}") from None
        assert dctx.request_id is not None
        context = ClientRequestContext(session=self, request_id=dctx.request_id, meta=request.params.meta)

        async def answer() -> dict[str, Any]:
            response = ClientResponse.validate_python(await self.dispatch_input_request(context, request))
            if isinstance(response, mcp_types.ErrorData):
                raise MCPError.from_error_data(response)
            dumped = response.model_dump(by_alias=True, mode="json", exclude_none=True)
            sdk_methods.validate_client_result(method, version, dumped)
            return dumped

        return self.client_tasks.create(method, request.params.task, answer)

    async def _on_notify(self, dctx: DispatchContext[Any], method: str, params: Mapping[str, Any] | None) -> None:
        if method == "notifications/tasks/status":
            await self._task_status(params)
            return
        await super()._on_notify(dctx, method, params)

    async def _task_status(self, params: Mapping[str, Any] | None) -> None:
        if self.on_task_status is None:
            return
        try:
            task = mcp_types.Task.model_validate(dict(params or {}), by_name=False)
            await self.on_task_status(task)
        except Exception:  # noqa: BLE001 - a bad notification costs only itself; polling goes on
            log.info("a task status notification could not be used", exc_info=True)

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        self.client_tasks.close()
        return await super().__aexit__(*exc_info)


@dataclass(kw_only=True)
class TaskClient(Client):
    """``mcp.Client`` on a ``TaskSession``; ``on_task_status`` hears the server's task notifications."""

    on_task_status: TaskStatusListener | None = None

    async def _build_session(self, exit_stack: AsyncExitStack) -> ClientSession:
        """The SDK's ``Client._build_session``, building a ``TaskSession``."""
        dispatcher = await self._connect(exit_stack, self.mode, self.raise_exceptions)
        message_handler = self.message_handler
        if self._response_cache is not None:
            message_handler = evicting_message_handler(self._response_cache, self.message_handler)
        return TaskSession(
            dispatcher=dispatcher,
            read_timeout_seconds=self.read_timeout_seconds,
            sampling_callback=self.sampling_callback,
            sampling_capabilities=self.sampling_capabilities,
            list_roots_callback=self.list_roots_callback,
            logging_callback=self.logging_callback,
            log_level=self.log_level,
            message_handler=message_handler,
            client_info=self.client_info,
            elicitation_callback=self.elicitation_callback,
            extensions=self._folded_extensions.ad,
            result_claims=self._folded_extensions.claims,
            notification_bindings=self._folded_extensions.bindings,
            on_task_status=self.on_task_status,
        )


def task_session(client: Client) -> TaskSession | None:
    """The client's session when it can run tasks."""
    session = client.session
    return session if isinstance(session, TaskSession) else None

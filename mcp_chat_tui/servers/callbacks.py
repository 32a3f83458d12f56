"""The SDK client for one start of a server, and the hub's callbacks for what the server may ask of it
(sampling, elicitation; the rest are in ``client_context.py`` and ``hub.py``).

Mixed into ``ServerHub``, so ``hub.py`` stays the place that starts, stops and tracks the servers.
The client is a ``TaskClient`` (``task_session.py``): the SDK's client with 2025-11-25 tasks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from mcp_chat_tui import __version__
from mcp_chat_tui.servers.incoming_requests import RequestDesk
from mcp_chat_tui.servers.notifications import known_level
from mcp_chat_tui.servers.request_ties import while_wanted

if TYPE_CHECKING:
    import mcp_types

    from mcp_chat_tui.servers.runtime import ServerRuntime
    from mcp_chat_tui.servers.task_session import TaskClient

MOOT = "the call this request came during has ended: nothing to answer"


class ClientCallbacks:
    """Builds each start's client with the hub's callbacks (uses the hub's ``_transport``,
    ``_on_message``, ``_on_log``, ``_list_roots``, ``_on_task_status``, ``requests`` and ``_changed``)."""

    requests: RequestDesk
    _transport: Callable[..., Any]
    _on_message: Callable[..., Any]
    _on_log: Callable[..., Any]
    _list_roots: Callable[..., Any]
    _on_task_status: Callable[..., Any]
    _changed: Callable[..., None]

    def _new_client(self, runtime: ServerRuntime, start_number: int) -> TaskClient:
        """The SDK client for one start of a server, with the callbacks for what the server may send."""
        import mcp_types
        from mcp_types import Implementation

        from mcp_chat_tui.servers.task_session import TaskClient

        return TaskClient(
            self._transport(runtime, start_number),
            client_info=Implementation(name="mcp-chat-tui", version=__version__),
            message_handler=partial(self._on_message, runtime, start_number),
            sampling_callback=partial(self._on_sampling, runtime),
            sampling_capabilities=mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability()),
            elicitation_callback=partial(self._on_elicitation, runtime),
            logging_callback=partial(self._on_log, runtime, start_number),
            log_level=known_level(runtime.status.log_level),
            list_roots_callback=partial(self._list_roots, runtime),
            on_task_status=partial(self._on_task_status, runtime),
        )

    async def _on_sampling(
        self, runtime: ServerRuntime, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> Any:
        import mcp_types

        work = self.requests.sample(runtime.status, params, partial(self._changed, runtime))
        return await self._while_wanted(
            runtime, work, mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=MOOT)
        )

    async def _on_elicitation(self, runtime: ServerRuntime, context: Any, params: Any) -> Any:
        import mcp_types

        return await self._while_wanted(
            runtime, self.requests.elicit(runtime.status, params), mcp_types.ElicitResult(action="cancel")
        )

    async def _while_wanted(self, runtime: ServerRuntime, work: Awaitable[Any], moot: Any) -> Any:
        """A person's answer to the server's request, for as long as the calls it came during go on
        (``request_ties.py``); their time answering is no call's (``call_clock.py``)."""
        with runtime.life.asking():
            return await while_wanted(work, runtime.calls.now(), partial(self._withdrawn, runtime), moot)

    @staticmethod
    def _withdrawn(runtime: ServerRuntime) -> str:
        """Why the server's request ended before it was answered, when the server ended it."""
        name = runtime.config.name
        if runtime.stopping:
            return f"server {name} was stopped or restarted"
        process = runtime.start_life.process
        if runtime.stderr_closed.is_set() or getattr(process, "returncode", None) is not None:
            return f"server {name} exited"
        return f"server {name} took the request back, or its connection ended"

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
from mcp_chat_tui.servers.request_ties import while_wanted

if TYPE_CHECKING:
    import mcp_types

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

    def _new_client(self, rt: Any, generation: int) -> TaskClient:
        """The SDK client for one start of a server, with the callbacks for what the server may send."""
        import mcp_types
        from mcp_types import Implementation

        from mcp_chat_tui.servers.task_session import TaskClient

        return TaskClient(
            self._transport(rt, generation),
            client_info=Implementation(name="mcp-chat-tui", version=__version__),
            message_handler=partial(self._on_message, rt, generation),
            sampling_callback=partial(self._on_sampling, rt),
            sampling_capabilities=mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability()),
            elicitation_callback=partial(self._on_elicitation, rt),
            logging_callback=partial(self._on_log, rt, generation),
            log_level=rt.status.log_level,
            list_roots_callback=partial(self._list_roots, rt),
            on_task_status=partial(self._on_task_status, rt),
        )

    async def _on_sampling(self, rt: Any, context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        import mcp_types

        work = self.requests.sample(rt.status, params, partial(self._changed, rt))
        return await self._while_wanted(rt, work, mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=MOOT))

    async def _on_elicitation(self, rt: Any, context: Any, params: Any) -> Any:
        import mcp_types

        return await self._while_wanted(
            rt, self.requests.elicit(rt.status, params), mcp_types.ElicitResult(action="cancel")
        )

    async def _while_wanted(self, rt: Any, work: Awaitable[Any], moot: Any) -> Any:
        """A person's answer to the server's request, for as long as the calls it came during go on
        (``request_ties.py``); their time answering is no call's (``call_clock.py``)."""
        with rt.life.asking():
            return await while_wanted(work, rt.calls.now(), partial(self._withdrawn, rt), moot)

    @staticmethod
    def _withdrawn(rt: Any) -> str:
        """Why the server's request ended before it was answered, when the server ended it."""
        name = rt.config.name
        if rt.stopping:
            return f"server {name} was stopped or restarted"
        process = rt.start_life.process
        if rt.stderr_closed.is_set() or getattr(process, "returncode", None) is not None:
            return f"server {name} exited"
        return f"server {name} took the request back, or its connection ended"

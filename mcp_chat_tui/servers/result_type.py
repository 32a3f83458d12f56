"""A result without ``resultType`` is a complete result, as the 2026-07-28 spec says; the SDK refuses it.

In 2026-07-28 a server names every result's ``resultType``, and a client is to read a result that
leaves it out (as a server written against an earlier version sends it) as ``complete``. The SDK's
client validates each result against the negotiated version's schema, where the field is required,
so such a result failed its request ("2 validation errors": one for each arm of
``CallToolResult | InputRequiredResult``) and listing tools, prompts or resources failed the same
way (``tests/test_result_type.py`` shows the SDK's refusal).

This is the one place the app steps around that: every transport's read stream goes through
``complete_by_default``, which gives a result that has no ``resultType`` the field's meaning
(``"complete"``) before the SDK reads it. An interim result always names its type
(``input_required``), so nothing else is changed. On an earlier protocol version the field is not
part of the result and the SDK drops it (``ClientSession.send_request``'s later-revision fields).

The same wrapper lets go of each answer once the SDK is done with it: the SDK's dispatcher
(``JSONRPCDispatcher.run``) keeps the last message it read in a local while it waits for the
next, so an 80 MB result stayed in memory until the server wrote again, beyond the end of the
turn that gave the memory back. When the dispatcher asks for the next message it has handed the
last one's result to its caller; the message it holds is then given an empty result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

    from mcp_chat_tui.servers.sdk_private import TransportStreams


RESULT_TYPE = "resultType"
COMPLETE = "complete"


def with_result_type(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """``item`` with ``resultType: "complete"`` added to a result that has none."""
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    if not isinstance(item, SessionMessage):
        return item
    message = item.message
    if not isinstance(message, JSONRPCResponse) or RESULT_TYPE in message.result:
        return item
    result = {**message.result, RESULT_TYPE: COMPLETE}
    return SessionMessage(message.model_copy(update={"result": result}), metadata=item.metadata)


def release(item: SessionMessage | Exception | None) -> None:
    """Empty the result of an answer already handed to its caller (which keeps its own reference to
    it), so the message the SDK still holds no longer holds the result."""
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse) and item.message.result:
        item.message = item.message.model_copy(update={"result": {}})


class CompleteByDefault:
    """A transport's read stream, each result given ``resultType`` when it has none, and emptied
    once the next message is asked for (``release``)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._last: SessionMessage | Exception | None = None  # handed on, still held by the SDK

    def _handing_on(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        self._last = item = with_result_type(item)
        return item

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, which the SDK's dispatcher reads (None when none)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        release(self._last)
        self._last = None
        return self._handing_on(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> CompleteByDefault:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        release(self._last)
        self._last = None
        return self._handing_on(await self._inner.__anext__())

    async def __aenter__(self) -> CompleteByDefault:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc_info)
        return result


@asynccontextmanager
async def complete_by_default(transport: AbstractAsyncContextManager[Any]) -> AsyncIterator[TransportStreams]:
    """``transport`` (any of the SDK's, or the app's stdio one) with its read stream ``CompleteByDefault``."""
    async with transport as (read_stream, write_stream):
        yield CompleteByDefault(read_stream), write_stream

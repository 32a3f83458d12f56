"""What a server may ask of the client: a sample of the model (sampling) and an answer from the user
(elicitation).

The hub passes the SDK's callbacks to ``ClientRequests``, which a front end installs (the app,
``--plain``, ``-p``); until one does, ``DecliningRequests`` answers: elicitation is declined and
sampling refused. The hub also enforces a per-server sampling rate limit (``SamplingLimit``) before
anyone is asked. No UI imports here.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from mcp_chat_tui.core.text import counted, lone_surrogate
from mcp_chat_tui.servers.url_required import NOBODY_TO_ASK

if TYPE_CHECKING:
    from mcp_types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        CreateMessageResultWithTools,
        ElicitRequestParams,
        ElicitRequestURLParams,
        ElicitResult,
        ErrorData,
    )

DEFAULT_SAMPLING_PER_MINUTE = 10
USER_REJECTED = -1  # the spec's code for a sampling request the user rejected (or a policy refused)
RATE_WINDOW_SECONDS = 60.0
NO_ONE_TO_SAMPLE = "sampling refused: mcp-chat-tui has no one to approve the request here"

SamplingAnswer: TypeAlias = "CreateMessageResult | CreateMessageResultWithTools | ErrorData"
ElicitationAnswer: TypeAlias = "ElicitResult | ErrorData"


class ClientRequests(Protocol):
    """Answers a server's requests; ``server`` is the name the server has in mcp.json. A handler may
    also have ``refused_by_limit(server, params, message)``: told of each sampling request the rate
    limit refused before anyone was asked."""

    async def sample(self, server: str, params: CreateMessageRequestParams) -> SamplingAnswer: ...

    async def elicit(self, server: str, params: ElicitRequestParams) -> ElicitationAnswer: ...

    # A handler may also have ``visit_required(server, tool, pages) -> str``: shows the pages a call
    # of ``tool`` must wait for (-32042) and returns "" once they are done, else why not.


class DecliningRequests:
    """Used until a front end installs its own: elicitation declined, sampling refused with why."""

    async def sample(self, server: str, params: CreateMessageRequestParams) -> SamplingAnswer:
        import mcp_types
        from mcp_types import ErrorData

        return ErrorData(code=mcp_types.INVALID_REQUEST, message=NO_ONE_TO_SAMPLE)

    async def elicit(self, server: str, params: ElicitRequestParams) -> ElicitationAnswer:
        from mcp_types import ElicitResult

        return ElicitResult(action="decline")


class SamplingLimit:
    """At most ``per_minute`` sampling requests of one server in any 60 s (0: none at all)."""

    def __init__(
        self, per_minute: int = DEFAULT_SAMPLING_PER_MINUTE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._asked: dict[str, deque[float]] = {}

    def used(self, server: str) -> int:
        """Requests of ``server`` counted in the last minute."""
        asked = self._asked.get(server)
        if not asked:
            return 0
        cutoff = self._clock() - RATE_WINDOW_SECONDS
        while asked and asked[0] <= cutoff:
            asked.popleft()
        return len(asked)

    def take(self, server: str) -> str | None:
        """Count one request of ``server``; returns why it is refused (None: it may go on)."""
        if self.used(server) >= self.per_minute:
            return (
                f"sampling refused: server {server!r} asked more than {counted(self.per_minute, 'time')} in a minute "
                "(the limit is sampling_per_minute in config.toml); try again later"
            )
        self._asked.setdefault(server, deque()).append(self._clock())
        return None


class RequestDesk:
    """Where the hub hands each server's requests: redacts them, applies the sampling limit, counts
    them in the server's status, and asks ``handler`` (settable: a front end installs its own)."""

    def __init__(self, redactor: Any, per_minute: int = DEFAULT_SAMPLING_PER_MINUTE) -> None:
        self.redactor = redactor
        self.limit = SamplingLimit(per_minute)
        self.handler: ClientRequests = DecliningRequests()

    def _redacted(self, params: Any) -> Any:
        if not self.redactor:
            return params
        dumped = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        return type(params).model_validate(self.redactor.value(dumped))

    async def sample(self, status: Any, params: CreateMessageRequestParams, changed: Any) -> SamplingAnswer:
        """A sampling request of the server whose status is ``status``; ``changed()`` after counting."""
        import mcp_types
        from mcp_types import ErrorData

        status.sampling_per_minute = self.limit.per_minute
        refused = self.limit.take(status.name)
        status.samples_asked += 1
        if refused is not None:
            status.samples_refused += 1
            changed()
            over_limit = getattr(self.handler, "refused_by_limit", None)
            if over_limit is not None:  # recorded as any refusal is (the conversation, -p's report and exit code)
                over_limit(status.name, self._redacted(params), refused)
            return ErrorData(code=USER_REJECTED, message=refused)  # the user's limit refuses it, as the user would
        changed()
        try:
            answer = await self.handler.sample(status.name, self._redacted(params))
        except Exception as exc:  # noqa: BLE001 - a failure is the server's answer, never a crash
            return ErrorData(code=mcp_types.INTERNAL_ERROR, message=f"sampling failed: {exc}")
        surrogate = lone_surrogate(answer.model_dump())  # the SDK could not send it: the connection would end
        if surrogate is not None:
            return ErrorData(
                code=mcp_types.INTERNAL_ERROR,
                message=f"sampling failed: the reply holds a lone surrogate ({surrogate})",
            )
        return answer

    async def elicit(self, status: Any, params: ElicitRequestParams) -> ElicitationAnswer:
        import mcp_types
        from mcp_types import ErrorData

        try:
            return await self.handler.elicit(status.name, self._redacted(params))
        except Exception as exc:  # noqa: BLE001
            return ErrorData(code=mcp_types.INTERNAL_ERROR, message=f"elicitation failed: {exc}")

    async def visit_required(self, status: Any, tool: str, pages: list[ElicitRequestURLParams]) -> str:
        """A call of ``tool`` was answered "visit these pages first" (-32042): the handler shows them
        (``visit_required(server, tool, pages)``); returns "" once every page is done, else why not."""
        visit = getattr(self.handler, "visit_required", None)
        if visit is None:
            return NOBODY_TO_ASK
        try:
            return str(await visit(status.name, tool, pages))
        except Exception as exc:  # noqa: BLE001 - a failure fails the call, never the hub
            return f"showing the page failed: {exc}"

    def completed(self, server: str, elicitation_id: str) -> None:
        """The server says a URL elicitation it asked for is complete."""
        done = getattr(self.handler, "elicitation_completed", None)
        if done is not None:
            done(server, elicitation_id)

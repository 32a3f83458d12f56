"""The servers' requests answered with the user in the loop, the same way in every front end.

``AskingClientRequests`` is the hub's ``ClientRequests`` for the app, ``--plain`` and ``-p``; each
front end gives it an ``Asker`` (dialogs, terminal prompts, or ``--yes``/decline). A sampling
request is approved (or edited, or rejected), answered by the app's own model, its tool calls
approved one by one, and the answer reviewed before it goes back. One request is handled at a time.

A request that arrives while the model writes the user's reply is refused at once with a clear
error: the one model cannot write two replies together, and a server usually samples while its own
tool call runs, when the model is idle, so waiting would mostly wait on that server's own call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcp_chat_tui.agent.events import AgentSink, ServerRequestAnswered
from mcp_chat_tui.agent.sampling import ToolUse, generate, request_record, result_record, sampling_result
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.servers.elicit_form import FormField, form_fields, redacted_values
from mcp_chat_tui.servers.incoming_requests import USER_REJECTED, ElicitationAnswer, SamplingAnswer
from mcp_chat_tui.servers.url_required import NOBODY_TO_ASK

if TYPE_CHECKING:
    from mcp_types import (
        CreateMessageRequestParams,
        ElicitRequestParams,
        ElicitRequestURLParams,
        ElicitResult,
        ErrorData,
    )

BUSY_MESSAGE = "sampling refused: the model is busy writing the user's reply; ask again when that reply is done"
NOBODY_MESSAGE = "sampling refused: there was no one to ask (no terminal); --yes lets the model answer"


class Asker(Protocol):
    """How a front end asks the user about a server's request."""

    async def approve_sampling(
        self, server: str, params: CreateMessageRequestParams
    ) -> CreateMessageRequestParams | None:
        """The request to run (edited or not), or None when the user rejects it."""
        ...

    async def approve_tool_use(self, server: str, use: ToolUse) -> bool: ...

    # An asker may also have ``nobody_to_ask``: True when its None means no one was there to answer
    # (``-p`` in a pipe), so the request is recorded as refused, not as the user's rejection.

    async def review_sample(self, server: str, text: str, tool_uses: list[ToolUse]) -> str | None:
        """The answer to send (edited or not), or None when the user rejects it."""
        ...

    async def fill_form(self, server: str, message: str, fields: list[FormField]) -> tuple[str, dict[str, Any]]:
        """The spec's action ("accept", "decline", "cancel") and, on accept, the values."""
        ...

    async def visit_url(self, server: str, message: str, url: str) -> str:
        """The spec's action for a URL request; the page is opened only on the user's key."""
        ...

    async def page_done(self, server: str, tool: str, url: str, completed: asyncio.Event) -> bool:
        """After a page a call waits for was opened: True once the user says they are done on it
        (or ``completed`` is set: the server said so), False when they give up."""
        ...


class AskingClientRequests:
    """``ClientRequests`` that asks through ``asker``, samples ``engine`` and reports each request to ``sink``."""

    def __init__(
        self,
        engine: Engine | Callable[[], Engine],
        asker: Asker,
        sink: AgentSink,
        *,
        model_busy: Callable[[], bool] = lambda: False,
        model_name: str | Callable[[], str] = "",
        redactor: Redactor | None = None,
    ) -> None:
        """``engine`` and ``model_name`` may be given as functions: the model answering now (``/model``
        changes it) samples, under its own name."""
        self._engine = engine
        self.redactor = redactor  # learns the secrets typed into forms, to hide them from then on
        self.asker = asker
        self.sink = sink
        self.model_busy = model_busy
        self._model_name = model_name
        self._one_at_a_time = asyncio.Lock()
        self.completed: set[tuple[str, str]] = set()  # (server, elicitation id) the server said are done
        self._completions: dict[tuple[str, str], asyncio.Event] = {}  # pages a call waits for, by the same key

    @property
    def engine(self) -> Engine:
        return self._engine() if callable(self._engine) else self._engine

    @property
    def model_name(self) -> str:
        name = self._model_name() if callable(self._model_name) else self._model_name
        return name or self.engine.model_name

    # ----- sampling --------------------------------------------------------------------------

    async def sample(self, server: str, params: CreateMessageRequestParams) -> SamplingAnswer:
        asked = request_record(params)
        if self.model_busy():
            return self._refused(server, "sampling", asked, BUSY_MESSAGE)
        async with self._one_at_a_time:
            edited = await self.asker.approve_sampling(server, params)
            if edited is None:
                if getattr(self.asker, "nobody_to_ask", False):
                    return self._refused(server, "sampling", asked, NOBODY_MESSAGE)
                return self._rejected(server, asked, "the user rejected the sampling request")
            answer = "approved" if edited == params else "edited"
            if answer == "edited":
                asked["edited"] = request_record(edited)
            if self.model_busy():
                return self._refused(server, "sampling", asked, BUSY_MESSAGE)
            reply = await generate(self.engine, edited)
            approved = [use for use in reply.tool_uses if await self.asker.approve_tool_use(server, use)]
            text = await self.asker.review_sample(server, reply.text, approved)
            if text is None:
                return self._rejected(server, asked, "the user rejected the model's answer")
            if text != reply.text:
                answer = "edited"
            result = sampling_result(edited, text, approved, self.model_name, reply.stop_reason)
            self._report(server, "sampling", asked, answer, result_record(result))
            return result

    def refused_by_limit(self, server: str, params: CreateMessageRequestParams, message: str) -> None:
        """A sampling request the hub's rate limit refused before anyone was asked: recorded as refused."""
        self._report(server, "sampling", request_record(params), "refused", {"error": message})

    def _rejected(self, server: str, asked: dict[str, Any], message: str) -> ErrorData:
        from mcp_types import ErrorData

        self._report(server, "sampling", asked, "rejected", {"error": message})
        return ErrorData(code=USER_REJECTED, message=message)

    def _refused(self, server: str, kind: str, asked: dict[str, Any], message: str) -> ErrorData:
        from mcp_types import ErrorData

        self._report(server, kind, asked, "refused", {"error": message})
        return ErrorData(code=USER_REJECTED, message=message)

    # ----- elicitation -----------------------------------------------------------------------

    async def elicit(self, server: str, params: ElicitRequestParams) -> ElicitationAnswer:
        from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

        async with self._one_at_a_time:
            if isinstance(params, ElicitRequestURLParams):
                return await self._visit(server, params)
            assert isinstance(params, ElicitRequestFormParams)
            fields = form_fields(params.requested_schema)
            asked = {"mode": "form", "message": params.message, "fields": [f.name for f in fields]}
            action, values = await self.asker.fill_form(server, params.message, fields)
            content = values if action == "accept" else None
            self._learn_secrets(server, fields, content or {})
            recorded: dict[str, Any] = {"action": action}
            if content is not None:
                recorded["content"] = redacted_values(fields, content)
            self._report(server, "elicitation", asked, action, recorded)
            return ElicitResult(action=action, content=content)

    def _learn_secrets(self, server: str, fields: list[FormField], values: dict[str, Any]) -> None:
        for form_field in fields:
            value = values.get(form_field.name)
            if form_field.secret and isinstance(value, str) and self.redactor is not None:
                self.redactor.add(f"{server}.{form_field.name}", value)

    async def _visit(self, server: str, params: ElicitRequestURLParams) -> ElicitResult:
        from mcp_types import ElicitResult

        asked = {"mode": "url", "message": params.message, "url": params.url}
        action = await self.asker.visit_url(server, params.message, params.url)
        self._report(server, "elicitation", asked, action, {"action": action})
        return ElicitResult(action=action)

    async def visit_required(self, server: str, tool: str, pages: list[ElicitRequestURLParams]) -> str:
        """A call of ``tool`` waits for ``pages`` (-32042): each is shown (open or decline) and, once
        opened, the user says when they are done (or the server does); "" when every page is done,
        else why not. Each page is recorded, with whether the call was sent again."""
        async with self._one_at_a_time:
            for index, page in enumerate(pages):
                asked = {"mode": "url", "message": page.message, "url": page.url, "requiredBy": tool}
                action = await self.asker.visit_url(server, page.message, page.url)
                done = action == "accept" and await self._page_done(server, tool, page)
                last = index == len(pages) - 1
                self._report(server, "elicitation", asked, action, {"action": action, "callSentAgain": done and last})
                if getattr(self.asker, "nobody_to_ask", False):
                    return NOBODY_TO_ASK
                if action != "accept":
                    return "the user declined the page" if action == "decline" else "the user cancelled the page"
                if not done:
                    return "the user gave up before finishing on the page"
        return ""

    async def _page_done(self, server: str, tool: str, page: ElicitRequestURLParams) -> bool:
        key = (server, page.elicitation_id or "")
        completed = self._completions.setdefault(key, asyncio.Event())
        if key in self.completed:
            completed.set()
        try:
            return await self.asker.page_done(server, tool, page.url, completed)
        finally:
            self._completions.pop(key, None)

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        """The server's ``notifications/elicitation/complete``: said in the chat and the transcript."""
        self.completed.add((server, elicitation_id))
        waiting = self._completions.get((server, elicitation_id))
        if waiting is not None:  # a call waits for this page: it is sent again at once
            waiting.set()
        self._report(server, "elicitation", {"mode": "url", "elicitationId": elicitation_id}, "complete", {})

    def _report(self, server: str, kind: str, asked: dict[str, Any], answer: str, result: dict[str, Any]) -> None:
        self.sink(ServerRequestAnswered(server, kind, asked, answer, result))


class YesAsker:
    """``--yes``: every sampling request, tool use and answer is approved as it is; an elicitation
    (which needs the user's own answer) goes to ``fallback``."""

    def __init__(self, fallback: Asker) -> None:
        self.fallback = fallback

    async def approve_sampling(
        self, server: str, params: CreateMessageRequestParams
    ) -> CreateMessageRequestParams | None:
        return params

    async def approve_tool_use(self, server: str, use: ToolUse) -> bool:
        return True

    async def review_sample(self, server: str, text: str, tool_uses: list[ToolUse]) -> str | None:
        return text

    async def fill_form(self, server: str, message: str, fields: list[FormField]) -> tuple[str, dict[str, Any]]:
        return await self.fallback.fill_form(server, message, fields)

    async def visit_url(self, server: str, message: str, url: str) -> str:
        return await self.fallback.visit_url(server, message, url)

    async def page_done(self, server: str, tool: str, url: str, completed: asyncio.Event) -> bool:
        return await self.fallback.page_done(server, tool, url, completed)

    @property
    def nobody_to_ask(self) -> bool:
        return bool(getattr(self.fallback, "nobody_to_ask", False))


def describe_answered(event: Any) -> str:
    """One line for the chat and the console: who asked what, the answer, and what went back
    (``event``: a ``ServerRequestAnswered``, or the transcript's ``ServerRequest``, which has its fields)."""
    request, result = event.request, event.result
    if event.kind == "sampling":
        asked = f"{event.server} asked the model for a reply ({request.get('maxTokens', '?')} tokens at most"
        if isinstance(request.get("temperature"), (int, float)):
            asked += f", temperature {request['temperature']:g}"
        if isinstance(request.get("stopSequences"), list) and request["stopSequences"]:
            asked += ", stops at " + ", ".join(
                json.dumps(stop, ensure_ascii=False) for stop in request["stopSequences"]
            )
        asked += ")"
    elif request.get("mode") == "url":
        if event.answer == "complete":
            return f"📨 {event.server}: the page it asked you to open is done"
        asked = f"{event.server} asked you to open {request.get('url', '')}"
        if request.get("requiredBy"):
            asked += f" before {request['requiredBy']} can run"
            if result.get("callSentAgain"):
                return f"📨 {asked} → {event.answer}; done, so the call was sent again"
    else:
        asked = f"{event.server} asked: {request.get('message', '')}"
    line = f"📨 {asked} → {event.answer}"
    if "error" in result:
        line += f": {result['error']}"
    elif event.kind == "sampling":
        uses = ", ".join(use["name"] for use in result.get("toolUse", []))
        line += f": {str(result.get('text', ''))[:200]!r}" + (f" + tool use {uses}" if uses else "")
    elif "content" in result:
        line += ": " + ", ".join(f"{name}={_shown(value)}" for name, value in result["content"].items())
    return line


def _shown(value: Any) -> str:
    """A form's value in a line: a string as it is, anything else (a list, a number, yes/no) as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

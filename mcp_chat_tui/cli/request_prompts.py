"""``--plain`` and ``-p`` answer the servers' requests on the terminal: a sampling request is shown and
approved, edited or rejected; a form's fields are asked one by one (a bad value is said and asked
again); a URL is shown with its host and opened only on ``o``, and only an https one (or http to
this computer). With no terminal to ask (``-p`` in a pipe), elicitation is declined and sampling
refused, each with one line on stderr; ``--yes`` approves sampling. Each request's first answer is
a line typed after its keys were shown (cli/typed_lines.py), and a choice is its letter alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from mcp_chat_tui.agent import Agent
from mcp_chat_tui.agent.asking_requests import AskingClientRequests, YesAsker
from mcp_chat_tui.agent.events import AgentSink
from mcp_chat_tui.agent.sampling import ToolUse, asked_settings, editable, message_text, with_edits
from mcp_chat_tui.cli.typed_lines import LineReader, Question
from mcp_chat_tui.core.page_address import check_page_address
from mcp_chat_tui.core.text import pretty_json, visible_controls
from mcp_chat_tui.servers.elicit_form import FormField
from mcp_chat_tui.servers.request_ties import withdrawal

if TYPE_CHECKING:
    from mcp_types import CreateMessageRequestParams


def literal(value: object, style: str = "") -> Text:
    return Text(visible_controls(str(value)), style=style)


class ConsoleAsker:
    """Asks on the terminal through ``reader`` (cli/typed_lines.py); None: nobody to ask."""

    def __init__(self, console: Console, reader: LineReader | None) -> None:
        self.console = console
        self.reader = reader

    @property
    def nobody_to_ask(self) -> bool:
        """No terminal to ask (``-p`` in a pipe): a request is refused, not rejected by a person."""
        return self.reader is None

    @contextlib.asynccontextmanager
    async def _question(self, what: str) -> AsyncIterator[Question]:
        """One request's questions: the first takes only a line typed after its keys were shown. When
        what it answers ends first (``servers/request_ties.py``), it says so (``what``: the request, as
        the notice names it) and nothing typed for it is sent, nor taken as a prompt."""
        reader = self.reader
        assert reader is not None, "nobody to ask: said and answered before any question"
        try:
            async with reader.question(self.console) as asking:
                yield asking
        except asyncio.CancelledError as exc:
            why = withdrawal(exc) or "what it answered has ended"
            self.console.print(Text(f"\n{what} closed: {why}. Nothing typed in it was sent.", style="yellow"))
            reader.withdrawn(self.console)
            raise

    async def _line(self, asking: Question, question: str, is_answer: Callable[[str], bool] = bool) -> str | None:
        return await asking.ask(lambda: self.console.print(Text(question, style="bold"), end=""), is_answer)

    async def _choice(self, asking: Question, question: str, keys: str) -> str | None:
        """One of ``keys``, typed as a line of its own (a line that only starts with one, such as a
        prompt typed on, answers nothing); None at the end of input."""

        def is_choice(line: str) -> bool:
            return len(line.strip()) == 1 and line.strip().lower() in keys

        while True:
            answer = await self._line(asking, question, is_choice)
            if answer is None:
                return None
            if is_choice(answer):
                return answer.strip().lower()

    def _nobody(self, what: str) -> None:
        self.console.print(Text(f"{what}: no terminal to ask", style="yellow"), soft_wrap=True)

    # ----- sampling --------------------------------------------------------------------------

    async def approve_sampling(
        self, server: str, params: CreateMessageRequestParams
    ) -> CreateMessageRequestParams | None:
        if self.reader is None:
            self._nobody(f"sampling request of {server} refused (use --yes to let the model answer)")
            return None
        parts: list[Any] = [
            literal(f"Server {server} asks the model for a reply ({'; '.join(asked_settings(params))})", "bold")
        ]
        if params.system_prompt:
            parts.append(literal(f"system: {params.system_prompt}", "dim"))
        parts += [literal(f"{m.role}: {message_text(m)}") for m in params.messages]
        if params.tools:
            parts.append(literal("may call: " + ", ".join(tool.name for tool in params.tools), "dim"))
        self.console.print(Panel(Group(*parts), border_style="yellow", expand=False))
        async with self._question(f"{server}'s sampling request") as asking:
            choice = await self._choice(asking, "a approve · e edit · r reject: ", "aer")
            if choice == "a":
                return params
            if choice != "e":
                return None
            system = await self._line(asking, "system prompt (Enter keeps it): ")
            texts = []
            for message in params.messages:
                if not editable(message):
                    texts.append("")
                    continue
                text = await self._line(asking, f"{message.role} message (Enter keeps it): ")
                texts.append(text if text else message_text(message))
        return with_edits(params, system if system else params.system_prompt or "", texts)

    async def approve_tool_use(self, server: str, use: ToolUse) -> bool:
        self.console.print(literal(f"the model calls {use.name} for {server}: {pretty_json(use.arguments)}"))
        async with self._question(f"the tool use {use.name} for {server}") as asking:
            return await self._choice(asking, "y allow (the server runs it) · n deny: ", "yn") == "y"

    async def review_sample(self, server: str, text: str, tool_uses: list[ToolUse]) -> str | None:
        body = [literal(text)] + [
            literal(f"tool use: {use.name} {pretty_json(use.arguments)}", "dim") for use in tool_uses
        ]
        self.console.print(Panel(Group(*body), title=literal(f"answer for {server}"), expand=False))
        async with self._question(f"the sampled answer for {server}") as asking:
            choice = await self._choice(asking, "s send · e edit · r reject: ", "ser")
            if choice == "s":
                return text
            if choice == "e":
                return await self._line(asking, "answer: ")
        return None

    # ----- elicitation -----------------------------------------------------------------------

    async def fill_form(self, server: str, message: str, fields: list[FormField]) -> tuple[str, dict[str, Any]]:
        if self.reader is None:
            self._nobody(f"{server} asked for a form ({message}); declined")
            return "decline", {}
        self.console.print(Panel(literal(message), title=literal(f"{server} asks you"), expand=False))
        async with self._question(f"{server}'s form") as asking:
            choice = await self._choice(asking, "f fill in · d decline · c cancel: ", "fdc")
            if choice != "f":
                return ("decline" if choice == "d" else "cancel"), {}
            values: dict[str, Any] = {}
            for field in fields:
                value = await self._field(asking, field)
                if value is ...:
                    return "cancel", {}
                if value is not None:
                    values[field.name] = value
        return "accept", values

    async def _field(self, asking: Question, field: FormField) -> Any:
        """The field's value (None: left empty; ``...``: the input ended)."""
        default = field.shown_default()
        hint = field.hint()
        if field.kind in ("enum", "multi"):  # the choices numbered; typed by number, value or title
            self.console.print(literal(f"  {field.label}: {field.numbered_options()}", "dim"))
            hint = field.typed_choice_hint()
        question = f"{field.label}{' *' if field.required else ''} ({hint})"
        question += f" [{default}]: " if default else ": "
        while True:
            raw = await self._line(asking, visible_controls(question))
            if raw is None:
                return ...
            value, problem = field.parse(raw or default)
            if not problem:
                return value
            self.console.print(literal(f"  {field.label}: {problem}", "red"))

    async def visit_url(self, server: str, message: str, url: str) -> str:
        """Where the page is (its host, as a browser resolves it) and the whole address; ``o`` opens
        it, and only an https address or an http one to this computer (``core/page_address.py``)."""
        if self.reader is None:
            self._nobody(f"{server} asked you to open {url}; declined")
            return "decline"
        address = check_page_address(url)
        body = [literal(message)]
        if address.host:
            body.append(
                literal(
                    f"goes to {address.host}" + (f" (written {address.written_host})" if address.written_host else ""),
                    "bold",
                )
            )
        if address.user:
            body.append(
                literal(f"before the host stands {address.user}@: a user name, not where the page is", "yellow")
            )
        body.append(literal(url))
        if address.refusal:
            body.append(literal(address.refusal, "bold red"))
        self.console.print(Panel(Group(*body), title=literal(f"{server} asks you to open a page"), expand=False))
        async with self._question(f"{server}'s page to open") as asking:
            if not address.openable:
                return "decline" if await self._choice(asking, "d decline · c cancel: ", "dc") == "d" else "cancel"
            choice = await self._choice(asking, "o open in the browser · d decline · c cancel: ", "odc")
        if choice == "o":
            if not webbrowser.open(address.url):
                self.console.print(Text("no browser could be opened: copy the URL", style="yellow"))
            return "accept"
        return "decline" if choice == "d" else "cancel"

    async def page_done(self, server: str, tool: str, url: str, completed: asyncio.Event) -> bool:
        """After the page was opened: the user says when they are done there (the call is then sent again)."""
        if self.reader is None:
            return False
        if not completed.is_set():
            async with self._question(f"{server}'s page for {tool}") as asking:
                choice = await self._choice(asking, f"d done on the page: send {tool} again · c give up: ", "dc")
            return choice == "d"
        self.console.print(literal(f"{server} says the page is done: {tool} is sent again"))
        return True


def install_console_requests(agent: Agent, console: Console, reader: Any, sink: AgentSink, *, auto_yes: bool) -> None:
    """Have the hub behind ``agent`` answer its servers' requests on this terminal."""
    hub = agent.tools
    if not hasattr(hub, "client_requests"):
        return
    asker = ConsoleAsker(console, reader)
    hub.client_requests = AskingClientRequests(  # type: ignore[attr-defined]
        lambda: agent.engine,  # the model answering now: /model changes it
        YesAsker(asker) if auto_yes else asker,
        sink,
        model_busy=lambda: agent.generating,
        redactor=agent.redactor,
    )

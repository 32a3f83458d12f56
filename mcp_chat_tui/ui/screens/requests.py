"""Dialogs for what a server asks of the client: a sample of the model (approve or edit the request,
each tool call, then review the answer) and an elicitation (a form built from its schema, or a URL).

Every text from a server or the model is shown literally; the results are typed. Each decides
something, so its keys act only once it is armed (``DecidingScreen``).
"""

from __future__ import annotations

import asyncio
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static, TextArea

from mcp_chat_tui.agent.sampling import ToolUse, asked_settings, editable, message_text, with_edits
from mcp_chat_tui.core.page_address import check_page_address
from mcp_chat_tui.core.text import pretty_json
from mcp_chat_tui.servers import FormField
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.widgets.schema_form import SchemaForm
from mcp_chat_tui.ui.widgets.scrolling import Scroll

if TYPE_CHECKING:
    from mcp_types import CreateMessageRequestParams

CSS = Path(__file__).with_name("requests.tcss")


def _title(server: str, what: str) -> Text:
    title = Text("Server ", style="bold")
    title.append_text(literal(server, "bold"))
    title.append(f" {what}", style="bold")
    return title


class SamplingScreen(DecidingScreen["CreateMessageRequestParams | None"]):
    """A server's sampling request: what it asks of the reply (maxTokens, temperature, stop sequences),
    its tools, and its messages and system prompt, editable; Ctrl+S runs the (edited) request on the
    app's model, Esc rejects it."""

    CSS_PATH = CSS
    AUTO_FOCUS = ".typed-first"  # the last message the user may edit (else the system prompt)
    BINDINGS = [
        Binding("ctrl+s", "approve", "Run the request (as edited)", id="sampling.approve", priority=True),
        Binding("escape", "reject", "Reject the request", id="sampling.reject"),
    ]

    def __init__(self, server: str, params: CreateMessageRequestParams) -> None:
        super().__init__()
        self.server = server
        self.params = params

    def compose(self) -> ComposeResult:
        params = self.params
        with Scroll(classes="request-dialog"):
            yield Static(_title(self.server, "asks the model for a reply"), classes="request-title")
            yield Static("[b]Ctrl+S[/] approve (with your edits)  [b]Esc[/] reject", classes="request-keys dialog-keys")
            tools = ", ".join(tool.name for tool in params.tools or [])
            info = " · ".join(asked_settings(params)) + (f" · may call: {tools}" if tools else "")
            yield Static(literal(info), id="sampling-asked", classes="request-info")
            yield Static("system prompt", classes="request-label")
            last_editable = max((i for i, m in enumerate(params.messages) if editable(m)), default=-1)
            yield TextArea(
                params.system_prompt or "",
                id="sampling-system",
                soft_wrap=True,
                classes="request-text" + (" typed-first" if last_editable < 0 else ""),
                compact=True,
            )
            for index, message in enumerate(params.messages):
                yield Static(literal(message.role), classes="request-label")
                if editable(message):
                    yield TextArea(
                        message_text(message),
                        id=f"sampling-message-{index}",
                        soft_wrap=True,
                        classes="request-text" + (" typed-first" if index == last_editable else ""),
                        compact=True,
                    )
                else:
                    yield Static(literal(message_text(message)), classes="request-fixed")

    def action_approve(self) -> None:
        system = self.query_one("#sampling-system", TextArea).text
        texts = [
            self.query_one(f"#sampling-message-{index}", TextArea).text if editable(message) else ""
            for index, message in enumerate(self.params.messages)
        ]
        unchanged = system == (self.params.system_prompt or "") and all(
            text == message_text(message)
            for text, message in zip(texts, self.params.messages, strict=True)
            if editable(message)
        )
        self.dismiss(self.params if unchanged else with_edits(self.params, system, texts))

    def action_reject(self) -> None:
        self.dismiss(None)


class ToolUseScreen(DecidingScreen[bool]):
    """One tool call the model proposed while answering a server: y sends it back to the server
    (which runs it), n leaves it out."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("y", "decide(True)", "Allow a tool call of the reply", id="sampling_tool.allow"),
        Binding("n,escape", "decide(False)", "Deny that tool call", id="sampling_tool.deny"),
    ]

    def __init__(self, server: str, use: ToolUse) -> None:
        super().__init__()
        self.server = server
        self.use = use

    def compose(self) -> ComposeResult:
        with Scroll(classes="request-dialog"):
            title = Text("The model calls ", style="bold")
            title.append_text(literal(self.use.name, "bold"))
            title.append(" for server ", style="bold")
            title.append_text(literal(self.server, "bold"))
            yield Static(title, classes="request-title")
            yield Static(
                "[b]y[/] allow (the server runs it)  [b]n[/] or [b]Esc[/] deny", classes="request-keys dialog-keys"
            )
            yield Static(literal(pretty_json(self.use.arguments)), classes="request-fixed")

    def action_decide(self, allowed: bool) -> None:
        self.dismiss(allowed)


class SampleReviewScreen(DecidingScreen[str | None]):
    """The model's answer before it goes back to the server: Ctrl+S sends it (as edited), Esc rejects it."""

    CSS_PATH = CSS
    AUTO_FOCUS = "#sampling-answer"
    BINDINGS = [
        Binding("ctrl+s", "send", "Send the answer (as edited)", id="sampling_review.send", priority=True),
        Binding("escape", "reject", "Reject the answer", id="sampling_review.reject"),
    ]

    def __init__(self, server: str, text: str, tool_uses: list[ToolUse]) -> None:
        super().__init__()
        self.server = server
        self.text = text
        self.tool_uses = tool_uses

    def compose(self) -> ComposeResult:
        with Scroll(classes="request-dialog"):
            yield Static(_title(self.server, "gets this answer"), classes="request-title")
            yield Static("[b]Ctrl+S[/] send (with your edits)  [b]Esc[/] reject", classes="request-keys dialog-keys")
            yield TextArea(self.text, id="sampling-answer", soft_wrap=True, classes="request-text", compact=True)
            for use in self.tool_uses:
                yield Static(literal(f"tool use: {use.name} {pretty_json(use.arguments)}"), classes="request-fixed")

    def action_send(self) -> None:
        self.dismiss(self.query_one("#sampling-answer", TextArea).text)

    def action_reject(self) -> None:
        self.dismiss(None)


class ElicitFormScreen(DecidingScreen[tuple[str, dict[str, Any]]]):
    """A form built from an elicitation's schema: Ctrl+S sends it once every field is valid (errors
    shown under each field), Ctrl+D declines, Esc cancels."""

    CSS_PATH = CSS
    AUTO_FOCUS = "#field-0"
    BINDINGS = [
        Binding("ctrl+s", "accept", "Send the form", id="elicit.accept", priority=True),
        Binding("ctrl+d", "finish('decline')", "Decline the form", id="elicit.decline", priority=True),
        Binding("escape", "finish('cancel')", "Cancel the form", id="elicit.cancel"),
    ]

    def __init__(self, server: str, message: str, fields: list[FormField]) -> None:
        super().__init__()
        self.server = server
        self.message = message
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Scroll(classes="request-dialog"):
            with Vertical(classes="form-head"):  # docked: the fields scroll under the server's message
                yield Static(_title(self.server, "asks you"), classes="form-title")
                yield Static(literal(self.message), classes="request-info form-message")
            yield Static(
                "[b]Ctrl+S[/] send  [b]Ctrl+D[/] decline  [b]Esc[/] cancel", classes="request-keys dialog-keys"
            )
            yield SchemaForm(self.fields)

    def action_accept(self) -> None:
        values = self.query_one(SchemaForm).values()
        if values is not None:
            self.dismiss(("accept", values))

    def action_finish(self, action: str) -> None:
        self.dismiss((action, {}))


class ElicitUrlScreen(DecidingScreen[str]):
    """A server asks the user to visit a URL: where it goes (its host, as a browser resolves it) and the
    whole address are shown before anything can be opened; ``o`` opens it in the browser, and only an
    https address or an http one to this computer (``core/page_address.py``); others are refused, said why."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("o", "open", "Open the URL in the browser", id="elicit_url.open"),
        Binding("d", "finish('decline')", "Decline the URL", id="elicit_url.decline"),
        Binding("escape", "finish('cancel')", "Cancel the URL", id="elicit_url.cancel"),
    ]

    def __init__(self, server: str, message: str, url: str) -> None:
        super().__init__()
        self.server = server
        self.message = message
        self.url = url
        self.address = check_page_address(url)

    def compose(self) -> ComposeResult:
        address = self.address
        keys = ("[b]o[/] open it in the browser  " if address.openable else "") + "[b]d[/] decline  [b]Esc[/] cancel"
        with Scroll(classes="request-dialog"):
            yield Static(_title(self.server, "asks you to open a page"), classes="request-title")
            yield Static(keys, classes="request-keys dialog-keys")
            yield Static(literal(self.message), classes="request-info")
            if address.host:
                where = Text("goes to ")
                where.append_text(literal(address.host, "bold"))
                if address.written_host:
                    where.append_text(literal(f"  (written {address.written_host})"))
                yield Static(where, id="elicit-host")
            if address.user:
                yield Static(
                    literal(f"⚠ before the host stands {address.user}@: a user name, not where the page is"),
                    classes="url-warning",
                )
            yield Static(literal(self.url), id="elicit-url", classes="request-fixed")
            if address.refusal:
                yield Static(literal(address.refusal), id="elicit-refused")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open" and not self.address.openable:
            return False
        return super().check_action(action, parameters)

    def action_open(self) -> None:
        if not self.address.openable:
            return
        try:
            opened = webbrowser.open(self.address.url)
        except webbrowser.Error:
            opened = False
        if not opened:
            self.notify("no browser could be opened: copy the URL", severity="warning")
        self.dismiss("accept")

    def action_finish(self, action: str) -> None:
        self.dismiss(action)


class PageDoneScreen(DecidingScreen[bool]):
    """A call waits for a page the user opened (the server answered it with "URL elicitation
    required"): Enter says they are done there and sends the call again, Esc gives up. When the server
    says the page is done (``completed`` is set), the call is sent again without a key."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("enter", "finish(True)", "Done on the page: send the call again", id="page_done.retry"),
        Binding("escape", "finish(False)", "Give up on the call", id="page_done.give_up"),
    ]

    def __init__(self, server: str, tool: str, url: str, completed: asyncio.Event) -> None:
        super().__init__()
        self.server = server
        self.tool = tool
        self.url = url
        self.completed = completed
        self._server_done = False

    def compose(self) -> ComposeResult:
        with Scroll(classes="request-dialog"):
            yield Static(_title(self.server, "waits for the page"), classes="request-title")
            yield Static("[b]Enter[/] done: send the call again  [b]Esc[/] give up", classes="request-keys dialog-keys")
            told = Text("Finish on the page, then press Enter: ")
            told.append_text(literal(self.tool, "bold"))
            told.append(" is sent again (at once, if the server says the page is done).")
            yield Static(told, classes="request-info")
            yield Static(literal(self.url), id="page-done-url", classes="request-fixed")

    def on_mount(self) -> None:
        self.run_worker(self._wait_for_the_server(), exit_on_error=False)

    async def _wait_for_the_server(self) -> None:
        await self.completed.wait()
        self._server_done = True
        if self.is_current:
            self.dismiss(True)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        if self._server_done:  # it came while another dialog covered this one
            self.dismiss(True)

    def action_finish(self, done: bool) -> None:
        self.dismiss(done)

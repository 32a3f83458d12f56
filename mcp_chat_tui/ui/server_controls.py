"""What the user does to servers and their tools (restart, sign in, stderr, log level, auto-run, a
call of their own) and how the servers pane shows them: a helper ``ChatApp`` composes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.widgets import Static

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.text import counted, visible_controls
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.servers import (
    CallCommandError,
    ServerHub,
    ServerState,
    ServerStatus,
    SignInRequest,
    call_attachment,
    parse_call,
    protocol_notes,
    tool_list_notes,
)
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock, literal, palette_text
from mcp_chat_tui.ui.screens.detail import ServerDetailScreen, TextScreen
from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
from mcp_chat_tui.ui.screens.sign_in import SignInScreen
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from mcp_chat_tui.ui.widgets.sidebar import ServerTable, ToolCallTable
from mcp_chat_tui.ui.widgets.status import StatusBar


class ServerControls:
    """The servers' actions (the servers pane's keys, the palette's entries, ``/call``) and their rows.

    Args:
        app: Where it says what happened, opens screens and runs its work, and finds the other
            panes (the calls table, the reason under the servers, the status bar, the prompt box).
        hub: The servers.
        policy: Which tools run without asking (the ⚡ marks, the auto-run toggles).
        clock: How the server detail writes times.
        table: The servers pane's table (asked for each time: it is mounted after the app starts).
    """

    def __init__(
        self,
        app: App[Any],
        hub: ServerHub,
        policy: ApprovalPolicy,
        clock: DisplayClock,
        table: Callable[[], ServerTable],
    ) -> None:
        self.app = app
        self.hub = hub
        self.policy = policy
        self.clock = clock
        self._table = table

    def _tool_spec(self, server: str, tool: str) -> ToolSpec | None:
        """The tool ``server`` offers now by that name (None: no such server or tool now)."""
        try:
            tools = self.hub.status(server).tools
        except KeyError:  # the app's own tools (``(app)``) have no server status
            tools = [spec for spec in self.hub.tools() if spec.server == server]
        return next((spec for spec in tools if spec.name == tool), None)

    def server_detail(self, status: ServerStatus) -> ServerDetailScreen:
        """A server's detail: its tools (``a`` auto-run, Enter to call one yourself), log and level."""
        return ServerDetailScreen(
            status,
            self.clock,
            self.policy.runs_without_asking,
            self.toggle_tool_auto_run,
            self.set_log_level,
            self.call_tool_yourself,
        )

    def open_detail(self, name: str) -> None:
        """Enter on a server's row: its detail."""
        self.app.push_screen(self.server_detail(self.hub.status(name)))

    def call_tool_yourself(self, spec: ToolSpec) -> None:
        """Enter on a tool in the server panel: its arguments asked (the schema's defaults filled in),
        then the call runs with no approval (the user is the one calling); the result is shown and
        attached to the next message."""

        def chosen(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                self.app.run_worker(self._run_own_call(spec, arguments), group="own-call")

        properties = spec.input_schema.get("properties") if isinstance(spec.input_schema, dict) else None
        defaults = {
            name: prop["default"]
            for name, prop in (properties if isinstance(properties, dict) else {}).items()
            if isinstance(prop, dict) and "default" in prop
        }
        self.app.push_screen(EditArgumentsScreen(spec, defaults, calling=True), callback=chosen)

    async def call_typed(self, text: str) -> None:
        """``/call server:tool key=value``: run it (no approval), show the result, attach it."""
        try:
            spec, arguments = parse_call(text, self.hub.tools())
        except CallCommandError as exc:
            self.app.notify(str(exc), title="not called", severity="error", markup=False, timeout=10)
            self.app.query_one(PromptInput).put_back(text)  # nothing typed is lost
            return
        await self._run_own_call(spec, arguments)

    async def _run_own_call(self, spec: ToolSpec, arguments: dict[str, Any]) -> None:
        self.app.notify(f"calling {spec.server} › {spec.name}…", markup=False, timeout=3)
        result = await self.hub.call_tool(spec.server, spec.name, arguments)
        attachment = call_attachment(spec, arguments, result.for_model(), result.ok)
        prompt = self.app.query_one(PromptInput)
        word = f"@{spec.server}:{spec.name}"
        prompt.attached.append((word, attachment))
        prompt.value = f"{prompt.value.rstrip()} {word} ".lstrip()
        prompt.cursor_position = len(prompt.value)
        self.app.push_screen(TextScreen(attachment.label(), attachment.text))
        self.app.notify(f"attached to your next message: delete {word} to leave it out", markup=False, timeout=8)

    def record_auto_run(self, record: CallRecord) -> bool:
        """Whether the tool of a sidebar row runs without asking now (its ⚡ mark)."""
        spec = self._tool_spec(record.server, record.tool)
        return spec is not None and self.policy.runs_without_asking(spec)

    def server_auto_run(self, status: ServerStatus) -> bool:
        """Whether every tool of a server runs without asking now (its ⚡ mark)."""
        return bool(status.tools) and all(self.policy.runs_without_asking(spec) for spec in status.tools)

    def show_policy_marks(self) -> None:
        """After the policy changed: every ⚡ mark drawn again from it."""
        self.app.query_one(ToolCallTable).refresh_marks()
        servers = self._table()
        for status in self.hub.statuses:
            servers.show(status)

    def show(self, status: ServerStatus) -> None:
        """A server's row (and its reason, when highlighted) and the status bar's count as ``status`` says now."""
        tables = self.app.query(ServerTable)  # none while the panes are still mounted, or after they are gone
        if tables:
            table = tables.first()
            table.show(status)
            if table.selected_server() == status.name:
                self.show_reason(status.name)
        for bar in self.app.query(StatusBar):
            ready = sum(1 for s in self.hub.statuses if s.state.usable)
            bar.servers = f"{ready}/{len(self.hub.statuses)} servers · {counted(len(self.hub.tools()), 'tool')}"

    def show_reason(self, name: str | None) -> None:
        """Under the server table, the whole failure reason of the highlighted server (the row cuts it)
        and the tools it listed that were refused, each with why."""
        status = self._table().statuses.get(name) if name is not None else None
        lines = (
            []
            if status is None
            else [
                line
                for line in (status.reason, tool_list_notes(status), protocol_notes(status), self._rule_notes(status))
                if line
            ]
        )
        reason = self.app.query_one("#server-reason", Static)
        reason.display = bool(lines)
        reason.update(literal(f"{status.name}: " + "\n".join(lines)) if status is not None and lines else "")

    def _rule_notes(self, status: ServerStatus) -> str:
        """config.toml's choices for this server's tools that were saved for another server of its
        name (another command or URL), which the policy does not apply to it."""
        by_server: dict[str, list[str]] = {}
        for spec in status.tools:
            rule = self.policy.unapplied_rule(spec)
            if rule is not None and rule.server is not None:
                by_server.setdefault(rule.server.describe(), []).append(spec.name)
        return "\n".join(
            f"config.toml's choices for {', '.join(tools)} were saved for another {status.name} ({saved_for}): "
            "not applied (T in the approval dialog saves one for this server)"
            for saved_for, tools in by_server.items()
        )

    def restart(self, name: str) -> None:
        self.app.notify(visible_controls(f"restarting {name}…"), markup=False)

        async def restart() -> None:
            status = await self.hub.restart(name)
            severity: SeverityLevel = "information" if status.state.usable else "error"
            self.app.notify(
                visible_controls(f"{name}: {status.state.value} {status.reason}".strip()),
                severity=severity,
                markup=False,
            )

        self.app.run_worker(restart(), group=f"restart-{name}")

    def sign_in(self, name: str) -> None:
        """Start the server again with the user to authorize it: the dialog shows the address, the
        browser opens only on their key; the outcome is notified."""
        self.app.notify(visible_controls(f"signing in to {name}…"), markup=False)

        async def sign_in() -> None:
            status = await self.hub.sign_in(name, self.show_sign_in)
            severity: SeverityLevel = "information" if status.state.usable else "error"
            text = (
                f"{name}: signed in, {counted(len(status.tools), 'tool')}" if status.state.usable else status.summary()
            )
            self.app.notify(visible_controls(text), severity=severity, markup=False)
            if self.hub.token_vault.notice:
                self.app.notify(self.hub.token_vault.notice, severity="warning", markup=False, timeout=15)

        self.app.run_worker(sign_in(), group=f"restart-{name}")

    async def show_sign_in(self, request: SignInRequest) -> None:
        await self.app.push_screen(SignInScreen(request))

    def sign_in_commands(self) -> Iterator[SystemCommand]:
        """Palette commands: sign in to each server that signs in with OAuth (found by typing
        "sign in" unless it needs it now, when the palette lists it)."""
        for status in self.hub.statuses:
            if self.hub.config(status.name).oauth_settings is None:
                continue
            yield SystemCommand(
                palette_text(f"Sign in to server {status.name}"),
                palette_text(status.summary()),
                lambda name=status.name: self.sign_in(name),
                discover=status.state == ServerState.NEEDS_SIGN_IN,
            )

    def show_log(self, name: str) -> None:
        status = self.hub.status(name)
        where = f"log file: {status.log_path}\n\n" if status.log_path else ""
        body = where + ("\n".join(status.stderr_tail) or "(nothing on stderr yet)")
        self.app.push_screen(TextScreen(f"stderr of {name}", body))

    def set_log_level(self, name: str, level: str) -> None:
        """Ask a server for log messages at ``level`` and above (this session; ``logLevel`` in mcp.json keeps one)."""

        async def send() -> None:
            said = await self.hub.set_log_level(name, level)
            self.app.notify(visible_controls(said), markup=False)

        self.app.run_worker(send(), group=f"log-level-{name}")

    def toggle_server_auto_run(self, name: str) -> None:
        """Every tool of the server runs without asking, or every one asks: for this session only
        (config.toml is not written; its saved choices apply again next time)."""
        tools = self.hub.status(name).tools
        if not tools:
            self.app.notify(visible_controls(f"{name}: no tools to toggle"), markup=False)
            return
        turn_on = self.policy.toggle_server(name, tools)
        saved = [spec.name for spec in tools if self.policy.saved_choice(spec) == "always"]
        kept = (
            f"; config.toml still says always for {', '.join(saved)} (from the next run)"
            if saved and not turn_on
            else ""
        )
        how = "run without asking" if turn_on else "ask before running"
        self.app.notify(visible_controls(f"{name}: its tools {how}, this session only{kept}"), markup=False)

    def toggle_tool_auto_run(self, server: str, tool: str) -> bool | None:
        """Flip auto-run for one tool, for this session only (config.toml is not written)."""
        spec = self._tool_spec(server, tool)
        if spec is None:
            return None
        now_auto = self.policy.toggle(spec)
        how = "runs without asking" if now_auto else "asks before running"
        kept = (
            "; config.toml still says always for it (from the next run)"
            if not now_auto and self.policy.saved_choice(spec) == "always"
            else ""
        )
        self.app.notify(visible_controls(f"{server} › {tool}: {how}, this session only{kept}"), markup=False)
        return now_auto

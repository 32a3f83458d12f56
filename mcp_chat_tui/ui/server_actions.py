"""What the app does to servers: show their state, restart them, show their stderr, toggle auto-run.

A part of ``ChatApp`` (mixed into it), kept apart so each file reads in one go; the ``@on``
handlers that call these stay on the app, where Textual finds them.
"""

from __future__ import annotations

from textual.widgets import Static

from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.servers.state import tool_list_notes
from mcp_chat_tui.ui.format import literal
from mcp_chat_tui.ui.screens.detail import TextScreen


class ServerActions:
    """Server panel behaviour of ``ChatApp``: uses its ``hub``, ``policy`` and tables."""

    def _show_server(self, status) -> None:
        table = self.servers_table
        table.auto_run[status.name] = bool(status.tools) and all(
            self.policy.runs_without_asking(spec) for spec in status.tools
        )
        table.show(status)
        if table.selected_server() == status.name:
            self._show_server_reason(status.name)
        ready = sum(1 for s in self.hub.statuses if s.state.usable)
        self.status_bar.servers = f"{ready}/{len(self.hub.statuses)} servers · {len(self.hub.tools())} tools"


    def _show_server_reason(self, name: str | None) -> None:
        """Under the server table, the whole failure reason of the highlighted server (the row cuts it)
        and the tools it listed that were refused, each with why."""
        status = self.servers_table.statuses.get(name) if name is not None else None
        lines = [] if status is None else [line for line in (status.reason, tool_list_notes(status)) if line]
        reason = self.query_one("#server-reason", Static)
        reason.display = bool(lines)
        reason.update(literal(f"{status.name}: " + "\n".join(lines)) if lines else "")


    def restart_server(self, name: str) -> None:
        self.notify(f"restarting {name}…")

        async def restart() -> None:
            status = await self.hub.restart(name)
            severity = "information" if status.state.usable else "error"
            self.notify(visible_controls(f"{name}: {status.state.value} {status.reason}".strip()), severity=severity,
                        markup=False)

        self.run_worker(restart(), group=f"restart-{name}")

    def show_server_log(self, name: str) -> None:
        status = self.hub.status(name)
        where = f"log file: {status.log_path}\n\n" if status.log_path else ""
        body = where + ("\n".join(status.stderr_tail) or "(nothing on stderr yet)")
        self.push_screen(TextScreen(f"stderr of {name}", body))

    def toggle_server_auto_run(self, name: str) -> None:
        tools = self.hub.status(name).tools
        turn_on = not all(self.policy.runs_without_asking(spec) for spec in tools)
        for spec in tools:
            if self.policy.runs_without_asking(spec) != turn_on:
                self.policy.toggle(spec)
        self._show_server(self.hub.status(name))
        self.notify(f"{name}: tools {'run without asking' if turn_on else 'ask before running'}")

    def toggle_tool_auto_run(self, server: str, tool: str) -> bool | None:
        spec = next((s for s in self.hub.status(server).tools if s.name == tool), None)
        if spec is None:
            return None
        now_auto = self.policy.toggle(spec)
        for record in self.calls_table.records.values():
            if record.server == server and record.tool == tool:
                record.auto_run = now_auto
                self.calls_table.update_record(record, ("tool",))
        self._show_server(self.hub.status(server))
        self.notify(visible_controls(f"{server} › {tool}: {'runs without asking' if now_auto else 'asks before running'}"),
                    markup=False)
        return now_auto


"""The sidebar: a live list of every tool call, and the state of every server."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from mcp_chat_tui.core.text import arguments_summary, one_line
from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.records import STATE_GLYPH, CallRecord, CallState

LIST_KEYS = [
    Binding("j", "cursor_down", "Down", show=False, id="list.down"),
    Binding("k", "cursor_up", "Up", show=False, id="list.up"),
]


class ListTable(DataTable):
    """A row-cursor table with j and k as well as the arrows (used by the detail screens)."""

    BINDINGS = LIST_KEYS

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", **kwargs)

CALL_STATE_STYLE = {
    CallState.DONE: "green",
    CallState.ERROR: "red",
    CallState.TIMEOUT: "red",
    CallState.MALFORMED: "red",
    CallState.DENIED: "yellow",
    CallState.CANCELLED: "yellow",
    CallState.INTERRUPTED: "bold red",
    CallState.AWAITING: "bold yellow",
    CallState.RUNNING: "cyan",
    CallState.PROPOSED: "dim",
}

SERVER_GLYPH = {
    ServerState.STARTING: ("◌", "yellow"),
    ServerState.READY: ("●", "green"),
    ServerState.BUSY: ("◉", "cyan"),
    ServerState.FAILED: ("✗", "red"),
    ServerState.CRASHED: ("✗", "red"),
    ServerState.STOPPED: ("○", "dim"),
    ServerState.DISABLED: ("○", "dim"),
}


def never(_: object) -> bool:
    return False


class ToolCallTable(DataTable):
    """One row per call, newest last; Enter opens the call, ``a`` toggles auto-run for its tool.

    ``auto_run(record)`` says whether the row's tool runs without asking now: the ⚡ mark is drawn
    from it, never kept with the row; ``refresh_marks`` draws them again after the policy changed.
    """

    BINDINGS = [
        *LIST_KEYS,
        Binding("a", "toggle_auto_run", "Auto-run tool", id="calls.toggle_auto_run"),
    ]

    class ToggleAutoRun(Message):
        def __init__(self, server: str, tool: str) -> None:
            super().__init__()
            self.server = server
            self.tool = tool

    def __init__(self, clock: DisplayClock, auto_run: Callable[[CallRecord], bool] = never, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.clock = clock
        self.auto_run = auto_run
        self.records: dict[str, CallRecord] = {}

    def on_mount(self) -> None:
        self.add_column("time", key="time")
        self.add_column("tool", key="tool")
        self.add_column("state", key="state")
        self.add_column("took", key="took")
        self.add_column("arguments", key="args")

    def _cells(self, record: CallRecord) -> dict[str, Text]:
        state = Text(f"{STATE_GLYPH[record.state]} {record.state.value}", style=CALL_STATE_STYLE[record.state])
        mark = "⚡" if record.server and self.auto_run(record) else ""
        tool = literal(f"{record.server}›{record.tool}" if record.server else record.tool)
        if mark:
            tool.append(f" {mark}", style="yellow")
        return {
            "time": Text(self.clock.time(record.started_at or record.proposed_at), style="dim"),
            "tool": tool,
            "state": state,
            "took": Text(self.clock.duration(record.elapsed()), style="dim"),
            "args": literal(arguments_summary(record.arguments, 48) if record.state is not CallState.MALFORMED
                            else one_line(record.raw, 48)),
        }

    def add_record(self, record: CallRecord, *, follow: bool = True) -> None:
        """A row for ``record``; the cursor follows to it when it was on the last row (unless not
        ``follow``: moving it costs a walk over every row, so a loaded file's rows move it once)."""
        self.records[record.key] = record
        cells = self._cells(record)
        at_end = self.cursor_row >= self.row_count - 1
        self.add_row(*(cells[key] for key in ("time", "tool", "state", "took", "args")), key=record.key)
        if at_end and follow:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def update_record(self, record: CallRecord, columns: tuple[str, ...] = ("time", "tool", "state", "took")) -> None:
        if record.key not in self.records:
            return
        cells = self._cells(record)
        for column in columns:
            self.update_cell(record.key, column, cells[column], update_width=True)

    def refresh_marks(self) -> None:
        """Draw every row's tool cell again, its ⚡ mark from the policy as it is now."""
        for record in self.records.values():
            self.update_record(record, ("tool",))

    def tick_running(self) -> None:
        """Refresh the elapsed time of the calls still running."""
        for record in self.records.values():
            if record.state is CallState.RUNNING:
                self.update_cell(record.key, "took", Text(self.clock.duration(record.elapsed()), style="dim"), update_width=True)

    def selected_record(self) -> CallRecord | None:
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self.records.get(key)

    def action_toggle_auto_run(self) -> None:
        record = self.selected_record()
        if record is not None and record.server:
            self.post_message(self.ToggleAutoRun(record.server, record.tool))


class ServerTable(DataTable):
    """One row per server: state, transport, tools, last call latency, failure reason; ⚡ when
    ``auto_run(status)`` says all its tools run without asking now."""

    BINDINGS = [
        *LIST_KEYS,
        Binding("r", "restart", "Restart", id="servers.restart"),
        Binding("l", "show_log", "Stderr log", id="servers.log"),
        Binding("a", "toggle_auto_run", "Auto-run tools", id="servers.toggle_auto_run"),
    ]

    class ServerAction(Message):
        def __init__(self, action: str, server: str) -> None:
            super().__init__()
            self.action = action
            self.server = server

    def __init__(self, clock: DisplayClock, auto_run: Callable[[ServerStatus], bool] = never, **kwargs) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self.clock = clock
        self.auto_run = auto_run
        self.statuses: dict[str, ServerStatus] = {}

    def on_mount(self) -> None:
        self.add_column("state", key="state")
        self.add_column("server", key="server")
        self.add_column("via", key="transport")
        self.add_column("tools", key="tools")
        self.add_column("last", key="latency")
        self.add_column("why", key="reason")

    def _cells(self, status: ServerStatus) -> list[Text]:
        glyph, style = SERVER_GLYPH[status.state]
        tools = str(len(status.tools)) if status.state.usable else "-"
        if self.auto_run(status):
            tools += " ⚡"
        if status.refused_tools and status.state.usable:
            tools += f" +{len(status.refused_tools)}✗"
        why = status.reason or (f"{len(status.refused_tools)} tool(s) refused" if status.refused_tools else "")
        why = why or ("tool list cut short" if status.tool_pages_unread else "")
        return [
            Text(f"{glyph} {status.state.value}", style=style),
            literal(status.name, "bold"),
            Text(status.transport, style="dim"),
            Text(tools),
            Text(self.clock.duration(status.last_latency), style="dim"),
            literal(one_line(why, 60), "red" if why else ""),
        ]

    def show(self, status: ServerStatus) -> None:
        self.statuses[status.name] = status
        cells = self._cells(status)
        if status.name in self.rows:
            for key, cell in zip(("state", "server", "transport", "tools", "latency", "reason"), cells):
                self.update_cell(status.name, key, cell, update_width=True)
        else:
            self.add_row(*cells, key=status.name)

    def selected_server(self) -> str | None:
        if self.row_count == 0:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def _post(self, action: str) -> None:
        name = self.selected_server()
        if name is not None:
            self.post_message(self.ServerAction(action, name))

    def action_restart(self) -> None:
        self._post("restart")

    def action_show_log(self) -> None:
        self._post("log")

    def action_toggle_auto_run(self) -> None:
        self._post("toggle_auto_run")

"""The sidebar: a live list of every tool call, and the state of every server.

Each table's state column shows whole at any width; the name before it is cut to what is left.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.text import counted, one_line
from mcp_chat_tui.servers import ServerState, ServerStatus
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.textual_private import row_label_width
from mcp_chat_tui.ui.widgets.call_columns import (
    COLUMN_LABELS,
    COLUMNS,
    TWO_LINE_LABELS,
    TWO_LINES_BELOW,
    call_layout,
    cut,
    row_cells,
)
from mcp_chat_tui.ui.widgets.row_cache import RowCachedTable
from mcp_chat_tui.ui.widgets.scrolling import ScrollbarInPlace

LIST_KEYS = [
    Binding("j", "cursor_down", "Down", show=False, id="list.down"),
    Binding("k", "cursor_up", "Up", show=False, id="list.up"),
]


class ListTable(ScrollbarInPlace, DataTable[Text]):
    """A row-cursor table with j and k as well as the arrows (used by the detail screens)."""

    BINDINGS = [*LIST_KEYS]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)


MIN_CUT_WIDTH = 6  # a cut name keeps at least this many columns (a few letters and the ellipsis)
MAX_NAME_WIDTH = 28  # a server name takes at most this many columns, on a wide sidebar too


def measured(console: Console, cell: object) -> int:
    """The columns ``cell`` takes in a table (a ``str`` is markup there, as ``DataTable`` shows it)."""
    text = Text.from_markup(cell) if isinstance(cell, str) else cell
    return console.measure(text).maximum if isinstance(text, Text) else console.measure(str(text)).maximum


class FittedTable(ScrollbarInPlace, RowCachedTable[Text]):
    """A row-cursor table (each row's cells rendered again only when that row changes) whose ``name_column`` is cut to what the pane's width leaves once the
    columns before it and its state column (``whole_width`` columns, padding included) are whole."""

    whole_width = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self.name_width = MAX_NAME_WIDTH

    def on_resize(self, event: events.Resize) -> None:
        room = event.size.width - self.styles.scrollbar_size_vertical - self.whole_width - 2 * self.cell_padding
        width = max(MIN_CUT_WIDTH, min(MAX_NAME_WIDTH, room))
        if width != self.name_width:
            self.name_width = width
            self.recut()

    def recut(self) -> None:
        """Show every row again with the names cut to ``name_width``."""

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: Text, *, update_width: bool = False
    ) -> None:
        """``DataTable.update_cell``, the column measured again at once when ``update_width``.

        The table measures its columns only when idle: a frame drawn before that keeps the cell
        cut to the old width (``● read`` for ``● ready``) until the row changes again.
        """
        if update_width:
            self._fit_column(column_key, row_key, value)
        super().update_cell(row_key, column_key, value, update_width=update_width)

    def _fit_column(self, column_key: ColumnKey | str, row_key: RowKey | str, value: Text) -> None:
        column = self.columns.get(column_key if isinstance(column_key, ColumnKey) else ColumnKey(column_key))
        if column is None or row_key not in self.rows:
            return
        console = self.app.console
        width = measured(console, value)
        if width < column.content_width:  # it may shrink: measure the column's other cells too
            others = [measured(console, self.get_cell(key, column_key)) for key in self.rows if key != row_key]
            width = max([width, measured(console, column.label), *others])
        column.content_width = width

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No key acts on the table while it is hidden (keys on their way as the sidebar was hidden)."""
        return all(node.display for node in self.ancestors_with_self if isinstance(node, Widget))


SERVER_GLYPH = {
    ServerState.STARTING: ("◌", "yellow"),
    ServerState.READY: ("●", "green"),
    ServerState.BUSY: ("◉", "cyan"),
    ServerState.FAILED: ("✗", "red"),
    ServerState.CRASHED: ("✗", "red"),
    ServerState.STOPPED: ("○", "dim"),
    ServerState.DISABLED: ("○", "dim"),
    ServerState.NEEDS_SIGN_IN: ("◇", "bold yellow"),
}
SERVER_STATE_LABEL = {ServerState.NEEDS_SIGN_IN: "sign in"}  # the why column says the rest; the row must fit


def server_state_label(state: ServerState) -> str:
    return f"{SERVER_GLYPH[state][0]} {SERVER_STATE_LABEL.get(state, state.value)}"


def never(_: object) -> bool:
    return False


class ToolCallTable(FittedTable):
    """One row per call, newest last (``call_columns`` says what each column shows at which width);
    Enter opens it, ``a`` toggles auto-run, ``x`` cancels a running one.

    Args:
        auto_run: Whether a record's tool runs without asking now (its ⚡ mark, redrawn by ``refresh_marks``).
        cancel: Cancels the running call of that id alone (a task at its server); False when it no
            longer runs (``Agent.cancel_call``).
    """

    BINDINGS = [
        *LIST_KEYS,
        Binding("a", "toggle_auto_run", "Auto-run tool", id="calls.toggle_auto_run"),
        Binding(
            "x",
            "cancel_call",
            "Cancel call",
            tooltip="Cancel the highlighted call while it runs (a task is cancelled at its server); the turn goes on",
            id="calls.cancel",
        ),
    ]

    class ToggleAutoRun(Message):
        def __init__(self, server: str, tool: str) -> None:
            super().__init__()
            self.server = server
            self.tool = tool

    def __init__(
        self,
        clock: DisplayClock,
        auto_run: Callable[[CallRecord], bool] = never,
        cancel: Callable[[str], bool] = never,
        **kwargs: Any,
    ) -> None:
        super().__init__(zebra_stripes=False, cell_padding=0, **kwargs)
        self.clock = clock
        self.auto_run = auto_run
        self.cancel = cancel
        self.records: dict[str, CallRecord] = {}
        self.call_layout = call_layout(TWO_LINES_BELOW)
        self._cancel_offered = False  # whether the footer offers x now (``_offer_cancel``)

    def on_mount(self) -> None:
        for key in COLUMNS:
            self.add_column(COLUMN_LABELS.get(key, key), key=key, width=self.call_layout.widths[key])

    def on_resize(self, event: events.Resize) -> None:
        """The columns (and whether a call takes two lines) follow the table's width."""
        layout = call_layout(event.size.width - self.styles.scrollbar_size_vertical)
        if layout != self.call_layout:
            self.call_layout = layout
            self.redraw_rows()

    def redraw_rows(self) -> None:
        """Every row again, in the columns of ``layout``; the cursor stays on its call."""
        selected = self.selected_record()
        labels = TWO_LINE_LABELS if self.call_layout.two_lines else {}
        for key, column in self.columns.items():
            name = str(key.value)
            column.width = self.call_layout.widths[name]
            column.label = cut(Text(labels.get(name, COLUMN_LABELS.get(name, name))), max(column.width - 1, 0))
        self.clear()
        for record in self.records.values():
            cells = self._cells(record)
            self.add_row(*(cells[key] for key in COLUMNS), key=record.key, height=self.call_layout.row_height)
        if selected is not None:
            self.move_cursor(row=self.get_row_index(selected.key), animate=False)

    def _get_row_region(self, row_index: int) -> Region:
        # Textual's adds up the heights of every row above: a walk over all rows each time the
        # cursor moves or a row is redrawn, which made each new call cost 26 ms at 10,000 rows.
        # Every row here is as high as the layout says (``add_record``), so its place follows from its index.
        if not self.is_valid_row_index(row_index):
            return Region(0, 0, 0, 0)
        width = sum(column.get_render_width(self) for column in self.columns.values()) + row_label_width(self)
        height = self.call_layout.row_height
        y = row_index * height + (self.header_height if self.show_header else 0)
        return Region(0, y, max(self.size.width, width), height)

    def _cells(self, record: CallRecord) -> dict[str, Text]:
        mark = Text(" ⚡", style="yellow") if record.server and self.auto_run(record) else None
        return row_cells(record, self.call_layout, self.clock, mark)

    def add_record(self, record: CallRecord, *, follow: bool = True) -> None:
        """A row for ``record``; the cursor follows to it when it was on the last row (unless not
        ``follow``: moving it costs a walk over every row, so a loaded file's rows move it once)."""
        self.records[record.key] = record
        cells = self._cells(record)
        at_end = self.cursor_row >= self.row_count - 1
        self.add_row(*(cells[key] for key in COLUMNS), key=record.key, height=self.call_layout.row_height)
        if at_end and follow:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def forget_all(self) -> None:
        """No rows: the conversation they belonged to is no longer on screen."""
        self.records.clear()
        self.clear()
        self._offer_cancel()

    def update_record(self, record: CallRecord, columns: tuple[str, ...] = COLUMNS) -> None:
        if record.key not in self.records:
            return
        cells = self._cells(record)
        if self.call_layout.two_lines:  # the tool's cell holds the arguments and outcome, the state's the duration
            columns = (*columns, "tool", "state")
        for column in dict.fromkeys(columns):
            self.update_cell(record.key, column, cells[column])
        if "state" in columns:
            self._offer_cancel()

    def refresh_marks(self) -> None:
        """Draw every row's tool cell again, its ⚡ mark from the policy as it is now."""
        for record in self.records.values():
            self.update_record(record, ("tool",))

    def tick_running(self) -> None:
        """Refresh the elapsed time of the calls still running."""
        for record in self.records.values():
            if record.state is CallState.RUNNING:
                self.update_record(record, ("took",))

    def selected_record(self) -> CallRecord | None:
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self.records.get(key or "")  # (every row has its record's key)

    def action_toggle_auto_run(self) -> None:
        record = self.selected_record()
        if record is not None and record.server:
            self.post_message(self.ToggleAutoRun(record.server, record.tool))

    def action_cancel_call(self) -> None:
        """``x`` on a running call: that call alone is cancelled (a task at its server); the turn goes on."""
        record = self.selected_record()
        if record is None or record.state is not CallState.RUNNING:
            return
        if self.cancel(record.call_id):
            self.notify(f"{record.tool}: cancelling", markup=False)
        else:
            self.notify(f"{record.tool} is not running", severity="warning", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` (cancel) is offered for a highlighted call that runs now, and only then."""
        shown = super().check_action(action, parameters)
        if action == "cancel_call" and shown:
            record = self.selected_record()
            return record is not None and record.state is CallState.RUNNING
        return shown

    def watch_cursor_coordinate(self, old: Coordinate, new: Coordinate) -> None:
        super().watch_cursor_coordinate(old, new)
        self._offer_cancel()

    def _offer_cancel(self) -> None:
        """The footer shows ``x`` when the highlighted call runs: its keys are asked again only when
        that changes (asking on every cursor move redrew the footer for each of 10,000 new rows)."""
        record = self.selected_record()
        offered = record is not None and record.state is CallState.RUNNING
        if offered != self._cancel_offered:
            self._cancel_offered = offered
            self.refresh_bindings()


class ServerTable(FittedTable):
    """One row per server: state, name (cut to fit), transport, tools, last call latency, failure
    reason; ⚡ when ``auto_run(status)`` says all its tools run without asking now."""

    whole_width = max(len(server_state_label(state)) for state in SERVER_GLYPH) + 2

    BINDINGS = [
        *LIST_KEYS,
        Binding("r", "restart", "Restart", id="servers.restart"),
        Binding("l", "show_log", "Stderr log", id="servers.log"),
        Binding("a", "toggle_auto_run", "Auto-run tools", id="servers.toggle_auto_run"),
        Binding("s", "sign_in", "Sign in", id="servers.sign_in"),
        Binding("o", "resources", "Resources", id="servers.resources"),
    ]

    class ServerAction(Message):
        def __init__(self, action: str, server: str) -> None:
            super().__init__()
            self.action = action
            self.server = server

    def __init__(self, clock: DisplayClock, auto_run: Callable[[ServerStatus], bool] = never, **kwargs: Any) -> None:
        super().__init__(**kwargs)
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
        style = SERVER_GLYPH[status.state][1]
        tools = str(len(status.tools)) if status.state.usable else "-"
        if self.auto_run(status):
            tools += " ⚡"
        if status.refused_tools and status.state.usable:
            tools += f" +{len(status.refused_tools)}✗"
        why = status.reason or (f"{counted(len(status.refused_tools), 'tool')} refused" if status.refused_tools else "")
        why = why or ("tool list cut short" if status.tool_pages_unread else "")
        why = why or (status.catalog_problems[0] if status.catalog_problems and status.state.usable else "")
        why = why or (
            f"{counted(len(status.unsupported_tools), 'tool')} not supported" if status.unsupported_tools else ""
        )
        why = why or (
            counted(status.protocol_problem_count, "protocol problem") if status.protocol_problem_count else ""
        )
        note = "" if why else status.sampling_note()
        log_style = "yellow" if status.log.problems else "dim"
        if status.state is ServerState.STARTING:  # how long, and what it said last (npx's progress)
            said = status.last_stderr_line()
            why_cell = literal(one_line(self.clock.duration(status.starting_for()) + (f": {said}" if said else ""), 60))
        elif why:
            why_cell = literal(one_line(why, 60), "red")
        else:
            why_cell = literal(note, "dim") if note else literal(status.log.summary(), log_style)
        return [
            Text(server_state_label(status.state), style=style),
            cut(literal(status.name, "bold"), self.name_width),
            Text(status.transport, style="dim"),
            Text(tools),
            Text(self.clock.duration(status.last_latency), style="dim"),
            why_cell,
        ]

    def show(self, status: ServerStatus) -> None:
        self.statuses[status.name] = status
        self.refresh_bindings()  # whether ``s`` is offered follows the state
        cells = self._cells(status)
        if status.name in self.rows:
            for key, cell in zip(("state", "server", "transport", "tools", "latency", "reason"), cells, strict=False):
                self.update_cell(status.name, key, cell, update_width=True)
        else:
            self.add_row(*cells, key=status.name)

    def recut(self) -> None:
        for status in list(self.statuses.values()):
            self.show(status)

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

    def action_sign_in(self) -> None:
        self._post("sign_in")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``s`` (sign in) is offered for a highlighted server that needs sign-in, and only then."""
        shown = super().check_action(action, parameters)
        if action == "sign_in" and shown:
            status = self.statuses.get(self.selected_server() or "")
            return status is not None and status.state == ServerState.NEEDS_SIGN_IN
        return shown

    def watch_cursor_coordinate(self, old: Coordinate, new: Coordinate) -> None:
        super().watch_cursor_coordinate(old, new)
        self.refresh_bindings()

    def action_resources(self) -> None:
        self._post("resources")

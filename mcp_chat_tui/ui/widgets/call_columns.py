"""What each column of the calls sidebar shows, and how wide each is at a given width.

Every row shows its tool (``server›tool``), its state (with the progress bar or N/T while it runs),
its duration and the start of its arguments at any width; a narrow sidebar shows each call on two
lines (the arguments and the outcome under the tool), a wide one adds a column each for the outcome,
who let it run and the time, as they fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.progress import progress_bar
from mcp_chat_tui.core.text import arguments_summary, counted, one_line
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock, literal

COLUMNS = ("tool", "state", "took", "args", "result", "by", "time")  # the order the calls table shows them in
COLUMN_LABELS = {"args": "arguments"}
TWO_LINE_LABELS = {"tool": "tool, arguments", "state": "state"}
OUTCOME_UNDER_FROM = 30  # a two-line row shows the outcome after its arguments from this width
PROGRESS_COLUMNS = ("state", "result")  # the cells a running call's progress or task status changes
CALL_STATE_LABEL = {CallState.AWAITING: "awaiting"}
TWO_LINES_BELOW = 60  # a table narrower than this shows each call on two lines
SHORT_CELL = 200  # characters of a value kept before it is cut to its column
FAILED_STATES = (CallState.ERROR, CallState.TIMEOUT, CallState.MALFORMED, CallState.INTERRUPTED)
ALLOWED_BY_SHORT = (  # the start of a record's ``allowed_by`` and its short form in the "by" column, first match wins
    ("you (once)", "you"),
    ("you (edited", "you·edited"),
    ("you (all waiting)", "you·all"),
    ("you (always, saved", "you·saved"),
    ("you (always", "you·always"),
    ("you (auto-run for server", "you·server"),
    ("saved always", "saved"),
    ("auto policy", "auto"),
    ("auto-readonly", "trusted"),
    ("--yes", "--yes"),
    ("a rule", "rule"),
    ("config.toml: always", "rule"),
    ("config.toml: never", "rule·no"),
    ('config.toml says "never"', "never"),
)


@dataclass(frozen=True)
class CallLayout:
    """The columns' widths (each with the one space after it; 0: not shown) and the rows' height."""

    widths: dict[str, int]
    row_height: int = 1

    @property
    def two_lines(self) -> bool:
        return self.row_height == 2


# (column, columns it may grow by): the tool and the state (its progress bar) first, then the optional
# columns, each only when it fits whole; what is left goes to the arguments and the outcome.
GROWTH = (("tool", 8), ("state", 4), ("result", 14), ("by", 11), ("time", 9), ("state", 2))
OPTIONAL = ("result", "by", "time")


def call_layout(width: int) -> CallLayout:
    """The layout of a calls table ``width`` columns wide (its scrollbar left out)."""
    if width < TWO_LINES_BELOW:
        state = 12 if width >= 36 else 10
        widths = dict.fromkeys(COLUMNS, 0) | {"state": state, "tool": max(8, width - state)}
        return CallLayout(widths, row_height=2)
    widths = dict.fromkeys(COLUMNS, 0) | {"tool": 16, "state": 10, "took": 7, "args": 14}
    spare = width - sum(widths.values())
    for column, extra in GROWTH:
        if column in OPTIONAL:
            if spare >= extra + 12:  # and the arguments keep a dozen more columns
                widths[column], spare = extra, spare - extra
            continue
        step = max(0, min(extra, spare))
        widths[column] += step
        spare -= step
    if widths["result"]:
        widths["result"] += spare // 3
        spare -= spare // 3
    widths["args"] += spare
    return CallLayout(widths)


def cut(text: Text, width: int) -> Text:
    """``text`` in at most ``width`` columns, ending with an ellipsis when cut."""
    if text.cell_len <= width:
        return text
    text = text.copy()
    text.truncate(max(width, 0), overflow="ellipsis")
    return text


def tool_label(server: str, tool: str, width: int) -> Text:
    """``server›tool`` in ``width`` columns, on every row alike: a long server name is cut first
    (to no fewer than 4 columns), then the tool's name."""
    tool_text = literal(tool)
    if not server:
        return cut(tool_text, width)
    whole = literal(f"{server}›{tool}")
    if whole.cell_len <= width:
        return whole
    server_text = literal(server)
    server_room = max(min(4, server_text.cell_len), width - tool_text.cell_len - 1)
    label = cut(server_text, server_room)
    label.append("›")
    label.append_text(cut(tool_text, width - label.cell_len))
    return label


def allowed_by_short(allowed_by: str) -> str:
    """Who let a call run, in a few columns (the detail screen says it in full); empty when nothing did."""
    for start, short in ALLOWED_BY_SHORT:
        if allowed_by.startswith(start):
            return short
    return one_line(allowed_by, 10)


def call_state_label(state: CallState) -> str:
    return f"{state.glyph} {CALL_STATE_LABEL.get(state, state.label)}"


def state_cell(record: CallRecord, width: int) -> Text:
    """The state; while the call runs with progress, its bar (when there is room) and N/T instead."""
    style = record.state.style
    progress = record.progress
    if record.state is not CallState.RUNNING or progress is None:
        return cut(Text(call_state_label(record.state), style=style), width)
    count = progress.count()
    label = f"{record.state.glyph} "
    bar_room = min(8, width - len(label) - len(count) - 1)
    if progress.fraction is not None and bar_room >= 3:
        label += progress_bar(progress, bar_room) + " "
    return cut(Text(label + count, style=style), width)


def arguments_cell(record: CallRecord, width: int) -> Text:
    """The call's arguments in short (a malformed call's text as the model wrote it)."""
    if record.state is CallState.MALFORMED:
        return cut(literal(one_line(record.raw, SHORT_CELL)), width)
    return cut(literal(arguments_summary(record.arguments, SHORT_CELL)), width)


def outcome_text(record: CallRecord) -> tuple[str, str]:
    """A one-line preview of what the call came to (result, error, why it did not run) and its style;
    while it runs, its task's status or its latest progress message."""
    if record.state is CallState.RUNNING:
        if record.task is not None:
            return one_line(f"⧗ {record.task.describe()}", SHORT_CELL), "cyan"
        return (one_line(record.progress.message, SHORT_CELL) if record.progress else ""), "cyan"
    if not record.state.finished:
        return "", ""
    result = record.result
    failed = record.state in FAILED_STATES or (result is not None and not result.ok)
    style = "red" if failed else "yellow" if record.state is not CallState.DONE else ""
    if result is not None and result.failure is not None:
        said = result.failure.message
    elif result is not None:
        said = result.text or ("(no text)" if not result.parts else f"({counted(len(result.parts), 'block')})")
    else:
        said = record.reason or record.content_for_model
    return one_line(said, SHORT_CELL), style


def outcome_cell(record: CallRecord, width: int) -> Text:
    said, style = outcome_text(record)
    return cut(literal(said, style), width)


def second_line(record: CallRecord, width: int) -> Text:
    """A two-line row's second line: the arguments, then ``→`` and the outcome, as they fit."""
    said, style = outcome_text(record) if width >= OUTCOME_UNDER_FROM else ("", "")
    line = Text("  ")
    arguments_room = max(12, (width - 2) * 3 // 5) if said else width - 2
    line.append_text(arguments_cell(record, max(arguments_room, 0)))
    room = width - line.cell_len - 3
    if said and room >= 4:
        line.append(" → ", style="dim")
        line.append_text(cut(literal(said, style), room))
    return cut(line, width)


def row_cells(record: CallRecord, layout: CallLayout, clock: DisplayClock, mark: Text | None = None) -> dict[str, Text]:
    """Every column's cell for ``record``, each cut to its column (``mark``: the ⚡ after the tool)."""
    # the space after it left out; a hidden column's cell is kept whole (the detail and tests read it)
    widths = {column: width - 1 if width else SHORT_CELL for column, width in layout.widths.items()}
    mark_width = mark.cell_len if mark is not None else 0
    tool = tool_label(record.server, record.shown_tool, widths["tool"] - mark_width)
    if mark is not None:
        tool.append_text(mark)
    took = clock.duration(record.elapsed())
    state = state_cell(record, widths["state"])
    if layout.two_lines:
        tool.append("\n")
        tool.append_text(second_line(record, widths["tool"]))
        state.append("\n")
        state.append(took, style="dim")
    tool.no_wrap = state.no_wrap = True
    return {
        "tool": tool,
        "state": state,
        "took": Text(took, style="dim"),
        "args": arguments_cell(record, widths["args"]),
        "result": outcome_cell(record, widths["result"]),
        "by": cut(literal(allowed_by_short(record.allowed_by), "dim"), widths["by"]),
        "time": Text(clock.time(record.started_at or record.proposed_at), style="dim"),
    }

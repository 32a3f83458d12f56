"""Detail screens: one tool call in full, one server's tools and usage, one server's stderr log, help."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.media_info import media_line, save_all_media
from mcp_chat_tui.core.progress import progress_bar
from mcp_chat_tui.core.text import counted, pretty_json
from mcp_chat_tui.core.tool_filter import NOT_OFFERED
from mcp_chat_tui.core.tools import ToolSpec
from mcp_chat_tui.servers import LogEntry, ServerStatus, level_rank, next_level, protocol_notes, tool_list_notes
from mcp_chat_tui.transcript.media import worth_keeping
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock, literal
from mcp_chat_tui.ui.widgets.media import MediaView
from mcp_chat_tui.ui.widgets.scrolling import Scroll
from mcp_chat_tui.ui.widgets.sidebar import ListTable

CSS = Path(__file__).with_name("detail.tcss")
LOG_LINES_SHOWN = 200  # the server detail screen's log shows the latest this many messages
LEVEL_STYLE = {"debug": "dim", "info": "", "notice": "bold", "warning": "yellow"}  # worse ones: red


def log_lines(entries: list[LogEntry], clock: DisplayClock) -> Text:
    """Log messages as literal lines, each coloured by its level."""
    text = Text()
    for entry in entries:
        style = LEVEL_STYLE.get(entry.level, "bold red")
        text.append_text(literal(entry.line(clock.time(entry.time)) + "\n", style))
    return text


def log_title(status: ServerStatus) -> str:
    counts = status.log.counts
    worse = f", {status.log.problems} warning or worse" if status.log.problems else ""
    shown = ", ".join(f"{counts[level]} {level}" for level in sorted(counts, key=level_rank))
    return f"log · level {status.log_level} · {counted(status.log.total, 'message')}{worse}" + (
        f" ({shown})" if shown else ""
    )


def call_report(record: CallRecord, clock: DisplayClock) -> str:
    """The whole call as plain text (what ``c`` copies)."""
    lines = [
        f"tool: {record.tool}",
        f"server: {record.server}",
        f"call id: {record.call_id}" + (f" (the model's id: {record.given_id})" if record.given_id else ""),
        f"state: {record.state.label}",
        f"allowed by: {record.allowed_by or '-'}",
        f"proposed: {clock.time(record.proposed_at)}",
        f"started: {clock.time(record.started_at) if record.started_at else '-'}",
        f"duration: {clock.duration(record.duration) or '-'}",
        *([f"last progress: {progress_bar(record.progress)} {record.progress.describe()}"] if record.progress else []),
        *([f"task at its server: {record.task.task_id} ({record.task.describe()})"] if record.task else []),
        *cut_line(record),
        "",
        "arguments:" if record.ran_with is None else "arguments, as the model wrote them:",
        pretty_json(record.arguments) if not record.raw else record.raw,
        "",
        *(
            ["arguments it ran with (edited by you):", pretty_json(record.ran_with), ""]
            if record.ran_with is not None
            else []
        ),
    ]
    result = record.result
    if result is not None and result.failure is not None:
        lines += [f"failure ({result.failure.kind.value}):", result.failure.message]
    elif result is not None:
        label = "result (error reported by the tool)" if result.is_error else "result"
        if worth_keeping(record.parts):
            label += ", as the model was told it"
        lines += [f"{label}:", result.text]
    else:
        lines += ["outcome:", record.reason or record.content_for_model or "(none yet)"]
    if worth_keeping(record.parts):
        lines += ["", f"content as sent ({counted(len(record.parts), 'block')}):", *blocks_report(record.parts)]
    if record.structured is not None:
        lines += ["", "structured content:", pretty_json(record.structured)]
    if result is not None and result.truncated:
        lines += ["", f"[cut: {result.full_size} characters in all]"]
    return "\n".join(lines)


def cut_line(record: CallRecord) -> list[str]:
    """A line saying the model got only the start of the result, when it did."""
    if not record.cut_for_model:
        return []
    return [f"{record.cut_for_model} (its share of the context; it was told how much was left out)"]


def blocks_report(parts: list[ContentPart]) -> list[str]:
    """Each content block with its annotations: its text, or a line about its image or audio."""
    lines = []
    for number, part in enumerate(parts, 1):
        notes = part.annotations_line()
        lines.append(f"[{number}] {part.kind}" + (f" · {notes}" if notes else ""))
        lines.append(media_line(part) if part.is_media else part.text)
    return lines


class CallDetailScreen(ModalScreen[None]):
    CSS_PATH = CSS
    BINDINGS = [
        Binding("escape,q", "dismiss", "Close", id="detail.close"),
        Binding("c", "copy", "Copy", id="detail.copy"),
        Binding("s", "save_media", "Save images and audio", id="detail.save_media"),
    ]

    def __init__(self, record: CallRecord, clock: DisplayClock, save_folder: Path | None = None) -> None:
        super().__init__()
        self.record = record
        self.clock = clock
        self.save_folder = save_folder  # where ``s`` saves media (None: the working directory)

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            title = literal(self.record.shown_tool, "bold")
            title.append_text(literal(f" on {self.record.server}  ·  {self.record.state.label}", "dim"))
            yield Static(title, classes="detail-title")
            with Scroll(classes="detail-body"):
                yield Static(literal(call_report(self.record, self.clock)))
                for part in self.record.media:
                    yield MediaView(part, large=True)
            save = "[b]s[/] save images and audio  " if self.record.media else ""
            yield Static(f"[b]c[/] copy  {save}[b]Esc[/] or [b]q[/] close", classes="detail-keys")

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(call_report(self.record, self.clock))
        self.notify("call copied to the clipboard")

    async def action_save_media(self) -> None:
        """Save each image and audio of the result to a new file (never over an existing one, off the screen's thread)."""
        folder = self.save_folder or Path.cwd()
        saved, problems = await asyncio.to_thread(save_all_media, self.record.media, folder, self.record.call_id)
        if not saved and not problems:
            self.notify("this result has no images or audio")
            return
        if saved:
            self.notify(literal("saved " + ", ".join(saved)).plain, markup=False, timeout=10)
        if problems:
            self.notify(literal("; ".join(problems)).plain, severity="error", markup=False, timeout=10)


class ServerDetailScreen(ModalScreen[None]):
    """A server's tools, with their calls so far and mean duration; ``a`` toggles auto-run for one.
    Below them its instructions and its log messages (live); ``+`` and ``-`` set its log level."""

    CSS_PATH = CSS
    BINDINGS = [
        Binding("escape,q", "dismiss", "Close", id="server_detail.close"),
        Binding("a", "toggle_auto_run", "Toggle auto-run", id="server_detail.toggle"),
        Binding("plus,equals_sign", "log_level(1)", "Fewer log messages", id="server_detail.log_less"),
        Binding("minus", "log_level(-1)", "More log messages", id="server_detail.log_more"),
    ]

    def __init__(
        self,
        status: ServerStatus,
        clock: DisplayClock,
        auto_run: Callable[[ToolSpec], bool],
        on_toggle: Callable[[str, str], object],
        on_log_level: Callable[[str, str], None] | None = None,
        on_call: Callable[[ToolSpec], None] | None = None,
    ) -> None:
        super().__init__()
        self.on_call = on_call  # Enter on a tool: the user calls it themselves
        self.status = status
        self.clock = clock
        self.auto_run = auto_run  # whether a tool runs without asking now (its ⚡)
        self.on_toggle = on_toggle  # (server, tool): flip its auto-run
        self.on_log_level = on_log_level  # (server, level): ask the server for that level from now on
        self._log_shown: tuple[int, str] | None = None  # (messages, level) the log view shows

    def compose(self) -> ComposeResult:
        status = self.status
        with Vertical(classes="detail-box"):
            title = literal(status.name, "bold")
            info = f"  ·  {status.state.value} · {status.transport}"
            if status.server_name:
                info += f" · {status.server_name} {status.server_version}".rstrip()
            title.append_text(literal(info, "dim"))
            yield Static(title, classes="detail-title")
            if status.reason:
                yield Static(literal(status.reason, "bold red"))
            if tool_list_notes(status):
                yield Static(literal(tool_list_notes(status), "red"), id="server-tool-notes")
            if protocol_notes(status):
                yield Static(literal(protocol_notes(status), "red"), id="server-protocol-notes")
            yield ListTable(id="server-tools")
            if status.instructions:
                yield Static(literal(f"instructions: {status.instructions}", "italic"), id="server-instructions")
            yield Static(id="server-log-title", classes="detail-section")
            with Scroll(id="server-log", classes="detail-body"):
                yield Static(id="server-log-lines")
            yield Static(
                "[b]Enter[/] call it yourself  [b]a[/] auto-run  [b]+[/]/[b]-[/] log level  [b]Esc[/] close",
                classes="detail-keys",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("tool", key="tool")
        table.add_column("calls", key="calls")
        table.add_column("mean", key="mean")
        table.add_column("auto", key="auto")
        table.add_column("description", key="description")
        for spec in self.status.tools:
            usage = self.status.usage.get(spec.name)
            table.add_row(
                literal(spec.name, "bold"),
                Text(str(usage.calls if usage else 0)),
                Text(self.clock.duration(usage.mean_seconds) if usage else "", style="dim"),
                Text("⚡" if self.auto_run(spec) else ""),
                literal((spec.description or "").split("\n")[0][:80], "dim"),
                key=spec.name,
            )
        for spec in self.status.not_offered_tools:  # left out by mcp.json or config.toml: never sent to the model
            table.add_row(literal(spec.name, "dim strike"), Text(""), Text(""), Text(""), literal(NOT_OFFERED, "dim"))
        table.focus()
        self.show_log()
        self.set_interval(0.1, self.show_log)

    def show_log(self) -> None:
        """The log title and the latest messages, drawn again only when they changed."""
        status = self.status
        now = (status.log.total, status.log_level)
        if now == self._log_shown:
            return
        self._log_shown = now
        self.query_one("#server-log-title", Static).update(literal(log_title(status), "bold"))
        entries = list(status.log.entries)[-LOG_LINES_SHOWN:]
        lines = log_lines(entries, self.clock) if entries else literal("(no log messages yet)", "dim")
        self.query_one("#server-log-lines", Static).update(lines)
        self.query_one("#server-log", VerticalScroll).scroll_end(animate=False)

    def action_log_level(self, step: int) -> None:
        if self.on_log_level is not None:
            self.on_log_level(self.status.name, next_level(self.status.log_level, step))

    @on(DataTable.RowSelected, "#server-tools")
    def _call_it(self, message: DataTable.RowSelected) -> None:
        spec = next((spec for spec in self.status.tools if spec.name == message.row_key.value), None)
        if spec is None:
            self.notify(f"{NOT_OFFERED}: not offered to anyone", severity="warning")
        elif self.on_call is not None:
            self.on_call(spec)

    def action_toggle_auto_run(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return
        tool = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if tool is None or all(spec.name != tool for spec in self.status.tools):
            self.notify(f"{NOT_OFFERED}: the model is not given this tool", severity="warning")
            return
        self.on_toggle(self.status.name, tool)
        for spec in self.status.tools:
            table.update_cell(spec.name, "auto", Text("⚡" if self.auto_run(spec) else ""))


class TextScreen(ModalScreen[None]):
    """A scrollable page of literal text: a server's stderr log, the list of key bindings."""

    CSS_PATH = CSS
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="text.close")]

    def __init__(self, title: str, body: str | Text, shown: RenderableType | None = None) -> None:
        """``body`` as plain text; ``shown``, when given, is what the page shows of it (laid out for its width)."""
        super().__init__()
        self.title_text = title
        self.body = body
        self.shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail-box"):
            yield Static(literal(self.title_text, "bold"), classes="detail-title")
            with Scroll(classes="detail-body"):
                if self.shown is not None:
                    yield Static(self.shown)
                else:
                    yield Static(self.body if isinstance(self.body, Text) else literal(self.body))
            yield Static("[b]Esc[/] or [b]q[/] close", classes="detail-keys")

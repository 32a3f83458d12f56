"""The status bar: model (and what it computes with), engine state, download, messages waiting, tokens, servers,
"not saved".

The state and its detail read as one phrase ("generating 12.3 tok/s"): the detail never repeats the state's verb.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from mcp_chat_tui.agent.budget import near_limit, usage_label
from mcp_chat_tui.core.text import counted
from mcp_chat_tui.ui.format import literal

EngineState = Callable[[str, str], None]  # sets what the status bar says the engine does, and the detail

BAR_WIDTH = 24
STATE_COLOUR = {"ready": "green", "generating": "cyan"}  # a state that says "failed" is red, others yellow


def download_bar(done: int, total: int | None, width: int = BAR_WIDTH) -> Text:
    """``━━━━━━━╸──────── 31%``: the part downloaded, then the part to come; no percentage
    (and an empty bar) while the size is not known."""
    if not total:
        return Text("─" * width, style="dim")
    fraction = min(max(done / total, 0.0), 1.0)
    halves = round(fraction * width * 2)
    full, half = divmod(halves, 2)
    bar = Text()
    bar.append("━" * full, style="bold magenta")
    if half:
        bar.append("╸", style="bold magenta")
    bar.append("─" * (width - full - half), style="dim")
    bar.append(f" {fraction:4.0%}")
    return bar


KEEP = 0  # a part never left out; the others go in the order of their rank (1 first) when the line is too long
MODEL_NAME_SHORTENED = 20  # the model's name is cut to this length before a part is left out


def fit(model: str, parts: list[tuple[int, Text]], width: int) -> Text:
    """The model's name, then ``parts``, in ``width`` cells (0: not laid out yet, all of it). While
    they do not fit with the name cut to ``MODEL_NAME_SHORTENED``, the parts of the lowest rank left
    go; the name then takes the room left, cut in its middle (its start and its end say most)."""
    kept = list(parts)

    def parts_length() -> int:
        return sum(part.cell_len for _, part in kept)

    for rank in sorted({rank for rank, _ in parts if rank != KEEP}):
        if not width or min(len(model), MODEL_NAME_SHORTENED) + parts_length() <= width:
            break
        kept = [(r, part) for r, part in kept if r != rank]
    if width:
        model = middle_cut(model, max(5, width - parts_length()))
    text = literal(model, "bold")
    for _, part in kept:
        text.append_text(part)
    return text


def middle_cut(name: str, width: int) -> str:
    """``name`` in ``width`` characters at most, its middle given up for an ellipsis."""
    if len(name) <= width:
        return name
    head = width // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head) :]


class StatusBar(Widget):
    """Drawn from its fields when painted: several set together (state and detail) cost one
    drawing, and a change repaints its one line without a layout."""

    COMPONENT_CLASSES = {"status-bar--tokens", "status-bar--near-limit", "status-bar--over-limit"}
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; padding: 0 1; }
    StatusBar > .status-bar--tokens { color: $text-muted; }
    StatusBar > .status-bar--near-limit { color: $warning; text-style: bold; }
    StatusBar > .status-bar--over-limit { color: $error; text-style: bold; }
    """

    model = reactive("")
    compute = reactive("")  # the local model's compute dtype and BLAS: "float32 from float16 · OpenBLAS"
    engine_state = reactive("starting")
    detail = reactive("")
    context_tokens = reactive(0)  # the prompt and the last reply, as the engine counted them
    context_length: reactive[int | None] = reactive(None)  # the model's (None: not known)
    servers = reactive("")
    download: reactive[tuple[int, int | None] | None] = reactive(None)
    save_problem = reactive("")  # why the conversation is not being saved ("" while it is)
    waiting = reactive(0)  # prompts sent that wait for the model (start-up, or the turn before them)
    summarised = reactive(0)  # old exchanges the prompt sends as their one-line summary

    def __init__(self, model: str = "", **options: Any) -> None:
        super().__init__(**options)
        self.set_reactive(StatusBar.model, model)

    def render(self) -> Text:
        """The parts in their order; on a narrow terminal the least needed go first (``fit``), so the
        state, a warning that nothing is saved and the messages waiting are always in view."""
        failed = "failed" in self.engine_state
        state = Text("  ·  ")
        state.append(self.engine_state, style=STATE_COLOUR.get(self.engine_state, "red" if failed else "yellow"))
        parts: list[tuple[int, Text]] = [(KEEP, state)]
        if self.compute:
            parts.insert(0, (1, literal(f" ({self.compute})", "dim")))
        if self.download is not None:
            parts.append((KEEP, Text(" ") + download_bar(*self.download)))
        if self.detail:
            parts.append((4, literal(f" {self.detail}", "dim")))
        if self.waiting:
            parts.append((KEEP, Text(f"  ·  {counted(self.waiting, 'message')} waiting", style="yellow")))
        if self.context_tokens:
            parts.append((5, Text("  ·  ") + self._context_usage()))
        if self.summarised:
            parts.append((3, Text(f"  ·  📝 {self.summarised} summarised", style="dim")))
        if self.servers:
            parts.append((2, literal(f"  ·  {self.servers}", "dim")))
        if self.save_problem:
            parts.append((KEEP, Text("  ·  ") + Text("not saved", style="bold red")))
        return fit(self.model or "no model", parts, self.content_size.width)

    async def on_click(self) -> None:
        """A click on the status bar opens the model detail (the model and its generation settings)."""
        await self.app.run_action("model_detail")

    def _context_usage(self) -> Text:
        """``1.2k/4.1k tokens``; from 80% of the context in the warning colour with a mark, the error's when full."""
        used, length = self.context_tokens, self.context_length
        label = usage_label(used, length)
        if length is not None and used >= length:
            return Text(f"⚠ {label}", style=self.get_component_rich_style("status-bar--over-limit"))
        if near_limit(used, length):
            return Text(f"⚠ {label}", style=self.get_component_rich_style("status-bar--near-limit"))
        return Text(label, style=self.get_component_rich_style("status-bar--tokens"))

    def forget_conversation(self) -> None:
        """Nothing of the conversation that left the screen: its tokens, summaries, last reply's cache note."""
        self.context_tokens = 0
        self.summarised = 0
        if self.engine_state == "ready":
            self.detail = ""

    def show_download(self, done: int, total: int | None) -> None:
        self.download = (done, total)

    def hide_download(self) -> None:
        self.download = None

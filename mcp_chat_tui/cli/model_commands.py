"""``/model`` at the ``prompt ->`` line: ``/model`` lists the models this machine has, ``/model NAME``
switches the conversation to one (loaded with its progress on a status line; the current model stays
when it cannot load)."""

from __future__ import annotations

import asyncio

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_chat_tui.cli.terminal import ctrl_c_cancels
from mcp_chat_tui.conversation import (
    ModelSwitcher,
    SwitchRefused,
    cancelled_line,
    is_model_command,
    model_argument,
    switched_line,
)
from mcp_chat_tui.core.text import visible_controls
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import LoadProgress
from mcp_chat_tui.engine.model_list import ModelChoice

HOW = "(Ctrl+C cancels)"
ONE_SHOT_MODEL = (
    "-p runs one turn and exits, so /model would switch to a model and ask it nothing: name the model on "
    "the command line instead (mcp-chat-tui MODEL -p PROMPT, with --transcript FILE to go on with a saved "
    "conversation on it); /model lists and switches models in --plain and the full-screen app"
)


def one_shot_problem(prompt: str) -> str | None:
    """Why ``-p``'s prompt is refused before anything loads: ``/model`` (None for any other prompt)."""
    return ONE_SHOT_MODEL if is_model_command(prompt) else None


async def model_command(switcher: ModelSwitcher | None, console: Console, text: str) -> None:
    """Answer ``/model`` or ``/model NAME`` typed at the prompt."""
    if switcher is None:
        console.print(Text("/model is not available here", style="yellow"))
        return
    wanted = model_argument(text)
    try:
        if not wanted:
            print_models(console, await switcher.choices(), switcher.current)
            return
        choice = await switcher.find(wanted)
        engine = await _switch(switcher, choice, console)
    except SwitchRefused as exc:
        console.print(Text(visible_controls(str(exc)), style="red"), soft_wrap=True)
        return
    if engine is None:
        console.print(Text(visible_controls(cancelled_line(switcher.current)), style="yellow"), soft_wrap=True)
        return
    console.print(Text(visible_controls(switched_line(choice.name, engine)), style="green"), soft_wrap=True)


async def _switch(switcher: ModelSwitcher, choice: ModelChoice, console: Console) -> Engine | None:
    """The switch, its progress on a status line; Ctrl+C cancels it (None: cancelled, the current
    model stays), and once it has ended means leave again."""
    with console.status(visible_controls(f"loading {choice.name}… {HOW}")) as status:

        def on_progress(progress: LoadProgress) -> None:
            if progress.stage in ("download", "convert") and progress.bytes_total:
                status.update(
                    visible_controls(f"{progress.doing} {choice.name}: {progress.bytes_done / 1e6:.1f} MB {HOW}")
                )
            elif progress.message:
                status.update(visible_controls(f"{progress.message} {HOW}"))

        switching = asyncio.ensure_future(switcher.switch(choice, on_progress))
        with ctrl_c_cancels(switching) as ctrl_c:
            try:
                return await switching
            except asyncio.CancelledError:
                if not ctrl_c.pressed or not switching.cancelled():
                    raise  # the program is ending (SIGTERM): not the user's Ctrl+C
                return None


def print_models(console: Console, models: list[ModelChoice], current: str) -> None:
    """The models on offer, the current one marked; how to switch under them."""
    if not models:
        console.print(
            Text(
                "no models found: put MLX models in the Hugging Face cache, or name folders and GGUF "
                "files in config.toml's local_models",
                style="yellow",
            ),
            soft_wrap=True,
        )
        return
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("", "model", "kind", "size", "where"):
        table.add_column(column, overflow="fold")
    for model in models:
        mark = "●" if model.named(current) else ""
        table.add_row(
            mark, *(Text(visible_controls(v)) for v in (model.name, model.kind, model.size_label, model.where))
        )
    console.print(table)
    console.print(Text("/model NAME switches to one", style="dim"))

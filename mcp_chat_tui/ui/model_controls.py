"""``/model`` and the palette's "Switch model": the picker, and the switch itself (a helper ``ChatApp`` composes).

The new model loads (its progress in the status bar) while the current one keeps the conversation;
Esc cancels the load. Prompts sent meanwhile wait and go to the model the switch leaves in place. A
model that cannot load is named with why, and the current one stays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.worker import Worker

from mcp_chat_tui.conversation import (
    ModelChoice,
    ModelSwitcher,
    SwitchRefused,
    cancelled_line,
    model_argument,
    not_during_a_turn,
    switched_line,
)
from mcp_chat_tui.engine import LoadProgress
from mcp_chat_tui.ui.screens.models import ModelPickerScreen
from mcp_chat_tui.ui.widgets.chat import ChatLog, Notice
from mcp_chat_tui.ui.widgets.status import EngineState, StatusBar


class ModelControls:
    """Switches the model the conversation goes on with, one switch at a time, never during a turn.

    Args:
        app: Where it says what happened, opens the picker, runs the switch, and finds the status bar and the chat.
        model_label: How the model answering now is named.
        busy: Whether a turn runs or waits now (no switch then).
        engine_state: Sets what the status bar says the engine does.
    """

    def __init__(
        self, app: App[Any], model_label: Callable[[], str], busy: Callable[[], bool], engine_state: EngineState
    ) -> None:
        self.app = app
        self._model_label = model_label
        self._busy = busy
        self._engine_state = engine_state
        self.switcher: ModelSwitcher | None = None  # set by the command line (None: /model says it is not available)
        self._switching: Worker[None] | None = None  # the switch under way (None: none)

    @property
    def switching(self) -> bool:
        return self._switching is not None and not self._switching.is_finished

    def pick(self) -> None:
        """The picker of the models this machine has; Enter switches to the one chosen."""
        self.app.run_worker(self._pick_model(), group="model-list", exclusive=True)

    def typed(self, text: str) -> None:
        """``/model`` (the picker) or ``/model NAME`` (a switch) typed at the prompt."""
        wanted = model_argument(text)
        if not wanted:
            self.pick()
        else:
            self._start_switch(wanted)

    async def settled(self) -> None:
        """Wait for a switch under way to end (a prompt sent meanwhile goes to the model it leaves)."""
        worker = self._switching
        if worker is not None and not worker.is_finished:
            await worker.wait()

    def cancel_load(self) -> bool:
        """Esc: the switch under way is cancelled (the current model stays); False when there is none."""
        if not self.switching:
            return False
        assert self._switching is not None
        self._switching.cancel()
        return True

    async def _pick_model(self) -> None:
        switcher = self._switcher()
        if switcher is None:
            return
        models = await switcher.choices()

        def chosen(choice: ModelChoice | None) -> None:
            if choice is not None:
                self._start_switch(choice)

        self.app.push_screen(ModelPickerScreen(models, switcher.current), callback=chosen)

    def _switcher(self) -> ModelSwitcher | None:
        if self.switcher is None:
            self.app.notify("/model is not available in this app", severity="warning", markup=False)
        return self.switcher

    def _start_switch(self, wanted: str | ModelChoice) -> None:
        if self.switching:
            self.app.notify("a model is loading already (Esc cancels it)", severity="warning", markup=False)
            return
        if self._busy():
            self.app.notify(not_during_a_turn(self._model_label()), severity="warning", markup=False)
            return
        self._switching = self.app.run_worker(self._switch(wanted), group="model-switch", exit_on_error=False)

    async def _switch(self, wanted: str | ModelChoice) -> None:
        switcher = self._switcher()
        if switcher is None:
            return
        before = self._model_label()
        try:
            choice = wanted if isinstance(wanted, ModelChoice) else await switcher.find(wanted)
            self._engine_state("loading", f"{choice.name}… (Esc cancels)")
            engine = await switcher.switch(choice, lambda progress: self._switch_progress(choice, progress))
        except SwitchRefused as exc:
            self._switch_ended()
            self.app.notify(str(exc), title="model not switched", severity="error", timeout=12, markup=False)
            return
        except asyncio.CancelledError:
            self._switch_ended()
            self.app.notify(cancelled_line(before), markup=False)
            raise
        self._switch_ended()
        status_bar = self.app.query_one(StatusBar)
        status_bar.model = self._model_label()
        status_bar.compute = engine.compute_label
        status_bar.context_length = engine.context_length
        said = switched_line(self._model_label(), engine)
        await self.app.query_one(ChatLog).mount(Notice(said, muted=True))
        self.app.notify(said, title="model", markup=False)

    def _switch_progress(self, choice: ModelChoice, progress: LoadProgress) -> None:
        """The load's progress in the status bar (a download's or conversion's bytes, else what it does)."""
        if not self.switching:  # came after the switch was cancelled
            return
        if progress.stage in ("download", "convert"):
            self.app.query_one(StatusBar).show_download(progress.bytes_done, progress.bytes_total)
            self._engine_state("loading", f"{choice.name}: {progress.doing} (Esc cancels)")
        elif progress.message and progress.stage != "ready":
            self.app.query_one(StatusBar).hide_download()
            self._engine_state("loading", f"{progress.message} (Esc cancels)")

    def _switch_ended(self) -> None:
        self.app.query_one(StatusBar).hide_download()
        self._engine_state("ready", "")

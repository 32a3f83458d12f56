"""``/model`` and the palette's "Switch model", a part of ``ChatApp``: the picker, and the switch itself.

The new model loads (its progress in the status bar) while the current one keeps the conversation;
Esc cancels the load. Prompts sent meanwhile wait and go to the model the switch leaves in place. A
model that cannot load is named with why, and the current one stays.
"""

from __future__ import annotations

import asyncio

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
from mcp_chat_tui.ui.app_base import ChatAppBase
from mcp_chat_tui.ui.screens.models import ModelPickerScreen
from mcp_chat_tui.ui.widgets.chat import Notice


class ModelActions(ChatAppBase):
    """``ChatApp``'s model switching: uses its ``model_switcher`` (set by the command line), status bar and chat."""

    model_switcher: ModelSwitcher | None = None
    _switching: Worker[None] | None = None  # the switch under way (None: none)

    @property
    def switching_model(self) -> bool:
        return self._switching is not None and not self._switching.is_finished

    def action_switch_model(self) -> None:
        """The picker of the models this machine has; Enter switches to the one chosen."""
        self.run_worker(self._pick_model(), group="model-list", exclusive=True)

    def model_typed(self, text: str) -> None:
        """``/model`` (the picker) or ``/model NAME`` (a switch) typed at the prompt."""
        wanted = model_argument(text)
        if not wanted:
            self.action_switch_model()
        else:
            self._start_switch(wanted)

    async def model_settled(self) -> None:
        """Wait for a switch under way to end (a prompt sent meanwhile goes to the model it leaves)."""
        worker = self._switching
        if worker is not None and not worker.is_finished:
            await worker.wait()

    def cancel_model_load(self) -> bool:
        """Esc: the switch under way is cancelled (the current model stays); False when there is none."""
        if not self.switching_model:
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

        self.push_screen(ModelPickerScreen(models, switcher.current), callback=chosen)

    def _switcher(self) -> ModelSwitcher | None:
        if self.model_switcher is None:
            self.notify("/model is not available in this app", severity="warning", markup=False)
        return self.model_switcher

    def _start_switch(self, wanted: str | ModelChoice) -> None:
        if self.switching_model:
            self.notify("a model is loading already (Esc cancels it)", severity="warning", markup=False)
            return
        if self._turn_running or self.agent.busy:
            self.notify(not_during_a_turn(self.model_label), severity="warning", markup=False)
            return
        self._switching = self.run_worker(self._switch(wanted), group="model-switch", exit_on_error=False)

    async def _switch(self, wanted: str | ModelChoice) -> None:
        switcher = self._switcher()
        if switcher is None:
            return
        before = self.model_label
        try:
            choice = wanted if isinstance(wanted, ModelChoice) else await switcher.find(wanted)
            self._engine_state("loading", f"{choice.name}… (Esc cancels)")
            engine = await switcher.switch(choice, lambda progress: self._switch_progress(choice, progress))
        except SwitchRefused as exc:
            self._switch_ended()
            self.notify(str(exc), title="model not switched", severity="error", timeout=12, markup=False)
            return
        except asyncio.CancelledError:
            self._switch_ended()
            self.notify(cancelled_line(before), markup=False)
            raise
        self._switch_ended()
        self.status_bar.model = self.model_label
        self.status_bar.compute = engine.compute_label
        self.status_bar.context_length = engine.context_length
        said = switched_line(self.model_label, engine)
        await self.chat.mount(Notice(said, muted=True))
        self.notify(said, title="model", markup=False)

    def _switch_progress(self, choice: ModelChoice, progress: LoadProgress) -> None:
        """The load's progress in the status bar (a download's or conversion's bytes, else what it does)."""
        if not self.switching_model:  # came after the switch was cancelled
            return
        if progress.stage in ("download", "convert"):
            self.status_bar.show_download(progress.bytes_done, progress.bytes_total)
            self._engine_state("loading", f"{choice.name}: {progress.doing} (Esc cancels)")
        elif progress.message and progress.stage != "ready":
            self.status_bar.hide_download()
            self._engine_state("loading", f"{progress.message} (Esc cancels)")

    def _switch_ended(self) -> None:
        self.status_bar.hide_download()
        self._engine_state("ready")

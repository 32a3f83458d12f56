"""``/model``: the models this machine has, and the conversation handed to another one.

The same under both front ends. The new engine loads while the current one stays in place: the
conversation moves to it only once it has loaded, so a model that fails to load (or a load the user
cancels, which stops between the load's steps) leaves the conversation where it was. Never during a turn: the engines share one MLX thread,
and a reply belongs to the model that began it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mcp_chat_tui.conversation.conversation import Conversation
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import LoadProgress
from mcp_chat_tui.engine.model_list import (
    ModelChoice,
    endpoint_models,
    find_model,
    gathered,
    hf_cache_models,
    named_models,
)

__all__ = [
    "MODEL_COMMAND",
    "EngineMaker",
    "ModelChoice",
    "ModelSwitcher",
    "SwitchRefused",
    "cancelled_line",
    "is_model_command",
    "not_during_a_turn",
    "switched_line",
]

EngineMaker = Callable[[ModelChoice], Engine]
"""Builds the engine for a model (the command line's flags and config.toml's settings for it)."""

MODEL_COMMAND = "/model"


class SwitchRefused(UserFacingError):
    """A switch that cannot happen (a turn under way, no such model, a model that fails to load)."""


def is_model_command(text: str) -> bool:
    """``/model`` alone or with a model's name."""
    head = text.strip().split(maxsplit=1)
    return bool(head) and head[0].lower() == MODEL_COMMAND


def not_during_a_turn(current: str) -> str:
    """Why ``/model`` waits while ``current`` answers (both front ends say it the same way)."""
    return f"not during a turn: {current} is answering (Esc stops it, then /model)"


def cancelled_line(current: str) -> str:
    """The line that says a load was cancelled and ``current`` stays (both front ends)."""
    return f"loading cancelled: still on {current}"


def switched_line(model: str, engine: Engine | None = None) -> str:
    """The line that says the conversation goes on with ``model`` (live with its ``engine``'s
    generation settings; resumed without)."""
    generation = engine.generation if engine is not None else None
    settings = generation.summary() if generation is not None else ""
    return f"switched to {model}" + (f" ({settings})" if settings else "")


def model_argument(text: str) -> str:
    """The name after ``/model`` ("" for none)."""
    parts = text.strip().split(maxsplit=1)
    return parts[1].strip() if len(parts) > 1 else ""


@dataclass
class ModelSwitcher:
    """What ``/model`` needs: the conversation, how to build an engine, the models config.toml names,
    and the engine whose server's models are listed (the ``--endpoint`` one, None without)."""

    conversation: Conversation
    make_engine: EngineMaker
    named: Sequence[str] = ()
    endpoint: Engine | None = None

    @property
    def current(self) -> str:
        return self.conversation.model_label

    async def choices(self) -> list[ModelChoice]:
        """Every model on offer: the endpoint's, config.toml's, then the Hugging Face cache's (read
        on a thread: a large cache is many folders). An endpoint that cannot be asked lists none."""
        served: list[ModelChoice] = []
        if self.endpoint is not None and self.endpoint.endpoint:
            with contextlib.suppress(UserFacingError):
                served = endpoint_models(await self.endpoint.served_models(), self.endpoint.endpoint)
        local = await asyncio.to_thread(lambda: gathered(named_models(self.named), hf_cache_models()))
        return gathered(served, local)

    async def find(self, wanted: str) -> ModelChoice:
        """The model ``wanted`` names; ``SwitchRefused`` saying how to list them when there is none."""
        found = find_model(await self.choices(), wanted)
        if found is None:
            raise SwitchRefused(
                f"no model {wanted!r} on this machine: /model lists them (the Hugging Face cache, "
                "config.toml's local_models, the endpoint's); nothing is downloaded"
            )
        return found

    async def switch(self, choice: ModelChoice, on_progress: Callable[[LoadProgress], None] | None = None) -> Engine:
        """Load ``choice`` and hand the conversation to it; returns the new engine. Raises
        ``SwitchRefused`` (a turn under way, a load that failed: the current model stays) and
        ``CancelledError`` when cancelled: the load is told to stop at its next step, and the
        half-loaded model is freed once it has."""
        agent = self.conversation.agent
        if agent.busy or agent.summarising:
            raise SwitchRefused(not_during_a_turn(self.current))
        engine = self.make_engine(choice)
        load = asyncio.ensure_future(engine.load(on_progress))
        try:
            await asyncio.shield(load)
        except asyncio.CancelledError:
            engine.cancel_load()
            load.add_done_callback(lambda _: _free(load, engine))
            raise
        except Exception as exc:  # noqa: BLE001 - any failure to load leaves the current model, said
            await engine.close()
            why = str(exc) if isinstance(exc, UserFacingError) else f"{type(exc).__name__}: {exc}"
            raise SwitchRefused(f"cannot switch to {choice.name}: {why}; still on {self.current}") from None
        old = agent.engine
        self.conversation.use_engine(engine, choice.name)
        await old.close()
        return engine


def _free(load: asyncio.Future[None], engine: Engine) -> None:
    """A cancelled switch's engine, once its load has ended: its failure (if any) read, the model freed."""
    if not load.cancelled():
        load.exception()
    asyncio.ensure_future(engine.close())

"""The full-screen app says once, as a notice after the model has loaded, how to make a model faster
that the engine found running on a CPU without a fast BLAS (engine/blas.py ``fast_path_hint``)."""

from __future__ import annotations

from mcp_chat_tui.engine.blas import INSTALL_HINT
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done


class SlowOnThisCpu(ScriptedEngine):
    """A model the engine found running on a CPU with MLX's reference BLAS."""

    speed_hint = INSTALL_HINT


def noted(app) -> list[str]:
    """Every notice the app gives from now on, kept (a toast goes away after its time)."""
    said: list[str] = []
    shown = app.notify

    def notify(message: str, **options) -> None:
        said.append(message)
        shown(message, **options)

    app.notify = notify
    return said


async def test_the_app_says_once_how_to_get_the_fast_path() -> None:
    app = make_app(SlowOnThisCpu(["hello there", "and again"]), servers=[])
    said = noted(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert said.count(INSTALL_HINT) == 1
        for prompt in ("hi", "more"):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app)
        assert said.count(INSTALL_HINT) == 1  # not again for each reply


async def test_an_engine_with_nothing_to_say_shows_no_notice() -> None:
    app = make_app(ScriptedEngine(["hello"]), servers=[])
    said = noted(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert INSTALL_HINT not in said

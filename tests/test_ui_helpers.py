"""tests/ui_helpers.py's ``wait_for``: it brings the app's screen up to date when the condition holds,
not at every look. A ``pilot.pause`` hands a message to every widget of the screen and draws a
frame (about 4 ms of CPU); a pause every 50 ms cost a waiting test four times what the app spent.

Counted, not timed."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready


async def test_a_wait_brings_the_screen_up_to_date_when_the_condition_holds_not_at_every_look(monkeypatch):
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        pauses: list[float | None] = []
        pause = pilot.pause

        async def counted(delay: float | None = None) -> None:
            pauses.append(delay)
            await pause(delay)

        monkeypatch.setattr(pilot, "pause", counted)
        reason = app.query_one("#server-reason", Static)
        looks = 0

        def shown() -> bool:
            nonlocal looks
            looks += 1
            return "the timer went off" in str(reason.render())

        app.set_timer(0.6, lambda: reason.update("the timer went off"))
        await wait_for(pilot, shown, 10, "the timer")
        assert looks >= 5, "looked at the condition while waiting"
        assert len(pauses) == 1, f"{len(pauses)} pauses for one condition that came true once"


async def test_a_wait_that_times_out_names_what_did_not_happen():
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        with pytest.raises(AssertionError, match="timed out after 0.2 s waiting for the sky to fall"):
            await wait_for(pilot, lambda: False, 0.2, "the sky to fall")

"""A key whose frame allocates a great deal holds Python's cycle collector until that frame is drawn
(ui/heap.py ``collect_after_frame``): a new theme (every widget restyled and drawn again) and the
approval dialog (built and drawn over the screen). Their collections run after the frame, not
inside it. Counted in collections (``gc.callbacks``), not timed: bench/key_latency.py times the keys.

The youngest generation's threshold is made tiny here, so that drawing anything would start
collections; the app's own (ui/heap.py) is 10,000 allocations, which a theme change passes."""

from __future__ import annotations

import gc

import pytest

from mcp_chat_tui.ui import heap
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done


class Collections:
    """Each collection's start from now on, noted as whether the app's frame it waits for was drawn by then."""

    def __init__(self) -> None:
        self.before_frame = 0
        self.after_frame = 0
        self.frame_drawn = False

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            if self.frame_drawn:
                self.after_frame += 1
            else:
                self.before_frame += 1


@pytest.fixture
def collections():
    noted = Collections()
    thresholds = gc.get_threshold()
    gc.callbacks.append(noted)
    try:
        yield noted
    finally:
        gc.callbacks.remove(noted)
        gc.set_threshold(*thresholds)


def note_frames(app, collections: Collections, shown) -> None:
    """``collections.frame_drawn`` is set by the first frame drawn while ``shown()``."""
    display = app._display

    def noted(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None and shown():
            collections.frame_drawn = True

    app._display = noted


async def test_a_new_theme_is_drawn_before_the_collector_runs(collections):
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        theme = "mcp-light" if app.theme != "mcp-light" else "mcp-dark"
        note_frames(app, collections, lambda: app.theme == theme)
        restyle = app.refresh_css

        def counted_from_the_restyle(*args, **kwargs):  # (the theme's watcher before it does little)
            gc.set_threshold(50, *gc.get_threshold()[1:])
            collections.before_frame = 0
            restyle(*args, **kwargs)

        app.refresh_css = counted_from_the_restyle
        app.theme = theme
        await wait_for(pilot, lambda: collections.frame_drawn and gc.isenabled(), what="the theme drawn")
        assert collections.before_frame == 0
        assert collections.after_frame  # held, not skipped: it ran once the frame was drawn


async def test_the_approval_dialog_is_drawn_before_the_collector_runs(collections, monkeypatch):
    engine = ScriptedEngine([[call("calculator", {"expression": "2 + 2"})], "It is 4."])
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        note_frames(app, collections, lambda: isinstance(app.screen, ApprovalScreen))

        made = ApprovalScreen.__init__

        def counted_from_the_dialog(*args, **kwargs):  # from the dialog made to its first frame
            made(*args, **kwargs)
            gc.set_threshold(50, *gc.get_threshold()[1:])
            collections.before_frame = 0

        monkeypatch.setattr(ApprovalScreen, "__init__", counted_from_the_dialog)
        await send(pilot, "what is 2 + 2?")
        await wait_for(pilot, lambda: collections.frame_drawn and gc.isenabled(), what="the dialog drawn")
        assert collections.before_frame == 0
        assert collections.after_frame
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog armed")
        await pilot.press("n")
        await wait_turn_done(pilot, app)


async def test_a_frame_that_never_comes_holds_the_collector_for_its_limit_at_most(monkeypatch):
    monkeypatch.setattr(heap, "FRAME_HOLD_LIMIT", 0.05)
    app = make_app(ScriptedEngine([]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        with app.batch_update():  # no frame is drawn meanwhile
            heap.collect_after_frame(app.screen)
            assert not gc.isenabled()
            await wait_for(pilot, gc.isenabled, what="the collector back on")

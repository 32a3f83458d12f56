"""What a key costs the screen (issue 33): a focus change builds the footer's keys once, and a
sign that the keys may have changed builds nothing when they did not; a dialog opening restyles
nothing under it (its style file was read with the app's); once the app is ready,
Python's cycle collector leaves what start-up built alone (a full collection over a loaded
conversation paused the screen for a tenth of a second and more), until the app ends.

Counted, not timed: bench/key_latency.py times the keys."""

from __future__ import annotations

import gc

from textual.app import App
from textual.widgets import Footer

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.ui import heap
from mcp_chat_tui.ui.screens import STYLES_FOLDER
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import CallDetailScreen
from mcp_chat_tui.ui.textual_private import FooterKey
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import dialog_armed, make_app, send, wait_for, wait_ready


async def test_a_focus_change_builds_the_footer_once_and_a_change_of_nothing_not_at_all(monkeypatch):
    builds = []
    recompose = Footer.recompose

    async def counted(footer):
        builds.append(footer)
        await recompose(footer)

    monkeypatch.setattr(Footer, "recompose", counted)
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f5")
        await pilot.pause()
        builds.clear()
        await pilot.press("f3")
        await wait_for(pilot, lambda: "Auto-run tool" in footer_words(app), what="the calls pane's keys")
        await pilot.pause()
        assert len(builds) == 1
        builds.clear()
        for _ in range(5):
            app.refresh_bindings()  # the keys may have changed; they did not
        await pilot.pause()
        await pilot.pause()
        assert builds == []
        await pilot.press("f5")
        await wait_for(pilot, lambda: "Auto-run tool" not in footer_words(app), what="the prompt's keys")
        assert len(builds) == 1


async def test_a_footer_rebuild_styles_each_key_once_as_it_mounts(monkeypatch):
    """Textual's footer keys were restyled twice more each as they mounted (their ``compact`` on by
    default, then off from the footer's): a focus change restyles none of them after their mount,
    and they look as Textual's did (not compact, as the footer is not). The palette's key, which
    Textual does not bind to the footer, is left as Textual makes it."""
    restyled = []
    update_styles = App.update_styles

    def counted(app, node, animate=True):
        if isinstance(node, FooterKey):
            restyled.append(node)
        update_styles(app, node, animate)

    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f5")
        await pilot.pause()
        monkeypatch.setattr(App, "update_styles", counted)
        await pilot.press("f3")
        await wait_for(pilot, lambda: "Auto-run tool" in footer_words(app), what="the calls pane's keys")
        await pilot.pause()
        keys = [key for key in app.screen.query_one(Footer).query(FooterKey) if not key.has_class("-command-palette")]
        assert len(keys) > 5
        again = [key for key in restyled if key in keys]
        assert again == [], f"{len(again)} restyles of {len(set(again))} new footer keys"
        assert not any(key.compact or key.has_class("-compact") for key in keys)


def footer_words(app) -> str:
    return " ".join(str(key.description) for key in app.screen.query_one(Footer).children)


async def test_once_ready_the_collector_leaves_start_up_objects_alone_until_the_app_ends():
    thresholds = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        assert gc.get_freeze_count() > 10_000  # the app's modules and widgets, set aside
        assert gc.get_threshold()[0] == max(heap.YOUNG_OBJECTS, thresholds[0])
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


async def test_a_screen_opening_restyles_nothing_under_it():
    """Each screen's style file is read with the app's: the first approval dialog and the first
    call detail opened leave the styles of the widgets under them as they were (Textual restyles
    every widget of the app when a screen brings a style file it has not read)."""
    engine = ScriptedEngine([[call("calculator", {"expression": "6*7"})], "42"])
    app = make_app(engine, policy=ApprovalPolicy("ask"))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        restyled = []
        update = app.stylesheet.update
        app.stylesheet.update = lambda root, animate=False: (restyled.append(root), update(root, animate))  # type: ignore[method-assign]
        await send(pilot, "what is 6*7")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turns.running, what="the turn's end")
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call's detail")
        await pilot.pause()
        assert restyled == []
        read = {path for path, _ in app.stylesheet.source}
        assert {str(path) for path in STYLES_FOLDER.glob("*.tcss")} <= read

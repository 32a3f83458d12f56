"""The footer at 120, 80 and 60 columns, with each pane focused: whole keys only, none under the
palette's hint or past the edge; F1, Esc and Ctrl+C always there; a key left out is in F1's list."""

from __future__ import annotations

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from mcp_chat_tui.ui.help import help_text
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, wait_for, wait_ready

ALWAYS = ["Ctrl+C Quit", "Esc Stop", "F1 Keys"]
SHOWN = {  # what the footer holds, by size and focused pane (the keys the demo app has)
    (80, 24): {
        "f5": [*ALWAYS, "F2 Chat", "F3 Calls", "F4 Servers", "Ctrl+P palette"],
        "f3": ["a Auto-run tool", *ALWAYS, "F2 Chat", "Ctrl+P palette"],
        "f4": ["r Restart", "l Stderr log", "a Auto-run tools", *ALWAYS],
        "f2": [*ALWAYS, "F3 Calls", "F4 Servers", "Ctrl+P palette"],
    },
    (60, 16): {
        "f5": [*ALWAYS, "F2 Chat", "Ctrl+P palette"],
        "f3": ["a Auto-run tool", *ALWAYS, "F2 Chat"],
        "f4": ["r Restart", "l Stderr log", *ALWAYS],
        "f2": [*ALWAYS, "F3 Calls", "Ctrl+P palette"],
    },
}


def footer_keys(app, *, shown: bool) -> list[FooterKey]:
    return [key for key in app.screen.query_one(Footer).query(FooterKey) if key.display == shown]


def labels(app) -> list[str]:
    return [f"{key.key_display} {key.description}" for key in footer_keys(app, shown=True)]


def assert_whole_keys(app) -> None:
    """Every key shown lies inside the footer, clear of the others (the palette's hint included)."""
    footer = app.screen.query_one(Footer).region
    regions = sorted((key.region for key in footer_keys(app, shown=True)), key=lambda region: region.x)
    for region in regions:
        assert footer.x <= region.x and region.right <= footer.right, (labels(app), region, footer)
    for left, right in zip(regions, regions[1:], strict=False):
        assert left.right <= right.x, f"keys overlap: {labels(app)}"


def assert_listed_in_help(app) -> None:
    """A key the footer leaves out (or shows) is in F1's list, under the same key and its words (F1
    writes a key's tooltip, the longer words, where it has one)."""
    listed = help_text().plain.lower()
    for key in footer_keys(app, shown=False) + footer_keys(app, shown=True):
        words = [str(said).lower() for said in (key.description, key.tooltip) if said]
        assert f"  {key.key_display.lower()} " in listed and any(w in listed for w in words), key.key_display


@pytest.mark.parametrize("size", [(80, 24), (60, 16)], ids=lambda size: f"{size[0]}x{size[1]}")
async def test_the_footer_shows_whole_keys_most_needed_first(size):
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot, app)
        for pane, expected in SHOWN[size].items():
            await pilot.press(pane)
            await wait_for(pilot, lambda: labels(app) == expected, what=f"the footer {expected} ({pane})")
            assert_whole_keys(app)
            assert_listed_in_help(app)


async def test_the_footer_fits_again_when_the_terminal_is_resized():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4")
        await wait_for(pilot, lambda: labels(app) == SHOWN[(60, 16)]["f4"], what="the 60-column footer")
        await pilot.resize_terminal(120, 30)
        wide = ["r Restart", "l Stderr log", "a Auto-run tools", "o Resources", *ALWAYS, "F2 Chat", "Ctrl+P palette"]
        await wait_for(pilot, lambda: labels(app) == wide, what=f"the 120-column footer {wide}")
        assert_whole_keys(app)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: labels(app) == SHOWN[(80, 24)]["f4"], what="the 80-column footer")
        assert_whole_keys(app)


async def test_the_footer_says_what_esc_does_while_the_completion_list_is_open():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        app.query_one("#prompt").focus()
        await pilot.press("/")
        await wait_for(pilot, lambda: "Esc Close list" in labels(app), what="Esc closing the list, in the footer")
        assert "Esc Stop" not in labels(app)
        assert_whole_keys(app)
        assert_listed_in_help(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Esc Stop" in labels(app), what="Esc stopping again, in the footer")
        assert "Esc Close list" not in labels(app) and app.query_one("#prompt").value == "/"

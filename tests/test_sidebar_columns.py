"""The calls sidebar shows what the card promises at every width from 60 columns up: each row names
its tool with its server (the same way on every row), its state (a running call's progress bar or
N/T), its duration and the start of its arguments; wider, its outcome, who let it run and the time.
The sidebar grows with the terminal, and F7, F8 or the mouse set its share, kept in ``[ui]``."""

from __future__ import annotations

import tomllib

import pytest

from mcp_chat_tui.config import load_settings
from mcp_chat_tui.ui.widgets.call_columns import COLUMNS, TWO_LINES_BELOW, call_layout, tool_label
from tests.fakes import ScriptedEngine
from tests.sidebar_scene import scene_app, show_scene
from tests.ui_helpers import make_app, wait_ready

SIZES = [(60, 16), (80, 24), (120, 40), (200, 50)]
ARGUMENT_STARTS = {"call_1": 'expression="(1', "call_2": 'expression="1', "call_3": 'query="wh', "call_4": 'path="/n'}
STATE_STARTS = {"call_1": "✓ done", "call_2": "✗ error", "call_3": "⊘ denied", "call_4": "▶ "}


def table_lines(table) -> list[str]:
    return ["".join(segment.text for segment in table.render_line(y)) for y in range(table.size.height)]


def row_text(table, record) -> str:
    """What the screen shows of ``record``'s row (its lines joined), scrolled into view first."""
    index = table.get_row_index(record.key)
    height = table.call_layout.row_height
    table.scroll_to(y=index * height, animate=False, immediate=True)
    top = round(table.scroll_y)
    first = index * height - top + (table.header_height if table.show_header else 0)
    return " ".join(table_lines(table)[first : first + height])


@pytest.mark.parametrize("width", range(28, 200))
def test_every_layout_keeps_the_tool_state_duration_and_arguments_and_fits(width):
    layout = call_layout(width)
    shown = layout.widths
    assert sum(shown.values()) <= max(width, 28), shown
    assert shown["tool"] >= 16 and shown["state"] >= 10
    if layout.two_lines:  # the arguments under the tool, the duration under the state
        assert width < TWO_LINES_BELOW and shown["tool"] + shown["state"] <= width
    else:
        assert shown["took"] >= 7 and shown["args"] >= 14
    assert set(shown) == set(COLUMNS)


def test_the_server_is_named_the_same_way_on_every_row():
    labels = [tool_label("demo", tool, 14).plain for tool in ("calculator", "current_time", "convert_units_to_metric")]
    assert all(label.startswith(("demo›", "demo…›")) or "›" in label for label in labels), labels
    assert all(len(label) <= 14 for label in labels), labels
    assert tool_label("a-long-server-name", "current_time", 14).plain == "a-l…›current_…"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_each_row_shows_tool_state_duration_and_arguments_at_every_size(size):
    app = scene_app()
    async with app.run_test(size=size) as pilot:
        await show_scene(pilot)
        table = app.calls_table
        records = {record.call_id: record for record in table.records.values()}
        for call_id, record in records.items():
            row = row_text(table, record)
            assert f"{record.server[:3]}" in row and f"›{record.tool[:4]}" in row, (call_id, row)
            assert STATE_STARTS[call_id] in row, (call_id, row)
            assert ARGUMENT_STARTS[call_id] in row, (call_id, row)
            if call_id != "call_3":  # a denied call never ran: no duration
                assert "120 ms" in row, (call_id, row)
        running = row_text(table, records["call_4"])
        assert "1/3" in running, running  # N/T, and the bar where it fits
        if size[0] >= 120:  # the outcome in one line: the result, the error, why it did not run
            assert "division by zero" in row_text(table, records["call_2"]) or "Error" in row_text(
                table, records["call_2"]
            )
            assert "The user" in row_text(table, records["call_3"]).split("⊘ denied", 1)[1]


async def test_the_sidebar_grows_with_the_terminal():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        narrow = app.sidebar.size.width
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        assert app.sidebar.size.width >= 2 * narrow - 2


async def test_f7_and_f8_set_the_width_and_only_ui_sidebar_width_is_written(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('theme = "mcp-dark"\n\n[model]\nmax_tokens = 512\n')
    before = config.read_text()
    app = make_app(ScriptedEngine([]), settings=load_settings(config), settings_file=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        pane = app.sidebar
        start = pane.size.width
        await pilot.press("f8", "f8")
        await pilot.pause()
        assert pane.size.width > start
        assert tomllib.loads(config.read_text()) == {**tomllib.loads(before), "ui": {"sidebar_width": 55}}
        await pilot.press("f7", "f7", "f7")
        await pilot.pause()
        assert pane.size.width < start
    assert load_settings(config).ui.sidebar_width == 40
    again = make_app(ScriptedEngine([]), settings=load_settings(config), settings_file=config)
    async with again.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, again)
        assert again.sidebar.outer_size.width == 48  # 40% of 120, as it was left


async def test_dragging_the_sidebars_edge_sets_its_width_and_keeps_it(tmp_path):
    config = tmp_path / "config.toml"
    app = make_app(ScriptedEngine([]), settings_file=config)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot, app)
        pane = app.sidebar
        edge = pane.region.x
        await pilot.mouse_down("#sidebar", offset=(0, 5))
        await pilot.hover("#main", offset=(edge - 20, 5))
        await pilot.mouse_up("#main", offset=(edge - 20, 5))
        await pilot.pause()
        assert pane.outer_size.width == 100 - (edge - 20)
    assert load_settings(config).ui.sidebar_width == round((100 - (edge - 20)) * 100 / 100)


async def test_a_width_that_cannot_be_saved_is_said_each_time_and_still_shown(tmp_path):
    config = tmp_path / "config.toml"
    app = make_app(ScriptedEngine([]), settings_file=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot, app)
        config.write_text("sidebar = 50\n")  # a key config.toml does not have: no write may go through
        start = app.sidebar.percent
        await pilot.press("f8", "f8")
        said = [n for n in app._notifications if n.title == "sidebar width not saved"]
        assert len(said) == 2 and "sidebar" in said[0].message, [n.message for n in app._notifications]
        assert app.sidebar.percent == start + 10
    assert config.read_text() == "sidebar = 50\n"

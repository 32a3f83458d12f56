"""The calls sidebar stays as quick at its ten-thousandth call as at its first: adding a call (and
the cursor following it) never walks over every row above it, as Textual's row placement does."""

from datetime import datetime

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.screens.detail import CallDetailScreen
from mcp_chat_tui.ui.widgets.sidebar import ToolCallTable
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, make_app, wait_ready


class OneTable(App):
    def compose(self) -> ComposeResult:
        yield ToolCallTable(DisplayClock(), id="calls")


def record(index: int) -> CallRecord:
    return CallRecord(
        f"k{index}",
        f"call_{index}",
        "demo",
        "calculator",
        {"expression": f"{index} + 1"},
        datetime.now(),
        state=CallState.DONE,
        duration=0.01,
    )


async def table_of(app: OneTable, pilot, calls: int) -> ToolCallTable:
    table = app.query_one(ToolCallTable)
    for index in range(calls):
        table.add_record(record(index))
    await pilot.pause()
    return table


async def test_a_row_is_placed_where_textual_places_it():
    app = OneTable()
    async with app.run_test(size=(100, 20)) as pilot:
        table = await table_of(app, pilot, 30)
        for show_header in (True, False):
            table.show_header = show_header
            for row in (-1, 0, 1, 17, 29, 30):
                assert table._get_row_region(row) == DataTable._get_row_region(table, row), (show_header, row)


async def test_adding_a_call_after_a_thousand_does_not_walk_the_rows():
    app = OneTable()
    async with app.run_test(size=(100, 20)) as pilot:
        table = await table_of(app, pilot, 1000)
        walked = []
        ordered_rows = DataTable.ordered_rows

        class Counting(ToolCallTable):
            @property
            def ordered_rows(self):
                walked.append(self.row_count)
                return ordered_rows.fget(self)

        table.__class__ = Counting
        try:
            for index in range(1000, 1010):
                table.add_record(record(index))
            table.update_record(table.records["k1005"], ("state",))
        finally:
            table.__class__ = ToolCallTable
        assert table.cursor_row == 1009, "the cursor follows the newest call"
        assert walked == []


async def test_ten_thousand_calls_in_the_sidebar_stay_usable():
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        table = app.calls_table
        for index in range(10_000):
            table.add_record(record(index))
        assert table.row_count == 10_000
        await pilot.press("f3")
        await pilot.press("k", "k", "enter")
        assert isinstance(app.screen, CallDetailScreen)
        assert app.screen.record.key == "k9997"

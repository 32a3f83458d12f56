"""The calls sidebar renders again only the row that changed (ui/widgets/row_cache.py): a new call
or a call's new state does not render every visible row's cells again, and what is drawn is what a
table built afresh with the same calls draws."""

from dataclasses import replace
from datetime import datetime

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region
from textual.renderables.styled import Styled

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.format import FrozenClock
from mcp_chat_tui.ui.widgets.sidebar import ToolCallTable

ROWS = 60  # more than the table shows


class TwoTables(App):
    """The table under test (``calls``) and one that is given only the last state (``fresh``)."""

    CSS = "Screen.-other-cursor ToolCallTable > .datatable--cursor { background: red; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ToolCallTable(FrozenClock(), id="calls")
            yield ToolCallTable(FrozenClock(), id="fresh")


def record(index: int, state: CallState = CallState.DONE) -> CallRecord:
    return CallRecord(
        f"k{index}",
        f"call_{index}",
        "demo",
        "calculator",
        {"expression": f"{index} + 1"},
        datetime(2026, 11, 28, 9, 0, 0),
        state=state,
        duration=0.01 * index,
    )


async def settled(pilot, table: ToolCallTable) -> None:
    """Wait until the table has taken its size, and draw it whole (a resize makes every row new)."""
    count = None
    while count != table._update_count:
        count = table._update_count
        await pilot.pause()
        table.refresh()
        drawn(table)


def fill(table: ToolCallTable) -> None:
    """The table given the calls 0 to ROWS - 1, each done."""
    for index in range(ROWS):
        table.add_record(record(index))


def drawn(table: ToolCallTable) -> list[str]:
    """The table's lines as drawn now (text and styles)."""
    return [repr(list(strip)) for strip in table.render_lines(Region(0, 0, table.size.width, table.size.height))]


class CountingRenders:
    """Counts the cells the app's console renders (a table renders each cell as a ``Styled``)."""

    def __init__(self, app: App) -> None:
        self.console = app.console
        self.count = 0
        self._render_lines = self.console.render_lines

    def __enter__(self) -> "CountingRenders":
        def counted(renderable, *args, **kwargs):
            self.count += isinstance(renderable, Styled)
            return self._render_lines(renderable, *args, **kwargs)

        self.console.render_lines = counted  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.console.render_lines


async def test_a_calls_new_state_renders_its_row_alone():
    app = TwoTables()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one("#calls", ToolCallTable)
        fill(table)
        table.move_cursor(row=5, animate=False)  # a row in view
        await settled(pilot, table)
        changed = replace(table.records["k7"], state=CallState.RUNNING, duration=None)
        table.records["k7"] = changed
        table.update_record(changed, ("state",))
        with CountingRenders(app) as renders:
            lines = drawn(table)
        assert renders.count == len(table.columns), f"{renders.count} cells rendered again for one call's state"
        assert any("running" in line for line in lines)


async def test_a_new_call_renders_the_rows_it_shows_alone():
    app = TwoTables()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one("#calls", ToolCallTable)
        fill(table)
        await settled(pilot, table)
        with CountingRenders(app) as renders:
            table.add_record(record(ROWS))  # the cursor follows it: the view scrolls by one row
            await pilot.pause()
            await table.wait_for_refresh()
        # the new row's cells, and those of the row the cursor left
        assert renders.count == 2 * len(table.columns), f"{renders.count} cells rendered again for one new call"


async def test_what_is_drawn_is_what_a_fresh_table_draws():
    app = TwoTables()
    async with app.run_test(size=(160, 30)) as pilot:
        table, fresh = app.query_one("#calls", ToolCallTable), app.query_one("#fresh", ToolCallTable)
        records = {index: record(index, CallState.RUNNING) for index in range(ROWS)}
        app.set_focus(None)  # the focused table's rows are drawn otherwise
        for item in records.values():
            table.add_record(item)
        await settled(pilot, table)
        for step, index in enumerate((ROWS - 1, ROWS - 3, 2, ROWS - 2)):
            table.move_cursor(row=ROWS - 1 - step, animate=False)
            records[index] = replace(records[index], state=CallState.ERROR, reason=f"failed {step}")
            table.records[records[index].key] = records[index]
            table.update_record(records[index])
            await pilot.pause()
            drawn(table)
        table.add_record(record(ROWS, CallState.DENIED))
        for item in [*records.values(), record(ROWS, CallState.DENIED)]:
            fresh.add_record(item)
        table.move_cursor(row=ROWS - 4, animate=False)
        fresh.move_cursor(row=ROWS - 4, animate=False)
        await pilot.pause()
        fresh.scroll_to(y=table.scroll_y, animate=False)  # the cursor's way there scrolled the other one
        await pilot.pause()
        assert table.size == fresh.size and table.scroll_offset == fresh.scroll_offset
        assert drawn(table) == drawn(fresh)


async def test_a_theme_that_comes_back_finds_its_cells_and_a_new_one_draws_its_own():
    app = TwoTables()
    async with app.run_test(size=(120, 30)) as pilot:
        table, fresh = app.query_one("#calls", ToolCallTable), app.query_one("#fresh", ToolCallTable)
        app.set_focus(None)
        fill(table)
        await settled(pilot, table)
        app.theme = "textual-light"
        await settled(pilot, table)
        fill(fresh)  # a table that has only known this theme
        await settled(pilot, fresh)
        assert drawn(table) == drawn(fresh), "a cell kept from the other theme was drawn"
        rendered = set(table._cell_render_cache.keys())
        app.theme = "textual-dark"
        await settled(pilot, table)
        again = set(table._cell_render_cache.keys()) - rendered
        assert not again, f"{len(again)} cells rendered again for a theme they were rendered in"


async def test_a_cursor_styled_anew_is_drawn_anew():
    """A style that changes only the cursor's look (nothing in the row's own style) draws the cursor's cells again."""
    app = TwoTables()
    async with app.run_test(size=(120, 30)) as pilot:
        table, fresh = app.query_one("#calls", ToolCallTable), app.query_one("#fresh", ToolCallTable)
        app.set_focus(None)
        fill(table)
        await settled(pilot, table)
        app.screen.add_class("-other-cursor")
        fill(fresh)
        await settled(pilot, table)
        await settled(pilot, fresh)
        assert table.scroll_offset == fresh.scroll_offset and table.cursor_row == fresh.cursor_row
        assert drawn(table) == drawn(fresh)


async def test_the_cursor_following_a_new_call_assembles_two_rows_again():
    """The new call's row and the row the cursor left; the other rows in view keep their lines."""
    app = TwoTables()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one("#calls", ToolCallTable)
        fill(table)
        await settled(pilot, table)
        assembled = set(table._row_render_cache.keys())
        table.add_record(record(ROWS))  # the cursor follows it
        await pilot.pause()
        await table.wait_for_refresh()
        again = set(table._row_render_cache.keys()) - assembled
        assert len(again) == 2 * table.call_layout.row_height, f"{len(again)} lines of rows assembled again"

"""A sidebar cell that grows shows whole in the very next frame, not cut to its column's old width."""

from textual.app import App, ComposeResult

from mcp_chat_tui.servers.state import ServerState, ServerStatus
from mcp_chat_tui.ui.format import DisplayClock
from mcp_chat_tui.ui.widgets.sidebar import ServerTable


class OneTable(App):
    def compose(self) -> ComposeResult:
        yield ServerTable(DisplayClock(), id="servers")


def row_text(table: ServerTable, y: int = 1) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_a_state_that_grows_is_drawn_whole_in_a_frame_drawn_before_the_table_is_idle():
    app = OneTable()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(ServerTable)
        status = ServerStatus("demo", "stdio", ServerState.BUSY, last_latency=0.056)
        table.show(status)
        await pilot.pause()
        assert "◉ busy" in row_text(table) and "56 ms" in row_text(table)
        # A frame is drawn between the change and the table's next idle (as on a busy app).
        status.state, status.last_latency = ServerState.READY, 0.118
        table.show(status)
        assert "● ready" in row_text(table)
        assert "118 ms" in row_text(table)
        await pilot.pause()
        assert "● ready" in row_text(table) and "118 ms" in row_text(table)
        header = row_text(table, 0)
        assert header.index("server") == row_text(table).index("demo")  # the columns line up


async def test_a_cell_that_shrinks_leaves_its_column_as_wide_as_the_widest_other_cell():
    app = OneTable()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(ServerTable)
        first = ServerStatus("demo", "stdio", ServerState.FAILED)
        table.show(first)
        table.show(ServerStatus("notes", "stdio", ServerState.CRASHED))
        await pilot.pause()
        first.state = ServerState.READY
        table.show(first)
        for _ in range(2):  # at once, and once the table has been idle
            header, lines = row_text(table, 0), [row_text(table, 1), row_text(table, 2)]
            assert "● ready" in lines[0] and "crashed" in lines[1]
            assert header.index("server") == lines[0].index("demo") == lines[1].index("notes")
            await pilot.pause()

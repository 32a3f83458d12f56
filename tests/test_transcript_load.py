"""Opening a long conversation costs in proportion to its length: nothing is done once per
exchange *and* per earlier exchange. Checked by what is done (widgets made, rows walked), with
one loose time bound where only time can tell (copying a growing text)."""

from __future__ import annotations

import time

from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript, TranscriptRecorder, parse, render
from mcp_chat_tui.ui import transcript_view
from mcp_chat_tui.ui.transcript_view import MAX_EARLIER_CALLS_LISTED
from mcp_chat_tui.ui.widgets.chat import MAX_EXCHANGES_SHOWN, UserMessage
from mcp_chat_tui.ui.widgets.sidebar import ToolCallTable
from tests.fakes import ScriptedEngine
from tests.ui_helpers import SIZE, chat_text, make_app, wait_ready


def long_conversation(exchanges: int, text: str = "an answer") -> Transcript:
    def step(i: int) -> Step:
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}
        return Step(
            proposals=[Proposal(call, "yo", ToolResult("calculator", f"call_{i}", "done", str(i), "demo", 0.01))]
        )

    return Transcript([Exchange(f"question {i}", "m", [step(i), Step(text=f"{text} {i}")]) for i in range(exchanges)])


def test_the_text_of_a_loaded_long_conversation_is_made_in_linear_time():
    """The recorder used to add each loaded exchange to one string, copying all of it each time:
    6,000 exchanges of 2 KB took minutes. Now well under a second; 20 s allows a loaded machine."""
    transcript = long_conversation(6000, "x" * 2000)
    expected = render(transcript)
    started = time.perf_counter()
    rendered = TranscriptRecorder(transcript).rendered()
    took = time.perf_counter() - started
    assert rendered == expected
    assert took < 20, f"{took:.1f} s"


async def test_a_long_file_mounts_only_the_exchanges_shown_and_walks_the_calls_once(tmp_path, monkeypatch):
    exchanges = MAX_EXCHANGES_SHOWN + MAX_EARLIER_CALLS_LISTED + 200
    path = tmp_path / "long.md"
    path.write_text(render(long_conversation(exchanges)), encoding="utf-8")
    made: list[str] = []

    class CountedMessage(UserMessage):
        def __init__(self, prompt: str) -> None:
            made.append(prompt)
            super().__init__(prompt)

    monkeypatch.setattr(transcript_view, "UserMessage", CountedMessage)
    app = make_app(ScriptedEngine(["fine"]), transcript_file=path, transcript=parse(path.read_text()))
    moves = 0
    original = ToolCallTable.move_cursor

    def counted_move(table, *args, **kwargs):
        nonlocal moves
        moves += 1
        return original(table, *args, **kwargs)

    monkeypatch.setattr(ToolCallTable, "move_cursor", counted_move)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        table = app.calls_table
        hidden = exchanges - MAX_EXCHANGES_SHOWN
        assert made == [f"question {i}" for i in range(hidden, exchanges)]  # never more made than shown
        assert f"{hidden} earlier exchanges not shown" in chat_text(app)
        assert table.row_count == MAX_EARLIER_CALLS_LISTED + MAX_EXCHANGES_SHOWN
        assert table.cursor_row == table.row_count - 1 and moves <= 2
        assert app.query_one("#prompt").history[0] == "question 0"  # the prompt history has them all
        assert len(app.recorder.transcript.exchanges) == exchanges

"""Snapshots of the status bar while summaries are written (a line saying which) and once they
stand in for the old exchanges (``📝 N summarised``). Update with ``--snapshot-update``."""

from __future__ import annotations

from mcp_chat_tui.config import Settings
from mcp_chat_tui.transcript import Exchange, Step, Transcript, parse, render
from tests.fakes import ScriptedEngine
from tests.test_snapshots import start
from tests.test_summaries_app import SlowSummaries, send_compact
from tests.ui_helpers import SIZE, make_app, wait_for


def four_exchanges(tmp_path):
    conversation = Transcript([Exchange(f"question {i}", "scripted", [Step(text=f"answer {i}")]) for i in range(4)])
    conversation.exchanges[0].summary = "Asked question 0, got answer 0 (written by hand)."
    path = tmp_path / "chat.md"
    path.write_text(render(conversation), encoding="utf-8")
    return path


def compacting_app(tmp_path, engine):
    path = four_exchanges(tmp_path)
    return make_app(engine, settings=Settings(max_turns=5), transcript_file=path, transcript=parse(path.read_text()))


def test_status_bar_while_summarising(snap_compare, tmp_path):
    """``/compact`` under way: the status bar says which exchange is being summarised, and counts the
    summary already in use."""
    app = compacting_app(tmp_path, SlowSummaries(["Question 1 answered."]))

    async def run_before(pilot) -> None:
        await start(pilot)
        await send_compact(pilot)
        await wait_for(pilot, lambda: app.status_bar.engine_state == "summarising", what="summarising")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_status_bar_with_summaries_in_use(snap_compare, tmp_path):
    """After ``/compact``: every exchange but the last is sent as its summary, and the bar says so."""
    app = compacting_app(tmp_path, ScriptedEngine(["Question 1 answered.", "Question 2 answered."]))

    async def run_before(pilot) -> None:
        await start(pilot)
        await send_compact(pilot)
        await wait_for(pilot, lambda: app.status_bar.summarised == 3, what="three summaries in use")
        await wait_for(pilot, lambda: app.status_bar.engine_state == "ready", what="ready")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

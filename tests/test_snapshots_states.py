"""Snapshot tests of the states a person sees: every call state in the sidebar, the keys (F1), a
resumed conversation in each shipped theme, the resume screen, and a narrow 80x24 terminal.

Built as in tests/test_snapshots.py: the real app, the real demo server, a scripted model, a frozen
clock, the cursor not blinking. Update with ``pytest tests/test_snapshots_states.py --snapshot-update``
and look at every SVG before committing.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from mcp_chat_tui.config import Settings
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript, parse, render
from mcp_chat_tui.ui.call_records import CallRecord
from mcp_chat_tui.ui.screens.conversations import ResumeScreen
from mcp_chat_tui.ui.screens.detail import TextScreen
from tests.fakes import ScriptedEngine
from tests.test_snapshots import ask_and_approve, conversation_engine, start
from tests.ui_helpers import SIZE, make_app, wait_for

THEMES = sorted(path.stem for path in (Path(__file__).resolve().parent.parent / "themes").glob("*.toml"))
AT = datetime(2026, 1, 2, 12, 0, 0)

# One row per state, each allowed by someone else where it ran: (state, tool, arguments, allowed_by)
ROWS = [
    (CallState.PROPOSED, "calculator", {"expression": "1 + 1"}, ""),
    (CallState.AWAITING, "calculator", {"expression": "2 + 2"}, ""),
    (CallState.RUNNING, "web_search", {"query": "MLX"}, "you (once)"),
    (CallState.DONE, "calculator", {"expression": "12 * 7"}, "auto policy"),
    (CallState.ERROR, "read_file", {"path": "/nope"}, "you (always, this session)"),
    (CallState.DENIED, "write_note", {"text": "hello"}, ""),
    (CallState.TIMEOUT, "web_search", {"query": "slow"}, "--yes"),
    (CallState.MALFORMED, "malformed call", {}, ""),
    (CallState.CANCELLED, "web_search", {"query": "stop"}, "saved always (config.toml)"),
    (CallState.INTERRUPTED, "calculator", {"expression": "3 ** 3"}, "auto-readonly (trusted server demo)"),
    (CallState.REPEATED, "calculator", {"expression": "12 * 7"}, ""),
]


NEVER_RAN = (
    CallState.PROPOSED,
    CallState.AWAITING,
    CallState.DENIED,
    CallState.MALFORMED,
    CallState.INTERRUPTED,
    CallState.REPEATED,
)


def test_rows_cover_every_call_state():
    assert {state for state, *_ in ROWS} == set(CallState)


def test_sidebar_with_every_call_state(snap_compare):
    """One row per call state, with who let it run in the "by" column; the calls table focused."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        for index, (state, tool, arguments, allowed_by) in enumerate(ROWS, 1):
            record = CallRecord(
                f"row-{index}",
                f"call_{index}",
                "" if state is CallState.MALFORMED else "demo",
                tool,
                arguments,
                AT,
                state=state,
                allowed_by=allowed_by,
                duration=None if state in NEVER_RAN else 0.12,
                raw='{"expression": 12 *' if state is CallState.MALFORMED else "",
            )
            app.calls_table.add_record(record)
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.calls_table, what="the calls table focused")
        await pilot.pause()

    assert snap_compare(make_app(ScriptedEngine([])), terminal_size=SIZE, run_before=run_before)


def test_keys_screen(snap_compare):
    """F1: every key, where it works."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the keys screen")
        await pilot.pause()

    assert snap_compare(make_app(ScriptedEngine([])), terminal_size=SIZE, run_before=run_before)


def test_main_screen_at_80x24(snap_compare):
    """Two turns on a small terminal: the sidebar narrow, its state column whole."""

    async def run_before(pilot) -> None:
        await start(pilot)
        await ask_and_approve(pilot, "what is 12 * 7?")
        await ask_and_approve(pilot, "search the web for MLX and MCP")

    assert snap_compare(make_app(conversation_engine()), terminal_size=(80, 24), run_before=run_before)


def proposal(
    call_id: str,
    tool: str,
    arguments: object,
    choice: str | None,
    allowed_by: str = "",
    status: str | None = None,
    content: str = "",
    started: bool = True,
    server: str = "demo",
) -> Proposal:
    """A call as a transcript keeps it; ``status`` None: no result (interrupted when ``started``)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": raw}}
    result = None if status is None else ToolResult(tool, call_id, status, content, server, 0.12 if started else None)
    return Proposal(call, choice, result, AT, AT if started else None, server, allowed_by)


def conversation_with_calls() -> Transcript:
    """Two exchanges: calls that ended each way a file records, then an answer."""
    return Transcript(
        [
            Exchange(
                "what is 12 * 7, and what is on the web about MLX?",
                "demo model",
                [
                    Step(
                        text="",
                        proposals=[
                            proposal(
                                "call_1",
                                "calculator",
                                {"expression": "12 * 7"},
                                "yo",
                                "you (once)",
                                "done",
                                "12 * 7 = 84",
                            ),
                            proposal(
                                "call_2",
                                "web_search",
                                {"query": "MLX"},
                                "auto",
                                "auto policy",
                                "timeout",
                                "Error (timeout): no answer in 30 s",
                            ),
                            proposal(
                                "call_3",
                                "read_file",
                                {"path": "/etc/shadow"},
                                "n",
                                status="denied",
                                content="The user denied this call.",
                                started=False,
                            ),
                        ],
                    ),
                    Step(text="12 * 7 = 84. The search took too long, and reading the file was denied."),
                ],
            ),
            Exchange(
                "try the search again",
                "demo model",
                [
                    Step(
                        text="",
                        proposals=[
                            proposal(
                                "call_4",
                                "malformed_tool_call",
                                '{"query": "MLX',
                                None,
                                status="malformed",
                                content="Error: the arguments are not JSON",
                                started=False,
                                server="",
                            ),
                            proposal(
                                "call_5",
                                "web_search",
                                {"query": "MLX"},
                                "yO",
                                "you (always, this session)",
                                "error",
                                "Error (tool): the corpus is not there",
                            ),
                        ],
                    ),
                    Step(text="The search failed: the corpus is not there."),
                ],
            ),
        ]
    )


@pytest.mark.parametrize("theme", THEMES)
def test_resumed_conversation_in_each_theme(snap_compare, tmp_path, theme):
    """A conversation loaded from its transcript (the cards in the chat, the rows in the sidebar, a
    state of each colour) in each theme shipped in themes/."""
    path = tmp_path / "chat.md"
    path.write_text(render(conversation_with_calls()), encoding="utf-8")
    app = make_app(
        ScriptedEngine([]),
        settings=Settings(theme=theme),
        transcript_file=path,
        transcript=parse(path.read_text(encoding="utf-8")),
    )

    async def run_before(pilot) -> None:
        await start(pilot)
        await wait_for(pilot, lambda: len(app.calls_table.records) == 5, what="the loaded calls")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_resume_screen(snap_compare, isolated_user_dirs):
    """The list of saved conversations, newest first."""
    from mcp_chat_tui.transcript import conversations_dir

    folder = conversations_dir()
    folder.mkdir(parents=True)
    older = folder / "2026-01-01-000000-older.md"
    older.write_text(render(Transcript([Exchange("an older question", "demo model", [Step(text="old")])])))
    newer = folder / "2026-01-02-120000-calc.md"
    newer.write_text(render(conversation_with_calls()))
    for day, file in ((1, older), (2, newer)):
        stamp = datetime(2026, 1, day, 12, 0).timestamp()
        os.utime(file, (stamp, stamp))

    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        app.action_resume()
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ResumeScreen) and app.screen.query("#conversations"),
            what="the resume screen",
        )
        await pilot.pause()

    assert snap_compare(make_app(ScriptedEngine([])), terminal_size=SIZE, run_before=run_before)

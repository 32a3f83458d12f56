"""Transcripts in use: saved after every event, survive SIGKILL, resume without re-running tools."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.demo.server import server as demo_server
from mcp_chat_tui.servers.notifications import instructions_prompt
from mcp_chat_tui.transcript import (
    Exchange,
    Proposal,
    Step,
    ToolResult,
    Transcript,
    parse,
    read_transcript_text,
    recent_conversations,
    render,
)
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests import cli_in_process
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import wait_until
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

TOP = Path(__file__).resolve().parent.parent
CALC = {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "12 * 7"}'}}


def finished_calculation() -> Transcript:
    return Transcript(
        [
            Exchange(
                "what is 12 * 7?",
                "demo model",
                [
                    Step(
                        text="",
                        proposals=[
                            Proposal(
                                CALC, "yo", ToolResult("calculator", "call_1", "done", "12 * 7 = 84", "demo", 0.01)
                            )
                        ],
                    ),
                    Step(text="12 * 7 = 84."),
                ],
            )
        ]
    )


async def test_a_turn_is_saved_with_choices_and_results(isolated_user_dirs):
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 84."])
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="dialog")
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        path = app.transcript_file
    assert path is not None and path.parent == isolated_user_dirs / "data" / "conversations"
    saved = parse(read_transcript_text(path))
    [exchange] = saved.exchanges
    assert exchange.user == "what is 12 * 7?" and exchange.model == "scripted"
    [proposal] = exchange.steps[0].proposals
    assert proposal.choice == "yo" and proposal.result.content == "12 * 7 = 84" and proposal.result.server == "demo"
    assert exchange.steps[1].text == "It is 84."
    assert [c.first_question for c in recent_conversations()] == ["what is 12 * 7?"]


async def test_resuming_rebuilds_the_prompt_from_the_file_without_calling_tools_again(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(render(finished_calculation()), encoding="utf-8")
    engine = ScriptedEngine(["85."])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "what is 12 * 7?" in chat_text(app) and "12 * 7 = 84." in chat_text(app)
        [record] = app.calls_table.records.values()
        assert record.tool == "calculator" and record.state is CallState.DONE
        await send(pilot, "and plus one?")
        await wait_turn_done(pilot, app)
    prompt = engine.prompts[-1]
    demo_instructions = instructions_prompt([("demo", demo_server.instructions or "")])
    assert prompt[0] == {"role": "system", "content": demo_instructions}
    assert prompt[1] == {"role": "user", "content": "what is 12 * 7?"}
    assert {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"} in prompt
    assert prompt[-1] == {"role": "user", "content": "and plus one?"}
    assert app.hub.status("demo").call_count == 0, "a tool the file already ran was run again"
    saved = parse(read_transcript_text(path))
    assert [e.user for e in saved.exchanges] == ["what is 12 * 7?", "and plus one?"]


async def test_a_file_ending_with_an_unanswered_proposal_reopens_the_dialog(tmp_path):
    open_call = Transcript([Exchange("what is 12 * 7?", "demo model", [Step(proposals=[Proposal(CALC)])])])
    path = tmp_path / "open.md"
    path.write_text(render(open_call), encoding="utf-8")
    engine = ScriptedEngine(["It is 84."])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)  # the start-up first: its own bound, not the dialog's
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the reopened dialog")
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: "It is 84." in chat_text(app), what="the answer")
    assert app.hub.status("demo").call_count == 1
    saved = parse(read_transcript_text(path))
    proposal = saved.exchanges[0].steps[0].proposals[0]
    assert proposal.choice == "yo" and proposal.result.content == "12 * 7 = 84"
    assert saved.exchanges[0].steps[-1].text == "It is 84."
    assert {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"} in engine.prompts[
        0
    ]


async def test_an_approved_proposal_without_result_asks_again_before_it_runs(tmp_path):
    approved = Transcript([Exchange("what is 12 * 7?", "demo model", [Step(proposals=[Proposal(CALC, "yo")])])])
    path = tmp_path / "approved.md"
    path.write_text(render(approved), encoding="utf-8")
    app = make_app(ScriptedEngine(["84"]), transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)  # the start-up first: its own bound, not the dialog's
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the question")
        assert app.hub.status("demo").call_count == 0, "the file's yes ran the tool"
        await pilot.press("y")
        await wait_for(pilot, lambda: app.hub.status("demo").call_count == 1, what="the call")
        await wait_turn_done(pilot, app)


def test_sigkill_mid_turn_loses_nothing_before_the_kill(tmp_path, isolated_user_dirs):
    path = tmp_path / "killed.md"
    env = dict(
        os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(isolated_user_dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")}
    )
    process = subprocess.Popen(
        [sys.executable, str(TOP / "tests" / "apps" / "scripted_plain.py"), str(path), "please wait a minute"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_until(lambda: started_calls(path), 60), "the call was never recorded as started"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    saved = parse(read_transcript_text(path), path)
    [exchange] = saved.exchanges
    assert exchange.user == "please wait a minute" and exchange.model == "scripted"
    step = exchange.steps[0]
    assert step.text == "Let me wait as you asked, one moment please. "
    [proposal] = step.proposals
    assert proposal.name == "sleep" and proposal.arguments == {"seconds": 60} and proposal.choice == "auto"
    assert proposal.result is None and proposal.interrupted


def started_calls(path: Path) -> list[Proposal]:
    """The calls the transcript file records as sent to their server (the file is replaced whole)."""
    if not path.exists():
        return []
    saved = parse(read_transcript_text(path), path)
    return [p for e in saved.exchanges for step in e.steps for p in step.proposals if p.started_at is not None]


def test_a_bad_transcript_stops_the_cli_with_the_line_and_is_not_overwritten(tmp_path, isolated_user_dirs):
    bad = tmp_path / "bad.md"
    text = "💬: hello\n\n🤖:[m]\n\n❓:[yo] `{not json}`\n"
    bad.write_text(text, encoding="utf-8")
    env = dict(
        os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(isolated_user_dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")}
    )
    # in this process (tests/cli_in_process.py): its words, exit code and the file are checked
    result = cli_in_process.run_cli(["--demo", "--plain", "--transcript", str(bad)], cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert f"{bad}: line 5:" in result.stderr and "JSON is broken" in result.stderr
    assert bad.read_text(encoding="utf-8") == text


async def test_a_long_conversation_shows_its_last_exchanges_and_says_so(tmp_path):
    from mcp_chat_tui.ui.widgets.chat import MAX_EXCHANGES_SHOWN, UserMessage

    long = Transcript(
        [Exchange(f"question {i}", "m", [Step(text=f"answer {i}")]) for i in range(MAX_EXCHANGES_SHOWN + 5)]
    )
    path = tmp_path / "long.md"
    path.write_text(render(long), encoding="utf-8")
    engine = ScriptedEngine(["fine"])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        shown = [w.prompt for w in app.query(UserMessage)]
        assert shown[0] == "question 5" and len(shown) == MAX_EXCHANGES_SHOWN
        assert "5 earlier exchanges not shown" in chat_text(app)
        await send(pilot, "one more")
        await wait_turn_done(pilot, app)
    # The model still gets the conversation from the agent, not from the screen (the older
    # exchanges as their summaries, written on load: tests/test_summaries_app.py).
    turn_prompt = next(p for p in reversed(engine.prompts) if p[-1] == {"role": "user", "content": "one more"})
    assert {"role": "user", "content": "question 19"} in turn_prompt


async def test_the_resume_screen_lists_saved_conversations_and_opens_one(isolated_user_dirs):
    from mcp_chat_tui.transcript import conversations_dir
    from mcp_chat_tui.ui.screens.conversations import ResumeScreen

    folder = conversations_dir()
    folder.mkdir(parents=True)
    (folder / "2026-01-01-000000-older.md").write_text(
        render(Transcript([Exchange("an older question", "m", [Step(text="old")])]))
    )
    (folder / "2026-01-02-000000-calc.md").write_text(render(finished_calculation()))
    app = make_app(ScriptedEngine(["85."]), autosave=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.action_resume()
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ResumeScreen) and app.screen.query("#conversations"),
            what="the resume screen",
        )
        table = app.screen.query_one("#conversations")
        questions = {str(table.get_row_at(i)[0]) for i in range(table.row_count)}
        assert questions == {"what is 12 * 7?", "an older question"}
        target = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]) == "what is 12 * 7?")
        table.move_cursor(row=target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "12 * 7 = 84." in chat_text(app), what="the resumed chat")
        assert app.transcript_file.name == "2026-01-02-000000-calc.md"
        await send(pilot, "and plus one?")
        await wait_turn_done(pilot, app)
    saved = parse(read_transcript_text(folder / "2026-01-02-000000-calc.md"))
    assert [e.user for e in saved.exchanges] == ["what is 12 * 7?", "and plus one?"]


async def test_export_writes_the_transcript_where_asked_and_reports_a_bad_path(tmp_path):
    from mcp_chat_tui.ui.screens.conversations import ExportScreen

    app = make_app(ScriptedEngine(["hello there"]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        target = tmp_path / "copy.md"
        blocker = tmp_path / "a-file"
        blocker.write_text("not a folder")
        # Each notice is checked as it shows: a notice leaves after 5 s, and on a loaded machine the
        # second export took longer than that, so the first was gone by the end.
        for destination, notice in ((blocker / "copy.md", "cannot write"), (target, "transcript exported to")):
            app.action_export()
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"),
                what="the export dialog",
            )
            app.screen.query_one("#export-path").value = str(destination)
            await pilot.press("enter")
            expected = f"{notice} {destination}"  # naming the path asked for
            await wait_for(
                pilot, lambda: any(expected in str(n.message) for n in app._notifications), what=f"{expected!r}"
            )
    exported = parse(read_transcript_text(target))
    assert exported.exchanges[0].user == "hi" and exported.exchanges[0].steps[0].text == "hello there"


async def test_resuming_text_before_a_tool_call_shows_both(tmp_path):
    conversation = Transcript(
        [
            Exchange(
                "what is 12 * 7?",
                "demo model",
                [
                    Step(
                        text="Let me calculate.",
                        proposals=[
                            Proposal(
                                CALC, "yo", ToolResult("calculator", "call_1", "done", "12 * 7 = 84", "demo", 0.01)
                            )
                        ],
                    ),
                    Step(text="84."),
                ],
            )
        ]
    )
    path = tmp_path / "text-then-call.md"
    path.write_text(render(conversation), encoding="utf-8")
    app = make_app(ScriptedEngine([]), transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "Let me calculate." in chat_text(app) and "84." in chat_text(app)

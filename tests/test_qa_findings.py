"""Problems found by using the app as a person would: each test shows one, with real parts, and is
expected to fail until the problem is fixed (``xfail(strict=True)``: a fix makes it pass, and then
the mark must go)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.transcript import (
    Exchange,
    Proposal,
    Step,
    ToolResult,
    Transcript,
    parse,
    read_transcript_text,
    render,
)
from mcp_chat_tui.transcript.store import describe
from mcp_chat_tui.ui.records import CallState
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.fakes import ScriptedEngine, call
from tests.helpers import wait_until
from tests.scripted_endpoint import ScriptedEndpoint
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready, wait_turn_done

TOP = Path(__file__).resolve().parent.parent
CALC = {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "12 * 7"}'}}


def user_dirs_env(dirs: Path) -> dict[str, str]:
    return dict(os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")})


@pytest.mark.xfail(
    strict=True,
    reason="a file that ends with a tool result and no reply (the app was killed right after the result) "
    "is resumed as a finished turn: the model never answers the result and nothing says so "
    "(Transcript.pending_proposals only looks for proposals without a result; "
    "ui/conversation_actions.py _show_transcript)",
)
async def test_a_file_ending_with_a_result_and_no_reply_lets_the_model_answer_it(tmp_path):
    killed_after_result = Transcript(
        [
            Exchange(
                "what is 12 * 7?",
                "demo model",
                [
                    Step(
                        proposals=[
                            Proposal(
                                CALC, "yo", ToolResult("calculator", "call_1", "done", "12 * 7 = 84", "demo", 0.01)
                            )
                        ]
                    )
                ],
            )
        ]
    )
    path = tmp_path / "after-result.md"
    path.write_text(render(killed_after_result), encoding="utf-8")
    engine = ScriptedEngine(["It is 84."])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: "It is 84." in chat_text(app), timeout=10, what="the model's answer")
        await wait_turn_done(pilot, app)
    assert app.hub.status("demo").call_count == 0, "the call the file finished was run again"
    prompt = engine.prompts[0]
    assert prompt[-1] == {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"}
    assert parse(read_transcript_text(path)).exchanges[0].steps[-1].text == "It is 84."


@pytest.mark.xfail(
    strict=True,
    reason="a reply cut by SIGKILL while it streams is saved exactly like a finished one, so the resumed "
    "conversation shows the cut text as the model's whole answer (transcript/recorder.py writes no "
    "'still streaming' mark that loading could turn into 'cut short')",
)
def test_a_reply_cut_by_sigkill_is_saved_as_not_finished(tmp_path, isolated_user_dirs):
    path = tmp_path / "killed.md"
    process = subprocess.Popen(
        [sys.executable, str(TOP / "tests" / "apps" / "slow_reply_plain.py"), str(path), "tell me a long story"],
        env=user_dirs_env(isolated_user_dirs),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def reply_under_way() -> bool:
        return path.exists() and "word10 " in read_transcript_text(path)

    try:
        assert wait_until(reply_under_way, 60), "the reply never reached the file"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    [exchange] = parse(read_transcript_text(path), path).exchanges
    assert "word399" not in exchange.steps[-1].text, "the reply finished before the kill: the test proves nothing"
    assert exchange.end is not None, "the cut reply reads back as a finished answer"


@pytest.mark.xfail(
    strict=True,
    reason="transcript/store.py describe() strips only '[]' from the first reply's header, so a reply "
    'stopped with Esc (🤖:[model] {"end": "stopped"}) lists its model as \'model] {"end": "stopped"}\' '
    "on the resume screen (so does any reply with non-default settings, whose header carries them)",
)
def test_the_resume_list_names_the_model_of_a_conversation_whose_first_reply_was_stopped(tmp_path):
    stopped = Transcript([Exchange("tell me a story", "demo model", [Step(text="Once upon")])])
    stopped.exchanges[0].end = "stopped"
    path = tmp_path / "stopped.md"
    path.write_text(render(stopped), encoding="utf-8")
    assert '{"end": "stopped"}' in path.read_text(encoding="utf-8"), "the file does not record the stop"
    assert describe(path).model == "demo model"


@pytest.mark.xfail(
    strict=True,
    reason="ui/conversation_actions.py _show_save_problem notifies when the problem text changes, and "
    "transcript/store.py save_problem puts the random temporary file's name in it: every save and every "
    "retry (each 2 s) pops a new error toast, which covers the approval dialog at 60x16",
)
async def test_a_conversation_that_cannot_be_saved_is_said_once(tmp_path):
    # The file's name fits the file system, but its temporary neighbour's (14 characters longer) does not.
    path = tmp_path / ("c" * 245 + ".md")
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 84."])
    app = make_app(engine, transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        await pilot.press("y")
        await wait_turn_done(pilot, app)
        assert app.recorder.saver is not None and not app.recorder.saver.flush(), "the file could be saved"
        await wait_for(pilot, lambda: app.status_bar.save_problem, what="the save problem in the status bar")
        await pilot.pause()
        toasts = [n for n in app._notifications if n.title == "conversation not saved"]
    assert len(toasts) == 1, f"{len(toasts)} toasts for one problem: {[n.message for n in toasts]}"


@pytest.mark.xfail(
    strict=True,
    reason="ui/screens/approval.py: at 60x16 the arguments come last in the scrolling body and the docked "
    "keys cover them: the dialog opens showing the tool's description and only the arguments' first line "
    "('{'), so y approves arguments the user has not seen unless they scroll first",
)
async def test_the_approval_dialog_at_60x16_opens_with_the_arguments_in_view():
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 84."])
    app = make_app(engine)
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query("#approval-arguments"),
            what="the dialog",
        )
        await pilot.pause()
        arguments = app.screen.query_one("#approval-arguments").region
        keys = app.screen.query_one("#approval-keys").region
    assert arguments.height >= 3, f"the arguments are not all shown: {arguments}"
    assert arguments.bottom <= keys.y, f"the keys ({keys}) cover the arguments ({arguments})"


@pytest.mark.xfail(
    strict=True,
    reason="ui/conversation_actions.py action_export writes over a file that is already at the path typed "
    "(any file: notes, another conversation, one open in another instance) without asking",
)
async def test_export_does_not_write_over_a_file_without_asking(tmp_path):
    from mcp_chat_tui.ui.screens.conversations import ExportScreen

    precious = tmp_path / "notes.md"
    precious.write_text("my own notes\n", encoding="utf-8")
    app = make_app(ScriptedEngine(["Hello."]), transcript_file=tmp_path / "chat.md")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        app.action_export()
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"),
            what="the export dialog",
        )
        app.screen.query_one("#export-path").value = str(precious)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
    assert precious.read_text(encoding="utf-8") == "my own notes\n", "the file was replaced without a question"


@pytest.mark.xfail(
    strict=True,
    reason="'Clear the chat' (command palette) while a call runs crashes the app with IndexError: "
    "agent/loop.py Agent.clear() stops the turn and empties self.turns at once, then the stopped turn's "
    "_close_stopped reads self.turns[-1] (ui/app.py action_clear_chat)",
)
async def test_clearing_the_chat_while_a_call_runs_stops_the_call_and_the_app_goes_on():
    engine = ScriptedEngine([[call("sleep", {"seconds": 30})], "never said", "Hello again."])
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sleep for 30 seconds")
        await wait_for(
            pilot,
            lambda: any(r.state is CallState.RUNNING for r in app.calls_table.records.values()),
            what="the call running",
        )
        await app.action_clear_chat()
        await wait_for(pilot, lambda: not app._turn_running, what="the stopped turn to end")
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        assert "Hello again." in chat_text(app)


async def test_a_prompt_sent_while_its_resource_is_read_still_carries_the_resource(tmp_path):
    from textual.widgets import Input

    from mcp_chat_tui.ui.widgets.completion import CompletionMenu

    gate = tmp_path / "gate"
    server = ServerConfig(
        name="slow",
        type="stdio",
        command=sys.executable,
        args=[str(TOP / "tests" / "servers" / "slow_resource_server.py"), "--gate", str(gate)],
    )
    engine = ScriptedEngine(["Read it.", "Next."])
    app = make_app(engine, [server])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"look at @ga")
        menu = app.query_one(CompletionMenu)
        await wait_for(pilot, lambda: menu.is_open and [c.name for c in menu.candidates] == ["@gate"], what="@gate")
        await pilot.press("tab")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.value.startswith("look at @gate"), what="the word taken")
        await pilot.press("enter")  # the read has not ended: the gate file is not there yet
        await pilot.pause()
        gate.write_text("open")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: not app.workers or all(w.is_finished for w in app.workers), what="the read")
        await send(pilot, "and then?")
        await wait_turn_done(pilot, app)
    sent = [message for messages in engine.prompts for message in messages if message["role"] == "user"]
    assert any("the gated contents" in str(message["content"]) for message in sent), (
        "the resource never reached the model"
    )


def test_a_prompt_on_stdin_that_is_not_utf8_gets_a_clear_answer_not_a_traceback(tmp_path, isolated_user_dirs):
    config = tmp_path / "servers.json"
    config.write_text('{"servers": {}}')
    with ScriptedEndpoint(["An answer."]) as endpoint:
        result = subprocess.run(
            [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", endpoint.url, "scripted"]
            + ["--mcp-config", str(config), "-p", "-", "--no-save"],
            cwd=tmp_path,
            env=user_dirs_env(isolated_user_dirs),
            input="caf\xe9 au lait?\n".encode("latin-1"),
            capture_output=True,
            timeout=120,
        )
    stderr = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-600:]
    assert result.returncode in (0, 2), stderr[-600:]

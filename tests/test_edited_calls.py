"""A call the user edits before it runs: it runs with the user's arguments, the model is told so and
to what, who allowed it says "edited", and the conversation file keeps both the model's arguments
and the ones that ran (resume shows them)."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.approval import EDITED_LABEL
from mcp_chat_tui.agent.events import ApprovalChoice, ApprovalDecision, CallDecided, CallFinished
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import parse
from mcp_chat_tui.transcript.recorder import TranscriptRecorder
from mcp_chat_tui.transcript.render import render
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.test_agent import Recorder

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


async def test_an_edited_call_runs_with_the_users_arguments_and_the_model_is_told():
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 96."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        sink = Recorder(ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments={"expression": "12 * 8"}))
        await agent.run_turn("what is 12 * 7?", sink)
    [decided] = sink.of(CallDecided)
    assert decided.allowed_by == EDITED_LABEL and decided.ran_with == {"expression": "12 * 8"}
    assert decided.call.arguments == {"expression": "12 * 7"}  # the model's own, kept
    [finished] = sink.of(CallFinished)
    assert finished.status == CallState.DONE and finished.result.text == "12 * 8 = 96"
    told = [m["content"] for m in engine.prompts[1] if m["role"] == "tool"]
    assert told == [
        'The user edited this call\'s arguments before it ran; it ran with: {"expression": "12 * 8"}\n\n12 * 8 = 96'
    ]


async def test_arguments_given_back_unchanged_are_no_edit():
    engine = ScriptedEngine([[call("calculator", {"expression": "1 + 1"})], "2."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        sink = Recorder(ApprovalDecision(ApprovalChoice.ALLOW_ONCE, arguments={"expression": "1 + 1"}))
        await agent.run_turn("1 + 1?", sink)
    [decided] = sink.of(CallDecided)
    assert decided.allowed_by == "you (once)" and decided.ran_with is None


def test_the_file_keeps_the_models_arguments_and_the_ones_that_ran():
    recorder = TranscriptRecorder()
    recorder.user("what is 12 * 7?")
    proposal = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "calculator", "arguments": json.dumps({"expression": "12 * 7"})},
    }
    recorder.proposed(proposal)
    recorder.chose("call_1", ApprovalChoice.ALLOW_ONCE.value, EDITED_LABEL, {"expression": "12 * 8"})
    again = parse(render(recorder.transcript))
    [kept] = again.exchanges[0].steps[0].proposals
    assert kept.ran_with == {"expression": "12 * 8"} and kept.allowed_by == EDITED_LABEL
    assert json.loads(kept.call["function"]["arguments"]) == {"expression": "12 * 7"}


async def test_e_in_the_dialog_edits_the_arguments_refuses_what_the_schema_refuses_and_runs_the_edit(tmp_path):
    from textual.widgets import Static, TextArea

    from mcp_chat_tui.transcript.media import read_conversation
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from mcp_chat_tui.ui.screens.edit_arguments import EditArgumentsScreen
    from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

    path = tmp_path / "chat.md"
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 96."])
    app = make_app(engine, [demo_config()], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditArgumentsScreen), what="the editor")
        await pilot.press("ctrl+o")  # the form opens first: the whole arguments as JSON
        await wait_for(pilot, lambda: app.screen.query_one(TextArea).display, what="the JSON view")
        editor = app.screen.query_one(TextArea)
        assert json.loads(editor.text) == {"expression": "12 * 7"}
        assert "expression *" in str(app.screen.query_one("#edit-arguments-schema", Static).render())
        problem = app.screen.query_one("#edit-arguments-problem", Static)
        for bad, said in (
            ('{"expression": ', "not JSON"),
            ("{}", "the tool's schema refuses them: 'expression' is a required property"),
        ):
            editor.load_text(bad)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda said=said: str(problem.render()).startswith(said), what=said)
            assert isinstance(app.screen, EditArgumentsScreen)
        editor.load_text('{"expression": "12 * 8"}')
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        [record] = app.calls_table.records.values()
        [key] = app.calls_table.records
        assert str(app.calls_table.get_cell(key, "by")) == "you·edited"
        assert record.arguments == {"expression": "12 * 7"} and record.ran_with == {"expression": "12 * 8"}
    told = [m["content"] for m in engine.prompts[1] if m["role"] == "tool"]
    assert told[0].endswith('it ran with: {"expression": "12 * 8"}\n\n12 * 8 = 96')
    [proposal] = read_conversation(path).exchanges[0].steps[0].proposals
    assert proposal.ran_with == {"expression": "12 * 8"} and proposal.allowed_by == EDITED_LABEL
    resumed = make_app(ScriptedEngine([]), [demo_config()], transcript_file=path, transcript=read_conversation(path))
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        [record] = resumed.calls_table.records.values()
        assert record.ran_with == {"expression": "12 * 8"} and record.allowed_by == EDITED_LABEL


def test_e_at_the_plain_approval_question_takes_json_checks_it_and_runs_the_edit(tmp_path, isolated_user_dirs):
    from tests.helpers import wait_until
    from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
    from tests.test_call_lifecycle import CLI, cli_env
    from tests.test_oneshot import demo_servers
    from tests.test_tui_exit import Terminal

    script = [tool_reply("calculator", {"expression": "12 * 7"}), "It is 96."]
    env = dict(cli_env(isolated_user_dirs), TERM="dumb")
    with ScriptedEndpoint(script) as endpoint:
        argv = [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(demo_servers(tmp_path))]
        terminal = Terminal([*argv, "--plain", "--no-save"], tmp_path, env)
        try:
            assert wait_until(lambda: "prompt ->" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(b"what is 12 * 7?\r")
            assert wait_until(lambda: "e edit the arguments" in " ".join(terminal.text().split()), 30), terminal.text()[
                -2000:
            ]
            terminal.press(b"e\r")
            assert wait_until(lambda: "the arguments as one line of JSON" in terminal.text(), 30), terminal.text()[
                -2000:
            ]
            terminal.press(b"{}\r")
            assert wait_until(lambda: "'expression' is a required property" in terminal.text(), 30)
            terminal.press(b'{"expression": "12 * 8"}\r')
            assert wait_until(lambda: "It is 96." in terminal.text(), 30), terminal.text()[-2000:]
            terminal.press(b"bye\r")
            assert wait_until(lambda: terminal.status is not None, 30), terminal.text()[-2000:]
        finally:
            terminal.close()
    told = [m["content"] for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert told == [
        'The user edited this call\'s arguments before it ran; it ran with: {"expression": "12 * 8"}\n\n12 * 8 = 96'
    ]


def test_a_resumed_conversation_in_plain_shows_the_models_arguments_and_the_ones_that_ran(tmp_path, isolated_user_dirs):
    from mcp_chat_tui.transcript import ToolResult
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    recorder = TranscriptRecorder()
    recorder.user("what is 12 * 7?")
    recorder.reply_started("scripted")
    call_json = {"expression": "12 * 7"}
    recorder.proposed(
        {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": json.dumps(call_json)}}
    )
    recorder.chose("call_1", ApprovalChoice.ALLOW_ONCE.value, EDITED_LABEL, {"expression": "12 * 8"})
    recorder.finished(ToolResult(name="calculator", call_id="call_1", status="done", content="12 * 8 = 96"))
    recorder.text("It is 96.")
    recorder.turn_ended()
    path = tmp_path / "chat.md"
    path.write_text(render(recorder.transcript), encoding="utf-8")
    (tmp_path / "mcp.json").write_text('{"servers": {}}')
    with ScriptedEndpoint([]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--plain", "--transcript", str(path),
            cwd=tmp_path, dirs=isolated_user_dirs, stdin="bye\n",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert (
        '⚙ calculator { "expression": "12 * 7" }, ran with { "expression": "12 * 8" } (edited by you) → done' in said
    ), said

"""``tool_prompt = "text"`` and ``--tool-prompt text`` end to end: the real CLI and the real app behind a
scripted endpoint, the demo server a real MCP process. The request carries no ``tools``; the system
prompt describes them; a ``<tool_call>`` in the reply's text goes through approval and the sidebar."""

from __future__ import annotations

import pytest

from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.remote import OpenAIEngine
from mcp_chat_tui.engine.text_tools import CALL_SHAPE
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_oneshot import ANSWER, QUESTION, one_shot, saved_conversations
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

CALL = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call>'
SCRIPT = [f"Let me compute that.\n{CALL}", ANSWER]
DEMO_TOOLS = ("calculator", "current_time", "convert_units", "web_search", "read_file", "sleep")
NOTICE = 'scripted: the tools are described in text in the system prompt (tool_prompt = "text").'


def assert_tools_in_text(request: dict) -> None:
    """The request describes the demo server's tools in its system prompt, and sends none as ``tools``."""
    assert "tools" not in request
    system = request["messages"][0]
    assert system["role"] == "system" and "# Tools\n" in system["content"]
    for name in DEMO_TOOLS:
        assert f"\n## {name}\n" in system["content"]
    assert f":\n{CALL_SHAPE}\n" in system["content"]


def test_config_toml_text_sends_no_tools_and_runs_the_call_written_in_the_reply(tmp_path, isolated_user_dirs):
    config = tmp_path / "config.toml"
    config.write_text('[model]\ntool_prompt = "text"\n', encoding="utf-8")
    with ScriptedEndpoint(SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--config", str(config), "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    assert NOTICE in result.stderr and "✓ calculator done" in result.stderr
    first, second = endpoint.requests
    assert_tools_in_text(first)
    assert_tools_in_text(second)
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": f"Let me compute that.\n{CALL}"},
        {"role": "user", "content": "<tool_response>\n12 * 7 = 84\n</tool_response>"},
    ]
    [saved] = saved_conversations(isolated_user_dirs)  # recorded like any other call
    [proposal] = parse(read_transcript_text(saved)).exchanges[0].steps[0].proposals
    assert (proposal.choice, proposal.arguments) == ("auto", {"expression": "12 * 7"})


def test_the_flag_is_over_config_toml_and_the_call_still_needs_a_yes(tmp_path, isolated_user_dirs):
    config = tmp_path / "config.toml"
    config.write_text('[model]\ntool_prompt = "template"\n', encoding="utf-8")
    with ScriptedEndpoint([SCRIPT[0], "I could not run it."]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--config", str(config), "--tool-prompt", "text")
    assert result.returncode == 3, result.stderr
    assert "no terminal to ask: call denied (use --yes to allow calls)" in result.stderr
    assert "⊘ calculator denied" in result.stderr
    assert_tools_in_text(endpoint.requests[0])


def test_by_default_the_tools_go_in_the_request(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["No tools needed."]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, prompt=QUESTION)
    assert result.returncode == 0, result.stderr
    [request] = endpoint.requests
    assert {tool["function"]["name"] for tool in request["tools"]} >= set(DEMO_TOOLS)
    assert "# Tools" not in str(request["messages"]) and "tools are described in text" not in result.stderr


def test_a_bad_tool_prompt_flag_is_exit_2(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--tool-prompt", "txt")
        assert endpoint.requests == []
    assert result.returncode == 2 and result.stdout == ""
    assert "argument --tool-prompt: invalid choice: 'txt' (choose from 'template', 'text')" in result.stderr


async def test_in_the_app_the_call_asks_runs_and_shows_in_the_sidebar():
    with ScriptedEndpoint(SCRIPT) as endpoint:
        app = make_app(OpenAIEngine(endpoint.url, "scripted", tool_prompt="text"))
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, app)
            await send(pilot, QUESTION)
            await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
            assert app.screen.call.model_name == "calculator"
            assert app.screen.call.arguments == {"expression": "12 * 7"}
            await pilot.press("y")
            await wait_turn_done(pilot, app)
            [record] = app.calls_table.records.values()
            assert (record.tool, record.state) == ("calculator", CallState.DONE)
            assert record.content_for_model == "12 * 7 = 84"
            shown = chat_text(app)
            assert NOTICE in shown and ANSWER in shown and "<tool_call>" not in shown
    assert_tools_in_text(endpoint.requests[0])
    assert endpoint.requests[1]["messages"][-1]["content"] == "<tool_response>\n12 * 7 = 84\n</tool_response>"

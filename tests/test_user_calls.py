"""``/call server:tool key=value``: the tool found, each value read as its schema's type, the
arguments checked against the real demo server's schemas, and the call's attachment."""

from __future__ import annotations

import pytest

from mcp_chat_tui.core.attachments import CALL, user_content
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.user_calls import CallCommandError, call_attachment, is_call_command, parse_call
from tests.helpers import demo_config


@pytest.fixture
async def demo_tools():
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        yield [spec for spec in hub.tools() if spec.server == "demo"]


async def test_values_are_read_as_their_schemas_types(demo_tools):
    spec, arguments = parse_call('/call demo:convert_units value=12.5 from_unit=km to_unit="miles"', demo_tools)
    assert (spec.name, arguments) == ("convert_units", {"value": 12.5, "from_unit": "km", "to_unit": "miles"})
    spec, arguments = parse_call("/call calculator 'expression=12 * 7'", demo_tools)  # one server has it
    assert (spec.server, spec.name, arguments) == ("demo", "calculator", {"expression": "12 * 7"})
    assert is_call_command("/call demo:calculator") and not is_call_command("/caller x")


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/call", "give the tool: /call server:tool key=value"),
        ("/call demo:calculater", "no tool demo:calculater; did you mean demo:calculator?"),
        ("/call demo:calculator 12*7", "'12*7' is not key=value: give arguments as name=value (expression)"),
        ("/call demo:calculator expr=1", "demo:calculator has no argument 'expr'; its arguments: expression"),
        ("/call demo:convert_units value=twelve from_unit=km to_unit=mi", "value='twelve': value is number"),
        (
            "/call demo:convert_units value=12",
            "demo:convert_units refuses these arguments: 'from_unit' is a required property",
        ),
        ("/call demo:calculator 'expression=1", "cannot read the command: No closing quotation (close the quotes)"),
    ],
)
async def test_a_bad_call_says_what_is_wrong_and_what_to_do(demo_tools, typed, said):
    with pytest.raises(CallCommandError) as caught:
        parse_call(typed, demo_tools)
    assert str(caught.value).startswith(said), str(caught.value)


async def test_the_call_goes_with_the_next_message_as_an_attachment(demo_tools):
    spec, arguments = parse_call("/call demo:calculator 'expression=12 * 7'", demo_tools)
    attachment = call_attachment(spec, arguments, "12 * 7 = 84", ok=True)
    assert attachment.kind == CALL and attachment.label() == 'you called demo › calculator(expression="12 * 7")'
    told = user_content("what does it mean?", [attachment])
    assert told == 'what does it mean?\n\n[attached: you called demo › calculator(expression="12 * 7")]\n12 * 7 = 84'
    assert call_attachment(spec, arguments, "division by zero", ok=False).text == "[error] division by zero"


def test_plain_call_prints_the_result_and_sends_it_with_the_next_message(tmp_path, isolated_user_dirs):
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import demo_servers, run_cli

    typed = "/call demo:calculator 'expression=12 * 7'\n/call demo:nope\nwhat does it say?\nbye\n"
    with ScriptedEndpoint(["It says 84."]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(demo_servers(tmp_path)),
            "--plain", "--no-save", cwd=tmp_path, dirs=isolated_user_dirs, stdin=typed,
        )  # fmt: skip
        requests = endpoint.requests
    said = " ".join(result.stdout.split())
    assert result.returncode == 0, result.stderr
    assert "12 * 7 = 84" in said and "(goes with your next message)" in said
    assert "no tool demo:nope" in " ".join((result.stdout + result.stderr).split())
    [request] = requests  # the calls went to the server, not to the model
    assert request["messages"][-1]["content"] == (
        'what does it say?\n\n[attached: you called demo › calculator(expression="12 * 7")]\n12 * 7 = 84'
    )


async def test_call_typed_in_the_app_runs_and_attaches_and_a_bad_one_is_put_back():
    from textual.widgets import Input

    from mcp_chat_tui.ui.screens.detail import TextScreen
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready

    app = make_app(ScriptedEngine([]), [demo_config()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        prompt = app.query_one("#prompt", Input)
        await send(pilot, "/call demo:calculater expression=1")
        await wait_for(pilot, lambda: prompt.value == "/call demo:calculater expression=1", what="the line put back")
        prompt.value = ""
        await send(pilot, "/call demo:calculator expression=2*21")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the result")
        assert app.screen.body == "2*21 = 42"
        assert prompt.value == "@demo:calculator " and prompt.attached[0][1].kind == CALL

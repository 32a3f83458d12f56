"""A dialog never outlives what it answers, and a person's time in it is no call's (issue 33).

The real app under Pilot with a scripted model; the form server (tests/servers/form_server.py,
the SDK's MCPServer) in this process, with only the 2025-11-25 handshake where the server itself
must give up on its request (that request path), as a process with ``MCT_REAL_SERVERS=1``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.ui.call_records import CallState
from mcp_chat_tui.ui.screens.requests import ElicitFormScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import REAL_SERVERS, StreamsServer, in_process_config, server_module
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

FORM_SERVER = str(Path(__file__).parent / "servers" / "form_server.py")
TYPED = "Zebulon-typed"  # a name no test sends otherwise: typed key by key into the form, then looked for


def form_config(*flags: str, timeout: float = 1.0, impatient: Path | None = None) -> ServerConfig:
    """tests/servers/form_server.py in this process (``impatient``: only the 2025-11-25 handshake, on
    memory streams, the server giving up on its form once a file is at that path), or a process of
    its own with ``MCT_REAL_SERVERS=1``."""
    if impatient is not None:
        flags = ("--legacy", "--impatient", str(impatient), *flags)
    config = ServerConfig(
        name="forms", type="stdio", command=sys.executable, args=[FORM_SERVER, *flags], timeout=timeout
    )
    if REAL_SERVERS:
        return config
    if impatient is None:
        return in_process_config(config, lambda: server_module(FORM_SERVER).build())

    def legacy() -> StreamsServer:
        module = server_module(FORM_SERVER)
        server = module.build(impatient)
        return StreamsServer(lambda read, write: module.serve_legacy_on(server, read, write))

    return in_process_config(config, legacy)


def form_app(config: ServerConfig):
    engine = ScriptedEngine([[call("register", {})], "Final."])
    return make_app(engine, [config], policy=ApprovalPolicy("auto")), engine


def the_record(app):
    return next(iter(app.calls_table.records.values()))


async def open_form_and_type(pilot) -> ElicitFormScreen:
    await send(pilot, "register me")
    await wait_for(pilot, lambda: dialog_armed(pilot.app, ElicitFormScreen), what="the form")
    form = pilot.app.screen
    await pilot.press(*TYPED)
    assert form.query_one("#field-0", Input).value == TYPED
    return form


def notices(app) -> str:
    return "\n".join(str(notification.message) for notification in app._notifications)


async def test_time_in_a_form_is_not_the_calls_and_its_timeout_resumes_after():
    # 2 s, not 1: once the form is sent the call's clock runs again, and the answer's way back through
    # an app on a loaded machine must fit in it (it failed once in an everyday loop beside stress --cpu 2).
    # What the test is about is the time in the form: twice the timeout, whatever it is.
    timeout = 2.0
    app, engine = form_app(form_config(timeout=timeout))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_form_and_type(pilot)
        opened = time.monotonic()
        await wait_for(pilot, lambda: time.monotonic() - opened > 2 * timeout, what="twice the call's timeout")
        assert isinstance(app.screen, ElicitFormScreen)  # still open, and still what the call waits for
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        record = the_record(app)
        assert record.state == CallState.DONE, record.content_for_model
        assert json.loads(record.content_for_model)["content"] == {"name": TYPED}


async def test_a_form_closes_at_once_when_its_call_is_stopped_and_nothing_typed_is_sent():
    app, engine = form_app(form_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_form_and_type(pilot)
        app.action_stop()  # what Esc does in the chat
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitFormScreen), 5, "the form to close")
        await wait_for(pilot, lambda: "forms's form closed" in notices(app), what="the notice")
        assert "the call of register was stopped" in notices(app) and "Nothing typed in it was sent" in notices(app)
        await wait_turn_done(pilot, app)
        assert the_record(app).state == CallState.CANCELLED
        assert TYPED not in app.recorder.rendered() and TYPED not in json.dumps(engine.prompts)


async def test_a_form_closes_when_the_conversation_is_cleared():
    app, engine = form_app(form_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_form_and_type(pilot)
        app.run_worker(app.action_clear_chat())
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitFormScreen), 5, "the form to close")
        await wait_for(pilot, lambda: "forms's form closed" in notices(app), what="the notice")
        assert TYPED not in json.dumps(engine.prompts)


async def test_a_form_closes_when_its_server_restarts():
    app, engine = form_app(form_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_form_and_type(pilot)
        app.run_worker(app.hub.restart("forms"))
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitFormScreen), 10, "the form to close")
        await wait_for(pilot, lambda: "forms's form closed" in notices(app), what="the notice")
        await wait_turn_done(pilot, app)
        assert TYPED not in json.dumps(engine.prompts) and TYPED not in app.recorder.rendered()


async def test_a_form_the_server_takes_back_closes_at_once_saying_so(tmp_path):
    """The server takes its form back once it is told to (a file appears), after the typing: a
    server's clock running out during the typing is no state a test can wait on."""
    give_up = tmp_path / "give-up"
    config = form_config(impatient=give_up, timeout=60)
    app, engine = form_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await open_form_and_type(pilot)
        give_up.touch()
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitFormScreen), 20, "the form to close")
        await wait_for(pilot, lambda: "forms's form closed" in notices(app), what="the notice")
        await wait_turn_done(pilot, app)
        assert "gave up waiting for the form" in the_record(app).content_for_model
        assert TYPED not in json.dumps(engine.prompts) and TYPED not in app.recorder.rendered()


# ----- --plain: a question waiting when what it answers ends ---------------------------------------


async def test_a_plain_form_question_withdrawn_says_why_and_what_was_typed_for_it_is_not_a_prompt(monkeypatch):
    """--plain's form (cli/request_prompts.py) on a terminal (tests/test_plain_typed_ahead.FedReader):
    the call it came during ends while the name is being asked; the notice says why, and the name
    typed as the notice appeared is dropped, not taken as the next prompt."""
    import asyncio
    import io

    from rich.console import Console

    from mcp_chat_tui.cli import typed_lines
    from mcp_chat_tui.cli.request_prompts import ConsoleAsker
    from mcp_chat_tui.servers.elicit_form import form_fields
    from mcp_chat_tui.servers.request_ties import WITHDRAWN
    from tests.test_plain_typed_ahead import FedReader

    monkeypatch.setattr(typed_lines, "ARMING_DELAY", 0.3)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    reader = FedReader(asyncio.get_running_loop())
    asker = ConsoleAsker(console, reader)
    fields = form_fields({"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}})
    form = asyncio.ensure_future(asker.fill_form("forms", "Who should be registered?", fields))
    while "f fill in" not in out.getvalue():
        await asyncio.sleep(0.02)
    reader.type("f")
    while "Your name" not in out.getvalue():
        await asyncio.sleep(0.02)
    form.cancel(WITHDRAWN + "the call of register was stopped")
    await asyncio.wait({form})
    assert form.cancelled()
    assert "forms's form closed: the call of register was stopped. Nothing typed in it was sent." in out.getvalue()
    reader.type(TYPED)  # the name, typed as the notice appeared
    await asyncio.sleep(0.4)
    reader.type("the next prompt")
    assert await reader.read() == "the next prompt"
    assert f"typed for the question that closed, not sent: {TYPED}" in out.getvalue()


async def test_an_approval_closes_saying_so_when_its_turn_is_stopped():
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from tests.helpers import demo_config

    engine = ScriptedEngine([[call("calculator", {"expression": "2+2"})], "Final."])
    app = make_app(engine, [demo_config()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 2+2?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval")
        app.action_stop()  # what Esc does in the chat
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), 5, "the approval to close")
        await wait_for(pilot, lambda: "the approval of calculator closed" in notices(app), what="the notice")
        assert "the turn it was for was stopped" in notices(app)
        await wait_turn_done(pilot, app)
        assert the_record(app).state != CallState.DONE

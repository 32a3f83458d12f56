"""The reference server "everything" (npm @modelcontextprotocol/server-everything, a Node program)
under the real app and hub: its elicitation form (every kind of field) and its URL elicitations.
Installed on first use (tests/everything.py); skipped, saying why, where Node or npm is missing."""

from __future__ import annotations

import json

from textual.widgets import Input, SelectionList

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.asking_requests import AskingClientRequests
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.screens.requests import ElicitFormScreen
from tests import everything
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done


def everything_config(name: str = "everything") -> ServerConfig:
    node, index = everything.install()  # skips, saying why, where it cannot be had
    return ServerConfig(name=name, type="stdio", command=node, args=[str(index), "stdio"])


def everything_app(replies: list):
    return make_app(ScriptedEngine(replies), [everything_config()], policy=ApprovalPolicy("auto"))


def raw_result(text: str) -> dict:
    """The answer server-everything echoes under "Raw result:" in its tool's result."""
    return json.loads(text.split("Raw result:", 1)[1])


def tool_result(app) -> str:
    record = next(iter(app.calls_table.records.values()))
    return record.content_for_model


async def test_its_form_with_every_kind_of_field_gets_each_value_as_its_json_type():
    app = everything_app([[call("trigger-elicitation-request", {})], "Final."])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "ask me")
        await wait_for(pilot, lambda: dialog_armed(app, ElicitFormScreen), what="the form")
        form = app.screen
        form.query_one("#field-0", Input).value = "Ada Lovelace"
        instruments = form.query_one("#field-9", SelectionList)
        assert instruments.selected == ["Guitar"]
        instruments.focus()
        await pilot.press("down", "space")  # Piano too
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        got = raw_result(tool_result(app))
    assert got == {
        "action": "accept",
        "content": {
            "name": "Ada Lovelace",
            "firstLine": "It was a dark and stormy night.",
            "integer": 42,
            "number": 3.14,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar", "Piano"],
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-1",
        },  # "check", a yes or no without a default, was left unanswered: not sent as false
    }


async def test_its_url_elicitation_error_shows_the_page_then_sends_the_call_again():
    """trigger-url-elicitation with errorPath answers -32042 naming a page; sent again once that page is
    done, it asks for its own URL the usual way (elicitation/create) and reports the answer."""
    from tests.test_url_required import PageAsker

    asker = PageAsker()
    async with ServerHub([everything_config()]) as hub:
        hub.client_requests = AskingClientRequests(ScriptedEngine([]), asker, lambda event: None)
        await hub.start_all()
        arguments = {"url": "https://example.com/consent", "errorPath": True}
        result = await hub.call_tool("everything", "trigger-url-elicitation", arguments)
    assert result.ok, result.failure
    assert "User completed the URL elicitation flow" in result.for_model()
    assert [(seen[0], seen[3]) for seen in asker.seen] == [
        ("url", "https://modelcontextprotocol.io"),  # the page the error named
        ("page_done", "https://modelcontextprotocol.io"),
        ("url", "https://example.com/consent"),  # the call sent again asks for its own page
    ]

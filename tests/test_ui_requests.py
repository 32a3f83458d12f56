"""The app's dialogs for a server's requests, under Pilot: the real app, the real asking server
(tests/servers/asking_server.py, which echoes what it got back as JSON), a scripted model."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, SelectionList, Switch, TextArea

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.ui.screens.requests import (
    ElicitFormScreen,
    ElicitUrlScreen,
    SampleReviewScreen,
    SamplingScreen,
    ToolUseScreen,
)
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.test_client_requests import asking_config
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # the dialogs are about requests, not about arming


def asking_app(replies: list, *, yes: bool = False):
    """The asking server's tools run without the tool approval dialog: the requests are what is tested."""
    engine = ScriptedEngine(replies)
    return make_app(engine, [asking_config("modern")], policy=ApprovalPolicy("auto", yes=yes)), engine


async def on_screen(pilot, kind) -> None:
    await wait_for(pilot, lambda: dialog_armed(pilot.app, kind), what=kind.__name__)


def tool_result(app) -> str:
    record = next(iter(app.calls_table.records.values()))
    return record.content_for_model


async def test_sampling_request_edited_then_its_answer_edited_before_it_goes_back():
    app, engine = asking_app([[call("summarize", {"text": "abc"})], "model summary", "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "summarize abc")
        await on_screen(pilot, SamplingScreen)
        assert "You summarize in one line." in app.screen.query_one("#sampling-system", TextArea).text
        app.screen.query_one("#sampling-message-0", TextArea).text = "Summarize: edited"
        await pilot.press("ctrl+s")
        await on_screen(pilot, SampleReviewScreen)
        assert app.screen.query_one(TextArea).text == "model summary"
        app.screen.query_one(TextArea).text = "my summary"
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        assert engine.prompts[1][-1] == {"role": "user", "content": "Summarize: edited"}
        assert json.loads(tool_result(app))["content"] == {"type": "text", "text": "my summary"}
        assert "📨 asking asked the model for a reply (40 tokens at most) → edited" in chat_text(app)
        (request,) = app.recorder.transcript.exchanges[0].steps[0].requests
        assert request.answer == "edited" and request.result["text"] == "my summary"
    resumed = make_app(ScriptedEngine([]), [asking_config("modern")], transcript=app.recorder.transcript)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert "📨 asking asked the model for a reply (40 tokens at most) → edited" in chat_text(resumed)


@pytest.mark.parametrize("where", ["request", "answer"])
async def test_rejected_sampling_fails_the_servers_call_with_why(where):
    app, engine = asking_app([[call("summarize", {"text": "abc"})], "model summary", "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "summarize abc")
        await on_screen(pilot, SamplingScreen)
        if where == "answer":
            await pilot.press("ctrl+s")
            await on_screen(pilot, SampleReviewScreen)
        await pilot.press("escape")
        await wait_turn_done(pilot, app)
        record = next(iter(app.calls_table.records.values()))
        assert record.state == CallState.ERROR and "the user rejected" in record.content_for_model
        assert len(engine.prompts) == (2 if where == "request" else 3)


@pytest.mark.parametrize("key", ["y", "n"])
async def test_each_tool_use_of_a_sampled_reply_is_approved(key):
    replies = [[call("define", {"word": "ketch"})], [call("lookup", {"word": "ketch"}, "toolu_9")], "Final."]
    app, _ = asking_app(replies)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "define ketch")
        await on_screen(pilot, SamplingScreen)
        assert "may call: lookup" in str(app.screen.query_one(".request-info").render())
        await pilot.press("ctrl+s")
        await on_screen(pilot, ToolUseScreen)
        await pilot.press(key)
        await on_screen(pilot, SampleReviewScreen)
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        got = json.loads(tool_result(app))
    if key == "y":
        assert got["stopReason"] == "toolUse" and got["content"][-1]["name"] == "lookup"
    else:
        assert all(block["type"] == "text" for block in got["content"])


async def test_yes_answers_sampling_without_a_dialog():
    app, _ = asking_app([[call("summarize", {"text": "abc"})], "auto summary", "Final."], yes=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "summarize abc")
        await wait_turn_done(pilot, app)
        assert json.loads(tool_result(app))["content"]["text"] == "auto summary"
        why = app.servers_table.get_cell("asking", "reason")
        assert str(why) == "sampled 1× (limit 10/min)"  # the server panel counts it


async def fill(pilot, index: int, text: str) -> None:
    field = pilot.app.screen.query_one(f"#field-{index}", Input)
    field.value = text


async def test_form_shows_errors_at_the_fields_and_sends_once_valid():
    app, _ = asking_app([[call("sign_up", {})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sign me up")
        await on_screen(pilot, ElicitFormScreen)
        form = app.screen
        assert form.query_one("#field-5", Input).password  # api_token: typed hidden
        await fill(pilot, 0, "A")
        await fill(pilot, 1, "not-an-email")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form
        assert "at least 2 characters" in str(form.query_one("#field-error-0").render())
        assert "an email address" in str(form.query_one("#field-error-1").render())
        assert form.query_one("#field-error-0").has_class("shown")
        assert form.focused is form.query_one("#field-0")
        await fill(pilot, 0, "Ada")
        await fill(pilot, 1, "ada@example.com")
        await fill(pilot, 2, "42")
        await fill(pilot, 5, "tok-secret-77")
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        got = json.loads(tool_result(app))
        assert got["action"] == "accept"
        content = got["content"]
        assert content["name"] == "Ada" and content["age"] == 42 and content["plan"] == "free"
        assert content["newsletter"] is False
        assert content["api_token"] == "[redacted: asking.api_token]"  # hidden from the model from then on
        assert "tok-secret-77" not in app.recorder.rendered()


@pytest.mark.parametrize(("key", "action"), [("ctrl+d", "decline"), ("escape", "cancel")])
async def test_form_decline_and_cancel(key, action):
    app, _ = asking_app([[call("sign_up", {})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sign me up")
        await on_screen(pilot, ElicitFormScreen)
        await pilot.press(key)
        await wait_turn_done(pilot, app)
        assert json.loads(tool_result(app)) == {"action": action}


@pytest.mark.parametrize(("key", "action"), [("o", "accept"), ("d", "decline"), ("escape", "cancel")])
async def test_url_is_opened_only_on_the_users_key(monkeypatch, key, action):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    app, _ = asking_app([[call("open_page", {})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "open it")
        await on_screen(pilot, ElicitUrlScreen)
        assert "https://bank.example/authorize?state=xyz" in str(app.screen.query_one("#elicit-url").render())
        await pilot.pause()
        assert opened == []
        await pilot.press(key)
        await wait_turn_done(pilot, app)
        assert json.loads(tool_result(app)) == {"action": action}
    assert opened == (["https://bank.example/authorize?state=xyz"] if key == "o" else [])


async def test_every_kind_of_field_reaches_the_server_as_its_json_type():
    """tests/servers/asking_server.py's every_field form (every kind of field of the 2025-11-25 schema),
    filled with the keyboard: the server echoes the exact JSON it got."""
    app, _ = asking_app([[call("every_field", {})], "Final."])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "fill it")
        await on_screen(pilot, ElicitFormScreen)
        form = app.screen
        instruments, fish = form.query_one("#field-13", SelectionList), form.query_one("#field-14", SelectionList)
        assert [option.value for option in instruments.options] == ["Guitar", "Piano", "Violin"]
        assert instruments.selected == ["Guitar"] and fish.selected == []  # the default, checked
        assert isinstance(form.query_one("#field-8"), Select)  # a yes or no without a default: unanswered
        assert isinstance(form.query_one("#field-9"), Switch)  # with a default
        for index, text in {0: "Ada", 1: "ada@example.com", 2: "https://ada.example/", 3: "1815-12-10"}.items():
            await fill(pilot, index, text)
        await fill(pilot, 4, "2026-01-31T12:00:00Z")
        await fill(pilot, 6, "36")
        await fill(pilot, 7, "2.5")
        form.query_one("#field-12").focus()  # the legacy titled enum, left empty; Tab goes on to the checkboxes
        await pilot.press("tab", "down", "space", "down", "space")  # Piano and Violin: three of at most two
        assert form.focused is instruments and instruments.selected == ["Guitar", "Piano", "Violin"]
        await pilot.press("tab", "down", "enter")  # Salmon
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form and "choose at most 2" in str(form.query_one("#field-error-13").render())
        assert form.focused is instruments
        await pilot.press("space")  # Violin again: unchecked
        form.query_one("#field-11").focus()  # the titled single select
        await pilot.press("enter", "down", "down", "enter")  # the blank, Superman, Wonder Woman
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        got, chat = json.loads(tool_result(app)), chat_text(app)
    assert got == {
        "action": "accept",
        "content": {
            "nick": "Ada",
            "email": "ada@example.com",
            "site": "https://ada.example/",
            "born": "1815-12-10",
            "meeting": "2026-01-31T12:00:00+00:00",
            "motto": "It was a dark and stormy night.",
            "age": 36,
            "ratio": 2.5,
            "news": True,
            "friend": "Monica",
            "hero": "hero-2",
            "instruments": ["Guitar", "Piano"],
            "fish": ["fish-2"],
        },
    }
    assert 'instruments=["Guitar", "Piano"]' in chat  # JSON, not a Python repr


async def test_a_form_asked_with_the_sdks_ctx_elicit_is_accepted_by_its_model():
    """join_band asks with the SDK's ``ctx.elicit`` (2025-11-25), which checks the answer against
    its pydantic model: a list for the multi-select, a required yes or no that must be answered."""
    engine = ScriptedEngine([[call("join_band", {})], "Final."])
    app = make_app(engine, [asking_config("legacy")], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "join")
        await on_screen(pilot, ElicitFormScreen)
        form = app.screen
        await fill(pilot, 0, "Ada")
        form.query_one("#field-1", SelectionList).focus()
        await pilot.press("down", "space")  # Piano
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form and "required" in str(form.query_one("#field-error-2").render())
        assert form.focused is form.query_one("#field-2", Select)  # loud: no default, so not answered yet
        await pilot.press("enter", "down", "down", "enter")  # the blank, yes, no
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        got = json.loads(tool_result(app))
    assert got == {"action": "accept", "content": {"loud": False, "name": "Ada", "plays": ["Piano"], "years": 1}}

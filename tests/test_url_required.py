"""A tool call answered "URL elicitation required" (-32042): the pages the error names are shown, and
once the user is done on them (or the server says so) the call is sent again. Through the real hub
and tests/servers/asking_server.py's ``guarded`` tool (the SDK's ``UrlElicitationRequiredError``)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.asking_requests import AskingClientRequests
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.servers.url_required import MAX_ROUNDS
from mcp_chat_tui.ui.screens.requests import ElicitUrlScreen, PageDoneScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_cli_requests import FAKE_BROWSER, cli
from tests.test_client_requests import ERAS, ScriptedAsker, asking_config
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


class PageAsker(ScriptedAsker):
    """Opens (or not) each page as told; then says it is done (``done``), gives up (False), or waits
    for the server to say so ("server": True once the server's notification came, within 10 s)."""

    def __init__(self, *, url="accept", done=True):
        super().__init__(url=url)
        self.done = done

    async def page_done(self, server, tool, url, completed):
        self.seen.append(("page_done", server, tool, url))
        if self.done != "server":
            return self.done
        try:
            await asyncio.wait_for(completed.wait(), 10)
        except TimeoutError:
            return False
        return True


async def guarded(era, asker, arguments, events=None):
    async with ServerHub([asking_config(era)]) as hub:
        sink = events.append if events is not None else (lambda event: None)
        hub.client_requests = AskingClientRequests(ScriptedEngine([]), asker, sink)
        await hub.start_all()
        return await hub.call_tool("asking", "guarded", arguments)


@pytest.mark.parametrize("era", ERAS)
async def test_the_page_is_shown_and_the_call_sent_again_once_the_user_is_done(era):
    asker, events = PageAsker(), []
    result = await guarded(era, asker, {"what": "files"}, events)
    assert result.ok, result.failure
    assert result.for_model() == "files: done after 1 visit(s)"  # the second call's answer
    assert asker.seen == [
        ("url", "asking", "Authorize files (1)", "https://auth.example/files/1"),
        ("page_done", "asking", "guarded", "https://auth.example/files/1"),
    ]
    (event,) = events
    assert event.kind == "elicitation" and event.answer == "accept"
    assert event.request == {
        "mode": "url",
        "message": "Authorize files (1)",
        "url": "https://auth.example/files/1",
        "requiredBy": "guarded",
    }
    assert event.result == {"action": "accept", "callSentAgain": True}


async def test_every_page_the_error_names_is_shown_before_the_call_is_sent_again():
    asker = PageAsker()
    result = await guarded("legacy", asker, {"what": "two", "pages": 2})
    assert result.ok and result.for_model() == "two: done after 1 visit(s)"
    assert [seen[3] for seen in asker.seen if seen[0] == "url"] == [
        "https://auth.example/two/1",
        "https://auth.example/two/2",
    ]


async def test_the_servers_completion_notification_sends_the_call_again():
    asker = PageAsker(done="server")
    result = await guarded("legacy", asker, {"what": "told", "tell_done": True})
    assert result.ok and result.for_model() == "told: done after 1 visit(s)"


@pytest.mark.parametrize(
    ("url", "done", "why"),
    [
        ("decline", True, "the user declined the page"),
        ("cancel", True, "the user cancelled the page"),
        ("accept", False, "the user gave up before finishing on the page"),
    ],
)
async def test_a_page_not_visited_fails_the_call_naming_the_page(url, done, why):
    asker, events = PageAsker(url=url, done=done), []
    result = await guarded("legacy", asker, {"what": "mail"}, events)
    assert not result.ok and result.failure.kind is FailureKind.REFUSED
    assert result.failure.message == (
        f"guarded needs a page visited first: https://auth.example/mail/1 (Authorize mail (1)). Not done: {why}"
    )
    assert events[0].answer == url and events[0].result["callSentAgain"] is False


async def test_without_anyone_to_ask_the_call_fails_naming_the_page():
    async with ServerHub([asking_config("legacy")]) as hub:  # no front end: nobody to show the page to
        await hub.start_all()
        result = await hub.call_tool("asking", "guarded", {"what": "cal"})
    assert not result.ok
    assert "https://auth.example/cal/1" in result.failure.message
    assert "no one to ask (no terminal): open the page yourself, then ask again" in result.failure.message


async def test_a_server_that_asks_again_after_every_visit_is_not_asked_forever():
    asker = PageAsker()
    result = await guarded("legacy", asker, {"what": "loop", "times": 99})
    assert not result.ok and f"after {MAX_ROUNDS} tries" in result.failure.message
    assert len([seen for seen in asker.seen if seen[0] == "url"]) == MAX_ROUNDS


# ----- in the app and on the terminal --------------------------------------------------------------


async def test_in_the_app_the_page_dialog_then_enter_sends_the_call_again(monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    engine = ScriptedEngine([[call("guarded", {"what": "drive"})], "Final."])
    app = make_app(engine, [asking_config("legacy")], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "open my drive")
        await wait_for(pilot, lambda: dialog_armed(app, ElicitUrlScreen), what="the page dialog")
        assert "https://auth.example/drive/1" in str(app.screen.query_one("#elicit-url").render())
        await pilot.press("o")
        await wait_for(pilot, lambda: dialog_armed(app, PageDoneScreen), what="the done dialog")
        assert opened == ["https://auth.example/drive/1"]
        await pilot.press("enter")
        await wait_turn_done(pilot, app)
        record = next(iter(app.calls_table.records.values()))
        assert record.state == CallState.DONE and record.content_for_model == "drive: done after 1 visit(s)"
        line = "📨 asking asked you to open https://auth.example/drive/1 before guarded can run → accept"
        assert f"{line}; done, so the call was sent again" in chat_text(app)
        (request,) = app.recorder.transcript.exchanges[0].steps[0].requests
        assert request.request["requiredBy"] == "guarded" and request.result["callSentAgain"] is True
    resumed = make_app(ScriptedEngine([]), [asking_config("legacy")], transcript=app.recorder.transcript)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert f"{line}; done, so the call was sent again" in chat_text(resumed)


def test_one_shot_without_a_terminal_fails_the_call_naming_the_page(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([tool_reply("guarded", {"what": "drive"}), "I could not."]) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "-p", "open my drive")
    assert "asking asked you to open https://auth.example/drive/1; declined: no terminal to ask" in result.stderr
    told = endpoint.requests[1]["messages"][-1]["content"]
    assert "guarded needs a page visited first: https://auth.example/drive/1 (Authorize drive (1))" in told
    assert "open the page yourself, then ask again" in told
    assert result.returncode == 3, result.stderr  # refused for want of a person: the answer may be incomplete


def test_plain_opens_the_page_then_d_sends_the_call_again(tmp_path, isolated_user_dirs, monkeypatch):
    opened = tmp_path / "opened.txt"
    monkeypatch.setenv("BROWSER", f"{sys.executable} {FAKE_BROWSER} %s")
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(opened))
    with ScriptedEndpoint([tool_reply("guarded", {"what": "drive"}), "Opened."]) as endpoint:
        stdin = "\n".join(["open my drive", "o", "d", "bye"]) + "\n"
        result = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "d done on the page: send guarded again · c give up:" in result.stdout
    assert endpoint.requests[1]["messages"][-1]["content"] == "drive: done after 1 visit(s)"
    assert opened.read_text().splitlines() == ["https://auth.example/drive/1"]

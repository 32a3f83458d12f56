"""A key typed for the prompt never answers a dialog: every dialog that decides something (approval,
a server's URL, form and sampling requests, each tool use of a sampled reply, its answer) takes only
keys pressed after it was drawn and armed; keys typed before stay in the prompt.

The real app under Pilot, the real demo server and the real asking server (tests/servers/asking_server.py),
a scripted model. Keys are sent through the app's own queue, as the terminal sends them: at the
moment the dialog is pushed (before its first frame), and after its frame but before it is armed.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from textual import events
from textual.widgets import Input, TextArea

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.servers.oauth import SignInRequest
from mcp_chat_tui.ui.screens import deciding
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.deciding import DecidingScreen
from mcp_chat_tui.ui.screens.folder_trust import FolderInputsScreen, FolderTrustScreen
from mcp_chat_tui.ui.screens.requests import (
    ElicitFormScreen,
    ElicitUrlScreen,
    SampleReviewScreen,
    SamplingScreen,
    ToolUseScreen,
)
from mcp_chat_tui.ui.screens.sign_in import SignInScreen
from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
from mcp_chat_tui.ui.widgets.prompt import PromptInput
from tests.fakes import ScriptedEngine, call
from tests.test_client_requests import asking_config
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

TYPED = "now tell me more, that is all"  # n denies, t always allows, a allows all, s stops, o opens


def key_events(text: str) -> list[events.Key]:
    """The keys a terminal sends for ``text`` (a space is ``space``)."""
    return [events.Key("space" if char == " " else char, char) for char in text]


def type_when_pushed(app, kind: type, text: str, *, enter: bool = True) -> list[DecidingScreen]:
    """Type ``text`` (and Enter) into the app's queue at the moment a ``kind`` dialog is pushed, before
    its first frame: as keys the user was typing when it appeared. Returns the dialogs it happened to."""
    pushed: list[DecidingScreen] = []

    def on_push(screen) -> None:
        if isinstance(screen, kind) and not pushed:
            pushed.append(screen)
            for key in key_events(text) + ([events.Key("enter", "\r")] if enter else []):
                app.post_message(key)

    app.screen_change_signal.subscribe(app, on_push, immediate=True)
    return pushed


def prompt_text(app) -> str | None:
    """What the prompt holds (None before it is mounted)."""
    prompts = app.query(PromptInput)
    return prompts.first().value if prompts else None


async def armed(pilot, kind: type) -> None:
    await wait_for(pilot, lambda: dialog_armed(pilot.app, kind), what=f"{kind.__name__} armed")


def approval_app():
    engine = ScriptedEngine([[call("calculator", {"expression": "6*7"})], "42"])
    return make_app(engine, policy=ApprovalPolicy("ask"))


async def test_keys_typed_as_the_approval_dialog_appears_stay_in_the_prompt_and_answer_nothing():
    app = approval_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        pushed = type_when_pushed(app, ApprovalScreen, TYPED)
        await send(pilot, "what is 6*7")
        await wait_for(pilot, lambda: prompt_text(app) == TYPED, what="the typed keys in the prompt")
        assert pushed and app.screen is pushed[0], "no key answered the dialog"
        assert not pushed[0].armed
        calculator = app.hub.find_tool("calculator")
        assert not app.policy.runs_without_asking(calculator), "t did not make the tool auto-run"
        assert [record.state for record in app.calls_table.records.values()] == [CallState.AWAITING]
        assert pushed[0].has_class("-unarmed")
        await armed(pilot, ApprovalScreen)
        assert not pushed[0].has_class("-unarmed")
        await pilot.press("y")
        await wait_turn_done(pilot, app, left_in_prompt=TYPED)
        assert [record.state for record in app.calls_table.records.values()] == [CallState.DONE]
        assert not app.policy.runs_without_asking(calculator)


async def test_keys_typed_after_the_dialog_is_drawn_but_before_it_is_armed_answer_nothing(monkeypatch):
    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # time enough on a busy machine to type in it
    app = approval_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 6*7")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        dialog = app.screen
        await pilot.wait_for_scheduled_animations()
        await dialog.wait_for_refresh()
        keys = key_events("tay") + [events.Key("backspace", None)] + key_events("b")
        for key in keys + [events.Key("enter", "\r"), events.Key("escape", None), events.Paste("x\ny")]:
            app.post_message(key)
        await wait_for(pilot, lambda: prompt_text(app) == "tabx", what="the keys and the paste in the prompt")
        await pilot.pause()
        assert app.screen is dialog and not dialog.armed
        assert [record.state for record in app.calls_table.records.values()] == [CallState.AWAITING]
        await armed(pilot, ApprovalScreen)
        await pilot.press("n")
        await wait_turn_done(pilot, app, left_in_prompt="tabx")
        assert [record.state for record in app.calls_table.records.values()] == [CallState.DENIED]


async def test_typing_that_goes_on_as_the_dialog_appears_goes_on_into_the_prompt(monkeypatch):
    """Someone typing with their eyes on the keyboard does not see the dialog: it arms only once the
    typing has stopped for the guard time, however long it went on."""
    monkeypatch.setattr(deciding, "ARMING_DELAY", 2.0)  # keys 0.1 s apart never leave that gap, even on a busy machine
    app = approval_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 6*7")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        dialog = app.screen
        await dialog.wait_for_refresh()
        for char in TYPED:  # 2.9 s of typing, longer than the guard; each key pressed at its moment
            app.post_message(key_events(char)[0])
            await asyncio.sleep(0.1)
        await wait_for(pilot, lambda: prompt_text(app) == TYPED, what="the whole sentence in the prompt")
        assert app.screen is dialog
        assert [record.state for record in app.calls_table.records.values()] == [CallState.AWAITING]
        assert not app.policy.runs_without_asking(app.hub.find_tool("calculator"))
        await armed(pilot, ApprovalScreen)
        await pilot.press("n")
        await wait_turn_done(pilot, app, left_in_prompt=TYPED)
        assert [record.state for record in app.calls_table.records.values()] == [CallState.DENIED]


# ----- the server's requests -------------------------------------------------------------------


def asking_app(replies: list):
    """The asking server's tools run without the approval dialog: its requests' dialogs are tested."""
    engine = ScriptedEngine(replies)
    return make_app(engine, [asking_config("modern")], policy=ApprovalPolicy("auto"))


def tool_result(app) -> dict:
    record = next(iter(app.calls_table.records.values()))
    return json.loads(record.content_for_model)


def dialog_untouched(dialog) -> bool:
    """Nothing typed reached the dialog's own fields."""
    return all(TYPED not in area.text for area in dialog.query(TextArea)) and all(
        field.value in ("", "free") for field in dialog.query(Input)
    )


@pytest.mark.parametrize(
    ("tool", "kind", "own_key", "answer", "expected"),
    [
        ("sign_up", ElicitFormScreen, "ctrl+s", "ctrl+d", {"action": "decline"}),
        ("summarize", SamplingScreen, "ctrl+s", "escape", "the user rejected"),
        ("open_page", ElicitUrlScreen, "o", "d", {"action": "decline"}),
    ],
)
async def test_keys_typed_as_a_servers_request_appears_stay_in_the_prompt(
    monkeypatch, tool, kind, own_key, answer, expected
):
    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # still not armed when its own key comes, on a busy machine
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    app = asking_app([[call(tool, {"text": "abc"} if tool == "summarize" else {})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        pushed = type_when_pushed(app, kind, TYPED)
        await send(pilot, "go")
        await wait_for(pilot, lambda: prompt_text(app) == TYPED, what="the typed keys in the prompt")
        dialog = pushed[0]
        app.post_message(events.Key(own_key, None))  # the dialog's own key, still before it is armed
        typed = TYPED + (own_key if len(own_key) == 1 else "")  # a letter is the prompt's, Ctrl+S nobody's
        await wait_for(pilot, lambda: prompt_text(app) == typed, what="the dialog's key in the prompt")
        await pilot.pause()
        assert app.screen is dialog and not dialog.armed, "no key answered the dialog"
        assert dialog_untouched(dialog)
        await armed(pilot, kind)
        await pilot.press(answer)
        await wait_turn_done(pilot, app, left_in_prompt=typed)
        record = next(iter(app.calls_table.records.values()))
        if isinstance(expected, dict):
            assert tool_result(app) == expected
        else:
            assert expected in record.content_for_model
    assert opened == []


async def test_a_tool_use_of_a_sampled_reply_and_the_answer_take_no_key_typed_before_they_appear(monkeypatch):
    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # still not armed when the test looks, on a busy machine
    replies = [[call("define", {"word": "ketch"})], [call("lookup", {"word": "ketch"}, "toolu_9")], "Final."]
    app = asking_app(replies)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "define ketch")
        await armed(pilot, SamplingScreen)
        tool_use = type_when_pushed(app, ToolUseScreen, "yes")  # y would let the server run the call
        review = type_when_pushed(app, SampleReviewScreen, " sure")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: prompt_text(app) == "yes", what="the keys typed at the tool use")
        assert app.screen is tool_use[0] and not tool_use[0].armed
        await armed(pilot, ToolUseScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: prompt_text(app) == "yes sure", what="the keys typed at the answer")
        app.post_message(events.Key("ctrl+s", None))
        await pilot.pause()
        assert app.screen is review[0] and not review[0].armed and dialog_untouched(review[0])
        await armed(pilot, SampleReviewScreen)
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app, left_in_prompt="yes sure")
        assert all(block["type"] == "text" for block in tool_result(app)["content"]), "the tool use was denied"


# ----- a call whose start could not be saved, a folder's mcp.json and its inputs ----------------


def held_back() -> list[events.Event]:
    """Keys a dialog not armed yet does not take, after typing: Backspace, a paste, Enter (new events
    each time: an event is delivered once)."""
    return [events.Key("backspace", None), events.Paste("x\nsecond line"), events.Key("enter", "\r")]


LEFT_IN_PROMPT = TYPED[:-1] + "x"  # Backspace took the last l; the prompt keeps a paste's first line


def type_as_pushed(app, kind: type, keys: list[events.Event]) -> list[DecidingScreen]:
    """Post ``keys`` to the app the moment a ``kind`` dialog is pushed (also one pushed as the app
    starts, before a signal could be subscribed to). Returns the dialogs it happened to."""
    pushed: list[DecidingScreen] = []
    push = app.push_screen

    def pushing(screen, *args, **kwargs):
        result = push(screen, *args, **kwargs)
        if isinstance(screen, kind) and not pushed:
            pushed.append(screen)
            for key in keys:
                app.post_message(key)
        return result

    app.push_screen = pushing
    return pushed


async def test_keys_typed_as_the_not_saved_dialog_appears_stay_in_the_prompt_then_u_runs_it(tmp_path, monkeypatch):
    """The dialog comes up as a yes is given, with the user's fingers on the keys: "more" has the r
    of try again, "now" the n of don't run. It takes a plain u once armed (the capital U it took
    before stood in for this guard)."""
    from tests.test_unsaved_start import ledger_app

    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # still not armed when the test looks, on a busy machine
    path = tmp_path / "chat.md"
    ledger, _, app = ledger_app(tmp_path, path, "Paid.")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "pay once")
        await armed(pilot, ApprovalScreen)
        await wait_for(pilot, lambda: path.is_file() and "❓:" in path.read_text("utf-8"), what="the proposal saved")
        path.unlink()
        path.mkdir()  # every save fails now
        pushed = type_as_pushed(app, UnsavedStartScreen, key_events(TYPED) + held_back())
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt_text(app) == LEFT_IN_PROMPT, what="the typed keys in the prompt")
        await pilot.pause()
        assert pushed and app.screen is pushed[0] and not pushed[0].armed, "no key answered the dialog"
        assert pushed[0].has_class("-unarmed") and not ledger.exists()
        await armed(pilot, UnsavedStartScreen)
        await pilot.press("u")
        await wait_turn_done(pilot, app, left_in_prompt=LEFT_IN_PROMPT)
        assert ledger.read_text(encoding="utf-8").splitlines() == ["paid"]
        assert "run unsaved" in next(iter(app.calls_table.records.values())).allowed_by


async def test_keys_typed_as_a_folders_mcp_json_is_asked_about_stay_in_the_prompt(
    tmp_path, isolated_user_dirs, monkeypatch
):
    """The question comes up as the app starts, while the user may be typing a first prompt."""
    from mcp_chat_tui.config.folder_trust import TrustStore, read_fingerprint
    from tests.helpers import starts
    from tests.test_folder_trust import plant
    from tests.test_folder_trust_ui import app_in

    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # the app starts slowly on a busy machine
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started)
    app = app_in(tmp_path, monkeypatch)
    pushed = type_as_pushed(app, FolderTrustScreen, key_events("yes, " + TYPED) + held_back())
    async with app.run_test(size=SIZE) as pilot:
        typed = "yes, " + LEFT_IN_PROMPT
        await wait_for(pilot, lambda: prompt_text(app) == typed, what="the typed keys in the prompt")
        await pilot.pause()
        assert pushed and app.screen is pushed[0] and not pushed[0].armed, "no key answered the dialog"
        assert starts(started) == 0 and not TrustStore().trusts(read_fingerprint(path))
        await armed(pilot, FolderTrustScreen)
        await pilot.press("y")
        await wait_ready(pilot, app)
        assert starts(started) == 1 and prompt_text(app) == typed
    assert TrustStore().trusts(read_fingerprint(path))


async def test_keys_typed_as_the_trusted_files_inputs_are_asked_stay_in_the_prompt(
    tmp_path, isolated_user_dirs, monkeypatch
):
    """The inputs form comes up on its own right after the yes; Enter in it sends what its fields
    hold to a program about to start, so the prompt typed on must not land in a field."""
    from tests.test_folder_trust import plant
    from tests.test_folder_trust_ui import app_in

    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started, env={"PLANTED_TOKEN": "${input:token}"})
    document = json.loads(path.read_text())
    document["inputs"] = [{"id": "token", "type": "promptString", "description": "your token"}]
    path.write_text(json.dumps(document))
    app = app_in(tmp_path, monkeypatch)
    pushed = type_as_pushed(app, FolderInputsScreen, key_events(TYPED) + held_back())
    async with app.run_test(size=SIZE) as pilot:
        await armed(pilot, FolderTrustScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt_text(app) == LEFT_IN_PROMPT, what="the typed keys in the prompt")
        await pilot.pause()
        assert pushed and app.screen is pushed[0] and not pushed[0].armed, "no key answered the form"
        assert pushed[0].query_one("#field-0", Input).value == "" and not started.exists()
        assert pushed[0].has_class("-unarmed")
        await armed(pilot, FolderInputsScreen)
        await pilot.press(*"tok-42", "enter")
        await wait_ready(pilot, app)
        assert prompt_text(app) == LEFT_IN_PROMPT
    assert started.read_text().split() == ["planted", "tok-42"]


# ----- what a URL elicitation opens ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/shadow", "its scheme is file:"),
        ("javascript:alert(document.cookie)", "its scheme is javascript:"),
        ("http://example.com/login", "it goes to example.com unencrypted (http)"),
    ],
)
async def test_a_url_that_is_not_https_or_local_http_is_refused_and_o_opens_nothing(monkeypatch, url, why):
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    app = asking_app([[call("open_url", {"url": url})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "open it")
        await armed(pilot, ElicitUrlScreen)
        dialog = app.screen
        assert why in str(dialog.query_one("#elicit-refused").render())
        assert url in str(dialog.query_one("#elicit-url").render())
        assert "[b]o[/]" not in str(dialog.query_one(".request-keys").content)
        await pilot.press("o")
        await pilot.pause()
        assert app.screen is dialog, "o answered nothing"
        await pilot.press("d")
        await wait_turn_done(pilot, app)
        assert tool_result(app) == {"action": "decline"}
    assert opened == []


@pytest.mark.parametrize(
    ("url", "host", "opened_url"),
    [
        ("https://bank.example/authorize?state=xyz", "bank.example", "https://bank.example/authorize?state=xyz"),
        ("http://127.0.0.1:8765/callback", "127.0.0.1:8765", "http://127.0.0.1:8765/callback"),
        ("http://[::1]:8765/x", "[::1]:8765", "http://[::1]:8765/x"),
        ("https://bank.example@evil.example/login", "evil.example", "https://bank.example@evil.example/login"),
        ("https://bücher.example/", "xn--bcher-kva.example", "https://xn--bcher-kva.example/"),
    ],
)
async def test_an_https_or_local_http_url_shows_its_host_and_opens_on_o(monkeypatch, url, host, opened_url):
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    app = asking_app([[call("open_url", {"url": url})], "Final."])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "open it")
        await armed(pilot, ElicitUrlScreen)
        assert f"goes to {host}" in str(app.screen.query_one("#elicit-host").render())
        if "@" in url:
            assert "bank.example@: a user name" in str(app.screen.query_one(".url-warning").render())
        await pilot.press("o")
        await wait_turn_done(pilot, app)
        assert tool_result(app) == {"action": "accept"}
    assert opened == [opened_url]


# ----- signing in, and leaving -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "opens"),
    [("https://auth.example/authorize?state=1", True), ("http://auth.example/authorize?state=1", False)],
    ids=["https", "remote-http"],
)
async def test_the_sign_in_dialog_takes_no_key_typed_before_it_and_opens_only_https(monkeypatch, url, opens):
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *args, **kwargs: opened.append(url) or True)
    app = make_app(ScriptedEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.query_one(PromptInput).focus()
        pushed = type_when_pushed(app, SignInScreen, "go on")  # o and Enter would open the browser
        outcome = asyncio.get_running_loop().create_future()
        await app.push_screen(SignInScreen(SignInRequest("github", url, "http://127.0.0.1:53682/callback", outcome)))
        await wait_for(pilot, lambda: prompt_text(app) == "go on", what="the typed keys in the prompt")
        await armed(pilot, SignInScreen)
        assert opened == [] and app.screen is pushed[0]
        status = str(app.screen.query_one("#sign-in-status").render())
        assert ("not opened: it goes to auth.example unencrypted" in status) != opens
        await pilot.press("o")
        await pilot.pause()
        assert opened == ([url] if opens else [])
        await pilot.press("escape")
        await wait_for(pilot, lambda: outcome.done(), what="the sign-in cancelled")
        assert "sign-in cancelled" in str(outcome.exception())


async def test_ctrl_c_leaves_the_app_while_a_dialog_is_not_armed(monkeypatch):
    monkeypatch.setattr(deciding, "ARMING_DELAY", 600.0)
    app = approval_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 6*7")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the dialog")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, what="the app to end")
    assert app.return_code == 130

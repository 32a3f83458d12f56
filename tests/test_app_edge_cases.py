"""Edge cases of the whole app met by using it as a person would, each with real parts: a conversation
file that ends with a call's result (resumed in the app and in --plain), a reply cut by SIGKILL (saved as
not finished), the resume list's model names, a conversation that cannot be saved (said once, a new
reason said again), the approval dialog at 60x16, export (never over a file without asking, never the
conversation's own file or one open elsewhere), clearing the chat while a call runs, a prompt sent
while its resource is still read, and a prompt on stdin that is not UTF-8."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.call_state import CallState
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
from mcp_chat_tui.transcript.store import AutoSaver, describe, save_problem
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
from mcp_chat_tui.ui.transcript_view import CUT_SHORT_NOTE
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config, wait_until
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_oneshot import demo_servers, run_cli
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

TOP = Path(__file__).resolve().parent.parent
CALC = {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": '{"expression": "12 * 7"}'}}


def user_dirs_env(dirs: Path) -> dict[str, str]:
    return dict(os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")})


def killed_after_result(end: str | None) -> Transcript:
    """A conversation whose app was killed right after a call's result, before the model answered it."""
    exchange = Exchange(
        "what is 12 * 7?",
        "demo model",
        [
            Step(
                proposals=[
                    Proposal(CALC, "yo", ToolResult("calculator", "call_1", "done", "12 * 7 = 84", "demo", 0.01))
                ]
            )
        ],
    )
    exchange.end = end
    return Transcript([exchange])


# end None: a file written before replies were marked "unfinished" while under way; "unfinished": one written now.
@pytest.mark.parametrize("end", [None, "unfinished"])
async def test_a_file_ending_with_a_result_and_no_reply_lets_the_model_answer_it(tmp_path, end):
    path = tmp_path / "after-result.md"
    path.write_text(render(killed_after_result(end)), encoding="utf-8")
    engine = ScriptedEngine(["It is 84."])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: "It is 84." in chat_text(app), timeout=10, what="the model's answer")
        await wait_turn_done(pilot, app)
        assert CUT_SHORT_NOTE not in chat_text(app), "the reply that went on is said to be cut short"
    assert app.hub.status("demo").call_count == 0, "the call the file finished was run again"
    prompt = engine.prompts[0]
    assert prompt[-1] == {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"}
    [exchange] = parse(read_transcript_text(path)).exchanges
    assert exchange.steps[-1].text == "It is 84." and exchange.end is None, "the answered reply is not finished"
    assert [p.call_id for step in exchange.steps for p in step.proposals] == ["call_1"], "the call was run again"


def test_plain_mode_lets_the_model_answer_a_result_the_file_ends_with(tmp_path, isolated_user_dirs):
    path = tmp_path / "after-result.md"
    path.write_text(render(killed_after_result("unfinished")), encoding="utf-8")
    with ScriptedEndpoint(["It is 84."]) as endpoint:
        result = run_cli(
            *("--endpoint", endpoint.url, "scripted", "--mcp-config", str(demo_servers(tmp_path)), "--plain"),
            *("--transcript", str(path)),
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin="bye\n",
        )
    assert result.returncode == 0, result.stderr
    assert "It is 84." in result.stdout and "cut short" not in result.stdout
    [request] = endpoint.requests  # the model answered the result at once; nothing ran again
    assert request["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "calculator",
        "content": "12 * 7 = 84",
    }
    [exchange] = parse(read_transcript_text(path), path).exchanges
    [step_with_call, answer] = exchange.steps
    assert [p.result.content for p in step_with_call.proposals if p.result] == ["12 * 7 = 84"]
    assert (answer.text, exchange.end) == ("It is 84.", None)


async def test_a_reply_cut_by_sigkill_is_saved_as_not_finished(tmp_path, isolated_user_dirs):
    path = tmp_path / "killed.md"
    process = subprocess.Popen(
        [
            sys.executable,
            str(TOP / "tests" / "apps" / "scripted_plain.py"),
            str(path),
            "tell me a long story",
            "--slow-reply",
        ],
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
    assert exchange.cut_short and exchange.end == "unfinished"
    # The resumed screen says so, under the cut text, and nothing is generated on its own.
    engine = ScriptedEngine([])
    app = make_app(engine, transcript_file=path, transcript=parse(read_transcript_text(path), path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: CUT_SHORT_NOTE in chat_text(app), what="the cut-short note")
        assert chat_text(app).index("word10 ") < chat_text(app).index(CUT_SHORT_NOTE)
    assert engine.prompts == []
    # So does --plain; the conversation goes on, the next reply ends as finished and the cut one stays cut.
    with ScriptedEndpoint(["The end."]) as endpoint:
        result = run_cli(
            *("--endpoint", endpoint.url, "scripted", "--mcp-config", str(demo_servers(tmp_path)), "--plain"),
            *("--transcript", str(path)),
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin="go on\nbye\n",
        )
    assert result.returncode == 0, result.stderr
    assert "[cut short: the app ended before this reply was finished]" in result.stdout
    [request] = endpoint.requests
    assert request["messages"][-2]["content"].startswith("word0 word1 ")
    cut, new = parse(read_transcript_text(path), path).exchanges
    assert cut.cut_short and (new.user, new.steps[-1].text, new.end) == ("go on", "The end.", None)


def test_the_resume_list_names_the_model_of_a_conversation_whose_first_reply_was_stopped(tmp_path):
    stopped = Transcript([Exchange("tell me a story", "demo model", [Step(text="Once upon")])])
    stopped.exchanges[0].end = "stopped"
    path = tmp_path / "stopped.md"
    path.write_text(render(stopped), encoding="utf-8")
    assert '{"end": "stopped"}' in path.read_text(encoding="utf-8"), "the file does not record the stop"
    assert describe(path).model == "demo model"


@pytest.mark.parametrize(
    ("model", "settings", "in_file"),
    [
        ("demo model", {"temperature": 0.7, "seed": 1}, '{"settings": {"temperature": 0.7, "seed": 1}}'),
        ("lab[v2] model", {}, r"[lab[v2\] model]"),
    ],
)
def test_the_resume_list_names_the_model_of_a_reply_with_settings_or_brackets(tmp_path, model, settings, in_file):
    exchange = Exchange("tell me a story", model, [Step(text="Once upon")], settings=settings)
    path = tmp_path / "reply.md"
    path.write_text(render(Transcript([exchange])), encoding="utf-8")
    assert in_file in path.read_text(encoding="utf-8"), "the header is not the one this test is about"
    assert describe(path).model == model


def a_retry_after(saver: AutoSaver, tried_at: float) -> bool:
    """The saver tried again since ``tried_at`` (its next retry is planned from its last try)."""
    return saver._next_retry > tried_at + saver.retry_interval


async def test_a_conversation_that_cannot_be_saved_is_said_once(tmp_path):
    # The file's name fits the file system, but its temporary neighbour's (14 characters longer) does not.
    path = tmp_path / ("c" * 245 + ".md")
    engine = ScriptedEngine([[call("calculator", {"expression": "12 * 7"})], "It is 84.", "Still 84."])
    app = make_app(engine, transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "what is 12 * 7?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the dialog")
        await pilot.press("y")
        # the call's start cannot be saved either: it is not sent unless the user says so (issue 31)
        await wait_for(pilot, lambda: dialog_armed(app, UnsavedStartScreen), what="the not-saved dialog, armed")
        await pilot.press("n")
        await wait_turn_done(pilot, app)
        saver = app.recorder.saver
        assert saver is not None and not saver.flush(), "the file could be saved"
        await wait_for(pilot, lambda: app.status_bar.save_problem, what="the save problem in the status bar")
        await send(pilot, "and now?")  # more saves that fail the same way
        await wait_turn_done(pilot, app)
        assert not saver.flush()
        now = time.monotonic()
        await wait_for(pilot, lambda: a_retry_after(saver, now), what="a retry")
        await pilot.pause()
        toasts = [n for n in app._notifications if n.title == "conversation not saved"]
        assert app.status_bar.save_problem == saver.problem, "the status bar no longer says it"
    assert len(toasts) == 1, f"{len(toasts)} toasts for one problem: {[n.message for n in toasts]}"
    assert "temporary copy" in toasts[0].message and ".tmp" not in toasts[0].message, toasts[0].message


def saver_reporting_to(path: Path, changes: list[str | None]) -> AutoSaver:
    """An AutoSaver that retries every 10 ms and keeps each change of problem it reports."""

    def changed(error: Exception | None) -> None:
        changes.append(None if error is None else save_problem(path, error))

    return AutoSaver(path, on_change=changed, retry_interval=0.01)


def test_a_saver_that_keeps_failing_says_it_once(tmp_path):
    path = tmp_path / ("c" * 245 + ".md")  # its temporary neighbour's name is too long
    changes: list[str | None] = []
    saver = saver_reporting_to(path, changes)
    try:
        saver.save("💬: hi\n")
        now = time.monotonic()
        assert wait_until(lambda: a_retry_after(saver, now + 0.2), 10), "the saver did not retry"
        saver.save("💬: hi again\n")  # a new text fails the same way
        assert not saver.flush()
        assert changes == [f"cannot save {path}: File name too long (its temporary copy, written beside it first)"]
    finally:
        saver.close()


def test_a_saver_says_a_new_reason_and_saving_again_once_each(tmp_path):
    folder = tmp_path / "conversations"
    path = folder / "chat.md"
    changes: list[str | None] = []
    saver = saver_reporting_to(path, changes)
    try:
        saver.save("💬: one\n")
        assert saver.flush() and changes == []
        shutil.rmtree(folder)
        saver.save("💬: two\n")
        assert not saver.flush()
        now = time.monotonic()
        assert wait_until(lambda: a_retry_after(saver, now + 0.1), 10), "the saver did not retry"
        folder.write_text("a file where the folder was")  # a new reason
        assert wait_until(lambda: len(changes) == 2, 10), changes
        now = time.monotonic()
        assert wait_until(lambda: a_retry_after(saver, now + 0.1), 10), "the saver did not retry"
        folder.unlink()
        folder.mkdir()
        assert wait_until(lambda: saver.saved, 10)
    finally:
        saver.close()
    assert changes == [
        f"cannot save {path}: its folder no longer exists ({folder})",
        f"cannot save {path}: Not a directory",
        None,
    ]
    assert path.read_text(encoding="utf-8") == "💬: two\n"


WORDY = ServerConfig(
    name="wordy", type="stdio", command=sys.executable, args=[str(TOP / "tests/servers/wordy_server.py")]
)


@pytest.mark.parametrize(
    ("server", "tool", "arguments"),
    [
        (demo_config(), "calculator", {"expression": "12 * 7"}),
        (WORDY, "empty_folder", {"folder": "/tmp/scratch"}),  # a destructive tool with a 12-line description
    ],
    ids=["calculator", "long-description"],
)
async def test_the_approval_dialog_at_60x16_opens_with_the_arguments_in_view(server, tool, arguments):
    engine = ScriptedEngine([[call(tool, arguments)], "Done."])
    app = make_app(engine, [server])
    async with app.run_test(size=(60, 16)) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, f"use {tool}")
        await wait_for(
            pilot,
            lambda: dialog_armed(app, ApprovalScreen) and app.screen.query("#approval-arguments"),
            what="the dialog",
        )
        await pilot.pause()
        dialog = app.screen.query_one("#approval-dialog").region
        shown = app.screen.query_one("#approval-arguments").region.intersection(dialog)
        keys = app.screen.query_one("#approval-keys").region
    assert shown.height >= 3, f"the arguments are not all shown: {shown}"
    assert shown.bottom <= keys.y, f"the keys ({keys}) cover the arguments ({shown})"
    assert dialog.contains_region(keys), f"the keys ({keys}) are not all on screen ({dialog})"


async def open_export_dialog(pilot, app, path: Path) -> None:
    """The export dialog, with ``path`` typed and Enter pressed."""
    from mcp_chat_tui.ui.screens.conversations import ExportScreen

    app.action_export()
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, ExportScreen) and app.screen.query("#export-path"),
        what="the export dialog",
    )
    app.screen.query_one("#export-path").value = str(path)
    await pilot.press("enter")


def export_question(app) -> str:
    return str(app.screen.query_one("#export-question").render()) if app.screen.query("#export-question") else ""


async def test_export_does_not_write_over_a_file_without_asking(tmp_path):
    precious = tmp_path / "notes.md"
    precious.write_text("my own notes\n", encoding="utf-8")
    app = make_app(ScriptedEngine(["Hello."]), transcript_file=tmp_path / "chat.md")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hi")
        await wait_turn_done(pilot, app)
        await open_export_dialog(pilot, app, precious)
        await wait_for(pilot, lambda: "already exists" in export_question(app), what="the question")
        assert precious.read_text(encoding="utf-8") == "my own notes\n", "the file was replaced without a question"
        assert str(precious) in export_question(app)
        await pilot.press("enter")  # the same path again: yes, replace it
        await wait_for(
            pilot,
            lambda: any("transcript exported to" in str(n.message) for n in app._notifications),
            what="the export",
        )
    assert parse(read_transcript_text(precious)).exchanges[0].steps[0].text == "Hello."


async def test_export_refuses_the_conversations_own_file_and_one_open_in_another_instance(tmp_path):
    own = tmp_path / "chat.md"
    held = tmp_path / "held.md"
    held.write_text("another instance's conversation\n", encoding="utf-8")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from mcp_chat_tui.transcript import TranscriptLock;"
            "TranscriptLock.acquire(Path(sys.argv[1])); input()",
            str(held),
        ],
        stdin=subprocess.PIPE,
        cwd=TOP,
    )
    try:
        side_file = tmp_path / ".held.md.lock"  # its holder's process id is written once it is locked
        assert wait_until(lambda: side_file.exists() and side_file.read_text().strip(), 30), "the file was never held"
        app = make_app(ScriptedEngine(["Hello."]), transcript_file=own)
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, app)
            await send(pilot, "hi")
            await wait_turn_done(pilot, app)
            assert app.recorder.saver.flush()  # the saver's thread writes the file after the turn is shown
            saved = own.read_text(encoding="utf-8")
            await open_export_dialog(pilot, app, own)
            await wait_for(pilot, lambda: "own file" in export_question(app), what="the refusal")
            await pilot.press("enter")  # asking twice changes nothing
            await wait_for(pilot, lambda: "own file" in export_question(app), what="the refusal again")
            await pilot.press("escape")
            await open_export_dialog(pilot, app, held)
            await wait_for(pilot, lambda: "already exists" in export_question(app), what="the question")
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: any(n.title == "export failed" for n in app._notifications),
                what="the export to refuse the held file",
            )
            [failed] = [str(n.message) for n in app._notifications if n.title == "export failed"]
            assert "open in another mcp-chat-tui" in failed and str(held) in failed, failed
        assert held.read_text(encoding="utf-8") == "another instance's conversation\n"
        assert parse(read_transcript_text(own)) == parse(saved)
    finally:
        holder.communicate(b"\n", timeout=10)


async def test_clearing_the_chat_while_a_call_runs_stops_the_call_and_the_app_goes_on(tmp_path):
    # Was: IndexError in Agent._close_stopped (clear() emptied the turns before the stopped turn closed).
    old_file = tmp_path / "old.md"
    engine = ScriptedEngine([[call("sleep", {"seconds": 30})], "Hello again."])
    app = make_app(engine, policy=ApprovalPolicy("auto"), transcript_file=old_file)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "sleep for 30 seconds")
        await send(pilot, "and then this")  # waits behind the turn, shown in the chat being cleared
        await wait_for(
            pilot,
            lambda: any(r.state is CallState.RUNNING for r in app.calls_table.records.values()),
            what="the call running",
        )
        [record] = app.calls_table.records.values()
        await app.action_clear_chat()
        await wait_for(
            pilot,
            lambda: any("(1 waiting prompt dropped)" in n.message for n in app._notifications),
            what="the notice that the waiting prompt was dropped",
        )
        await wait_for(pilot, lambda: not app.turns.running, what="the stopped turn to end")
        await wait_for(pilot, lambda: record.state is CallState.CANCELLED, what="the call recorded as cancelled")
        assert app.calls_table.row_count == 0, "the cleared conversation's call is still in the sidebar"
        assert app.hub.status("demo").calls_in_flight == 0, "the call still runs at its server"
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        assert "Hello again." in chat_text(app)
        assert "sleep for 30 seconds" not in chat_text(app)
        new_file = app.transcript_file
    # The cleared conversation's file says what happened: the call was cancelled, the reply stopped.
    [old] = parse(read_transcript_text(old_file), old_file).exchanges
    [proposal] = old.steps[-1].proposals
    assert proposal.result is not None and proposal.result.status == "cancelled"
    assert old.end == "stopped"
    # The new conversation starts with "hello" alone, in its own file, and the model saw nothing of the old one.
    assert new_file is not None and new_file != old_file
    [new] = parse(read_transcript_text(new_file), new_file).exchanges
    assert (new.user, new.steps[-1].text, new.end) == ("hello", "Hello again.", None)
    assert [m["role"] for m in engine.prompts[-1] if m["role"] != "system"] == ["user"]
    assert len(engine.prompts) == 2, "the prompt waiting when the chat was cleared was run"


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

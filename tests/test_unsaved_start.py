"""A call is sent only once its start is on disk: when the conversation cannot be saved, the call is
not sent, the user is told why (the file, the OS error, what to do), and may run it unsaved in the
app or at the ``--plain`` prompt, which is recorded once saving works again (and, until then, in a
note beside the app's data so a resume never runs it again silently); ``-p`` exits 1 without running.

Real parts: a real MCP server whose tool writes a line for every call it receives
(tests/servers/ledger_server.py), the CLI as a subprocess (``-p``, ``--plain`` in a pseudo-terminal),
the app under Pilot, and real files whose saving fails: the conversation's folder is a file, or the
conversation file is replaced by a folder (both fail for root too, unlike chmod).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from mcp_chat_tui.agent.turn import not_saved_message
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.unsaved import UnsavedStartScreen
from tests.fakes import ScriptedEngine, call
from tests.helpers import wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_call_lifecycle import CLI, LEDGER_SERVER, cli_env, ledger_config, lines
from tests.test_tui_exit import Terminal
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done


def ledger_servers(folder: Path) -> Path:
    config = folder / "servers.json"
    config.write_text(json.dumps({"servers": {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER]}}}))
    return config


def unwritable_conversation(folder: Path) -> Path:
    """A conversation path whose folder is a regular file: every save fails (ENOTDIR), for root too."""
    blocker = folder / "blocker"
    blocker.write_text("not a folder\n", encoding="utf-8")
    return blocker / "chat.md"


# ----- -p ----------------------------------------------------------------------------------------


def test_p_never_sends_a_call_whose_start_cannot_be_saved_and_exits_1(tmp_path, isolated_user_dirs):
    ledger, chat = tmp_path / "ledger.txt", unwritable_conversation(tmp_path)
    arguments = {"path": str(ledger), "line": "paid"}
    with ScriptedEndpoint([tool_reply("append", arguments), "It was not paid."]) as endpoint:
        result = subprocess_run(
            [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(ledger_servers(tmp_path))]
            + ["--transcript", str(chat), "--yes", "-p", "pay once", "--json"],
            tmp_path,
            isolated_user_dirs,
        )
    assert not ledger.exists(), "the server received the call"
    assert result.returncode == 1, result.stderr
    said = " ".join(result.stderr.split())
    problem = f"cannot save {chat}: Not a directory"
    assert f"append was not sent: {problem}" in said, said
    assert "free space on the disk or fix the permissions" in said
    report = json.loads(result.stdout)
    [entry] = report["calls"]
    assert entry["outcome"] == "cancelled" and entry["choice"] == "auto" and entry["allowed_by"] == "--yes"
    assert entry["error"] == not_saved_message(problem)
    assert report["exit_code"] == 1 and report["save_error"].startswith(problem)
    told = {"role": "tool", "tool_call_id": "call_1", "name": "append", "content": not_saved_message(problem)}
    assert told in endpoint.requests[1]["messages"], "the model was not told why the call did not run"


def subprocess_run(argv: list[str], cwd: Path, dirs: Path):
    import subprocess

    return subprocess.run(
        argv, cwd=cwd, env=cli_env(dirs), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


# ----- the app -----------------------------------------------------------------------------------


def ledger_app(tmp_path: Path, path: Path, *replies):
    ledger = tmp_path / "ledger.txt"
    engine = ScriptedEngine([[call("append", {"path": str(ledger), "line": "paid"})], *replies])
    return ledger, engine, make_app(engine, [ledger_config()], transcript_file=path)


async def approval_then_broken_file(pilot, app, path: Path) -> None:
    """Ask for the call; once the dialog is up and the file holds the proposal, replace the file by a folder."""
    await wait_ready(pilot, app)
    await send(pilot, "pay once")
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog")
    await wait_for(
        pilot, lambda: path.is_file() and "❓:" in path.read_text(encoding="utf-8"), what="the proposal saved"
    )
    path.unlink()
    path.mkdir()  # every save fails now, for root too
    await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the approval dialog armed")
    await pilot.press("y")
    await wait_for(pilot, lambda: dialog_armed(app, UnsavedStartScreen), what="the not-saved dialog, armed")


def dialog_text(app) -> str:
    return " ".join(str(widget.render()) for widget in app.screen.query("Static"))


async def test_the_app_does_not_send_a_call_whose_start_cannot_be_saved_and_says_why(tmp_path):
    path = tmp_path / "chat.md"
    ledger, engine, app = ledger_app(tmp_path, path, "It was not paid.")
    async with app.run_test(size=SIZE) as pilot:
        await approval_then_broken_file(pilot, app, path)
        problem = f"cannot save {path}: it is a folder, not a regular file"
        shown = dialog_text(app)
        assert problem in shown and "free space on the disk or fix the permissions" in shown
        [record] = app.calls_table.records.values()
        assert record.state is CallState.AWAITING
        assert not ledger.exists(), "the call was sent before the user chose"
        assert any(f"append was not sent: {problem}" in n.message for n in app._notifications)
        await pilot.press("n")
        await wait_turn_done(pilot, app)
        assert record.state is CallState.CANCELLED and record.started_at is None
        told = {"role": "tool", "tool_call_id": "call_1", "name": "append", "content": not_saved_message(problem)}
        assert told in engine.prompts[1]
        path.rmdir()  # saving works again: the next retry writes the whole conversation
        await wait_for(
            pilot, lambda: path.is_file() and "cancelled" in path.read_text(encoding="utf-8"), 20, "the save"
        )
    assert not ledger.exists(), "the server received the call"
    [proposal] = parse(read_transcript_text(path)).exchanges[0].steps[0].proposals
    assert proposal.choice == "yo" and proposal.started_at is None and not proposal.run_unsaved
    assert proposal.result.status == "cancelled" and proposal.result.content == not_saved_message(problem)


async def test_try_again_sends_the_call_once_its_start_is_saved(tmp_path):
    path = tmp_path / "chat.md"
    ledger, _, app = ledger_app(tmp_path, path, "Paid.")
    async with app.run_test(size=SIZE) as pilot:
        await approval_then_broken_file(pilot, app, path)
        await pilot.press("r")  # still broken: asked again, nothing sent
        await wait_for(pilot, lambda: dialog_armed(app, UnsavedStartScreen), what="the question again")
        assert not ledger.exists()
        path.rmdir()
        await pilot.press("r")
        await wait_turn_done(pilot, app)
        assert lines(ledger) == ["paid"]
    [proposal] = parse(read_transcript_text(path)).exchanges[0].steps[0].proposals
    assert proposal.started_at is not None and not proposal.run_unsaved and proposal.result.status == "done"


async def test_run_unsaved_sends_it_on_u_and_the_file_says_so_once_it_can(tmp_path, isolated_user_dirs):
    """(A u typed before the dialog was armed runs nothing: tests/test_dialog_keys.py.)"""
    path = tmp_path / "chat.md"
    ledger, _, app = ledger_app(tmp_path, path, "Paid.")
    notes = isolated_user_dirs / "data" / "unsaved-calls"
    async with app.run_test(size=SIZE) as pilot:
        await approval_then_broken_file(pilot, app, path)
        assert not ledger.exists()
        await pilot.press("u")
        await wait_turn_done(pilot, app)
        assert lines(ledger) == ["paid"]
        assert any("append runs unsaved" in n.message for n in app._notifications)
        [record] = app.calls_table.records.values()
        assert record.allowed_by == "you (once); run unsaved (its start could not be saved first)"
        [note] = notes.iterdir()  # its start, where a resume finds it while the file cannot say it
        assert json.loads(note.read_text())["call_id"] == "call_1"
        path.rmdir()
        await wait_for(pilot, lambda: path.is_file() and "Paid." in path.read_text(encoding="utf-8"), 20, "the save")
    [proposal] = parse(read_transcript_text(path)).exchanges[0].steps[0].proposals
    assert proposal.run_unsaved and proposal.started_at is not None and proposal.result.status == "done"
    assert '"run_unsaved": true' in path.read_text(encoding="utf-8")
    from mcp_chat_tui.transcript.unsaved_runs import recall_unsaved_runs

    assert recall_unsaved_runs(parse(read_transcript_text(path)), path) == 0
    assert not list(notes.iterdir()), "the note outlived the file catching up"


# ----- --plain, killed after running a call unsaved, then resumed ---------------------------------


def test_a_call_run_unsaved_and_killed_is_never_run_again_silently(tmp_path, isolated_user_dirs):
    """--plain asks as the app does; a SIGKILL while the call runs leaves a file that never said it
    started. Resumed with --yes (which would run a call the file shows as never started), the note
    makes it interrupted: not run again, and the model is told it may have run."""
    ledger, gate, chat = tmp_path / "ledger.txt", tmp_path / "gate", tmp_path / "chat.md"
    config = ledger_servers(tmp_path)
    arguments = {"path": str(ledger), "line": "paid", "gate": str(gate)}
    env = dict(cli_env(isolated_user_dirs), TERM="dumb")
    with ScriptedEndpoint([tool_reply("append", arguments)]) as endpoint:
        argv = [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(config)]
        terminal = Terminal([*argv, "--transcript", str(chat), "--plain"], tmp_path, env)
        try:
            assert wait_until(lambda: "prompt ->" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(b"pay once\r")
            assert wait_until(lambda: "n no" in terminal.text(), 30), terminal.text()[-2000:]
            assert wait_until(lambda: chat.is_file() and "❓:" in chat.read_text(encoding="utf-8"), 10)
            saved = chat.read_text(encoding="utf-8")
            chat.unlink()
            chat.mkdir()
            terminal.press(b"y\r")
            assert wait_until(lambda: "run it unsaved" in terminal.text(), 30), terminal.text()[-2000:]
            assert not ledger.exists()
            terminal.press(b"u\r")
            assert wait_until(lambda: lines(ledger) == ["paid"], 30), terminal.text()[-2000:]
            os.kill(terminal.pid, 9)  # killed mid-call: the file never said the call started
            assert wait_until(lambda: terminal.status is not None, 10)
        finally:
            terminal.close()
            gate.touch()
    said = " ".join(terminal.text().split())
    assert "append was not sent: cannot save" in said and "append runs unsaved" in said
    shutil.rmtree(chat)
    chat.write_text(saved, encoding="utf-8")  # what the disk held: the proposal, no start
    with ScriptedEndpoint(["It may have run.", "I cannot tell whether it was paid."]) as endpoint:
        argv = [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(config), "--transcript", str(chat)]
        resumed = subprocess_run([*argv, "--yes", "-p", "was it paid?", "--json"], tmp_path, isolated_user_dirs)
    assert lines(ledger) == ["paid"], "the call run unsaved ran again on resume"
    assert resumed.returncode == 3, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["calls"][0]["outcome"] == "interrupted"
    [proposal] = parse(read_transcript_text(chat)).exchanges[0].steps[0].proposals
    assert proposal.run_unsaved and proposal.result.status == "interrupted"


async def test_a_conversation_another_app_holds_sends_no_call_without_asking(tmp_path):
    """The file the app means to save to is held by another mcp-chat-tui: nothing can be saved, so
    a call (auto-run here) waits in the same dialog, naming the holder."""
    from mcp_chat_tui.agent import ApprovalPolicy
    from tests.test_transcript_files import hold_in_another_process

    path = tmp_path / "chat.md"
    holder = hold_in_another_process(path)
    ledger = tmp_path / "ledger.txt"
    engine = ScriptedEngine([[call("append", {"path": str(ledger), "line": "paid"})], "Not paid."])
    app = make_app(engine, [ledger_config()], policy=ApprovalPolicy("auto"), transcript_file=path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, app)
            await send(pilot, "pay once")
            await wait_for(pilot, lambda: dialog_armed(app, UnsavedStartScreen), what="the not-saved dialog")
            assert f"open in another mcp-chat-tui (process {holder.pid})" in dialog_text(app)
            await pilot.press("escape")
            await wait_turn_done(pilot, app)
    finally:
        holder.kill()
        holder.wait(10)
    assert not ledger.exists(), "the server received the call"

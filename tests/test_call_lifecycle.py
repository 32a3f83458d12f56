"""A tool call never runs twice, and never without a fresh yes: killed mid-call, approved in a file
but never started, stopped with Esc; and what the screen shows of it after a resume is what happened.

Real parts: the CLI as a subprocess killed with SIGKILL, the app driven by Pilot, and a real MCP
server (tests/servers/ledger_server.py) whose tool appends a line to a file and can be held mid-call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.turn import INTERRUPTED_MESSAGE, STOPPED_MESSAGE
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import Exchange, Proposal, Step, Transcript, parse, read_transcript_text, render
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from mcp_chat_tui.ui.screens.detail import call_report
from tests import cli_in_process
from tests.fakes import ScriptedEngine, call
from tests.helpers import REAL_SERVERS, in_process_config, new_marker, pids_with, server_module, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

LEDGER_SERVER = str(Path(__file__).parent / "servers" / "ledger_server.py")
CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main"]


def ledger_config(marker: str = "") -> ServerConfig:
    """tests/servers/ledger_server.py: a process with a ``marker`` for the process table (the CLI
    killed mid-call, its server found and killed after it) and with ``MCT_REAL_SERVERS=1``; otherwise
    in this process (a fresh copy of its module at each start), for the app's and the hub's tests."""
    config = ServerConfig(name="ledger", type="stdio", command=sys.executable, args=[LEDGER_SERVER, marker])
    if marker or REAL_SERVERS:
        return config
    return in_process_config(config, lambda: server_module(LEDGER_SERVER).server)


def cli_env(dirs: Path) -> dict[str, str]:
    env = dict(os.environ, COLUMNS="120")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    return env


def append_call(ledger: Path, gate: Path | None = None, call_id: str = "call_1") -> dict:
    arguments = {"path": str(ledger), "line": "paid"}
    if gate is not None:
        arguments["gate"] = str(gate)
    return {"id": call_id, "type": "function", "function": {"name": "append", "arguments": json.dumps(arguments)}}


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


# ----- killed mid-call ---------------------------------------------------------------------------


def test_a_call_killed_mid_run_is_never_run_again_and_the_model_is_told_it_was_interrupted(
    tmp_path, isolated_user_dirs
):
    ledger, gate, chat = tmp_path / "ledger.txt", tmp_path / "gate", tmp_path / "chat.md"
    marker = new_marker()
    servers = tmp_path / "servers.json"
    servers.write_text(
        json.dumps({"servers": {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER, marker]}}})
    )
    base = [*CLI, "--endpoint", "{url}", "scripted", "--mcp-config", str(servers), "--transcript", str(chat), "--yes"]
    arguments = {"path": str(ledger), "line": "paid", "gate": str(gate)}
    with ScriptedEndpoint([tool_reply("append", arguments)]) as endpoint:
        command = [endpoint.url if part == "{url}" else part for part in base]
        process = subprocess.Popen(
            [*command, "-p", "pay once"],
            cwd=tmp_path,
            env=cli_env(isolated_user_dirs),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            assert wait_until(lambda: lines(ledger) == ["paid"], 60), "the tool never ran"
            os.killpg(process.pid, signal.SIGKILL)  # the call is held open: the kill lands mid-call
            process.wait(10)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            for pid in pids_with(marker):  # a server left behind by the kill
                os.kill(pid, signal.SIGKILL)
    [proposal] = parse(read_transcript_text(chat), chat).exchanges[0].steps[0].proposals
    assert proposal.interrupted and proposal.server == "ledger" and proposal.choice == "auto"

    with ScriptedEndpoint(["I cannot tell whether it ran.", "It may or may not have been paid."]) as endpoint:
        command = [endpoint.url if part == "{url}" else part for part in base]
        assert command[: len(CLI)] == CLI  # the resume in this process: its report, code and file are checked
        resumed = cli_in_process.run_cli(
            [*command[len(CLI) :], "-p", "so, was it paid?", "--json"], cwd=tmp_path, env=cli_env(isolated_user_dirs)
        )
    gate.touch()
    assert lines(ledger) == ["paid"], "the interrupted call ran again on resume"
    assert resumed.returncode == 3, resumed.stderr
    assert "--yes never runs an interrupted call again" in resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["calls"][0]["outcome"] == "interrupted" and report["calls"][0]["error"] == INTERRUPTED_MESSAGE
    told = {"role": "tool", "tool_call_id": "call_1", "name": "append", "content": INTERRUPTED_MESSAGE}
    assert told in endpoint.requests[0]["messages"]
    [proposal] = parse(read_transcript_text(chat), chat).exchanges[0].steps[0].proposals
    assert proposal.result.status == "interrupted" and proposal.result.content == INTERRUPTED_MESSAGE


def interrupted_transcript(ledger: Path) -> Transcript:
    started = datetime(2026, 1, 31, 9, 15, 7)
    proposal = Proposal(append_call(ledger), "auto", proposed_at=started, started_at=started, server="ledger")
    return Transcript([Exchange("pay once", "scripted", [Step(text="Paying.", proposals=[proposal])])])


def question_shown(app) -> bool:
    """The approval dialog is up, composed (pushed is not enough: its lines mount a frame later) and
    armed (it takes keys)."""
    return dialog_armed(app, ApprovalScreen) and bool(app.screen.query("#approval-recorded"))


async def test_the_app_shows_an_interrupted_call_and_runs_it_again_only_on_an_explicit_yes(tmp_path):
    for key, expected in (("n", []), ("y", ["paid"])):
        ledger, path = tmp_path / f"ledger-{key}.txt", tmp_path / f"chat-{key}.md"
        path.write_text(render(interrupted_transcript(ledger)), encoding="utf-8")
        engine = ScriptedEngine(["Noted."])
        app = make_app(
            engine,
            [ledger_config()],
            policy=ApprovalPolicy("auto"),
            transcript_file=path,
            transcript=parse(path.read_text(encoding="utf-8")),
        )
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.built and app.calls_table.records, what="the loaded conversation")
            [record] = app.calls_table.records.values()
            # shown as interrupted, until the app asks about it again (on a loaded machine, maybe already)
            assert record.state in (CallState.INTERRUPTED, CallState.AWAITING) and record.server == "ledger"
            assert "may or may not have run" in call_report(record, app.clock)
            # auto-run (as with --yes) does not answer for an interrupted call: the user is asked, once
            # the app has started (its first start in a process imports the SDK: many seconds under load)
            await wait_ready(pilot, app)
            await wait_for(pilot, lambda: question_shown(app), what="the question")
            assert "interrupted: it may or may not have run" in str(app.screen.query_one("#approval-recorded").render())
            await pilot.press(key)
            await wait_turn_done(pilot, app)
            assert record.state is (CallState.INTERRUPTED if key == "n" else CallState.DONE)
        assert lines(ledger) == expected
        saved = parse(read_transcript_text(path)).exchanges[0].steps[0].proposals[0]
        if key == "n":
            assert saved.result.status == "interrupted"
            assert {
                "role": "tool",
                "tool_call_id": "call_1",
                "name": "append",
                "content": INTERRUPTED_MESSAGE,
            } in engine.prompts[0]
        else:
            assert saved.result.status == "done" and saved.choice == "yo" and saved.started_at is not None


# ----- approved in the file, never started -------------------------------------------------------


async def test_a_call_the_file_approved_but_never_started_asks_again_showing_the_recorded_choice(tmp_path):
    ledger, path = tmp_path / "ledger.txt", tmp_path / "approved.md"
    earlier = Proposal(append_call(ledger, call_id="call_0"), "yO")  # "always" in the file grants nothing either
    earlier_step = Step(proposals=[earlier])
    from mcp_chat_tui.transcript import ToolResult

    earlier.result = ToolResult("append", "call_0", "done", "appended 'paid'", "ledger", 0.01)
    approved = Transcript(
        [Exchange("pay", "scripted", [earlier_step, Step(proposals=[Proposal(append_call(ledger), "yo")])])]
    )
    path.write_text(render(approved), encoding="utf-8")
    app = make_app(
        ScriptedEngine(["Paid."]), [ledger_config()], transcript_file=path, transcript=parse(path.read_text())
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)  # the start-up first: its own bound, not the question's
        await wait_for(pilot, lambda: question_shown(app), what="the question")
        assert not ledger.exists(), "the file's yes ran the tool"
        shown = str(app.screen.query_one("#approval-recorded").render())
        assert "records [yo]" in shown and "never started" in shown
        await pilot.press("y")
        await wait_turn_done(pilot, app)
    assert lines(ledger) == ["paid"]


async def test_yes_confirms_a_call_the_file_approved(tmp_path):
    ledger, path = tmp_path / "ledger.txt", tmp_path / "approved.md"
    approved = Transcript([Exchange("pay", "scripted", [Step(proposals=[Proposal(append_call(ledger), "yo")])])])
    path.write_text(render(approved), encoding="utf-8")
    app = make_app(
        ScriptedEngine(["Paid."]),
        [ledger_config()],
        policy=ApprovalPolicy("auto"),
        transcript_file=path,
        transcript=parse(path.read_text()),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_for(pilot, lambda: lines(ledger) == ["paid"], what="the call")
        await wait_turn_done(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
    assert lines(ledger) == ["paid"]


# ----- stopped with Esc --------------------------------------------------------------------------


async def test_esc_cancels_a_running_call_at_the_server_and_it_ends_cancelled_everywhere(tmp_path):
    ledger, gate, path = tmp_path / "ledger.txt", tmp_path / "gate", tmp_path / "chat.md"
    arguments = {"path": str(ledger), "line": "paid", "gate": str(gate)}
    engine = ScriptedEngine([[call("append", arguments)], "never asked for"])
    app = make_app(engine, [ledger_config()], policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "pay once")
        await wait_for(pilot, lambda: lines(ledger) == ["paid"], what="the call to run")
        [record] = app.calls_table.records.values()
        await wait_for(pilot, lambda: record.state is CallState.RUNNING, what="the running row")
        await pilot.press("escape")
        await wait_turn_done(pilot, app)
        assert record.state is CallState.CANCELLED and record.duration is not None and record.duration > 0
        assert "■ cancelled" in str(app.calls_table.get_cell(record.key, "state"))
        assert "cancelled" in str(app.call_store.cards[record.key].render())
        assert "state: cancelled" in call_report(record, app.clock)
        await wait_for(pilot, lambda: Path(str(ledger) + ".cancelled").exists(), what="the server to hear the cancel")
        status = app.hub.status("ledger")
        assert status.state.value == "ready" and status.calls_in_flight == 0, "the server is left busy"
        assert app.agent.messages[-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "append",
            "content": STOPPED_MESSAGE,
        }
    gate.touch()
    assert engine.replies == ["never asked for"]
    saved = parse(read_transcript_text(path))
    [proposal] = saved.exchanges[0].steps[0].proposals
    result = proposal.result
    assert result.status == "cancelled" and result.server == "ledger" and result.duration > 0
    assert saved.exchanges[0].end == "stopped"

    resumed = make_app(ScriptedEngine([]), [ledger_config()], transcript_file=path, transcript=saved, frozen=False)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        [record] = resumed.calls_table.records.values()
        assert record.state is CallState.CANCELLED and record.server == "ledger"
        assert record.duration == result.duration and record.started_at == proposal.started_at

        def cell(column):
            return str(resumed.calls_table.get_cell(record.key, column))

        assert cell("time") == proposal.started_at.strftime("%H:%M:%S") and "ledger" in cell("tool")
        assert "■ stopped" in chat_text(resumed)
    assert lines(ledger) == ["paid"]


# ----- call ids ----------------------------------------------------------------------------------


async def test_call_ids_are_unique_within_a_conversation_and_across_a_resume(tmp_path):
    ledger, path = tmp_path / "ledger.txt", tmp_path / "chat.md"

    def line(text: str) -> dict:  # (the same arguments again in one turn are a repeat, not run)
        return {"path": str(ledger), "line": text}

    engine = ScriptedEngine(
        [
            [call("append", line("a")), call("append", line("b")), call("append", line("c"), "mine")],
            [call("append", line("d")), call("append", line("e"), "mine")],
            "done",
        ]
    )
    app = make_app(engine, [ledger_config()], policy=ApprovalPolicy("auto"), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_turn_done(pilot, app)
        second = list(app.calls_table.records.values())[1]
        assert "call id: call_2 (the model's id: call_1)" in call_report(second, app.clock)
    ids = [p.call_id for p in parse(read_transcript_text(path)).all_proposals()]
    assert ids == ["call_1", "call_2", "mine", "call_3", "mine_2"]
    assert len(lines(ledger)) == 5

    engine = ScriptedEngine([[call("append", line("f"))], "done"])
    resumed = make_app(
        engine,
        [ledger_config()],
        policy=ApprovalPolicy("auto"),
        transcript_file=path,
        transcript=parse(read_transcript_text(path)),
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        await send(pilot, "again")
        await wait_turn_done(pilot, resumed)
    ids = [p.call_id for p in parse(read_transcript_text(path)).all_proposals()]
    assert ids[-1] == "call_4" and len(set(ids)) == len(ids)


def test_plain_asks_before_running_an_interrupted_call_again(tmp_path, isolated_user_dirs):
    from tests.test_tui_exit import Terminal

    ledger, path = tmp_path / "ledger.txt", tmp_path / "chat.md"
    path.write_text(render(interrupted_transcript(ledger)), encoding="utf-8")
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"servers": {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER]}}}))
    with ScriptedEndpoint(["Paid now."]) as endpoint:
        terminal = Terminal(
            [
                *CLI,
                "--endpoint",
                endpoint.url,
                "scripted",
                "--mcp-config",
                str(servers),
                "--transcript",
                str(path),
                "--plain",
            ],
            tmp_path,
            dict(cli_env(isolated_user_dirs), TERM="dumb"),
        )
        try:
            assert wait_until(lambda: "all and stop:" in terminal.text(), 60), terminal.text()
            assert "interrupted: it may or may not have run" in terminal.text() and not ledger.exists()
            terminal.press(b"y\n")
            assert wait_until(lambda: "Paid now." in terminal.text(), 30), terminal.text()
            terminal.press(b"bye\n")
            assert wait_until(lambda: terminal.status is not None, 30), terminal.text()
        finally:
            terminal.close()
    assert terminal.status == 0, terminal.text()
    assert lines(ledger) == ["paid"]
    [proposal] = parse(read_transcript_text(path)).exchanges[0].steps[0].proposals
    assert proposal.result.status == "done" and proposal.choice == "yo"


class SlowDisk:
    """A saver (``AutoSaver``'s interface) on a slow disk: each text given is written, in order and
    atomically, ``delay`` seconds after the one before; what a server reads before then is the old file."""

    def __init__(self, path: Path, delay: float = 0.3) -> None:
        import queue
        import threading

        self.path, self.delay = path, delay
        self._texts: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._write, daemon=True).start()

    def _write(self) -> None:
        import time

        from mcp_chat_tui.transcript import write_atomically

        while True:
            text = self._texts.get()
            time.sleep(self.delay)  # the slow disk itself, not a wait in the test
            write_atomically(self.path, text)
            self._texts.task_done()

    def save(self, text: str) -> None:
        self._texts.put(text)

    def flush(self, timeout: float = 10.0) -> bool:
        self._texts.join()
        return True

    def close(self) -> None:
        self.flush()


async def test_a_calls_start_is_on_disk_before_the_call_reaches_its_server(tmp_path):
    from mcp_chat_tui.agent import Agent
    from mcp_chat_tui.conversation.recording import RecordingSink
    from mcp_chat_tui.servers import ServerHub
    from mcp_chat_tui.transcript import TranscriptRecorder

    path = tmp_path / "chat.md"
    recorder = TranscriptRecorder(saver=SlowDisk(path))
    async with ServerHub([ledger_config()]) as hub:
        await hub.start_all()
        agent = Agent(ScriptedEngine([[call("read", {"path": str(path)})], "ok"]), hub, ApprovalPolicy("auto"))
        agent.checkpoint = recorder.persisted
        await agent.run_turn("read the conversation", RecordingSink(recorder, "scripted"))
    recorder.close()
    [proposal] = recorder.transcript.exchanges[0].steps[0].proposals
    seen_by_the_server = proposal.result.content
    assert '`{"id":"call_1"' in seen_by_the_server and '"started": "' in seen_by_the_server
    assert '"server": "ledger"' in seen_by_the_server


async def test_a_resumed_conversation_shows_each_call_as_it_was_shown_live(tmp_path, monkeypatch):
    ledger, path = tmp_path / "ledger.txt", tmp_path / "chat.md"

    class LateClock(datetime):
        """The app handles each proposal seconds after the model made it (as on a loaded machine)."""

        @classmethod
        def now(cls, tz=None):
            return datetime.now(tz) + timedelta(seconds=5)

    monkeypatch.setattr("mcp_chat_tui.ui.call_store.datetime", LateClock)
    ran, denied = (
        call("read", {"path": str(path)}, "call_1"),
        call("append", {"path": str(ledger), "line": "no"}, "call_2"),
    )
    app = make_app(
        ScriptedEngine([[ran, denied], "One read, one denied."]), [ledger_config()], transcript_file=path, frozen=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        for key in ("y", "n"):
            await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the question")
            await pilot.press(key)
            await pilot.pause()
        await wait_turn_done(pilot, app)
        live = {
            r.call_id: ([str(c) for c in app.calls_table.get_row(r.key)], str(app.call_store.cards[r.key].render()))
            for r in app.calls_table.records.values()
        }
    resumed = make_app(
        ScriptedEngine([]),
        [ledger_config()],
        transcript_file=path,
        transcript=parse(read_transcript_text(path)),
        frozen=False,
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        shown = {
            r.call_id: (
                [str(c) for c in resumed.calls_table.get_row(r.key)],
                str(resumed.call_store.cards[r.key].render()),
            )
            for r in resumed.calls_table.records.values()
        }
    assert shown == live
    assert live["call_1"][0][1] == "✓ done" and live["call_2"][0][1] == "⊘ denied" and "ledger" in live["call_2"][0][0]
    assert not ledger.exists()


async def test_a_reply_the_engine_failed_shows_its_error_after_a_resume(tmp_path):
    path = tmp_path / "chat.md"
    failed = Transcript(
        [Exchange("hi", "scripted", [Step(text="Hel")], end="error", error="the model server went away")]
    )
    path.write_text(render(failed), encoding="utf-8")
    app = make_app(ScriptedEngine([]), [], transcript_file=path, transcript=parse(path.read_text(encoding="utf-8")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "error: the model server went away" in chat_text(app)


def test_json_says_who_allowed_the_calls_a_resume_runs(tmp_path, isolated_user_dirs):
    ledger, path = tmp_path / "ledger.txt", tmp_path / "approved.md"
    approved = Transcript([Exchange("pay", "scripted", [Step(proposals=[Proposal(append_call(ledger), "yo")])])])
    path.write_text(render(approved), encoding="utf-8")
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"servers": {"ledger": {"command": sys.executable, "args": [LEDGER_SERVER]}}}))
    with ScriptedEndpoint(["Paid.", "It is paid."]) as endpoint:
        result = cli_in_process.run_cli(  # in this process: its report, code and the ledger are checked
            ["--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--transcript", str(path)]
            + ["--yes", "-p", "is it paid?", "--json"],
            cwd=tmp_path,
            env=cli_env(isolated_user_dirs),
        )
    assert result.returncode == 0, result.stderr
    assert lines(ledger) == ["paid"]
    [entry] = json.loads(result.stdout)["calls"]
    assert (entry["id"], entry["outcome"], entry["choice"], entry["allowed_by"]) == ("call_1", "done", "auto", "--yes")

"""Calls run as tasks from the command line: ``-p --json`` reports the task a call ran as, and a run
killed while its task ran leaves the task's id in the conversation file, so the next run fetches the
result that came meanwhile ("finished while the app was closed") and never creates the task again.

Real parts: the CLI as a subprocess killed with SIGKILL, tests/servers/task_server.py over HTTP (it
outlives the CLI, as a remote server does), a scripted model endpoint, the conversation file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.helpers import free_port, start_http_server, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_call_lifecycle import CLI, cli_env
from tests.test_tasks_hub import TASK_SERVER, logged


def test_json_reports_the_task_a_call_ran_as(tmp_path, isolated_user_dirs):
    log, servers = tmp_path / "server.log", tmp_path / "servers.json"
    servers.write_text(
        json.dumps({"servers": {"films": {"command": sys.executable, "args": [TASK_SERVER, "--log", str(log)]}}})
    )
    with ScriptedEndpoint([tool_reply("render", {"frames": 2}), "Rendered two frames."]) as endpoint:
        run = subprocess.run(
            [*CLI, "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--yes"]
            + ["--no-save", "-p", "render it", "--json"],
            cwd=tmp_path,
            env=cli_env(isolated_user_dirs),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert run.returncode == 0, run.stderr
    [call] = json.loads(run.stdout)["calls"]
    task_id = logged(log)[0].split()[2]
    assert call["outcome"] == "done" and call["result"] == "rendered 2 frames"
    task = call["task"]  # with the server's last status message when it came before the result
    assert task["id"] == task_id and task["status"] == "completed" and task.get("message", "done") == "done"
    assert "⧗ render task working" in run.stderr and task_id in run.stderr  # stderr follows the task


def test_a_run_killed_while_its_task_ran_fetches_the_result_next_time_and_never_calls_again(
    tmp_path, isolated_user_dirs
):
    log, chat, servers = tmp_path / "server.log", tmp_path / "chat.md", tmp_path / "servers.json"
    port = free_port()
    server = start_http_server([TASK_SERVER, "--http", str(port), "--log", str(log)], port)
    try:
        servers.write_text(json.dumps({"servers": {"films": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}}))
        base = [*CLI, "--endpoint", "{url}", "scripted", "--mcp-config", str(servers), "--transcript", str(chat)]
        arguments = {"frames": 6, "frame_seconds": 0.5}
        with ScriptedEndpoint([tool_reply("render", arguments)]) as endpoint:
            command = [endpoint.url if part == "{url}" else part for part in base]
            process = subprocess.Popen(
                [*command, "--yes", "-p", "render the film"],
                cwd=tmp_path,
                env=cli_env(isolated_user_dirs),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                assert wait_until(lambda: logged(log), 60), "the task was never created"
                task_id = logged(log)[0].split()[2]
                assert wait_until(lambda: chat.exists() and f'"task": "{task_id}"' in chat.read_text(), 30)
                os.killpg(process.pid, signal.SIGKILL)  # the app ends mid-task
                process.wait(10)
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
        [proposal] = parse(read_transcript_text(chat), chat).exchanges[0].steps[0].proposals
        assert proposal.task_id == task_id and proposal.result is None
        assert wait_until(lambda: f"completed {task_id}" in logged(log), 30), "the task did not finish at its server"

        with ScriptedEndpoint(["It rendered six frames.", "Yes: six frames."]) as endpoint:
            command = [endpoint.url if part == "{url}" else part for part in base]
            resumed = subprocess.run(  # no --yes: nothing is asked, nothing runs again
                [*command, "-p", "did it render?", "--json"],
                cwd=tmp_path,
                env=cli_env(isolated_user_dirs),
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
        assert resumed.returncode == 0, resumed.stderr
        report = json.loads(resumed.stdout)
        [call] = report["calls"]
        assert call["outcome"] == "done" and call["result"] == "rendered 6 frames"
        assert call["task"] == {"id": task_id, "status": "completed", "message": "done", "finished_while_closed": True}
        assert "finished while the app was closed" in resumed.stderr
        told = {"role": "tool", "tool_call_id": "call_1", "name": "render", "content": "rendered 6 frames"}
        assert told in endpoint.requests[0]["messages"]
        assert report["answer"].strip() == "Yes: six frames."
        assert [line for line in logged(log) if line.startswith("created")] == [
            f'created render {task_id} {{"frame_seconds": 0.5, "frames": 6}}'
        ], "the call was made again"
        [proposal] = parse(read_transcript_text(chat), chat).exchanges[0].steps[0].proposals
        assert proposal.result.status == "done" and proposal.result.task.finished_while_closed
    finally:
        server.kill()
        server.wait(10)

"""A folder's mcp.json starts nothing until the user trusts it: the real CLI in a subprocess, in a
working folder with a planted ``mcp.json`` whose server (tests/servers/planted_server.py, written
with the SDK) writes a line to a file as it starts; the trust store on disk; the question on a
terminal (a pty) and without one."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

from mcp_chat_tui.config.folder_trust import TRUST_FILE_NAME, TrustStore, folder_file, read_fingerprint
from tests.helpers import PLANTED_SERVER, starts, wait_until
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import CLI, run_cli


def plant(folder: Path, started: Path, *, name: str = "planted", where: str = "mcp.json", **extra) -> Path:
    """A folder's mcp.json with one server that writes a line to ``started`` as it starts."""
    path = folder / where
    path.parent.mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": [PLANTED_SERVER, "--started-file", str(started)], **extra}
    path.write_text(json.dumps({"servers": {name: server}}), encoding="utf-8")
    return path


def store_file(dirs: Path) -> Path:
    return dirs / "config" / TRUST_FILE_NAME


def test_without_a_terminal_a_folders_mcp_json_starts_nothing_and_says_how_to_trust_it(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    plant(tmp_path, started)
    result = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert f"./mcp.json ({tmp_path / 'mcp.json'}) would start servers (planted) and is not trusted yet" in message
    assert "pass --trust-folder" in message and "--yes" in message
    assert starts(started) == 0, "nothing of the file ran"
    assert not store_file(isolated_user_dirs).exists()


def test_one_shot_without_a_terminal_refuses_before_the_model_is_asked(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    plant(tmp_path, started, where=".vscode/mcp.json")
    with ScriptedEndpoint([]) as endpoint:
        result = run_cli("--endpoint", endpoint.url, "scripted", "-p", "hi", cwd=tmp_path, dirs=isolated_user_dirs)
        assert endpoint.requests == []
    assert result.returncode == 2 and result.stdout == ""
    assert "./.vscode/mcp.json" in result.stderr and "--trust-folder" in result.stderr
    assert starts(started) == 0


def test_trust_folder_and_yes_answer_for_one_run_and_remember_nothing(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    plant(tmp_path, started)
    checked = run_cli("--check-servers", "--trust-folder", cwd=tmp_path, dirs=isolated_user_dirs)
    assert checked.returncode == 0, checked.stderr
    assert "planted" in checked.stdout and "ready" in checked.stdout and starts(started) == 1
    script = [tool_reply("whoami", {}), "it is planted"]
    with ScriptedEndpoint(script) as endpoint:
        answered = run_cli(
            "--endpoint", endpoint.url, "scripted", "-p", "who?", "--yes", cwd=tmp_path, dirs=isolated_user_dirs
        )
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.strip() == "it is planted" and starts(started) == 2
    assert not store_file(isolated_user_dirs).exists(), "a flag answers for its run only"
    again = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert again.returncode == 2 and starts(started) == 2


def test_the_users_own_files_are_never_asked_about(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    named = plant(tmp_path / "elsewhere", started)
    result = run_cli("--check-servers", "--mcp-config", str(named), cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    own = plant(isolated_user_dirs / "config", started)
    result = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert "user config directory" in result.stdout and starts(started) == 2
    (tmp_path / "mcp.json").symlink_to(own)  # the working folder's file is the user's own, by a link
    result = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert starts(started) == 3


def ask_on_a_terminal(
    folder: Path, dirs: Path, answer: str, *args: str, typed_ahead: str = ""
) -> subprocess.CompletedProcess:
    """The CLI with a terminal on stdin (a pty): ``typed_ahead`` typed as it starts, ``answer`` once the
    question has put its keys (a line typed before answers nothing), then ``bye``."""
    env = dict(os.environ, COLUMNS="200")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    controller, terminal = pty.openpty()
    said: list[str] = []  # stderr, as it comes
    try:
        with subprocess.Popen(
            [*CLI, *args],
            cwd=folder,
            env=env,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            stderr = process.stderr
            reading = threading.Thread(target=lambda: said.extend(iter(lambda: stderr.read(1), "")), daemon=True)
            reading.start()
            if typed_ahead:
                os.write(controller, f"{typed_ahead}\n".encode())
            assert wait_until(lambda: "[y/N]" in "".join(said), 60), "".join(said)
            os.write(controller, f"{answer}\nbye\n".encode())
            out = process.stdout.read()
            process.wait(120)
            reading.join(10)
        return subprocess.CompletedProcess(process.args, process.returncode, out, "".join(said))
    finally:
        os.close(controller)
        os.close(terminal)


def test_on_a_terminal_it_lists_what_would_run_and_a_yes_is_remembered_for_this_version(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started, env={"API_TOKEN": "${input:token}"}, cwd="tools")
    (tmp_path / "tools").mkdir()
    document = json.loads(path.read_text())
    document["inputs"] = [{"id": "token", "type": "promptString", "description": "the token", "default": "t0ken"}]
    path.write_text(json.dumps(document))
    declined = ask_on_a_terminal(tmp_path, isolated_user_dirs, "n", "--check-servers")
    assert declined.returncode == 0, declined.stderr
    shown = " ".join(declined.stderr.split())
    assert f"./mcp.json ({path}) would start 1 server: planted (stdio)" in shown
    assert f"runs: {sys.executable} {PLANTED_SERVER} --started-file {started}" in shown
    assert f"in: {tmp_path / 'tools'} env: API_TOKEN" in shown
    assert "the token" not in declined.stdout + shown, "the file's inputs are not asked before it is trusted"
    assert "./mcp.json not trusted: running without its 1 server" in shown
    assert starts(started) == 0 and not store_file(isolated_user_dirs).exists()

    trusted = ask_on_a_terminal(tmp_path, isolated_user_dirs, "y", "--check-servers")
    assert "planted" in trusted.stdout and "ready" in trusted.stdout, trusted.stderr
    assert starts(started) == 1
    stored = json.loads(store_file(isolated_user_dirs).read_text())
    assert stored["files"][str(path)]["sha256"] == read_fingerprint(path).sha256

    quiet = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert quiet.returncode == 0 and "would start" not in quiet.stderr and starts(started) == 2

    path.write_text(path.read_text().replace("the token", "the token, again"))
    changed = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert changed.returncode == 2 and "not trusted yet" in changed.stderr, "a changed file asks again"
    assert starts(started) == 2


def test_a_yes_typed_before_the_question_was_put_does_not_trust_the_file(tmp_path, isolated_user_dirs):
    """A line typed as the program starts (before the question could be read) is not its answer:
    the question says so and takes the next line typed after its keys were shown."""
    started = tmp_path / "started.txt"
    plant(tmp_path, started)
    result = ask_on_a_terminal(tmp_path, isolated_user_dirs, "n", "--check-servers", typed_ahead="y")
    assert result.returncode == 0, result.stderr
    assert starts(started) == 0 and not store_file(isolated_user_dirs).exists(), "the y typed ahead trusted it"
    shown = " ".join(result.stderr.split())
    assert "(typed before this question, so not taken as its answer: y)" in shown
    assert "./mcp.json not trusted: running without its 1 server" in shown


def test_what_the_question_shows_of_each_server(tmp_path, monkeypatch):
    monkeypatch.setenv("HIDDEN_VALUE", "value-from-the-environment")
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "inputs": [{"id": "pw", "type": "promptString", "password": True}],
                "servers": {
                    "local": {
                        "command": "run-me",
                        "args": ["--key", "${input:pw}"],
                        "envFile": ".env",
                        "env": {"SECRET": "${env:HIDDEN_VALUE}"},
                    },
                    "remote": {
                        "type": "sse",
                        "url": "https://me:${input:pw}@example.com/sse?token=abc&debug",
                        "headers": {"Authorization": "Bearer ${input:pw}"},
                    },
                    "off": {"command": "never", "disabled": True},
                },
            }
        )
    )
    folder = folder_file(path, "./.vscode/mcp.json", tmp_path)
    assert folder is not None
    assert folder.describe() == [
        f"./.vscode/mcp.json ({path}) would start 2 servers:",
        "  local (stdio)",
        "    runs: run-me --key '${input:pw}'",
        f"    in: {tmp_path}",
        "    env: SECRET",
        f"    env file: {path.parent / '.env'} (its variables are read when the server starts)",
        "  remote (sse)",
        "    connects to: https://example.com/sse?token=…&debug",
        "    headers: Authorization",
        "  and lists off (disabled: not started)",
    ]
    assert folder_file(path, "--mcp-config", tmp_path) is None
    assert folder_file(path, "user config directory", tmp_path) is None


def test_the_store_keeps_one_version_per_file_and_never_writes_through_a_link(tmp_path):
    store = TrustStore(tmp_path / "config" / TRUST_FILE_NAME)
    first = tmp_path / "a" / "mcp.json"
    first.parent.mkdir()
    first.write_text('{"servers": {}}')
    version = read_fingerprint(first)
    assert not store.trusts(version)
    store.remember(version)
    assert store.trusts(version) and oct(store.path.stat().st_mode & 0o777) == "0o600"
    first.write_text('{"servers": {} }')
    assert not store.trusts(read_fingerprint(first))
    store.remember(read_fingerprint(first))
    assert not store.trusts(version) and len(json.loads(store.path.read_text())["files"]) == 1

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    store.path.unlink()
    store.path.symlink_to(victim)
    assert not store.trusts(read_fingerprint(first)), "a link is not read"
    store.remember(read_fingerprint(first))
    assert victim.read_text() == "keep me" and not store.path.is_symlink()
    assert store.trusts(read_fingerprint(first))
    assert [p.name for p in store.path.parent.iterdir()] == [TRUST_FILE_NAME], "no temporary file left"

    store.path.write_text("{not json")
    assert not store.trusts(read_fingerprint(first)), "an unreadable store trusts nothing"

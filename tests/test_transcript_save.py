"""Nothing is lost silently: a save that fails is shown, retried, and makes the run fail; a file
replaced keeps its permissions. Real files, a real full file system, the real CLI and app."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import AutoSaver, Exchange, Step, Transcript, parse, render, write_atomically
from tests.fakes import ScriptedEngine
from tests.helpers import wait_until
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_oneshot import demo_servers, run_cli
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

HELLO = render(Transcript([Exchange("hello", "m", [Step(text="hi there")])]))


class Changes:
    """What an ``AutoSaver`` reported through ``on_change``, in order (called from its thread)."""

    def __init__(self) -> None:
        self.seen: list[Exception | None] = []
        self._lock = threading.Lock()

    def __call__(self, error: Exception | None) -> None:
        with self._lock:
            self.seen.append(error)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_replacing_a_file_keeps_its_permissions(mode, tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(mode)
    write_atomically(path, HELLO + "💬: more\n\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode and path.read_text(encoding="utf-8").endswith("more\n\n")


def test_a_new_conversation_file_is_private(tmp_path):
    write_atomically(tmp_path / "new.md", HELLO)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o600


def test_a_read_only_file_is_never_replaced_the_failure_is_reported_and_retried(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    changes = Changes()
    saver = AutoSaver(path, on_change=changes, retry_interval=0.2)
    try:
        saver.save(HELLO + "💬: more\n\n")
        assert not saver.flush()
        assert isinstance(changes.seen[0], PermissionError)
        assert saver.problem == f"cannot save {path}: the file is read-only"
        assert path.read_text(encoding="utf-8") == HELLO and stat.S_IMODE(path.stat().st_mode) == 0o444
        path.chmod(0o644)  # the user fixes it: the next retry saves, without another event
        assert wait_until(lambda: saver.saved, 10)
        assert changes.seen[-1] is None and len(changes.seen) == 2  # one report per change, not per retry
        assert path.read_text(encoding="utf-8").endswith("more\n\n")
    finally:
        assert saver.close()


def test_a_removed_folder_is_a_save_failure_not_silently_made_again(tmp_path):
    folder = tmp_path / "conversations"
    path = folder / "chat.md"
    changes = Changes()
    saver = AutoSaver(path, on_change=changes, retry_interval=0.2)
    try:
        saver.save(HELLO)
        assert saver.flush() and path.read_text(encoding="utf-8") == HELLO
        shutil.rmtree(folder)
        saver.save(HELLO + "💬: more\n\n")
        assert not saver.flush()
        assert saver.problem == f"cannot save {path}: its folder no longer exists ({folder})"
        assert not folder.exists()
        folder.mkdir()  # the next event saves again
        saver.save(HELLO + "💬: again\n\n")
        assert saver.flush() and changes.seen[-1] is None
        assert path.read_text(encoding="utf-8").endswith("again\n\n")
    finally:
        saver.close()


def test_close_says_whether_everything_was_saved(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    saver = AutoSaver(path, retry_interval=30)
    saver.save(HELLO + "💬: more\n\n")
    assert saver.close(timeout=5) is False and not saver.saved


def tiny_filesystem_available() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"], capture_output=True, timeout=30
    )
    return probe.returncode == 0


@pytest.mark.skipif(not tiny_filesystem_available(), reason="needs unshare and tmpfs in a user namespace")
def test_a_full_disk_makes_p_exit_1_says_why_and_keeps_the_file(tmp_path, isolated_user_dirs):
    """A real full file system: a 64 KiB tmpfs (in a private mount namespace) holding a 40 KB
    transcript has no room for the new copy written beside it."""
    disk = tmp_path / "disk"
    disk.mkdir()
    exchanges = [Exchange(f"question {i}", "m", [Step(text="x" * 300)]) for i in range(120)]
    text = render(Transcript(exchanges))
    seed = tmp_path / "seed.md"
    seed.write_text(text, encoding="utf-8")
    config = demo_servers(tmp_path)
    env = dict(
        os.environ,
        COLUMNS="120",
        **{f"MCP_CHAT_TUI_{k}_DIR": str(isolated_user_dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")},
    )
    summaries = len(exchanges) + 1 - 3  # a resumed file's missing ones are written first (max_turns 3)
    with ScriptedEndpoint(["a summary"] * summaries + ["the answer"]) as endpoint:
        script = (
            f'mount -t tmpfs -o size=64k tmpfs "{disk}" && cp "{seed}" "{disk}/chat.md" && '
            f'"{sys.executable}" -m mcp_chat_tui.cli.main --endpoint {endpoint.url} scripted '
            f'--mcp-config "{config}" --transcript "{disk}/chat.md" -p "one more"; code=$?; '
            f'cmp -s "{seed}" "{disk}/chat.md" && echo UNCHANGED; exit $code'
        )
        result = subprocess.run(
            ["unshare", "-rm", "sh", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert result.returncode == 1, result.stderr
    assert "the answer" in result.stdout  # the answer is given; the run fails because it was not saved
    assert "UNCHANGED" in result.stdout
    message = " ".join(result.stderr.split())
    assert f"cannot save {disk}/chat.md: No space left on device" in message, message
    assert "Traceback" not in result.stderr


def test_a_read_only_transcript_makes_p_exit_1_with_one_line_on_stderr(tmp_path, isolated_user_dirs):
    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    with ScriptedEndpoint(["the answer"]) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(demo_servers(tmp_path)),
            "--transcript",
            str(path),
            "-p",
            "one more",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 1, result.stderr
    assert f"cannot save {path}: the file is read-only; retrying every 2 s" in " ".join(result.stderr.split())
    report = __import__("json").loads(result.stdout)
    assert report["answer"] == "the answer" and report["exit_code"] == 1
    assert report["save_error"] == f"cannot save {path}: the file is read-only"
    assert path.read_text(encoding="utf-8") == HELLO and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_the_plain_mode_says_at_once_when_saving_fails_and_exits_1(tmp_path, isolated_user_dirs):
    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    with ScriptedEndpoint(["the answer"]) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(demo_servers(tmp_path)),
            "--transcript",
            str(path),
            "--plain",
            stdin="one more\nbye\n",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if "cannot save" in line]
    assert lines[0] == f"cannot save {path}: the file is read-only; retrying every 2 s"  # one line, unwrapped
    assert "the last changes of this conversation are not saved" in result.stderr
    assert path.read_text(encoding="utf-8") == HELLO


def read_only_conversation(folder: Path):
    """A saved conversation whose file is read-only, and an app that goes on with it."""
    path = folder / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    return path, make_app(ScriptedEngine(["fine"]), transcript_file=path, transcript=parse(HELLO))


async def one_more_turn(pilot, app) -> None:
    await wait_ready(pilot, app)
    await send(pilot, "one more")
    await wait_turn_done(pilot, app)


async def test_the_app_shows_a_failed_save_in_the_status_bar_and_a_notification_until_it_works(tmp_path):
    path, app = read_only_conversation(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await one_more_turn(pilot, app)
        retrying = f"cannot save {path}: the file is read-only; retrying every 2 s"
        await wait_for(
            pilot,
            lambda: app.status_bar.save_problem and any(retrying in n.message for n in app._notifications),
            what="the failed save in the status bar and a notification",
        )
        assert app.status_bar.save_problem == f"cannot save {path}: the file is read-only"
        assert "not saved" in str(app.status_bar.render())
        path.chmod(0o644)
        await wait_for(
            pilot, lambda: not app.status_bar.save_problem, 20, "the retried save (every 2 s) to clear the problem"
        )
        assert "one more" in path.read_text(encoding="utf-8")
    assert app.unsaved is None


async def test_leaving_the_app_with_events_not_saved_is_noted_for_exit_1(tmp_path):
    path, app = read_only_conversation(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await one_more_turn(pilot, app)
        await send(pilot, "bye")
    assert (
        app.unsaved == f"cannot save {path}: the file is read-only: the last changes of this conversation are not saved"
    )
    assert path.read_text(encoding="utf-8") == HELLO


def test_the_full_screen_app_left_with_changes_not_saved_exits_1_and_says_why(tmp_path, isolated_user_dirs):
    from tests.test_tui_exit import Terminal

    path = tmp_path / "chat.md"
    path.write_text(HELLO, encoding="utf-8")
    path.chmod(0o444)
    env = dict(
        os.environ,
        TERM="xterm-256color",
        **{f"MCP_CHAT_TUI_{k}_DIR": str(isolated_user_dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")},
    )
    env.pop("COLUMNS", None), env.pop("LINES", None)
    with ScriptedEndpoint(["the answer"]) as endpoint:
        terminal = Terminal(
            [
                sys.executable,
                "-m",
                "mcp_chat_tui.cli.main",
                "--endpoint",
                endpoint.url,
                "scripted",
                "--mcp-config",
                str(demo_servers(tmp_path)),
                "--transcript",
                str(path),
            ],
            tmp_path,
            env,
        )
        try:
            assert wait_until(lambda: "ready" in terminal.text(), 60), terminal.text()[-2000:]
            terminal.press(b"one more\r")
            assert wait_until(lambda: "not saved" in terminal.text() and "the answer" in terminal.text(), 30), (
                terminal.text()[-2000:]
            )
            terminal.press(b"bye\r")
            assert wait_until(lambda: terminal.status is not None, 30), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert terminal.status == 1
    said = " ".join(terminal.text().split())
    assert f"cannot save {path}: the file is read-only: the last changes of this conversation are not saved" in said
    assert path.read_text(encoding="utf-8") == HELLO

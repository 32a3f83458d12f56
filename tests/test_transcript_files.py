"""A transcript file belongs to one running mcp-chat-tui, and a file that is not a transcript is
refused with one line: real processes, real files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import TranscriptInUse, TranscriptLock
from mcp_chat_tui.transcript.lock import lock_path
from tests.helpers import wait_until
from tests.test_oneshot import demo_servers, run_cli

TOP = Path(__file__).resolve().parent.parent
HOLD = (
    "import sys, time; from pathlib import Path; from mcp_chat_tui.transcript import TranscriptLock; "
    "TranscriptLock.acquire(Path(sys.argv[1])); print('held', flush=True); time.sleep(120)"
)


def hold_in_another_process(path: Path) -> subprocess.Popen:
    """A process that locks ``path`` and keeps it, as a running mcp-chat-tui does."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], cwd=TOP, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


MODES = {"full-screen app": [], "--plain": ["--plain"], "-p": ["-p", "hello"]}


@pytest.mark.parametrize("mode", MODES)
def test_a_second_instance_names_the_process_holding_the_file_and_exits_2(mode, tmp_path, isolated_user_dirs):
    path = tmp_path / "chat.md"
    text = '💬: what is 12 * 7?\n\n🤖:[m]\n\n❓: `{"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{}"}}`\n\n'
    path.write_text(text, encoding="utf-8")
    holder = hold_in_another_process(path)
    try:
        result = run_cli(
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "scripted",
            "--mcp-config",
            str(demo_servers(tmp_path)),
            "--transcript",
            str(path),
            "--yes",
            *MODES[mode],
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    finally:
        holder.kill()
        holder.wait(10)
    assert result.returncode == 2, result.stderr
    assert f"{path} is open in another mcp-chat-tui (process {holder.pid})" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert path.read_text(encoding="utf-8") == text  # the first instance's proposal was neither run nor answered


def test_a_second_instance_stops_while_the_first_runs_a_call(tmp_path, isolated_user_dirs):
    """The case of the issue: the first instance is mid-call; the second neither runs it nor writes."""
    path = tmp_path / "busy.md"
    env = dict(
        os.environ, **{f"MCP_CHAT_TUI_{k}_DIR": str(isolated_user_dirs / k.lower()) for k in ("CONFIG", "DATA", "LOG")}
    )
    first = subprocess.Popen(
        [sys.executable, str(TOP / "tests" / "apps" / "scripted_plain.py"), str(path), "wait"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_until(lambda: path.exists() and "❓:[auto]" in path.read_text(encoding="utf-8"), 60)
        before = path.read_bytes()
        second = run_cli(
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "scripted",
            "--mcp-config",
            str(demo_servers(tmp_path)),
            "--transcript",
            str(path),
            "--yes",
            "-p",
            "go on",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
        assert second.returncode == 2, second.stderr
        assert f"(process {first.pid})" in second.stderr
        assert path.read_bytes() == before
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)


def test_a_lock_left_by_a_killed_process_never_blocks(tmp_path):
    path = tmp_path / "chat.md"
    holder = hold_in_another_process(path)
    with pytest.raises(TranscriptInUse) as refused:
        TranscriptLock.acquire(path)
    assert refused.value.pid == holder.pid and refused.value.exit_code == 2
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    assert lock_path(path).exists()  # the side file outlives the kill; its lock does not
    lock = TranscriptLock.acquire(path)
    assert lock_path(path).read_text().strip() == str(os.getpid())
    lock.release()
    assert not lock_path(path).exists()


def test_one_process_may_take_its_own_lock_twice(tmp_path):
    path = tmp_path / "chat.md"
    first, second = TranscriptLock.acquire(path), TranscriptLock.acquire(path)
    first.release()
    assert lock_path(path).exists()  # still held by the second taker
    second.release()
    assert not lock_path(path).exists()


BAD_FILES = {
    "latin-1 text": (b"\xf0\x9f\x92\xac: hello\n\n\xf0\x9f\xa4\x96:[m]\n\ncaf\xe9\n", "line 5: byte 0xe9 is not UTF-8"),
    "a NUL byte": (b"\xf0\x9f\x92\xac: hello\n\nab\x00cd\n", "line 3: a NUL byte (byte 3 of the line)"),
    "a binary file": (bytes(range(256)) * 4, "line 1: a NUL byte (byte 1 of the line)"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_transcript_that_is_not_utf8_text_is_one_line_and_exit_2(case, tmp_path, isolated_user_dirs):
    content, expected = BAD_FILES[case]
    path = tmp_path / "bad.md"
    path.write_bytes(content)
    result = run_cli(
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "scripted",
        "--mcp-config",
        str(demo_servers(tmp_path)),
        "--transcript",
        str(path),
        "--plain",
        cwd=tmp_path,
        dirs=isolated_user_dirs,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "UnicodeDecodeError" not in result.stderr
    message = " ".join(result.stderr.split())
    assert f"{path}: {expected}" in message and "a transcript is UTF-8 text" in message, message
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.md", "servers.json"]  # no lock or temporary left


def test_a_folder_given_as_the_transcript_is_one_line_and_exit_2(tmp_path, isolated_user_dirs):
    folder = tmp_path / "notes"
    folder.mkdir()
    result = run_cli(
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "scripted",
        "--mcp-config",
        str(demo_servers(tmp_path)),
        "--transcript",
        str(folder),
        "-p",
        "hi",
        cwd=tmp_path,
        dirs=isolated_user_dirs,
    )
    assert result.returncode == 2
    assert f"{folder}: is a folder, not a transcript file" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr and list(folder.iterdir()) == []


async def test_the_palette_does_not_open_a_conversation_another_instance_holds(tmp_path):
    from mcp_chat_tui.transcript import Exchange, Step, Transcript, render
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    path = tmp_path / "theirs.md"
    text = render(Transcript([Exchange("their question", "m", [Step(text="their answer")])]))
    path.write_text(text, encoding="utf-8")
    holder = hold_in_another_process(path)
    try:
        app = make_app(ScriptedEngine([]))
        async with app.run_test(size=SIZE) as pilot:
            await wait_ready(pilot, app)
            assert await app.open_conversation(path) is False
            held = f"is open in another mcp-chat-tui (process {holder.pid})"
            await wait_for(
                pilot,
                lambda: any(held in str(n.message) for n in app._notifications),
                what=f"the notice that the file {held}",
            )
            assert app.recorder.transcript.exchanges == [] and app.transcript_file is None
    finally:
        holder.kill()
        holder.wait(10)
    assert path.read_text(encoding="utf-8") == text


def test_the_same_file_by_another_path_is_the_same_lock(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    first = TranscriptLock.acquire(tmp_path / "real" / "chat.md")
    second = TranscriptLock.acquire(tmp_path / "link" / ".." / "link" / "chat.md")  # no conflict with itself
    assert second is first
    first.release()
    second.release()
    assert list((tmp_path / "real").iterdir()) == []

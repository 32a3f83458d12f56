"""A conversation's folder may come from a zip or a git repository: every name beside a conversation
may be a planted link (to a file of the user's), a FIFO or a device. Each file the app writes is
tested against a link at its name: the file linked to keeps its bytes and its permissions, and the
link is refused with a message naming it (or, for the lock, removed and replaced)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.files import RefusedFile, open_append, read_regular, replace_file
from mcp_chat_tui.core.media_info import save_media
from mcp_chat_tui.servers.stderr import RotatingLog
from mcp_chat_tui.servers.token_vault import TokenVault
from mcp_chat_tui.transcript import AutoSaver, TranscriptLock, write_export
from mcp_chat_tui.transcript.media import keep_media, media_folder

TOP = Path(__file__).resolve().parent.parent

PRECIOUS = "precious: never to be overwritten\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file of the user's, outside the conversation's folder, that a planted link points to."""
    home = tmp_path / "home"
    home.mkdir()
    path = home / "victim"
    path.write_text(PRECIOUS)
    os.chmod(path, 0o644)
    return path


def untouched(victim: Path) -> bool:
    return victim.read_text() == PRECIOUS and stat.S_IMODE(victim.stat().st_mode) == 0o644


def folder_with_link(tmp_path: Path, name: str, victim: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir(exist_ok=True)
    (folder / name).symlink_to(victim)
    return folder


# ----- the shared helpers ----------------------------------------------------------------------


def test_replace_file_keeps_the_mode_of_the_file_it_replaces_and_refuses_a_link(tmp_path, victim):
    path = tmp_path / "notes.md"
    replace_file(path, b"one")
    assert path.read_bytes() == b"one" and stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chmod(path, 0o640)
    replace_file(path, b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o640
    link = tmp_path / "link.md"
    link.symlink_to(victim)
    with pytest.raises(RefusedFile) as refused:
        replace_file(link, b"three")
    assert str(link) in str(refused.value) and "symbolic link" in str(refused.value)
    assert untouched(victim) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "link.md", "notes.md"]  # no temporary left


def test_reading_refuses_links_fifos_devices_and_files_over_the_limit_without_waiting(tmp_path, victim):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(victim)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    cases = {fifo: "a FIFO", Path("/dev/zero"): "a device", link: "symbolic link", big: "larger than 100 bytes"}
    for path, why in cases.items():  # a FIFO nobody writes to would block a plain open() for ever
        with pytest.raises(RefusedFile) as refused:
            read_regular(path, 100)
        assert why in str(refused.value)
    assert read_regular(link, 100, follow_links=True) == PRECIOUS.encode()
    with pytest.raises(RefusedFile):
        open_append(fifo)  # opened to write, a FIFO with no reader would block too


# ----- each writer -----------------------------------------------------------------------------


def test_a_link_at_the_lock_name_is_removed_and_the_file_it_points_to_is_never_truncated(tmp_path, victim):
    folder = folder_with_link(tmp_path, ".chat.md.lock", victim)
    lock = TranscriptLock.acquire(folder / "chat.md")
    side = folder / ".chat.md.lock"
    try:
        assert untouched(victim)
        assert not side.is_symlink() and side.read_text() == f"{os.getpid()}\n"
    finally:
        lock.release()
    assert untouched(victim) and not os.path.lexists(side)


def test_a_lock_name_with_another_name_for_a_file_is_refused(tmp_path, victim):
    folder = tmp_path / "shared"
    folder.mkdir()
    hard = tmp_path / "home" / "hard"
    os.link(victim, hard)  # a hard link: the same file under the lock's name
    os.link(victim, folder / ".chat.md.lock")
    with pytest.raises(RefusedFile, match="hard link"):
        TranscriptLock.acquire(folder / "chat.md")
    assert untouched(victim)


def test_a_conversation_file_that_is_a_link_is_not_saved_through_it(tmp_path, victim):
    link = folder_with_link(tmp_path, "chat.md", victim) / "chat.md"
    problems = []
    saver = AutoSaver(link, on_change=problems.append)
    saver.save("💬: hello\n")
    assert not saver.flush() and not saver.close()
    assert untouched(victim) and link.is_symlink()
    assert "symbolic link" in (saver.problem or "") and str(link) in (saver.problem or "")


def test_an_export_over_a_link_is_refused(tmp_path, victim):
    link = folder_with_link(tmp_path, "copy.md", victim) / "copy.md"
    with pytest.raises(RefusedFile, match="symbolic link"):
        write_export(link, "💬: hello\n", replace=True)
    assert untouched(victim) and link.is_symlink()


def test_media_are_never_written_through_a_linked_folder_or_file(tmp_path, victim):
    conversation = tmp_path / "chat.md"
    conversation.write_text("💬: hello\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    media_folder(conversation).symlink_to(elsewhere)
    big = ContentPart("image", "", "image/png", 20_000, bytes(20_000))
    [kept] = keep_media([big], conversation, "call_1")
    assert kept.data == big.data and not kept.file  # kept in memory: the conversation takes it as base64
    assert list(elsewhere.iterdir()) == []

    media_folder(conversation).unlink()
    media_folder(conversation).mkdir()
    (media_folder(conversation) / "call_1-1.png").symlink_to(victim)
    [kept] = keep_media([big], conversation, "call_1")
    assert kept.data == big.data and not kept.file and untouched(victim)


def test_saved_media_take_a_new_name_beside_a_link(tmp_path, victim):
    (tmp_path / "call_1-1.wav").symlink_to(victim)
    saved = save_media(ContentPart("audio", "", "audio/wav", 4, b"RIFF"), tmp_path, "call_1-1")
    assert saved.name == "call_1-1-2.wav" and saved.read_bytes() == b"RIFF" and untouched(victim)


def test_a_server_log_is_never_written_through_a_link(tmp_path, victim):
    folder = folder_with_link(tmp_path, "demo.log", victim)
    with pytest.raises(RefusedFile, match="symbolic link"):
        RotatingLog(folder / "demo.log")
    (folder / "demo.log").unlink()
    (folder / "demo.log.1").symlink_to(victim)  # where the log goes when it starts again
    log = RotatingLog(folder / "demo.log", max_bytes=10)
    log.write(["0123456789", "abc"])
    log.close()
    assert untouched(victim) and (folder / "demo.log").read_text() == "abc\n"


def test_the_sign_in_token_file_is_never_written_through_a_link(tmp_path, victim):
    path = folder_with_link(tmp_path, "oauth-tokens.json", victim) / "oauth-tokens.json"
    vault = TokenVault(path, use_keyring=False)
    with pytest.raises(Exception, match="symbolic link"):
        vault.save("https://example.test/mcp", {"access_token": "t"})
    assert untouched(victim)


def test_the_app_log_is_never_written_through_a_link(tmp_path, victim):
    logs = folder_with_link(tmp_path, "mcp-chat-tui.log", victim)
    code = (
        "import logging; from mcp_chat_tui.cli.main import setup_logging; "
        "print(setup_logging()); logging.getLogger('x').warning('hello')"
    )
    env = dict(os.environ, MCP_CHAT_TUI_LOG_DIR=str(logs))
    done = subprocess.run([sys.executable, "-c", code], cwd=TOP, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None" and untouched(victim)  # no log this run, rather than the victim's bytes


def test_a_stalled_reader_never_holds_up_opening_a_fifo_for_the_log(tmp_path):
    """Opening a FIFO to append would wait for a reader; it is refused at once (checked on a thread
    so a regression fails instead of hanging the test run)."""
    fifo = tmp_path / "demo.log"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def open_it() -> None:
        try:
            RotatingLog(fifo)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=open_it, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():  # unblock the stuck open so the thread can end
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    assert outcome and isinstance(outcome[0], RefusedFile), outcome


def test_config_files_are_regular_files_of_bounded_size(tmp_path, isolated_user_dirs):
    """A config.toml that is a FIFO would make the app wait for ever at start; a folder's mcp.json of
    gigabytes (a sparse file, a zip bomb) would be read whole: both are refused at once, exit 2."""
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    done = run_cli("--demo", "--config", str(fifo), "-p", "hi", cwd=tmp_path, dirs=isolated_user_dirs)
    assert done.returncode == 2, done.stderr
    assert "it is a FIFO, not a regular file" in " ".join(done.stderr.split())
    fifo.unlink()
    with open(tmp_path / "mcp.json", "wb") as huge:
        huge.truncate(17 << 20)
    with ScriptedEndpoint(["hello"]) as endpoint:  # ./mcp.json is found in the working folder
        done = run_cli("--endpoint", endpoint.url, "m", "-p", "hi", "--yes", cwd=tmp_path, dirs=isolated_user_dirs)
    assert done.returncode == 2, done.stderr
    assert "larger than 16,777,216 bytes" in " ".join(done.stderr.split())


DEMO_READ = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from mcp.server.mcpserver.exceptions import ToolError
from mcp_chat_tui.demo.server import read_file
for name in sys.argv[1:]:
    try:
        print(read_file(name)[:20])
    except ToolError as exc:
        print(exc)
"""


def test_the_demo_servers_read_file_reads_the_start_of_a_regular_file_only(tmp_path):
    """A 2 GB file in the working folder (sparse: a zip can hold one in a few bytes) was read whole
    before its start was kept; a FIFO is refused, not waited on."""
    with open(tmp_path / "huge.txt", "wb") as huge:
        huge.write(b"start of a huge file")
        huge.truncate(2 << 30)
    os.mkfifo(tmp_path / "pipe.txt")
    done = subprocess.run(
        [sys.executable, "-c", DEMO_READ, "huge.txt", "pipe.txt"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(TOP)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "'huge.txt' is not a text file",
        "cannot read 'pipe.txt': it is a FIFO, not a regular file",
    ]


def test_files_made_beside_a_conversation_that_became_a_link_are_private(tmp_path, victim):
    """Media take the conversation file's permissions; a link's own bits (0777) are not those."""
    conversation = folder_with_link(tmp_path, "chat.md", victim) / "chat.md"
    [kept] = keep_media([ContentPart("image", "", "image/png", 20_000, bytes(20_000))], conversation, "call_1")
    saved = media_folder(conversation) / "call_1-1.png"
    assert kept.file == "chat.media/call_1-1.png" and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert untouched(victim)

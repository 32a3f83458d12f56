"""A transcript from elsewhere (a zip, a git repository) is data, not a key to the user's files:
its media references resolve inside its own media folder only and must be regular files under the
size limit, read off the screen's thread; a conversation file that is a link is neither read nor
written; with ``--no-save`` nothing is written beside it. Real files, the real CLI."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.core.content import MAX_MEDIA_BYTES, ContentPart
from mcp_chat_tui.core.paths import media_folder
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript, render
from mcp_chat_tui.transcript.media import read_conversation
from tests.helpers import wait_until
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_exit_signals import check_exit, servers_json, start_app, stop_and_time
from tests.test_oneshot import run_cli

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot for anyone\n"
PNG = bytes.fromhex("89504e470d0a1a0a") + bytes(64)


def conversation_naming(folder: Path, *files: str) -> Path:
    """``folder/chat.md``: one call whose result keeps an image part in each of ``files``."""
    parts = [ContentPart("image", "[an image]", "image/png", len(PNG), file=file) for file in files]
    call = {"id": "call_1", "type": "function", "function": {"name": "picture", "arguments": "{}"}}
    result = ToolResult("picture", "call_1", "done", "[an image]", server="pics", parts=parts)
    step = Step(proposals=[Proposal(call, "yo", result=result)])
    path = folder / "chat.md"
    path.write_text(render(Transcript([Exchange("show me", "m", [step, Step(text="Here.")])])), encoding="utf-8")
    return path


def loaded_parts(path: Path) -> list[ContentPart]:
    [proposal] = read_conversation(path).all_proposals()
    return proposal.result.parts


@pytest.fixture
def secret(tmp_path) -> Path:
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    key = ssh / "id_ed25519"
    key.write_bytes(SECRET)
    return key


def test_a_file_of_the_media_folder_is_read_with_the_conversation(tmp_path):
    path = conversation_naming(tmp_path, "chat.media/call_1-1.png")
    media_folder(path).mkdir()
    (media_folder(path) / "call_1-1.png").write_bytes(PNG)
    [part] = loaded_parts(path)
    assert part.media_bytes() == PNG and part.media_problem() == ""


REFERENCES = {
    "a path up and out": ("../.ssh/id_ed25519", "only a file of the conversation's media folder"),
    "up and out from the media folder": ("chat.media/../.ssh/id_ed25519", "only a file of the conversation's"),
    "an absolute path": ("{tmp}/.ssh/id_ed25519", "only a file of the conversation's media folder"),
    "a link in the media folder": ("chat.media/key.png", "symbolic link"),
    "a FIFO": ("chat.media/pipe.png", "a FIFO, not a regular file"),
    "a device": ("chat.media/zero.png", "symbolic link"),  # a link to /dev/zero: never followed
    "too large": ("chat.media/huge.png", f"larger than {MAX_MEDIA_BYTES:,} bytes"),
    "the media folder a link": ("other.media/id_ed25519", "No such file"),
}


# Loaded in a child process with a memory limit and a timeout: reading a FIFO waits for ever, and
# reading /dev/zero fills the memory (4.5 GB in 25 s), were either to be opened.
LOAD = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from mcp_chat_tui.transcript.media import read_conversation, self_contained
conversation = read_conversation(Path(sys.argv[1]))
[proposal] = conversation.all_proposals()
[part] = proposal.result.parts
print(part.media_bytes() is None)
print(part.media_problem())
print(self_contained(conversation))
"""


@pytest.mark.parametrize("case", REFERENCES)
def test_a_media_reference_outside_the_media_folder_or_to_no_regular_file_is_not_read(case, tmp_path, secret):
    file, why = REFERENCES[case]
    path = conversation_naming(tmp_path, file.format(tmp=tmp_path))
    folder = media_folder(path)
    folder.mkdir()
    (folder / "key.png").symlink_to(secret)
    os.mkfifo(folder / "pipe.png")  # an open() of it would wait for a writer for ever
    (folder / "zero.png").symlink_to("/dev/zero")
    with open(folder / "huge.png", "wb") as huge:
        huge.truncate(MAX_MEDIA_BYTES + 1)
    (tmp_path / "other.media").symlink_to(secret.parent)  # the name resolves to the conversation's folder only
    done = subprocess.run([sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    not_read, problem, exported = done.stdout.split("\n", 2)
    assert not_read == "True"
    assert why in problem and file.format(tmp=tmp_path) in problem
    assert base64.b64encode(SECRET).decode() not in exported and SECRET.decode() not in exported  # the reference only


def test_a_media_folder_that_is_a_link_is_not_read(tmp_path, secret):
    (secret.parent / "call_1-1.png").write_bytes(SECRET)
    path = conversation_naming(tmp_path, "chat.media/call_1-1.png")
    media_folder(path).symlink_to(secret.parent)
    [part] = loaded_parts(path)
    assert part.media_bytes() is None and "symbolic link" in part.media_problem()


def test_one_file_named_many_times_is_read_once_and_the_whole_is_bounded(tmp_path, monkeypatch):
    import mcp_chat_tui.transcript.media as media

    monkeypatch.setattr(media, "MAX_LOADED_MEDIA_BYTES", 3 * len(PNG))
    names = [f"chat.media/{n}.png" for n in (1, 1, 1, 2, 3, 4)]
    path = conversation_naming(tmp_path, *names)
    media_folder(path).mkdir()
    for n in (1, 2, 3, 4):
        (media_folder(path) / f"{n}.png").write_bytes(PNG)
    parts = loaded_parts(path)
    assert [part.media_bytes() is not None for part in parts] == [True, True, True, True, True, False]
    assert parts[0].media_bytes() is parts[2].media_bytes()
    assert "the conversation's images and audio pass" in parts[5].media_problem()


def hostile_media_conversation(folder: Path) -> Path:
    path = conversation_naming(folder, "chat.media/pipe.png", "/dev/zero", "chat.media/zero.png")
    media_folder(path).mkdir()
    os.mkfifo(media_folder(path) / "pipe.png")
    (media_folder(path) / "zero.png").symlink_to("/dev/zero")
    return path


def test_p_with_a_fifo_and_dev_zero_as_media_answers_and_saves(tmp_path, isolated_user_dirs):
    path = hostile_media_conversation(tmp_path)
    with ScriptedEndpoint(["All fine."]) as endpoint:
        done = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers_json(tmp_path)),
            "--transcript", str(path), "-p", "and now?", cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "All fine.\n" and "Traceback" not in done.stderr
    assert stat.S_ISFIFO(os.lstat(media_folder(path) / "pipe.png").st_mode)  # left as it is


def test_the_full_screen_app_with_a_fifo_and_dev_zero_as_media_starts_and_ends_on_sigterm(tmp_path, isolated_user_dirs):
    path = hostile_media_conversation(tmp_path)
    with ScriptedEndpoint([]) as endpoint:
        terminal = start_app(
            tmp_path, isolated_user_dirs, endpoint.url, "--mcp-config", str(servers_json(tmp_path)),
            "--transcript", str(path),
        )  # fmt: skip
        try:
            shown = lambda: "ready" in terminal.text() and "is not read" in terminal.text()  # noqa: E731
            assert wait_until(shown, 60), terminal.text()[-2000:]
            took = stop_and_time(terminal, "SIGTERM")
        finally:
            terminal.close()
    check_exit(terminal, "SIGTERM", took, tmp_path)


VALID = "💬: what is 12 * 7?\n\n🤖:[m]\n\n84.\n\n"


def test_a_conversation_file_that_is_a_link_is_refused_before_anything_is_read(tmp_path, isolated_user_dirs):
    elsewhere = tmp_path / "home" / "notes.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text(VALID)
    os.chmod(elsewhere, 0o644)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "chat.md").symlink_to(elsewhere)
    with ScriptedEndpoint(["No."]) as endpoint:
        done = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers_json(tmp_path)),
            "--transcript", str(shared / "chat.md"), "-p", "more?", cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{shared / 'chat.md'}: cannot be read: it is a symbolic link" in " ".join(done.stderr.split())
    assert elsewhere.read_text() == VALID and stat.S_IMODE(elsewhere.stat().st_mode) == 0o644
    assert sorted(p.name for p in shared.iterdir()) == ["chat.md"]


def test_no_save_writes_nothing_beside_the_conversation(tmp_path, isolated_user_dirs):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "chat.md").write_text(VALID)
    (shared / ".chat.md.lock").symlink_to(victim)
    before = sorted(p.name for p in shared.iterdir())
    with ScriptedEndpoint(["Still 84."]) as endpoint:
        done = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers_json(tmp_path)),
            "--transcript", str(shared / "chat.md"), "--no-save", "-p", "sure?", cwd=tmp_path, dirs=isolated_user_dirs,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Still 84.\n"
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in shared.iterdir()) == before and (shared / "chat.md").read_text() == VALID

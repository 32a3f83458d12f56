"""Attach files from your disk: what ``@`` completes (real folders, links planted outside), a file read
into an attachment (text, cut, binary, not UTF-8, a FIFO), and the real app attaching one, the model
told its text and a resumed conversation showing it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_chat_tui.core.attachments import FILE
from mcp_chat_tui.core.local_files import MAX_TEXT_BYTES, completions, read_attachment
from mcp_chat_tui.ui.completion import candidates


@pytest.fixture
def workspace(tmp_path) -> Path:
    work = tmp_path / "work"
    (work / "notes" / "deep").mkdir(parents=True)
    (work / "notes" / "a.md").write_text("alpha notes\n")
    (work / "notes" / "b.txt").write_text("beta")
    (work / ".hidden").write_text("x")
    (work / "nothing.md").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("hunter2")
    (work / "notes" / "door").symlink_to(outside)
    (work / "notes" / "key.txt").symlink_to(outside / "secret.txt")
    return work


def shown(found) -> list[str]:
    return [item.shown for item in found]


def test_at_completes_folders_first_then_files_one_folder_at_a_time(workspace):
    assert shown(completions("no", workspace, [])) == ["notes/", "nothing.md"]
    assert shown(completions("notes/", workspace, [])) == ["notes/deep/", "notes/a.md", "notes/b.txt"]
    assert shown(completions("notes/A", workspace, [])) == ["notes/a.md"]  # any case
    assert ".hidden" not in shown(completions("", workspace, [])) and shown(completions(".h", workspace, [])) == [
        ".hidden"
    ]


def test_nothing_outside_the_working_directory_and_the_roots_is_offered(workspace):
    outside = workspace.parent / "outside"
    assert completions("../outside/", workspace, []) == []
    assert "notes/door/" not in shown(completions("notes/", workspace, []))  # a link that leads out
    assert "notes/key.txt" not in shown(completions("notes/", workspace, []))
    assert shown(completions(f"{outside}/", workspace, [outside])) == [f"{outside}/secret.txt"]  # a root


def test_a_text_file_is_attached_and_a_long_one_cut_with_a_note(workspace):
    attachment = read_attachment("notes/a.md", workspace, [])
    assert not isinstance(attachment, str)
    assert (attachment.kind, attachment.name, attachment.text) == (FILE, "notes/a.md", "alpha notes\n")
    assert attachment.label() == "file › notes/a.md"
    (workspace / "long.txt").write_text("é" * MAX_TEXT_BYTES)  # two bytes each: the limit cuts one in two
    long = read_attachment("long.txt", workspace, [])
    assert not isinstance(long, str)
    assert long.text.endswith("\n[cut: the first 100.0 KB of 200.0 KB]")
    assert long.text.startswith("é" * (MAX_TEXT_BYTES // 2))


def test_binary_not_utf8_fifo_folder_outside_and_missing_files_are_refused_with_why(workspace):
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (workspace / "latin1.txt").write_bytes("café".encode("latin-1"))
    os.mkfifo(workspace / "pipe")
    said = {name: read_attachment(name, workspace, []) for name in (
        "image.png", "latin1.txt", "pipe", "notes", "notes/key.txt", "../outside/secret.txt", "gone.txt",
    )}  # fmt: skip
    assert said["image.png"] == "image.png is a binary file (10 B): only text files can be attached"
    assert said["latin1.txt"] == "latin1.txt is not UTF-8 text (4 B): only text files can be attached"
    assert said["pipe"] == "pipe is not a regular file (a folder, device, FIFO or socket): not attached"
    assert said["notes"] == "notes is not a regular file (a folder, device, FIFO or socket): not attached"
    for name in ("notes/key.txt", "../outside/secret.txt"):
        assert said[name] == f"{name} is outside the working directory and the roots (/roots add FOLDER to allow it)"
    assert said["gone.txt"] == "cannot read gone.txt: No such file or directory"


def test_the_completion_list_offers_resources_then_files_and_a_folder_goes_on_into_it(workspace):
    found = candidates("read @no", 8, [], [], lambda typed: completions(typed, workspace, []))
    assert [c.name for c in found] == ["@notes/", "@nothing.md"]
    assert found[0].apply("read @no") == ("read @notes/", 12)
    assert found[1].apply("read @no") == ("read @nothing.md ", 17)
    assert found[0].detail == "folder" and found[1].detail == "file · 0 B"


async def test_the_app_attaches_a_file_the_model_reads_it_and_a_resume_shows_it(workspace, monkeypatch):
    from textual.widgets import Input

    from mcp_chat_tui.transcript.media import read_conversation
    from tests.fakes import ScriptedEngine
    from tests.test_attachment_media_ui import names
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready, wait_turn_done

    monkeypatch.chdir(workspace)
    path = workspace.parent / "chat.md"
    engine = ScriptedEngine(["Alpha."])
    app = make_app(engine, [], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press(*"sum up @no")
        await wait_for(pilot, lambda: names(app) == ["@notes/", "@nothing.md"], what="the folder and the file")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "@notes/deep/" in names(app), what="the folder's files")
        await pilot.press(*"a.")
        await wait_for(pilot, lambda: names(app) == ["@notes/a.md"], what="the file")
        await pilot.press("enter")
        prompt = app.query_one("#prompt", Input)
        await wait_for(pilot, lambda: prompt.attached, what="the attachment")
        await pilot.press("enter")
        await wait_turn_done(pilot, app)
    told = engine.prompts[0][-1]["content"]
    assert told == "sum up @notes/a.md\n\n[attached: file › notes/a.md]\nalpha notes\n"
    [exchange] = read_conversation(path).exchanges
    [attachment] = exchange.attachments
    assert (attachment.kind, attachment.name, attachment.text) == (FILE, "notes/a.md", "alpha notes\n")


def test_plain_attaches_the_files_a_line_names_refuses_a_binary_one_and_a_resume_shows_them(
    workspace, isolated_user_dirs
):
    """``--plain`` has no completion menu: ``@PATH`` typed in full attaches the file (📎 under the
    prompt), the model gets its text, the file keeps it; an ``@`` word that is no file is text; a
    binary file is refused and that prompt is not sent."""
    from mcp_chat_tui.transcript.media import read_conversation
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    (workspace / "mcp.json").write_text('{"servers": {}}')
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    typed = "what is in @blob.bin?\nsum up @notes/a.md for @alice (see @notes)\nbye\n"
    with ScriptedEndpoint(["Alpha."]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--plain", cwd=workspace, dirs=isolated_user_dirs, stdin=typed
        )  # fmt: skip
        requests = endpoint.requests
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "not sent: blob.bin is a binary file" in said, said
    assert "📎 file › notes/a.md" in said, said
    [request] = requests  # the refused prompt never reached the model
    assert (
        request["messages"][-1]["content"]
        == "sum up @notes/a.md for @alice (see @notes)\n\n[attached: file › notes/a.md]\nalpha notes\n"
    )
    [path] = (isolated_user_dirs / "data" / "conversations").glob("*.md")
    [exchange] = read_conversation(path).exchanges
    assert [(a.kind, a.name, a.text) for a in exchange.attachments] == [(FILE, "notes/a.md", "alpha notes\n")]
    with ScriptedEndpoint([]) as endpoint:
        resumed = run_cli(
            "--endpoint", endpoint.url, "scripted", "--plain", "--transcript", str(path),
            cwd=workspace, dirs=isolated_user_dirs, stdin="bye\n",
        )  # fmt: skip
    assert "📎 file › notes/a.md" in resumed.stdout, resumed.stdout + resumed.stderr


def test_one_shot_attaches_a_named_file_and_refuses_one_outside_the_roots_as_bad_input(workspace, isolated_user_dirs):
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli

    (workspace / "mcp.json").write_text('{"servers": {}}')
    with ScriptedEndpoint(["Beta."]) as endpoint:
        ok = run_cli(
            "--endpoint", endpoint.url, "scripted", "-p", "@notes/b.txt says?", cwd=workspace, dirs=isolated_user_dirs
        )  # fmt: skip
        refused = run_cli(
            "--endpoint", endpoint.url, "scripted", "-p", "and @notes/key.txt?", cwd=workspace, dirs=isolated_user_dirs
        )  # fmt: skip
        requests = endpoint.requests
    assert (ok.returncode, ok.stdout.strip()) == (0, "Beta."), ok.stderr
    assert refused.returncode == 2 and "outside the working directory and the roots" in refused.stderr, refused.stderr
    [request] = requests
    assert request["messages"][-1]["content"] == "@notes/b.txt says?\n\n[attached: file › notes/b.txt]\nbeta"

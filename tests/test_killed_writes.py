"""A write killed between its temporary copy and the rename (SIGKILL, a power cut) leaves that copy
beside the file; the next write of the file, in any later run, removes it. A copy of a process
still running (a write under way) stays, and a link planted at such a name goes as a link."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from mcp_chat_tui.core.files import replace_file
from mcp_chat_tui.transcript import write_atomically

KILLED_AT_RENAME = """
import os, signal, sys
from pathlib import Path
from mcp_chat_tui.core import files

def killed(*args):  # the process dies where a kill hurts most: the copy written, not yet renamed
    os.kill(os.getpid(), signal.SIGKILL)

files.os.replace = killed
files.replace_file(Path(sys.argv[1]), b"the killed run's text\\n")
"""


def killed_write(path: Path) -> None:
    """Run a write of ``path`` in a process killed at its rename (gone once this returns)."""
    run = subprocess.run([sys.executable, "-c", KILLED_AT_RENAME, str(path)], capture_output=True, timeout=60)
    assert run.returncode == -signal.SIGKILL, run.stderr


def temporaries(path: Path) -> list[str]:
    return sorted(
        p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.") and p.name.endswith(".tmp")
    )


def test_a_conversation_write_killed_before_its_rename_leaves_a_copy_the_next_run_removes(tmp_path):
    conversation = tmp_path / "chat.md"
    conversation.write_text("before\n", encoding="utf-8")
    killed_write(conversation)
    [left] = temporaries(conversation)  # what a kill leaves: the whole copy, the file as it was
    assert conversation.read_text(encoding="utf-8") == "before\n"
    write_atomically(conversation, "after\n")  # the next run's first save
    assert conversation.read_text(encoding="utf-8") == "after\n"
    assert temporaries(conversation) == [], f"{left} left beside the conversation"


def test_a_copy_of_a_running_process_stays_and_a_link_at_a_stale_name_goes_as_a_link(tmp_path):
    settings = tmp_path / "config.toml"
    under_way = tmp_path / f".config.toml.{os.getppid()}.abcd1234.tmp"  # a write under way in a running process
    under_way.write_bytes(b"half")
    killed_write(settings)
    [stale] = [name for name in temporaries(settings) if name != under_way.name]
    (tmp_path / stale).unlink()
    precious = tmp_path / "precious.txt"
    precious.write_text("precious\n", encoding="utf-8")
    (tmp_path / stale).symlink_to(precious)  # planted at a dead process's name
    replace_file(settings, b"x = 1\n")
    assert temporaries(settings) == [under_way.name]
    assert precious.read_text(encoding="utf-8") == "precious\n"

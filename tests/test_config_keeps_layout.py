"""Writing config.toml (a theme chosen, a tool allowed always with T, a setting removed) changes only the
key written: the user's comments, blank lines, spacing and order stay as they were."""

from __future__ import annotations

from pathlib import Path

from mcp_chat_tui.config import load_settings, remove_setting, save_setting
from mcp_chat_tui.config.settings import approval_value
from mcp_chat_tui.core.server_identity import SavedRule, ServerIdentity

HAND_WRITTEN = """\
# My settings for mcp-chat-tui.
#   (kept in my dotfiles)

theme   =    "mcp-dark"     # dark at night
max_turns=5

# the model writes long replies
system_prompt = '''
Be brief.
'''

[approvals.demo]
# the calculator cannot do harm
calculator   = "always"
echo = "ask"   # ask me each time

  [approvals.files]
  read = "always"
"""


def written(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(HAND_WRITTEN)
    return path


def test_a_theme_change_rewrites_only_the_themes_value(tmp_path: Path) -> None:
    path = written(tmp_path)
    save_setting(path, ("theme",), "mcp-light")
    assert path.read_text() == HAND_WRITTEN.replace('"mcp-dark"', '"mcp-light"')
    assert load_settings(path).theme == "mcp-light"


def test_always_for_a_tool_adds_its_line_and_leaves_the_rest(tmp_path: Path) -> None:
    path = written(tmp_path)
    save_setting(path, ("approvals", "demo", "echo"), approval_value(SavedRule("always")))
    assert path.read_text() == HAND_WRITTEN.replace('echo = "ask"', 'echo = "always"')
    save_setting(path, ("approvals", "files", "write"), "ask")
    assert (
        path.read_text() == HAND_WRITTEN.replace('echo = "ask"', 'echo = "always"') + '  write = "ask"\n'
    )  # indented as the table's other keys


def test_always_for_a_tool_of_one_server_keeps_the_comments_above_and_below(tmp_path: Path) -> None:
    path = written(tmp_path)
    rule = SavedRule("always", ServerIdentity(command=("python", "server.py")))
    save_setting(path, ("approvals", "demo", "shell"), approval_value(rule))
    text = path.read_text()
    assert text.startswith(HAND_WRITTEN.split("  [approvals.files]")[0])  # all before, as it was
    assert '  [approvals.files]\n  read = "always"\n' in text
    assert load_settings(path).approvals["demo"]["shell"].command == ["python", "server.py"]


def test_removing_a_setting_takes_only_its_line(tmp_path: Path) -> None:
    path = written(tmp_path)
    remove_setting(path, ("max_turns",))
    assert path.read_text() == HAND_WRITTEN.replace("max_turns=5\n", "")

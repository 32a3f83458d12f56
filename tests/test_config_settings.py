"""config.toml: where it is, reading it, bad files, and saving one key without losing the rest."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from mcp_chat_tui.config import Settings, load_settings, remove_setting, save_setting, settings_path
from mcp_chat_tui.core.errors import ConfigError


def choices(settings: Settings) -> dict[str, dict[str, str]]:
    """``approvals`` as the choices written (every rule here is one without a server)."""
    return {
        server: {tool: rule.choice for tool, rule in tools.items()}
        for server, tools in settings.approval_rules().items()
    }


FULL = """\
system_prompt = "You are terse."
max_turns = 5
tool_timeout = 30
init_timeout = 2.5
approval = "auto-readonly"
trusted_servers = ["demo", "files"]
theme = "mcp-light"
on_server_failure = "continue"

[approvals.demo]
calculator = "always"
shell = "ask"
"""


def write(folder: Path, text: str, name: str = "config.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert str(path) in message and "pydantic" not in message.lower()
    return message


# --- where config.toml is ---------------------------------------------------------------------


def test_settings_path_order(tmp_path, monkeypatch):
    user_dir = tmp_path / "user"
    monkeypatch.setenv("MCP_CHAT_TUI_CONFIG_DIR", str(user_dir))
    monkeypatch.delenv("MCP_CHAT_TUI_CONFIG", raising=False)
    assert settings_path(None) == user_dir / "config.toml"
    monkeypatch.setenv("MCP_CHAT_TUI_CONFIG", str(tmp_path / "from-env.toml"))
    assert settings_path(None) == tmp_path / "from-env.toml"
    assert settings_path(tmp_path / "explicit.toml") == tmp_path / "explicit.toml"


# --- reading ----------------------------------------------------------------------------------


def test_missing_file_gives_defaults(tmp_path):
    settings = load_settings(tmp_path / "absent.toml")
    assert settings == Settings()
    assert (settings.system_prompt, settings.max_turns) == ("", 3)
    assert (settings.tool_timeout, settings.init_timeout) == (90, 10)
    assert (settings.approval, settings.approvals, settings.trusted_servers) == ("ask", {}, [])
    assert (settings.theme, settings.on_server_failure) == ("mcp-dark", "exit")


def test_every_setting_is_read(tmp_path):
    settings = load_settings(write(tmp_path, FULL))
    assert settings.system_prompt == "You are terse."
    assert settings.max_turns == 5
    assert settings.tool_timeout == 30.0 and settings.init_timeout == 2.5
    assert settings.approval == "auto-readonly" and settings.trusted_servers == ["demo", "files"]
    assert choices(settings) == {"demo": {"calculator": "always", "shell": "ask"}}
    assert settings.tool_approval("demo", "calculator") == "always"
    assert settings.tool_approval("demo", "other") is None
    assert settings.theme == "mcp-light" and settings.on_server_failure == "continue"


def test_invalid_toml_names_line_and_column(tmp_path):
    message = error_of(write(tmp_path, 'theme = "a"\nmax_turns = \n'))
    assert "line 2, column 13" in message and "invalid TOML" in message
    assert "(at line" not in message


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ("max_turns = 0", "max_turns", "greater than or equal to 1"),
        ("max_turns = 2.5", "max_turns", "valid integer"),
        ('max_turns = "3"', "max_turns", "valid integer"),
        ('approval = "sometimes"', "approval", "'ask', 'auto' or 'auto-readonly'"),
        ("tool_timeout = -1", "tool_timeout", "greater than 0"),
        ('tool_timeout = "90"', "tool_timeout", "valid number"),
        ("init_timeout = 0", "init_timeout", "greater than 0"),
        ('on_server_failure = "retry"', "on_server_failure", "'exit' or 'continue'"),
        ("system_prompt = 1", "system_prompt", "valid string"),
        ('[approvals.demo]\ncalculator = "yes"', "approvals.demo.calculator", "'always', 'ask' or 'never'"),
        ('approvals = "all"', "approvals", "valid dictionary"),
        ('trusted_servers = "demo"', "trusted_servers", "valid list"),
        ('trusted_servers = ["demo", 1]', "trusted_servers[1]", "valid string"),
        ('trusted_servers = [""]', "trusted_servers[0]", "at least 1 character"),
    ],
)
def test_wrong_values(tmp_path, text, where, expected):
    message = error_of(write(tmp_path, text + "\n"))
    assert f": {where}: " in message and expected in message


def test_unknown_key_is_named_with_a_suggestion(tmp_path):
    message = error_of(write(tmp_path, "max_turn = 3\n"))
    assert ": max_turn: unknown setting `max_turn`" in message and "did you mean `max_turns`" in message


def test_unknown_key_without_a_close_match_lists_the_known_ones(tmp_path):
    message = error_of(write(tmp_path, "colour = 'red'\n"))
    assert "unknown setting `colour`" in message and "system_prompt" in message and "theme" in message


# --- writing ----------------------------------------------------------------------------------


def test_save_setting_keeps_everything_else(tmp_path):
    path = write(tmp_path, FULL)
    settings = save_setting(path, ("approvals", "weather", "forecast"), "always")
    assert choices(settings)["weather"] == {"forecast": "always"}
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert document["approvals"] == {
        "demo": {"calculator": "always", "shell": "ask"},
        "weather": {"forecast": "always"},
    }
    expected = tomllib.loads(FULL)
    expected["approvals"]["weather"] = {"forecast": "always"}
    assert document == expected
    assert load_settings(path) == settings


def test_save_setting_of_the_value_already_there_writes_nothing(tmp_path):
    text = "# a comment tomli-w would drop\n" + FULL
    path = write(tmp_path, text)
    before = path.stat()
    settings = save_setting(path, ("approvals", "demo", "calculator"), "always")
    assert settings.tool_approval("demo", "calculator") == "always"
    assert path.read_text(encoding="utf-8") == text
    assert path.stat().st_ino == before.st_ino, "the file was replaced"


def test_save_setting_replaces_a_top_level_value(tmp_path):
    path = write(tmp_path, FULL)
    save_setting(path, ("max_turns",), 7)
    reread = load_settings(path)
    assert reread.max_turns == 7
    assert reread.system_prompt == "You are terse." and reread.tool_approval("demo", "shell") == "ask"


def test_save_setting_creates_folder_and_file(tmp_path):
    path = tmp_path / "new" / "dir" / "config.toml"
    save_setting(path, ("theme",), "mcp-light")
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {"theme": "mcp-light"}
    assert [entry.name for entry in path.parent.iterdir()] == ["config.toml"]  # no temporary file left


def test_save_setting_refuses_a_bad_value_and_leaves_the_file(tmp_path):
    path = write(tmp_path, FULL)
    with pytest.raises(ConfigError) as caught:
        save_setting(path, ("max_turns",), 0)
    assert "max_turns" in str(caught.value)
    with pytest.raises(ConfigError):
        save_setting(path, ("approvals", "demo", "calculator"), "sometimes")
    assert path.read_text(encoding="utf-8") == FULL


def test_save_setting_does_not_overwrite_a_broken_file(tmp_path):
    broken = 'theme = "a"\nmax_turns = \n'
    path = write(tmp_path, broken)
    with pytest.raises(ConfigError) as caught:
        save_setting(path, ("theme",), "b")
    assert "line 2" in str(caught.value)
    assert path.read_text(encoding="utf-8") == broken


def test_save_setting_where_a_table_holds_a_value(tmp_path):
    path = write(tmp_path, 'approvals = "x"\n')
    with pytest.raises(ConfigError) as caught:
        save_setting(path, ("approvals", "demo", "calculator"), "always")
    assert ": approvals: expected a table" in str(caught.value)
    assert path.read_text(encoding="utf-8") == 'approvals = "x"\n'


def test_save_setting_keeps_file_mode_and_writes_through_a_symlink(tmp_path):
    real = write(tmp_path, FULL, "real.toml")
    os.chmod(real, 0o640)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    save_setting(link, ("theme",), "plain")
    assert link.is_symlink()
    assert load_settings(real).theme == "plain"
    assert real.stat().st_mode & 0o777 == 0o640


def test_remove_setting_drops_the_key_and_empty_tables(tmp_path):
    path = write(tmp_path, FULL)
    remove_setting(path, ("approvals", "demo", "shell"))
    assert choices(load_settings(path)) == {"demo": {"calculator": "always"}}
    settings = remove_setting(path, ("approvals", "demo", "calculator"))
    assert settings.approvals == {}
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "approvals" not in document and document["max_turns"] == 5
    assert remove_setting(path, ("max_turns",)).max_turns == 3


def test_remove_setting_that_is_not_there_changes_nothing(tmp_path):
    path = write(tmp_path, FULL)
    assert remove_setting(path, ("approvals", "nobody", "tool")).max_turns == 5
    assert remove_setting(path, ("theme", "nested")).theme == "mcp-light"
    assert path.read_text(encoding="utf-8") == FULL
    assert remove_setting(tmp_path / "absent.toml", ("theme",)) == Settings()
    assert not (tmp_path / "absent.toml").exists()


def test_keys_must_be_given(tmp_path):
    with pytest.raises(ValueError):
        save_setting(tmp_path / "config.toml", (), 1)


def test_roots_must_be_existing_absolute_folders_named_by_file_and_key(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'roots = ["{tmp_path}", "{tmp_path / "missing"}"]\n')
    with pytest.raises(ConfigError) as missing:
        load_settings(config)
    assert str(missing.value) == f"{config}: roots[1]: `{tmp_path / 'missing'}` is not an existing folder"
    config.write_text('[server_roots]\ndemo = ["relative/folder"]\n')
    with pytest.raises(ConfigError) as relative:
        load_settings(config)
    assert str(relative.value).startswith(f"{config}: server_roots.demo[0]: `relative/folder` is not an absolute path")
    config.write_text(f'roots = ["~"]\n[server_roots]\ndemo = ["{tmp_path}"]\n')
    settings = load_settings(config)
    assert settings.roots == ["~"] and settings.server_roots == {"demo": [str(tmp_path)]}

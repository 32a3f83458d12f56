"""mcp.json: finding it, loading VS Code and Claude Desktop files, and bad files.

Variables, envFile and inputs are in test_config_mcp_variables.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.config import find_mcp_config, load_mcp_config
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.paths import bundled_path

SECRET = "s3cr3t-t0ken-value"


def write(folder: Path, document: object, name: str = "mcp.json") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def load(path: Path, **kwargs):
    kwargs.setdefault("workspace_folder", path.parent)
    return load_mcp_config(path, **kwargs)


def error_of(path: Path, **kwargs) -> str:
    with pytest.raises(ConfigError) as caught:
        load(path, **kwargs)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert str(path) in message
    assert "Traceback" not in message and "pydantic" not in message.lower()
    return message


# --- good files -------------------------------------------------------------------------------


def test_vscode_file_with_every_field(tmp_path):
    (tmp_path / "secrets.env").write_text("FROM_FILE=1\n", encoding="utf-8")
    path = write(
        tmp_path,
        {
            "servers": {
                "local": {
                    "type": "stdio",
                    "command": "node",
                    "args": ["server.js", "--port", "3000"],
                    "env": {"DEBUG": "1"},
                    "envFile": "secrets.env",
                    "cwd": "/srv/tools",
                    "timeout": 30,
                    "initTimeout": 2.5,
                    "gallery": True,
                    "dev": {"watch": "src/**"},
                },
                "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "core"}},
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "disabled": True},
            }
        },
    )
    config = load(path, source="./mcp.json")
    assert config.path == path and config.source == "./mcp.json"
    assert list(config.servers) == ["local", "remote", "legacy"]
    local = config.servers["local"]
    assert (local.name, local.type, local.command) == ("local", "stdio", "node")
    assert local.args == ["server.js", "--port", "3000"]
    assert local.env_file == tmp_path / "secrets.env"
    assert local.cwd == Path("/srv/tools")
    assert (local.timeout, local.init_timeout) == (30.0, 2.5)
    remote = config.servers["remote"]
    assert (remote.type, remote.url, remote.headers) == ("http", "https://example.com/mcp", {"X-Team": "core"})
    assert remote.timeout is None and remote.disabled is False
    assert config.servers["legacy"].type == "sse" and config.servers["legacy"].disabled
    assert list(config.enabled()) == ["local", "remote"]


def test_claude_desktop_file_infers_type(tmp_path):
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
                "web": {"url": "https://example.com/mcp"},
            }
        },
    )
    config = load(path)
    assert config.servers["files"].type == "stdio"
    assert config.servers["files"].args[0] == "-y"
    assert config.servers["web"].type == "http"


def test_vscode_file_without_type_is_inferred_the_same_way(tmp_path):
    path = write(tmp_path, {"servers": {"a": {"command": "uvx"}, "b": {"url": "http://localhost:1/mcp"}}})
    config = load(path)
    assert [server.type for server in config.servers.values()] == ["stdio", "http"]


def test_comments_and_trailing_commas_are_accepted(tmp_path):
    text = """{
      // VS Code writes JSONC
      "servers": {
        /* the demo */ "demo": {"command": "python", "args": ["-m", "x // not a comment",],},
      },
    }"""
    config = load(write(tmp_path, text))
    assert config.servers["demo"].args == ["-m", "x // not a comment"]


def test_bundled_mcp_json_starts_the_demo_with_this_python(tmp_path):
    config = load_mcp_config(bundled_path("mcp.json"), source="bundled default", workspace_folder=tmp_path)
    demo = config.enabled()["demo"]
    assert demo.type == "stdio"
    assert demo.command == sys.executable
    assert demo.args == ["-m", "mcp_chat_tui.demo.server"]


def test_empty_servers_object_is_a_config_without_servers(tmp_path):
    assert load(write(tmp_path, {"servers": {}})).servers == {}


# --- bad files --------------------------------------------------------------------------------


def test_invalid_json_names_line_and_column(tmp_path):
    path = write(tmp_path, '{\n  "servers": {\n    "a": {"command": "x" "args": []}\n  }\n}')
    message = error_of(path)
    assert "line 3, column 26" in message and "invalid JSON" in message and "delimiter" in message


def test_unclosed_block_comment_is_invalid_json(tmp_path):
    message = error_of(write(tmp_path, '{"servers": {}} /* never closed'))
    assert "line 1, column 17" in message and "invalid JSON" in message


def test_top_level_must_be_an_object(tmp_path):
    message = error_of(write(tmp_path, [{"command": "x"}]))
    assert "expected a JSON object at the top level, found a list" in message


def test_servers_key_is_required(tmp_path):
    message = error_of(write(tmp_path, {"server": {"a": {"command": "x"}}}))
    assert '"servers"' in message and '"mcpServers"' in message


def test_servers_must_be_an_object(tmp_path):
    message = error_of(write(tmp_path, {"servers": [{"command": "x"}]}))
    assert "servers: expected an object of servers by name, found a list" in message


def test_unknown_type_is_an_error(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"w": {"type": "websocket", "url": "ws://x"}}}))
    assert "servers.w.type" in message and "'stdio', 'http' or 'sse'" in message


def test_stdio_server_needs_command(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"weather": {"type": "stdio", "args": ["x"]}}}))
    assert "servers.weather.command" in message and 'needs "command"' in message


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_and_sse_servers_need_url(tmp_path, transport):
    message = error_of(write(tmp_path, {"servers": {"remote": {"type": transport}}}))
    assert "servers.remote.url" in message and 'needs "url"' in message


def test_server_without_command_or_url_or_type(tmp_path):
    message = error_of(write(tmp_path, {"mcpServers": {"odd": {"args": ["x"]}}}))
    assert "mcpServers.odd" in message and '"command"' in message and '"url"' in message


def test_server_with_command_and_url_but_no_type(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"both": {"command": "x", "url": "http://x"}}}))
    assert "servers.both" in message and '"type"' in message


def test_server_must_be_an_object(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"s": "node server.js"}}))
    assert "servers.s: expected an object describing the server, found a string" in message


def test_args_must_be_a_list(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"s": {"command": "x", "args": "--verbose"}}}))
    assert "servers.s.args" in message and "valid list" in message and "found a string" in message


def test_args_items_must_be_strings(tmp_path):
    message = error_of(write(tmp_path, {"servers": {"s": {"command": "x", "args": ["--port", 8080]}}}))
    assert "servers.s.args[1]" in message and "valid string" in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("timeout", -5, "greater than 0"),
        ("timeout", "30", "valid number"),
        ("initTimeout", 0, "greater than 0"),
        ("disabled", "yes", "valid boolean"),
        ("env", {"PORT": 8080}, "valid string"),
        ("cwd", 5, "a path"),
    ],
)
def test_wrong_value_types(tmp_path, key, value, expected):
    message = error_of(write(tmp_path, {"servers": {"s": {"command": "x", key: value}}}))
    assert f"servers.s.{key}" in message and expected in message


def test_stdio_command_that_expands_to_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("MCT_TEST_UNSET", raising=False)
    message = error_of(write(tmp_path, {"servers": {"s": {"command": "${env:MCT_TEST_UNSET}"}}}))
    assert "servers.s.command" in message and "empty" in message


def test_bad_inputs(tmp_path):
    message = error_of(write(tmp_path, {"inputs": [{"id": "a", "type": "pickString"}], "servers": {}}))
    assert "inputs[0].type" in message and "'promptString'" in message
    message = error_of(write(tmp_path, {"inputs": [{"id": "a"}, {"id": "a"}], "servers": {}}))
    assert "inputs[1].id" in message and "declared twice" in message


def test_missing_file(tmp_path):
    message = error_of(tmp_path / "absent.json")
    assert "no such file" in message


# --- where mcp.json is found ------------------------------------------------------------------


def test_lookup_order(tmp_path, monkeypatch):
    user_dir = tmp_path / "user-config"
    monkeypatch.setenv("MCP_CHAT_TUI_CONFIG_DIR", str(user_dir))
    cwd = tmp_path / "project"
    cwd.mkdir()
    empty = {"servers": {}}

    assert find_mcp_config(None, cwd) == (bundled_path("mcp.json"), "bundled default")
    user_file = write(user_dir, empty)
    assert find_mcp_config(None, cwd) == (user_file, "user config directory")
    vscode_file = write(cwd / ".vscode", empty)
    assert find_mcp_config(None, cwd) == (vscode_file, "./.vscode/mcp.json")
    local_file = write(cwd, empty)
    assert find_mcp_config(None, cwd) == (local_file, "./mcp.json")
    explicit = write(tmp_path, empty, "chosen.json")
    assert find_mcp_config(explicit, cwd) == (explicit, "--mcp-config")


def test_explicit_relative_path_is_taken_from_cwd(tmp_path):
    chosen = write(tmp_path / "conf", {"servers": {}}, "servers.json")
    assert find_mcp_config(Path("conf/servers.json"), tmp_path) == (chosen, "--mcp-config")


def test_explicit_path_must_exist(tmp_path):
    write(tmp_path, {"servers": {}})  # a ./mcp.json must not be used instead
    with pytest.raises(ConfigError) as caught:
        find_mcp_config(tmp_path / "typo.json", tmp_path)
    assert str(tmp_path / "typo.json") in str(caught.value) and "--mcp-config" in str(caught.value)
    assert "no such file" in str(caught.value)


def test_config_layer_does_not_import_textual():
    import subprocess

    code = "import sys, mcp_chat_tui.config; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"

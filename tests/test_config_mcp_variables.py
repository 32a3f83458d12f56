"""mcp.json variables (${env:...}, ${workspaceFolder}, ${python}, ...), envFile, and ${input:...} prompts."""

from __future__ import annotations

import json
import sys

import pytest

from mcp_chat_tui.config import InputCache, InputSpec, pending_inputs
from mcp_chat_tui.core.errors import ConfigError
from tests.test_config_mcp_json import SECRET, error_of, load, write

# --- variables --------------------------------------------------------------------------------


def test_env_variable_and_missing_env_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("MCT_TEST_REGION", "eu-west")
    monkeypatch.delenv("MCT_TEST_UNSET", raising=False)
    env = {"R": "${env:MCT_TEST_REGION}", "U": "a${env:MCT_TEST_UNSET}b"}
    path = write(tmp_path, {"servers": {"s": {"command": "x", "env": env}}})
    assert load(path).servers["s"].env == {"R": "eu-west", "U": "ab"}


def test_workspace_home_and_python_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    workspace = tmp_path / "project"
    path = write(
        tmp_path,
        {
            "servers": {
                "s": {
                    "command": "${python}",
                    "args": ["${workspaceFolder}/tool.py", "${userHome}/data", "${workspaceFolderBasename}"],
                    "cwd": "${workspaceFolder}",
                },
                "h": {
                    "url": "http://localhost/${workspaceFolderBasename}",
                    "headers": {"X-Home": "${userHome}"},
                },
            }
        },
    )
    config = load(path, workspace_folder=workspace)
    server = config.servers["s"]
    assert server.command == sys.executable
    assert server.args == [f"{workspace}/tool.py", f"{tmp_path / 'home'}/data", "project"]
    assert server.cwd == workspace
    assert config.servers["h"].url == "http://localhost/project"
    assert config.servers["h"].headers == {"X-Home": str(tmp_path / "home")}


def test_unknown_variable_is_an_error_naming_key_and_variable(tmp_path):
    path = write(tmp_path, {"servers": {"s": {"command": "x", "args": ["ok", "${workspaceRoot}"]}}})
    message = error_of(path)
    assert "servers.s.args[1]" in message and "${workspaceRoot}" in message


def test_relative_cwd_and_env_file_are_taken_from_the_mcp_json_folder(tmp_path):
    folder = tmp_path / "conf"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / ".env").write_text("A=1\n", encoding="utf-8")
    path = write(folder, {"servers": {"s": {"command": "x", "cwd": "sub", "envFile": "sub/.env"}}})
    server = load(path, workspace_folder=tmp_path).servers["s"]
    assert server.cwd == folder / "sub"
    assert server.env_file == folder / "sub" / ".env"


def test_effective_env_is_env_file_overlaid_by_env(tmp_path):
    (tmp_path / ".env").write_text(
        "# a comment\n"
        "\n"
        "PLAIN=one\n"
        "export EXPORTED=two\n"
        "SINGLE='three # kept'\n"
        'DOUBLE="four\\nlines"\n'
        "INLINE=five # dropped\n"
        "OVERRIDDEN=from-file\n",
        encoding="utf-8",
    )
    server = {"command": "x", "envFile": "${workspaceFolder}/.env", "env": {"OVERRIDDEN": "from-json"}}
    path = write(tmp_path, {"servers": {"s": server}})
    env = load(path).servers["s"].effective_env()
    assert env == {
        "PLAIN": "one",
        "EXPORTED": "two",
        "SINGLE": "three # kept",
        "DOUBLE": "four\nlines",
        "INLINE": "five",
        "OVERRIDDEN": "from-json",
    }


def test_missing_env_file_is_an_error(tmp_path):
    path = write(tmp_path, {"servers": {"s": {"command": "x", "envFile": "nope.env"}}})
    message = error_of(path)
    assert "servers.s.envFile" in message and "no such file" in message


def test_malformed_env_file_names_its_line(tmp_path):
    env_file = tmp_path / "bad.env"
    env_file.write_text("GOOD=1\nthis line has no equals sign\n", encoding="utf-8")
    server = load(write(tmp_path, {"servers": {"s": {"command": "x", "envFile": "bad.env"}}})).servers["s"]
    with pytest.raises(ConfigError) as caught:
        server.effective_env()
    message = str(caught.value)
    assert str(env_file) in message and "line 2" in message and "KEY=VALUE" in message


# --- inputs -----------------------------------------------------------------------------------

INPUT_FILE = {
    "inputs": [
        {"id": "token", "type": "promptString", "description": "API token", "password": True},
        {"id": "region", "type": "promptString", "description": "Region", "default": "eu"},
    ],
    "servers": {
        "api": {
            "command": "api-server",
            "args": ["--token=${input:token}", "--region", "${input:region}"],
            "env": {"API_TOKEN": "${input:token}"},
        },
        "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
    },
}


def test_inputs_are_asked_once_per_run_with_one_cache(tmp_path):
    path = write(tmp_path, INPUT_FILE)
    asked: list[InputSpec] = []

    def ask(spec: InputSpec) -> str:
        asked.append(spec)
        return {"token": SECRET, "region": "us"}[spec.id]

    cache = InputCache()
    first = load(path, ask_input=ask, input_cache=cache)
    second = load(path, ask_input=ask, input_cache=cache)
    assert [spec.id for spec in asked] == ["token", "region"]
    assert asked[0].password and asked[0].description == "API token"
    for config in (first, second):
        assert config.servers["api"].args == [f"--token={SECRET}", "--region", "us"]
        assert config.servers["api"].env == {"API_TOKEN": SECRET}
        assert config.servers["web"].headers == {"Authorization": f"Bearer {SECRET}"}


def test_input_default_is_used_when_nobody_can_be_asked(tmp_path):
    inputs = [{"id": "region", "type": "promptString", "default": "eu"}]
    path = write(tmp_path, {"inputs": inputs, "servers": {"s": {"command": "x", "args": ["${input:region}"]}}})
    assert load(path).servers["s"].args == ["eu"]


def test_input_without_default_and_without_asker_is_an_error(tmp_path):
    message = error_of(write(tmp_path, INPUT_FILE))
    assert "servers.api.args[0]" in message and "input `token` needs a value" in message


def test_unknown_input_is_an_error_naming_key_and_id(tmp_path):
    inputs = [{"id": "known", "type": "promptString"}]
    path = write(tmp_path, {"inputs": inputs, "servers": {"s": {"command": "x", "env": {"K": "${input:missing}"}}}})
    message = error_of(path, ask_input=lambda spec: "v")
    assert "servers.s.env.K" in message and "missing" in message and "known" in message


def test_password_answer_never_shows(tmp_path):
    config = load(write(tmp_path, INPUT_FILE), ask_input=lambda spec: SECRET if spec.password else "us")
    api, web = config.servers["api"], config.servers["web"]
    assert api.env["API_TOKEN"] == SECRET  # the hub gets the real value
    for text in (repr(config), str(config), repr(api), str(web), repr(config.servers)):
        assert SECRET not in text
    assert "${input:token}" in repr(api)
    assert api.display_command_line() == "api-server '--token=${input:token}' --region us"
    assert not config.servers["web"].display_url().count(SECRET)


def test_password_answer_absent_from_error_messages(tmp_path):
    document = json.loads(json.dumps(INPUT_FILE))
    document["servers"]["web"]["url"] = "${input:token}"  # not a URL once expanded
    message = error_of(write(tmp_path, document), ask_input=lambda spec: SECRET)
    assert "servers.web.url" in message and "http:// or https://" in message
    assert SECRET not in message


def test_disabled_server_inputs_are_not_asked(tmp_path):
    document = {
        "inputs": [{"id": "token", "type": "promptString", "password": True}],
        "servers": {
            "off": {"command": "x", "env": {"T": "${input:token}"}, "disabled": True},
            "on": {"command": "y"},
        },
    }
    asked = []
    path = write(tmp_path, document)
    config = load(path, ask_input=lambda spec: asked.append(spec) or "v")
    assert asked == []
    assert pending_inputs(path) == []
    assert config.servers["off"].env == {"T": "${input:token}"}
    assert list(config.enabled()) == ["on"]


def test_pending_inputs_lists_what_is_not_cached(tmp_path):
    path = write(tmp_path, INPUT_FILE)
    cache = InputCache()
    assert [spec.id for spec in pending_inputs(path, input_cache=cache)] == ["token", "region"]
    cache.set("token", SECRET)
    assert [spec.id for spec in pending_inputs(path, input_cache=cache)] == ["region"]
    assert SECRET not in repr(cache)

"""``--plain`` and ``-p`` follow the same approval rules as the app (trusted servers for
auto-readonly) and say in each tool line which rule let the call run: the real CLI, a scripted
endpoint for the model, the real demo server."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_oneshot import CALCULATOR_SCRIPT, one_shot, run_cli, saved_conversations

UNTRUSTED_WHY = "asking: auto-readonly: demo marks it read-only, but demo is not in trusted_servers (config.toml)"


def config_file(folder: Path, text: str) -> Path:
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_auto_readonly_asks_about_a_server_that_is_not_trusted(tmp_path, isolated_user_dirs):
    config = config_file(tmp_path, 'approval = "auto-readonly"\n')
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--config", str(config))
    assert result.returncode == 3, result.stderr  # nobody to ask: denied
    assert UNTRUSTED_WHY in " ".join(result.stderr.split())
    assert "⊘ calculator denied" in result.stderr


def test_auto_readonly_runs_a_trusted_servers_read_only_tool_and_says_so(tmp_path, isolated_user_dirs):
    config = config_file(tmp_path, 'approval = "auto-readonly"\ntrusted_servers = ["demo"]\n')
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--config", str(config), "--json")
    assert result.returncode == 0, result.stderr
    assert "calculator  [demo]  allowed by auto-readonly (trusted server demo)" in result.stderr
    [call] = json.loads(result.stdout)["calls"]
    assert call["choice"] == "auto" and call["allowed_by"] == "auto-readonly (trusted server demo)"
    [saved] = saved_conversations(isolated_user_dirs)
    proposal = parse(read_transcript_text(saved)).exchanges[0].steps[0].proposals[0]
    assert proposal.allowed_by == "auto-readonly (trusted server demo)"


def test_the_bundled_demo_server_is_trusted_with_demo(tmp_path, isolated_user_dirs):
    config = config_file(tmp_path, 'approval = "auto-readonly"\n')
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = run_cli(
            "--demo",
            "--endpoint",
            endpoint.url,
            "scripted",
            "--config",
            str(config),
            "-p",
            "what is 12 * 7?",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == 0, result.stderr
    assert "allowed by auto-readonly (trusted server demo)" in result.stderr


def test_plain_says_yes_ran_the_call(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--demo",
            "--plain",
            "--yes",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
            stdin="what is 12 * 7?\nbye\n",
        )
    assert result.returncode == 0, result.stderr
    assert "calculator  [demo]  allowed by --yes" in result.stdout

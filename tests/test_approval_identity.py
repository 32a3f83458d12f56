"""A saved "always" speaks for the server it was saved for, not for any server that takes its name:
the real CLI with a scripted endpoint and the planted SDK server, and the real app under Pilot
(the dialog and the server panel say when a rule was not applied; T saves one for this server)."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

import pytest

from mcp_chat_tui.cli.chat import make_policy
from mcp_chat_tui.config import McpConfig, ServerConfig, load_settings
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import PLANTED_SERVER, starts
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli
from tests.ui_helpers import SIZE, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

SAVED_FOR = ["/usr/bin/python3", "/home/someone/demo_server.py"]  # the demo this rule was saved for


def servers_file(folder: Path, started: Path) -> tuple[Path, list[str]]:
    """The user's own mcp.json (named with --mcp-config) with a server named demo: the planted one."""
    command = [sys.executable, PLANTED_SERVER, "--started-file", str(started)]
    path = folder / "servers.json"
    path.write_text(json.dumps({"servers": {"demo": {"command": command[0], "args": command[1:]}}}))
    return path, command


def rule(command: list[str] | None) -> str:
    if command is None:
        return '[approvals.demo]\nwhoami = "always"\n'  # written by hand: no server named
    return f'[approvals.demo.whoami]\nchoice = "always"\ncommand = {json.dumps(command)}\n'


def ask_once(folder: Path, dirs: Path, config_text: str) -> tuple[int, str]:
    started = folder / "started.txt"
    servers, _ = servers_file(folder, started)
    config = folder / "config.toml"
    config.write_text(config_text)
    with ScriptedEndpoint([tool_reply("whoami", {}), "done"]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--config", str(config),
            "-p", "who?", cwd=folder, dirs=dirs,
        )  # fmt: skip
    return result.returncode, " ".join(result.stderr.replace("│", " ").split())  # the dialog's box left out


def test_a_rule_saved_for_another_demo_does_not_run_this_one(tmp_path, isolated_user_dirs):
    code, said = ask_once(tmp_path, isolated_user_dirs, rule(SAVED_FOR))
    assert code == 3, said  # no terminal to ask: denied
    assert "⊘ whoami denied" in said
    assert (
        'asking: config.toml\'s "always" for whoami was saved for another demo '
        f"(command `/usr/bin/python3 /home/someone/demo_server.py`), not applied to this one (command `{sys.executable}"
    ) in said


def test_a_rule_saved_for_this_demo_runs_it_and_one_written_by_hand_runs_any_demo(tmp_path, isolated_user_dirs):
    _, command = servers_file(tmp_path, tmp_path / "started.txt")
    code, said = ask_once(tmp_path, isolated_user_dirs, rule(command))
    assert code == 0, said
    assert "allowed by saved always (config.toml)" in said
    code, said = ask_once(tmp_path, isolated_user_dirs, rule(None))
    assert code == 0 and "allowed by saved always (config.toml)" in said


async def test_the_app_says_the_rule_was_not_applied_and_T_saves_one_for_this_server(tmp_path):
    started = tmp_path / "started.txt"
    _, command = servers_file(tmp_path, started)
    config = tmp_path / "config.toml"
    config.write_text(rule(SAVED_FOR))
    server = ServerConfig(name="demo", type="stdio", command=command[0], args=command[1:])
    hub = ServerHub([server])
    settings = load_settings(config)
    mcp_config = McpConfig(path=tmp_path / "servers.json", source="test", servers={"demo": server})
    policy = make_policy(argparse.Namespace(config=config, yes=False), settings, mcp_config, hub)
    engine = ScriptedEngine([[call("whoami", {})], "done", [call("whoami", {}, "call_2")], "again"])
    app = make_app(engine, hub=hub, policy=policy, settings=settings, settings_file=config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("f4")
        await wait_for(
            pilot,
            lambda: "were saved for another demo" in str(app.query_one("#server-reason").render()),
            what="the panel's note",
        )
        note = " ".join(str(app.query_one("#server-reason").render()).split())
        assert "config.toml's choices for whoami were saved for another demo (command `/usr/bin/python3" in note
        await send(pilot, "who?")
        await wait_for(
            pilot,
            lambda: dialog_armed(app, ApprovalScreen) and app.screen.query("#approval-why"),
            what="the approval dialog, armed",
        )
        why = " ".join(str(app.screen.query_one("#approval-why").render()).split())
        assert why.startswith('asking: config.toml\'s "always" for whoami was saved for another demo')
        await pilot.press("T")
        await wait_turn_done(pilot, app)
        await send(pilot, "again")  # saved for this server now: runs without asking
        await wait_turn_done(pilot, app)
        assert [record.allowed_by for record in app.calls_table.records.values()] == [
            "you (always, saved in config.toml)",
            "saved always (config.toml)",
        ]
    saved = tomllib.loads(config.read_text())
    assert saved["approvals"]["demo"]["whoami"] == {"choice": "always", "command": command}
    assert load_settings(config).approval_rules()["demo"]["whoami"].applies_to(server.identity())
    assert starts(started) == 1

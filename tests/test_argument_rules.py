"""Approval rules that speak about a call's arguments, and rules that say no (config.toml's
``[approvals.SERVER]``): the glob matcher on real paths, the settings file, the policy, and the real
CLI with a scripted endpoint and a real SDK server that reads files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.agent.approval import ApprovalPolicy
from mcp_chat_tui.config import load_settings
from mcp_chat_tui.core.arg_patterns import ArgumentRule, matches
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.core.tools import ToolSpec
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli

NOTES_SERVER = str(Path(__file__).parent / "servers" / "notes_server.py")


def spec(name: str = "read_file", server: str = "notes") -> ToolSpec:
    return ToolSpec(server=server, name=name, description="", input_schema={"type": "object"})


# ----- the matcher -----------------------------------------------------------------------------


def test_globs_keep_star_inside_a_segment_and_double_star_across():
    assert matches("*.txt", "a.txt") and not matches("*.txt", "d/a.txt")
    assert matches("src/**/*.py", "src/a/b/c.py") and matches("src/**/*.py", "src/c.py")
    assert matches("report-??.md", "report-07.md") and not matches("report-??.md", "report-7.md")
    assert matches("[ab]*", "beta") and not matches("[!ab]*", "beta")
    assert not matches("*", 42) and not matches("*", None) and not matches("*", "a\x00b")


def test_a_path_pattern_resolves_home_dot_dot_and_links_before_it_matches(tmp_path, monkeypatch):
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (notes / "escape").symlink_to(tmp_path / "secret")  # a link planted under notes
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(notes)
    assert matches("~/notes/**", str(notes / "sub" / "a.md"))
    assert matches("~/notes/**", "~/notes/a.md")
    assert matches("~/notes/**", "sub/a.md")  # relative to the working directory
    assert not matches("~/notes/**", "~/notes/../secret/key")
    assert not matches("~/notes/**", str(notes / "escape" / "key"))
    assert not matches("~/notes/**", "~/notesfile")
    assert matches(f"{tmp_path}/notes/*.md", "~/notes/sub/../a.md")


def test_every_named_argument_must_match_one_of_its_patterns():
    rule = ArgumentRule.of({"path": ["/tmp/**", "/srv/**"], "mode": "r*"})
    assert rule.matched_by({"path": "/srv/x", "mode": "read"})
    assert not rule.matched_by({"path": "/srv/x", "mode": "write"})
    assert not rule.matched_by({"mode": "read"})
    assert rule.describe() == "path /tmp/** or /srv/**, mode r*"


# ----- the settings file -----------------------------------------------------------------------


def test_config_toml_takes_never_and_argument_patterns(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[approvals.notes]\nwrite_file = "never"\n'
        'read_file = { always = { path = "~/notes/**" }, never = { path = ["~/.ssh/**", "/etc/**"] } }\n'
    )
    rules = load_settings(config).approval_rules()["notes"]
    assert rules["write_file"].choice == "never"
    read = rules["read_file"]
    assert read.choice == "ask"
    assert read.always_when == ArgumentRule.of({"path": "~/notes/**"})
    assert read.never_when == ArgumentRule.of({"path": ["~/.ssh/**", "/etc/**"]})


def test_patterns_with_choice_always_are_refused_with_a_message_that_says_why(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[approvals.notes.read_file]\nchoice = "always"\nalways = { path = "~/notes/**" }\n')
    with pytest.raises(ConfigError, match='argument patterns need choice "ask" or "never"'):
        load_settings(config)


# ----- the policy ------------------------------------------------------------------------------


def policy_with(rules: dict, **kwargs) -> ApprovalPolicy:
    from mcp_chat_tui.config.settings import SavedApproval

    saved = {"notes": {tool: SavedApproval.model_validate(value).rule() for tool, value in rules.items()}}
    return ApprovalPolicy(saved=saved, **kwargs)


def test_never_denies_without_asking_even_under_yes_auto_and_a_session_toggle():
    for policy in (policy_with({"read_file": "never"}, yes=True), policy_with({"read_file": "never"}, mode="auto")):
        policy.toggle(spec())  # the user turns auto-run on for it in this session
        verdict = policy.verdict(spec(), {"path": "/x"})
        assert verdict.denied and not verdict.runs
        assert verdict.why == 'config.toml says "never" for read_file ([approvals.notes])'
    assert not policy_with({"read_file": "never"}).verdict(spec("other"), {}).denied


def test_patterns_run_what_they_match_deny_what_never_matches_and_ask_for_the_rest(tmp_path):
    home = str(tmp_path)
    rules = {"read_file": {"always": {"path": f"{home}/notes/**"}, "never": {"path": f"{home}/notes/private/**"}}}
    policy = policy_with(rules)
    allowed = policy.verdict(spec(), {"path": f"{home}/notes/a.md"})
    assert allowed.runs and allowed.why == f"config.toml: always for path {home}/notes/**"
    denied = policy.verdict(spec(), {"path": f"{home}/notes/private/key"})
    assert denied.denied and denied.why == f"config.toml: never for path {home}/notes/private/** ([approvals.notes])"
    asked = policy.verdict(spec(), {"path": f"{home}/elsewhere"})
    assert not asked.runs and not asked.denied
    assert asked.why == f"config.toml asks for read_file unless path {home}/notes/**"
    assert not policy.runs_without_asking(spec())  # the tool as a whole: it depends on the call
    assert policy_with(rules, yes=True).verdict(spec(), {"path": f"{home}/elsewhere"}).runs
    assert policy_with(rules, yes=True).verdict(spec(), {"path": f"{home}/notes/private/k"}).denied


# ----- the real CLI ------------------------------------------------------------------------------


def run_once(folder: Path, dirs: Path, path: str, *flags: str) -> tuple[int, str, list[dict], list[str]]:
    """One -p run: the scripted model asks to read ``path``, then says done."""
    log = folder / "reads.log"
    log.write_text("")
    servers = folder / "servers.json"
    command = {"command": sys.executable, "args": [NOTES_SERVER, "--read-log", str(log)]}
    servers.write_text(json.dumps({"servers": {"notes": command}}))
    config = folder / "config.toml"
    config.write_text(
        f'[approvals.notes.read_file]\nalways = {{ path = "{folder}/notes/**" }}\n'
        f'never = {{ path = "{folder}/secret/**" }}\n'
    )
    with ScriptedEndpoint([tool_reply("read_file", {"path": path}), "done"]) as endpoint:
        result = run_cli(
            "--endpoint", endpoint.url, "scripted", "--mcp-config", str(servers), "--config", str(config),
            *flags, "-p", "read it", cwd=folder, dirs=dirs,
        )  # fmt: skip
        requests = endpoint.requests
    said = " ".join(result.stderr.replace("│", " ").split())
    return result.returncode, said, requests, log.read_text().splitlines()


def tool_messages(requests: list[dict]) -> list[str]:
    return [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]


def test_the_cli_runs_a_matching_read_denies_a_never_one_under_yes_and_asks_for_the_rest(tmp_path, isolated_user_dirs):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("the note")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key").write_text("hunter2")
    os.symlink(tmp_path / "secret", tmp_path / "notes" / "door")

    code, said, requests, reads = run_once(tmp_path, isolated_user_dirs, str(tmp_path / "notes" / "a.md"))
    assert code == 0, said
    assert f"allowed by config.toml: always for path {tmp_path}/notes/**" in said
    assert reads == [str(tmp_path / "notes" / "a.md")] and "the note" in tool_messages(requests)[0]

    for sneaky in (f"{tmp_path}/notes/../secret/key", f"{tmp_path}/notes/door/key"):
        code, said, requests, reads = run_once(tmp_path, isolated_user_dirs, sneaky, "--yes")
        assert reads == [], said  # not run, not even under --yes
        assert f"not run: config.toml: never for path {tmp_path}/secret/**" in said
        assert "settings do not allow this tool call" in tool_messages(requests)[0]

    code, said, _, reads = run_once(tmp_path, isolated_user_dirs, str(tmp_path / "elsewhere.txt"))
    assert code == 3 and reads == [], said  # no terminal to ask: denied
    assert f"config.toml asks for read_file unless path {tmp_path}/notes/**" in said


# ----- the real app ------------------------------------------------------------------------------


async def test_the_app_runs_what_a_pattern_allows_denies_what_never_matches_and_asks_nothing(tmp_path):
    from mcp_chat_tui.agent.turn import NOT_ALLOWED_MESSAGE
    from mcp_chat_tui.ui.records import CallState
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from tests.fakes import ScriptedEngine, call
    from tests.helpers import demo_config
    from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done

    rules = {"calculator": {"always": {"expression": "1*"}, "never": {"expression": "*9*"}}}
    engine = ScriptedEngine(
        [
            [call("calculator", {"expression": "1+1"}, "call_1"), call("calculator", {"expression": "9*9"}, "call_2")],
            "2",
        ]
    )
    saved = {"demo": {tool: SavedApprovalRule(value) for tool, value in rules.items()}}
    app = make_app(engine, [demo_config()], policy=ApprovalPolicy("ask", saved=saved))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "go")
        await wait_turn_done(pilot, app)  # no dialog: it would wait for an answer
        assert not any(isinstance(screen, ApprovalScreen) for screen in app.screen_stack)
        states = {r.arguments["expression"]: r.state for r in app.calls_table.records.values()}
        assert states == {"1+1": CallState.DONE, "9*9": CallState.DENIED}
        table = app.calls_table
        by = {r.arguments["expression"]: str(table.get_cell(key, "by")) for key, r in table.records.items()}
        assert by == {"1+1": "rule", "9*9": "rule·no"}
    told = [m["content"] for m in engine.prompts[-1] if m["role"] == "tool"]
    assert told == ["1+1 = 2", NOT_ALLOWED_MESSAGE]


def SavedApprovalRule(value):  # noqa: N802 (config.toml's entry as the app loads it)
    from mcp_chat_tui.config.settings import SavedApproval

    return SavedApproval.model_validate(value).rule()

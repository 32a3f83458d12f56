"""The approval policy's rules: which calls run without asking, why, and what a toggle changes."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.core.server_identity import SavedRule, ServerIdentity
from mcp_chat_tui.core.tools import ToolSpec

READ_ONLY = {"readOnlyHint": True}
CALC = ToolSpec(server="demo", name="calculator", annotations=READ_ONLY)
CLOCK = ToolSpec(server="demo", name="clock", annotations=READ_ONLY)
WRITE = ToolSpec(server="demo", name="write")
DEMO = [CALC, CLOCK, WRITE]


def saving(log: list):
    return lambda server, tool, value: log.append((server, tool, value))


def test_each_rule_says_why():
    assert ApprovalPolicy("ask").verdict(CALC).why == 'approval = "ask": every call asks'
    assert ApprovalPolicy("auto").verdict(WRITE).why == "auto policy"
    assert ApprovalPolicy("ask", yes=True).verdict(WRITE).why == "--yes"
    saved = ApprovalPolicy("auto", saved={"demo": {"calculator": "always", "write": "ask"}})
    assert saved.verdict(CALC).why == "saved always (config.toml)"
    assert not saved.runs_without_asking(WRITE)
    assert saved.verdict(WRITE).why == 'config.toml says "ask" for this tool ([approvals.demo])'


def test_auto_readonly_runs_read_only_tools_of_trusted_servers_only():
    untrusted = ApprovalPolicy("auto-readonly", trusted={"other"})
    assert not untrusted.runs_without_asking(CALC)
    assert "demo is not in trusted_servers" in untrusted.verdict(CALC).why
    trusted = ApprovalPolicy("auto-readonly", trusted={"demo"})
    assert trusted.verdict(CALC).why == "auto-readonly (trusted server demo)" and trusted.runs_without_asking(CALC)
    assert not trusted.runs_without_asking(WRITE)
    assert trusted.verdict(WRITE).why == "auto-readonly: demo does not mark this tool read-only"


def test_a_tool_toggle_is_for_this_session_and_writes_nothing():
    log: list = []
    policy = ApprovalPolicy("ask", saved={"demo": {"calculator": "always"}}, on_save=saving(log))
    assert policy.toggle(CALC) is False
    assert policy.verdict(CALC).why == "you turned auto-run off for this tool (this session)"
    assert policy.saved_choice(CALC) == "always"
    assert policy.toggle(CALC) is True
    assert policy.verdict(CALC).why == "saved always (config.toml)", "back on: the saved choice speaks again"
    assert policy.toggle(WRITE) is True and policy.verdict(WRITE).why == "you (always, this session)"
    assert log == []


def test_a_server_toggle_on_then_off_writes_nothing_and_keeps_saved_choices():
    log: list = []
    policy = ApprovalPolicy(
        "ask", saved={"demo": {"calculator": "always"}, "ghost": {"x": "always"}}, on_save=saving(log)
    )
    policy.toggle(CLOCK)  # a per-tool choice of this session: the server toggle replaces it
    assert policy.toggle_server("demo", DEMO) is True
    assert all(policy.runs_without_asking(spec) for spec in DEMO)
    assert policy.verdict(WRITE).why == "you (auto-run for server demo, this session)"
    assert policy.toggle_server("demo", DEMO) is False
    assert not any(policy.runs_without_asking(spec) for spec in DEMO)
    assert policy.verdict(CALC).why == "you turned auto-run off for server demo (this session)"
    assert log == [] and policy.saved_choice(CALC) == "always"
    assert policy.saved_choice(ToolSpec(server="ghost", name="x")) == "always"
    # A tool's own choice after that speaks for it alone.
    assert policy.toggle(CALC) is True and policy.verdict(CALC).why == "you (always, this session)"
    assert not policy.runs_without_asking(WRITE)


def test_a_server_toggle_that_matches_the_rules_leaves_no_override():
    policy = ApprovalPolicy("auto")
    assert policy.toggle_server("demo", DEMO) is False
    assert policy.toggle_server("demo", DEMO) is True
    assert policy.verdict(WRITE).why == "auto policy"


def test_always_saved_writes_one_key_and_tells_the_listeners():
    log: list = []
    changes: list = []
    policy = ApprovalPolicy("ask", on_save=saving(log))
    policy.add_listener(lambda: changes.append(1))
    assert policy.always_allow(WRITE, save=True) is None
    assert log == [("demo", "write", SavedRule("always"))], "no server known: the choice alone"
    assert policy.verdict(WRITE).why == "saved always (config.toml)"
    policy.toggle(CALC)
    policy.toggle_server("demo", DEMO)
    assert len(changes) == 3


SAVED_DEMO = ServerIdentity(command=("python", "-m", "demo_server"))
OTHER_DEMO = ServerIdentity(command=("sh", "-c", "rm -rf ~"))


def test_a_saved_always_speaks_only_for_the_server_it_was_saved_for():
    running = {"demo": OTHER_DEMO}
    saved = {"demo": {"write": SavedRule("always", SAVED_DEMO), "clock": "always"}}
    policy = ApprovalPolicy("ask", saved=saved, identity_of=running.get)
    assert not policy.runs_without_asking(WRITE), "another program that took the name demo asks"
    assert policy.saved_choice(WRITE) is None and policy.unapplied_rule(WRITE) == saved["demo"]["write"]
    assert policy.verdict(WRITE).why == (
        'config.toml\'s "always" for write was saved for another demo (command `python -m demo_server`), '
        "not applied to this one (command `sh -c 'rm -rf ~'`); approval = \"ask\": every call asks"
    )
    assert policy.runs_without_asking(CLOCK), "a choice written without a server applies to any demo"
    running["demo"] = SAVED_DEMO
    assert policy.runs_without_asking(WRITE) and policy.verdict(WRITE).why == "saved always (config.toml)"
    assert policy.unapplied_rule(WRITE) is None
    running.pop("demo")
    assert not policy.runs_without_asking(WRITE), "a server not known now is not the one it was saved for"


def test_saving_always_records_the_server_it_is_for():
    log: list = []
    running = {"demo": OTHER_DEMO}
    policy = ApprovalPolicy(
        "ask", saved={"demo": {"write": SavedRule("always", SAVED_DEMO)}}, on_save=saving(log), identity_of=running.get
    )
    policy.always_allow(WRITE, save=True)
    assert log == [("demo", "write", SavedRule("always", OTHER_DEMO))]
    assert policy.saved_choice(WRITE) == "always", "the new rule replaces the old one's server"

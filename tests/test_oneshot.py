"""``-p`` for scripts and pipes: the real CLI (run in this process), a scripted OpenAI-compatible endpoint
for the model, and the real demo server for the tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.demo.server import server as demo_server
from mcp_chat_tui.servers.notifications import instructions_prompt
from mcp_chat_tui.transcript import parse, read_transcript_text
from tests import cli_in_process
from tests.helpers import FIXTURE_SERVER
from tests.scripted_endpoint import ScriptedEndpoint, failure, tool_reply

CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main"]
QUESTION = "what is 12 * 7?"
ANSWER = "12 * 7 = 84."
CALCULATOR_SCRIPT = [tool_reply("calculator", {"expression": "12 * 7"}, content="Let me compute that."), ANSWER]


def run_cli(*args: str, cwd: Path, dirs: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The CLI in this process (tests/cli_in_process.py: its words, codes and files are what these
    tests are about, not the process); from a test with an event loop running, as a process."""
    env = dict(os.environ, COLUMNS="120")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    if not cli_in_process.loop_running():
        return cli_in_process.run_cli(args, cwd=cwd, env=env, stdin=stdin)
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def demo_servers(folder: Path) -> Path:
    config = folder / "servers.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "demo": {"command": sys.executable, "args": ["-m", "mcp_chat_tui.demo.server"], "cwd": str(folder)}
                }
            }
        )
    )
    return config


def one_shot(
    endpoint: ScriptedEndpoint, folder: Path, dirs: Path, *flags: str, stdin: str | None = None, prompt: str = QUESTION
) -> subprocess.CompletedProcess:
    return run_cli(
        "--endpoint",
        endpoint.url,
        "scripted",
        "--mcp-config",
        str(demo_servers(folder)),
        "-p",
        prompt,
        *flags,
        cwd=folder,
        dirs=dirs,
        stdin=stdin,
    )


def saved_conversations(dirs: Path) -> list[Path]:
    return sorted((dirs / "data" / "conversations").glob("*.md"))


def test_stdout_is_only_the_final_answer_and_the_rest_goes_to_stderr(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    err = result.stderr
    assert err.startswith("scripted · 6 tools from 1 server\n")
    assert "Let me compute that." in err and "✓ calculator done" in err and "12 * 7 = 84" in err
    assert "tokens" in err and ANSWER not in err
    assert endpoint.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "calculator",
        "content": "12 * 7 = 84",
    }
    [saved] = saved_conversations(isolated_user_dirs)  # a -p run is a conversation like any other
    exchange = parse(read_transcript_text(saved)).exchanges[0]
    assert exchange.user == QUESTION and exchange.steps[0].proposals[0].choice == "auto"


def test_json_lists_the_answer_every_call_and_the_token_figures(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # one JSON object, nothing else
    assert report["answer"] == ANSWER and report["end"] == "answered" and report["exit_code"] == 0
    [call] = report["calls"]
    assert {key: call[key] for key in ("server", "tool", "arguments", "choice", "outcome", "result", "error")} == {
        "server": "demo",
        "tool": "calculator",
        "arguments": {"expression": "12 * 7"},
        "choice": "auto",
        "outcome": "done",
        "result": "12 * 7 = 84",
        "error": None,
    }
    assert isinstance(call["duration"], float) and 0 < call["duration"] < 30
    tokens = report["tokens"]
    assert len(tokens["generations"]) == 2 and tokens["prompt"] == 80 and tokens["generated"] > 0
    assert report["transcript"] == str(saved_conversations(isolated_user_dirs)[0])


def test_json_has_each_replys_text_and_a_malformed_calls_raw_text_and_reason(tmp_path, isolated_user_dirs):
    """What bench/tool_use.py reads the model's own writing from: every reply's text (not only the
    last), and each malformed call as the model wrote it, with why it was not run."""
    script = [
        CALCULATOR_SCRIPT[0],
        tool_reply("add-12-and-7", {"a": 12}, content="And a sum."),
        ANSWER,
    ]
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes", "--json")
    report = json.loads(result.stdout)
    assert [reply.strip() for reply in report["replies"]] == ["Let me compute that.", "And a sum.", ANSWER]
    assert len(report["replies"]) == len(report["tokens"]["generations"])
    done, malformed = report["calls"]
    assert done["outcome"] == "done" and "reason" not in done
    assert malformed["outcome"] == "malformed" and malformed["tool"] is None
    assert "add-12-and-7" in malformed["raw"] and "add-12-and-7" in malformed["reason"]


def test_without_yes_and_without_a_terminal_the_call_is_denied_and_the_exit_code_is_3(tmp_path, isolated_user_dirs):
    script = [CALCULATOR_SCRIPT[0], "I could not run the calculator."] * 2
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs)
        as_json = json.loads(one_shot(endpoint, tmp_path, isolated_user_dirs, "--json").stdout)
    assert result.returncode == 3, result.stderr
    assert result.stdout == "I could not run the calculator.\n"
    assert "no terminal to ask: call denied (use --yes to allow calls)" in result.stderr
    assert "⊘ calculator denied" in result.stderr
    assert as_json["exit_code"] == 3 and as_json["calls"][0]["outcome"] == "denied"
    assert as_json["calls"][0]["choice"] == "n" and as_json["calls"][0]["result"] is None


def test_an_endpoint_that_fails_is_exit_1_with_nothing_on_stdout(tmp_path, isolated_user_dirs):
    script = [failure(500, '{"error": {"message": "out of memory"}}')] * 2
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs)
        as_json = json.loads(one_shot(endpoint, tmp_path, isolated_user_dirs, "--json").stdout)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "HTTP 500" in result.stderr and "out of memory" in result.stderr
    assert as_json["exit_code"] == 1 and as_json["end"] == "error" and "HTTP 500" in as_json["error"]


def test_bad_input_is_exit_2(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([]) as endpoint:
        bad_flag = one_shot(endpoint, tmp_path, isolated_user_dirs, "--no-such-flag")
        json_alone = run_cli("--endpoint", endpoint.url, "m", "--json", cwd=tmp_path, dirs=isolated_user_dirs)
        empty = one_shot(endpoint, tmp_path, isolated_user_dirs, prompt="-", stdin="\n")
        assert endpoint.requests == []
    assert (bad_flag.returncode, json_alone.returncode, empty.returncode) == (2, 2, 2)
    assert "unrecognized arguments: --no-such-flag" in bad_flag.stderr
    assert "--json goes with -p" in json_alone.stderr
    assert "the prompt given with -p is empty" in empty.stderr
    assert bad_flag.stdout == json_alone.stdout == empty.stdout == ""


def test_a_bad_configuration_with_json_is_exit_2_and_a_json_error(tmp_path, isolated_user_dirs):
    bad = tmp_path / "bad.json"
    bad.write_text('{"servers": {"a": {"command": "x",}}')
    result = run_cli(
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "m",
        "--mcp-config",
        str(bad),
        "-p",
        "hi",
        "--json",
        cwd=tmp_path,
        dirs=isolated_user_dirs,
    )
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["exit_code"] == 2 and str(bad) in report["error"] and report["answer"] is None


def test_dash_reads_the_prompt_from_stdin_and_no_save_saves_nothing(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(
            endpoint, tmp_path, isolated_user_dirs, "--yes", "--json", "--no-save", prompt="-", stdin=QUESTION + "\n"
        )
    assert result.returncode == 0, result.stderr
    demo_instructions = instructions_prompt([("demo", demo_server.instructions or "")])
    assert endpoint.requests[0]["messages"][0] == {"role": "system", "content": demo_instructions}
    assert endpoint.requests[0]["messages"][1] == {"role": "user", "content": QUESTION}
    report = json.loads(result.stdout)
    assert report["prompt"] == QUESTION and report["answer"] == ANSWER and report["transcript"] is None
    assert saved_conversations(isolated_user_dirs) == []


def bundled_path_seen_by_the_cli(cwd: Path) -> str:
    """The bundled mcp.json as the CLI's own interpreter finds it (an installed copy carries it in
    ``mcp_chat_tui/_bundled``, a checkout at its top level), not as this test process does."""
    probe = subprocess.run(
        [sys.executable, "-c", "from mcp_chat_tui.core.paths import bundled_path; print(bundled_path('mcp.json'))"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return probe.stdout.strip()


def test_demo_uses_the_bundled_mcp_json_over_the_working_folders_and_says_so(tmp_path, isolated_user_dirs):
    (tmp_path / "mcp.json").write_text(
        json.dumps({"servers": {"local": {"command": sys.executable, "args": [FIXTURE_SERVER, "--label", "local"]}}})
    )
    with ScriptedEndpoint(CALCULATOR_SCRIPT * 2) as endpoint:
        demo = run_cli(
            "--demo",
            "--endpoint",
            endpoint.url,
            "scripted",
            "-p",
            QUESTION,
            "--yes",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
        chosen = run_cli(
            "--demo",
            "--endpoint",
            endpoint.url,
            "scripted",
            "-p",
            QUESTION,
            "--yes",
            "--json",
            "--mcp-config",
            str(demo_servers(tmp_path)),
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert demo.returncode == 0, demo.stderr
    assert f"mcp.json: {bundled_path_seen_by_the_cli(tmp_path)} (bundled default (--demo))" in demo.stderr
    assert json.loads(demo.stdout)["calls"][0]["server"] == "demo"
    assert chosen.returncode == 0, chosen.stderr
    assert f"mcp.json: {tmp_path / 'servers.json'} (--mcp-config)" in chosen.stderr


@pytest.mark.parametrize(
    "tool, arguments, outcome, code",
    [
        ("crash", {}, "error", 1),  # the server died under the call: a server failure
        ("slow", {"seconds": 30}, "timeout", 3),  # the call was cut off: the answer may be incomplete
    ],
)
def test_a_call_the_server_could_not_finish_sets_the_exit_code(
    tool, arguments, outcome, code, tmp_path, isolated_user_dirs
):
    config = tmp_path / "fixture.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "fixture": {"command": sys.executable, "args": [FIXTURE_SERVER, "--label", "fixture"], "timeout": 1}
                }
            }
        )
    )
    with ScriptedEndpoint([tool_reply(tool, arguments), "It did not work."]) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "-p",
            "go",
            "--yes",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    assert result.returncode == code, result.stderr
    report = json.loads(result.stdout)
    assert report["exit_code"] == code and report["answer"] == "It did not work."
    assert report["calls"][0]["outcome"] == outcome and report["calls"][0]["error"]


def test_model_command_as_the_prompt_is_refused_before_anything_runs_saying_what_to_use(tmp_path, isolated_user_dirs):
    """``-p "/model NAME"`` would switch and then have nothing to ask: refused as bad input (2), with
    the command line's way to name the model, before the model is asked anything or a file is saved."""
    with ScriptedEndpoint(["should not be asked"]) as endpoint:
        named = one_shot(endpoint, tmp_path, isolated_user_dirs, prompt="/model other-model")
        alone = one_shot(endpoint, tmp_path, isolated_user_dirs, prompt="-", stdin="/MODEL\n")
        assert endpoint.requests == []
    for result in (named, alone):
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        assert "/model would switch to a model and ask it nothing" in result.stderr
        assert "mcp-chat-tui MODEL -p PROMPT" in result.stderr and "--transcript FILE" in result.stderr
    assert not (isolated_user_dirs / "data" / "conversations").exists() or not any(
        (isolated_user_dirs / "data" / "conversations").iterdir()
    )

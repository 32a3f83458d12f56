"""A server's sampling and elicitation requests in ``--plain`` and ``-p``: the real CLI (in this process,
tests/cli_in_process.py), a scripted model endpoint, and tests/servers/asking_server.py asking for real
(in memory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.cli_in_process import servers_in_memory
from tests.helpers import server_module
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli, saved_conversations

ASKING_SERVER = str(Path(__file__).parent / "servers" / "asking_server.py")
FAKE_BROWSER = str(Path(__file__).parent / "fake_browser.py")


def asking_servers(folder: Path, dirs: Path) -> Path:
    """mcp.json with the asking server; config.toml lets its tools run without asking (the requests
    they make are what is tested)."""
    config = folder / "servers.json"
    config.write_text(json.dumps({"servers": {"asking": {"command": sys.executable, "args": [ASKING_SERVER]}}}))
    (dirs / "config").mkdir(parents=True, exist_ok=True)
    tools = ["summarize", "sign_up", "every_field", "open_page", "open_url", "guarded"]
    (dirs / "config" / "config.toml").write_text(
        "[approvals.asking]\n" + "".join(f'{tool} = "always"\n' for tool in tools)
    )
    return config


def cli(endpoint, folder, dirs, *flags, stdin=None):
    """The CLI in this process, the asking server in memory (its requests are what is tested, not its process)."""
    with servers_in_memory({(ASKING_SERVER,): lambda: server_module(ASKING_SERVER).server}):
        return run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(asking_servers(folder, dirs)),
            *flags,
            cwd=folder,
            dirs=dirs,
            stdin=stdin,
        )


def requests_recorded(dirs: Path) -> list:
    (path,) = saved_conversations(dirs)
    transcript = parse(read_transcript_text(path), path)
    return [request for exchange in transcript.exchanges for step in exchange.steps for request in step.requests]


def test_one_shot_without_a_terminal_declines_a_form_with_one_line(tmp_path, isolated_user_dirs):
    script = [tool_reply("sign_up", {}), "You declined."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "-p", "sign me up")
    assert result.returncode == 3, result.stderr  # the form was declined: the answer may be incomplete
    assert "asking asked for a form (Sign up for the newsletter); declined: no terminal to ask" in result.stderr
    tool_message = endpoint.requests[1]["messages"][-1]
    assert json.loads(tool_message["content"]) == {"action": "decline"}
    (request,) = requests_recorded(isolated_user_dirs)
    assert (request.kind, request.answer) == ("elicitation", "decline")


def test_one_shot_without_yes_refuses_sampling_and_with_yes_the_model_answers(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([tool_reply("summarize", {"text": "abc"}), "No summary."]) as endpoint:
        refused = cli(endpoint, tmp_path, isolated_user_dirs, "-p", "summarize abc")
    assert refused.returncode == 3, refused.stderr  # refused by policy: the answer may be incomplete, nothing failed
    assert "sampling request of asking refused (use --yes to let the model answer): no terminal to ask" in (
        refused.stderr
    )
    assert len(endpoint.requests) == 2  # the turn's two replies: the model was never sampled
    with ScriptedEndpoint([tool_reply("summarize", {"text": "abc"}), "A one-line summary.", "Done."]) as endpoint:
        approved = cli(endpoint, tmp_path / "..", isolated_user_dirs, "-p", "summarize abc", "--yes")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == "Done.\n"
    sampled = endpoint.requests[1]["messages"]
    assert sampled == [
        {"role": "system", "content": "You summarize in one line."},
        {"role": "user", "content": "Summarize: abc"},
    ]
    result = json.loads(endpoint.requests[2]["messages"][-1]["content"])
    assert result["content"] == {"type": "text", "text": "A one-line summary."}
    assert "📨 asking asked the model for a reply (40 tokens at most) → approved" in approved.stderr


def test_plain_asks_each_field_again_until_it_is_valid(tmp_path, isolated_user_dirs):
    lines = ["sign me up", "f", "A", "Ada", "not-an-email", "ada@example.com", "200", "", "2", "yes", "tok-secret-99"]
    with ScriptedEndpoint([tool_reply("sign_up", {}), "Signed up."]) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin="\n".join([*lines, "bye"]) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Your name: at least 2 characters" in result.stdout
    assert "email: an email address, such as name@example.com" in result.stdout
    assert "age: at most 150" in result.stdout
    sent = json.loads(endpoint.requests[1]["messages"][-1]["content"])  # the server echoes what it got
    assert sent == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "email": "ada@example.com",
            "plan": "pro",
            "newsletter": True,
            "api_token": "[redacted: asking.api_token]",  # the secret typed is hidden from then on
        },
    }
    (request,) = requests_recorded(isolated_user_dirs)
    assert request.result["content"]["api_token"] == "[redacted]"
    (saved,) = saved_conversations(isolated_user_dirs)
    assert "tok-secret-99" not in saved.read_text()
    with ScriptedEndpoint([]) as endpoint:  # resumed: the request is shown again, nothing is asked
        resumed = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", "--transcript", str(saved), stdin="bye\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "📨 asking asked: Sign up for the newsletter → accept: name=Ada" in resumed.stdout
    assert "api_token=[redacted]" in resumed.stdout and endpoint.requests == []


def test_plain_approves_and_edits_a_sampling_request(tmp_path, isolated_user_dirs):
    lines = ["summarize abc", "e", "Answer in French.", "Summarize: xyz", "s"]
    script = [tool_reply("summarize", {"text": "abc"}), "Un résumé.", "Done."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin="\n".join([*lines, "bye"]) + "\n")
    assert result.returncode == 0, result.stderr
    assert endpoint.requests[1]["messages"] == [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Summarize: xyz"},
    ]
    assert "Server asking asks the model for a reply (up to 40 tokens)" in result.stdout
    (request,) = requests_recorded(isolated_user_dirs)
    assert request.answer == "edited" and request.result["text"] == "Un résumé."


def test_sampling_refused_by_the_rate_limit_is_recorded_and_makes_p_exit_3(tmp_path, isolated_user_dirs):
    """The limit refuses before anyone is asked; the refusal is still the run's: said in ``--json``'s
    requests and in the conversation, and the answer may be incomplete (3), as for any refusal. The
    server here takes the refusal in its stride (its tool ends well), so only the record says it."""
    config = tmp_path / "servers.json"
    sampler = str(Path(__file__).parent / "servers" / "sampling_server.py")
    config.write_text(json.dumps({"servers": {"sampler": {"command": sys.executable, "args": [sampler]}}}))
    (isolated_user_dirs / "config").mkdir(parents=True, exist_ok=True)
    (isolated_user_dirs / "config" / "config.toml").write_text("sampling_per_minute = 0\n")
    script = [tool_reply("ask_model_or_say_why", {"prompt": "hi"}), "The server got no sample."]
    with ScriptedEndpoint(script) as endpoint:
        result = run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(config),
            "--yes",
            "-p",
            "sample",
            "--json",
            cwd=tmp_path,
            dirs=isolated_user_dirs,
        )
    report = json.loads(result.stdout)
    assert [call["outcome"] for call in report["calls"]] == ["done"]  # the server's tool ended well
    assert report["requests"] == [{"server": "sampler", "kind": "sampling", "answer": "refused"}]
    assert result.returncode == 3 and report["exit_code"] == 3, result.stderr
    assert "sampling_per_minute" in result.stderr  # said as it happened
    (request,) = requests_recorded(isolated_user_dirs)
    assert (request.kind, request.answer) == ("sampling", "refused")
    assert "more than 0 times in a minute" in request.result["error"]
    assert len(endpoint.requests) == 2  # the model was never sampled


@pytest.mark.parametrize(
    ("url", "said", "lines", "action"),
    [
        ("file:///etc/shadow", "its scheme is file:", ["o", "d"], "decline"),
        ("javascript:alert(1)", "its scheme is javascript:", ["o", "d"], "decline"),
        ("http://example.com/login", "it goes to example.com unencrypted (http)", ["o", "c"], "cancel"),
        ("https://127.0.0.1:9/authorize", "goes to 127.0.0.1:9", ["o"], "accept"),
    ],
)
def test_plain_opens_only_an_https_or_local_address(
    tmp_path, isolated_user_dirs, monkeypatch, url, said, lines, action
):
    opened = tmp_path / "opened.txt"
    monkeypatch.setenv("BROWSER", f"{sys.executable} {FAKE_BROWSER} %s")
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(opened))
    with ScriptedEndpoint([tool_reply("open_url", {"url": url}), "Done."]) as endpoint:
        stdin = "\n".join(["open it", *lines, "bye"]) + "\n"
        result = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert said in result.stdout
    assert json.loads(endpoint.requests[1]["messages"][-1]["content"]) == {"action": action}
    browsed = opened.read_text().splitlines() if opened.exists() else []
    assert browsed == ([url] if action == "accept" else [])


def test_plain_asks_a_multi_select_as_numbered_choices_and_sends_a_json_array(tmp_path, isolated_user_dirs):
    lines = ["fill it", "f", "Ada", "ada@example.com", "", "", "", "", "", "", "", "", "3", "Wonder Woman", ""]
    lines += ["1,5", "1,2,3", "2,1", "2"]  # the instruments (twice wrong), then the fish
    with ScriptedEndpoint([tool_reply("every_field", {}), "Filled."]) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "--plain", stdin="\n".join([*lines, "bye"]) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Instruments: 1 Guitar · 2 Piano · 3 Violin" in result.stdout
    assert "Instruments * (1-2 of them, by numbers such as 1,3) [1]:" in result.stdout
    assert "Instruments: '5' is not one of Guitar, Piano, Violin" in result.stdout
    assert "Instruments: choose at most 2" in result.stdout
    sent = json.loads(endpoint.requests[1]["messages"][-1]["content"])  # the server echoes what it got
    assert sent == {
        "action": "accept",
        "content": {
            "nick": "Ada",
            "email": "ada@example.com",
            "motto": "It was a dark and stormy night.",
            "age": 42,
            "news": True,
            "friend": "Joey",
            "hero": "hero-2",
            "instruments": ["Guitar", "Piano"],
            "fish": ["fish-2"],
        },  # agree (a yes or no without a default) left empty: not sent
    }

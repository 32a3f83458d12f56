"""A server's sampling request is generated with its own ``maxTokens``, ``temperature`` and
``stopSequences`` (tests/servers/sampling_server.py asks through the SDK's ``create_message``): the
real CLI behind the scripted endpoint, which records what each generation was sent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli, saved_conversations

SAMPLING_SERVER = str(Path(__file__).parent / "servers" / "sampling_server.py")


def sampler_config(folder: Path, dirs: Path, model_table: str = "") -> Path:
    """mcp.json with the sampling server; config.toml lets its tool run without asking."""
    config = folder / "servers.json"
    config.write_text(json.dumps({"servers": {"sampler": {"command": sys.executable, "args": [SAMPLING_SERVER]}}}))
    (dirs / "config").mkdir(parents=True, exist_ok=True)
    (dirs / "config" / "config.toml").write_text(model_table + '[approvals.sampler]\nask_model = "always"\n')
    return config


def cli(endpoint, folder, dirs, *flags, model_table=""):
    config = sampler_config(folder, dirs, model_table)
    return run_cli("--endpoint", endpoint.url, "scripted", "--mcp-config", str(config), *flags, cwd=folder, dirs=dirs)


def server_got(endpoint, index: int) -> dict:
    """What the sampling server's tool answered (it echoes the sampling result), from the tool message
    the model was sent in request ``index``."""
    return json.loads(endpoint.requests[index]["messages"][-1]["content"])


def generation_fields(request: dict) -> dict:
    return {key: request[key] for key in ("max_tokens", "temperature", "stop") if key in request}


def test_the_request_generates_with_its_own_settings_and_the_conversation_keeps_its_own(tmp_path, isolated_user_dirs):
    asked = {"prompt": "Count to ten", "max_tokens": 5, "temperature": 0, "stop": ["3", "END"]}
    script = [tool_reply("ask_model", asked), "1 2 3 4 5", "Counted."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(
            endpoint, tmp_path, isolated_user_dirs, "-p", "count", "--yes", "--temp", "0.9", "--max-tokens", "100"
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Counted.\n"
    conversation, sampled, after = endpoint.requests
    assert sampled["messages"] == [{"role": "user", "content": "Count to ten"}]
    assert generation_fields(sampled) == {"max_tokens": 5, "temperature": 0.0, "stop": ["3", "END"]}
    assert generation_fields(conversation) == generation_fields(after) == {"max_tokens": 100, "temperature": 0.9}
    got = server_got(endpoint, 2)
    assert got["content"] == {"type": "text", "text": "1 2 "}  # ended before the stop sequence
    assert got["stopReason"] == "stopSequence"
    assert '📨 sampler asked the model for a reply (5 tokens at most, temperature 0, stops at "3", "END")' in (
        result.stderr
    )
    (path,) = saved_conversations(isolated_user_dirs)
    transcript = parse(read_transcript_text(path), path)
    (request,) = [r for exchange in transcript.exchanges for step in exchange.steps for r in step.requests]
    assert request.request["maxTokens"] == 5
    assert request.request["temperature"] == 0
    assert request.request["stopSequences"] == ["3", "END"]
    assert request.result == {"text": "1 2 ", "stopReason": "stopSequence"}


def test_max_tokens_is_a_cap_never_above_the_engines_own(tmp_path, isolated_user_dirs):
    script = [tool_reply("ask_model", {"prompt": "Write", "max_tokens": 500}), "Words.", "Done."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "-p", "write", "--yes", "--max-tokens", "50")
    assert result.returncode == 0, result.stderr
    assert [request["max_tokens"] for request in endpoint.requests] == [50, 50, 50]


def test_with_tools_in_text_a_sampling_request_gets_no_tools_of_the_conversation(tmp_path, isolated_user_dirs):
    script = [tool_reply("ask_model", {"prompt": "Say hi"}), "Hi.", "Done."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(
            endpoint, tmp_path, isolated_user_dirs, "-p", "ask", "--yes", model_table='[model]\ntool_prompt = "text"\n'
        )
    assert result.returncode == 0, result.stderr
    conversation, sampled, _ = endpoint.requests
    assert "## ask_model" in conversation["messages"][0]["content"]  # the conversation's tools, in text
    assert sampled["messages"] == [{"role": "user", "content": "Say hi"}]
    assert "tools" not in sampled


def test_a_refused_sampling_request_is_exit_3_with_why(tmp_path, isolated_user_dirs):
    """``-p`` without a terminal or --yes refuses the request (a policy's refusal, not a failure): exit 3, as
    for a denied tool call; the server (2025-11-25: it gets the error and its tool fails) is not at fault."""
    script = [tool_reply("ask_model", {"prompt": "Say hi"}), "No reply."]
    with ScriptedEndpoint(script) as endpoint:
        result = cli(endpoint, tmp_path, isolated_user_dirs, "-p", "ask", "--json")
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["exit_code"] == 3 and report["answer"] == "No reply."
    assert report["requests"] == [{"server": "sampler", "kind": "sampling", "answer": "refused"}]
    assert "there was no one to ask (no terminal); --yes lets the model answer" in report["calls"][0]["error"]
    assert len(endpoint.requests) == 2  # the model was never sampled

"""A ``-p`` turn that ends without an answer says so: its own ``end`` in ``--json``, exit 3, a line on
stderr; ``--max-tool-rounds`` over config.toml's ``max_tool_rounds``; what goes over the wire about a
malformed call; the figures of the whole turn. The real CLI as a subprocess, a scripted
OpenAI-compatible endpoint for the model, the real demo server."""

from __future__ import annotations

import json

from mcp_chat_tui.core.feedback import APP_SENDER, MALFORMED_NAME
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_oneshot import one_shot


def calculator(expression: str, content: str = "") -> dict:
    return tool_reply("calculator", {"expression": expression}, content=content)


def run(tmp_path, dirs, script: list, *flags: str) -> tuple[dict, ScriptedEndpoint]:
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, dirs, "--yes", "--json", *flags)
    report = json.loads(result.stdout)
    assert report["exit_code"] == result.returncode, result.stderr
    return report, endpoint


def test_an_empty_last_reply_is_no_answer_and_exit_3(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([calculator("12 * 7"), ""]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes")
    assert result.returncode == 3, result.stderr
    assert result.stdout == ""
    assert "[no answer: the model's last reply had no text]" in result.stderr
    report, _ = run(tmp_path, isolated_user_dirs, [calculator("12 * 7"), ""])
    assert (report["end"], report["exit_code"], report["answer"]) == ("no_answer", 3, "")
    assert report["note"] == "no answer: the model's last reply had no text"


def test_the_cap_on_tool_rounds_ends_the_turn_with_its_own_end_and_exit_3(tmp_path, isolated_user_dirs):
    script = [calculator("1 + 1"), calculator("2 + 2"), "1 + 1 = 2; I did not get to 2 + 2."]
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes", "--max-tool-rounds", "1")
    assert result.returncode == 3, result.stderr
    assert result.stdout == "1 + 1 = 2; I did not get to 2 + 2.\n"
    assert "[stopped after 1 tool rounds (max_tool_rounds)]" in result.stderr
    report, endpoint = run(tmp_path, isolated_user_dirs, script, "--max-tool-rounds", "1")
    assert report["end"] == "tool_round_limit" and report["exit_code"] == 3
    assert [call["outcome"] for call in report["calls"]] == ["done", "cancelled"]
    assert report["calls"][1]["error"].startswith("Not run: this turn has reached its limit of 1 tool rounds")
    assert endpoint.requests[2]["tools"] == endpoint.requests[0]["tools"]


def test_max_tool_rounds_in_config_toml_and_the_flag_over_it(tmp_path, isolated_user_dirs):
    config = tmp_path / "config.toml"
    config.write_text("max_tool_rounds = 1\n")
    script = [calculator("1 + 1"), calculator("2 + 2"), "4"]
    report, _ = run(tmp_path, isolated_user_dirs, script, "--config", str(config))
    assert report["end"] == "tool_round_limit"
    report, _ = run(tmp_path, isolated_user_dirs, script, "--config", str(config), "--max-tool-rounds", "2")
    assert report["end"] == "answered" and report["exit_code"] == 0
    assert [call["outcome"] for call in report["calls"]] == ["done", "done"]


def test_a_bad_max_tool_rounds_is_bad_input_that_says_what_to_give(tmp_path, isolated_user_dirs):
    config = tmp_path / "config.toml"
    config.write_text("max_tool_rounds = 0\n")
    with ScriptedEndpoint([]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--config", str(config))
        flag = one_shot(endpoint, tmp_path, isolated_user_dirs, "--max-tool-rounds", "0")
    assert result.returncode == 2 and "max_tool_rounds" in result.stderr
    assert "a whole number of at least 1" in result.stderr, result.stderr
    assert flag.returncode == 2 and "--max-tool-rounds: 0 is less than 1" in flag.stderr, flag.stderr
    assert endpoint.requests == []


def test_repeated_calls_end_the_turn_and_are_listed_as_not_run(tmp_path, isolated_user_dirs):
    report, endpoint = run(tmp_path, isolated_user_dirs, [calculator("12 * 7")] * 3 + ["84"])
    assert report["end"] == "repeated_calls" and report["exit_code"] == 3
    assert report["note"].startswith("stopped: the model called calculator again with the same arguments")
    calls = report["calls"]
    assert [call["outcome"] for call in calls] == ["done", "repeated", "repeated"]
    assert [call["repeat_of"] for call in calls] == [None, "call_1", "call_1"]
    assert all(call["duration"] is None and call["choice"] is None for call in calls[1:])
    assert len(endpoint.requests) == 3
    *_, told, asked = endpoint.requests[2]["messages"]
    assert told["role"] == "tool" and told["content"] == "(the same result as above)"
    assert asked["role"] == "user" and asked["content"].startswith("[mcp-chat-tui] Using the tool result above")


def test_what_goes_over_the_wire_about_a_malformed_call_is_a_plain_user_message(tmp_path, isolated_user_dirs):
    script = [tool_reply("add-17-and-25", {}, content="Adding."), "42"]
    report, endpoint = run(tmp_path, isolated_user_dirs, script)
    assert report["end"] == "answered" and report["calls"][0]["outcome"] == "malformed"
    second = endpoint.requests[1]["messages"]
    assert MALFORMED_NAME not in json.dumps(second)
    assert second[-1]["role"] == "user" and second[-1]["name"] == APP_SENDER
    assert "add-17-and-25" in second[-1]["content"] and "calculator" in second[-1]["content"]
    assert second[-2]["role"] == "assistant" and "tool_calls" not in second[-2]


def test_plain_titles_what_the_model_was_told_of_a_malformed_call(tmp_path, isolated_user_dirs):
    """The panel read "? malformed call, the model was told malformed" in a real run."""
    with ScriptedEndpoint([tool_reply("add-17-and-25", {}), "42"]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes")
    assert result.returncode == 0, result.stderr
    assert "! malformed call: what the model was told ─" in result.stderr, result.stderr
    assert "told malformed" not in result.stderr


def test_the_figures_cover_the_whole_turn(tmp_path, isolated_user_dirs):
    script = [calculator("12 * 7", content="Let me compute that."), "12 * 7 = 84, as the calculator says."]
    with ScriptedEndpoint(script) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, "--yes")
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if "prompt tokens" in line]
    report, _ = run(tmp_path, isolated_user_dirs, script)
    tokens = report["tokens"]
    generations = tokens["generations"]
    assert len(generations) == 2 and tokens["generated"] == sum(g["generated"] for g in generations)
    assert line.startswith(f"{tokens['generated']} tokens in 2 generations"), line
    assert f"prefilled {tokens['prefilled']} of {tokens['prompt']} prompt tokens" in line
    assert all(g["decode_time"] >= 0 and g["prefill_time"] > 0 for g in generations)
    assert tokens["time_to_first_token"] == generations[0]["time_to_first_token"]
    for key in ("decode_tokens_per_second", "prefill_tokens_per_second"):
        assert tokens[key] is None or tokens[key] > 0

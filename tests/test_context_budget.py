"""A tool result longer than its share of the context is cut for the model, with a note; the transcript,
the card and the detail screen keep it whole. The real CLI behind a scripted endpoint, the real app
with Pilot, and a real MCP server (tests/servers/long_result_server.py, in memory) answering 1500 lines. And the
status bar's tokens used of the context, on the real MLX engine and the demo model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.agent.budget import RESULT_FLOOR, cut_to_share, result_share, short_count, usage_label
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.engine.context import estimate_tokens
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.transcript import read_transcript_text
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, call_report
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from tests.cli_in_process import servers_in_memory
from tests.fakes import ScriptedEngine, call
from tests.helpers import REAL_SERVERS, in_process_config, server_module
from tests.scripted_endpoint import DEFAULT_PROMPT_TOKENS, ScriptedEndpoint, tool_reply
from tests.test_oneshot import run_cli
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

LONG_RESULT_SERVER = str(Path(__file__).parent / "servers" / "long_result_server.py")
LINES = 1500  # about 75,000 characters: under the hub's own limit on a result (100,000)
NOTE = "[cut to fit the model's context: this is the first "


def long_result_server():
    return server_module(LONG_RESULT_SERVER).server


def long_result_config() -> ServerConfig:
    """In this process (no test here is about the server's process), or a process with ``MCT_REAL_SERVERS=1``."""
    config = ServerConfig(name="builds", type="stdio", command=sys.executable, args=[LONG_RESULT_SERVER])
    return config if REAL_SERVERS else in_process_config(config, long_result_server)


def servers_file(folder: Path) -> Path:
    path = folder / "servers.json"
    path.write_text(json.dumps({"servers": {"builds": {"command": sys.executable, "args": [LONG_RESULT_SERVER]}}}))
    return path


def ask_for_the_log(endpoint: ScriptedEndpoint, folder: Path, dirs: Path, *flags: str):
    with servers_in_memory({(LONG_RESULT_SERVER,): long_result_server}):
        return run_cli(
            "--endpoint",
            endpoint.url,
            "scripted",
            "--mcp-config",
            str(servers_file(folder)),
            "--transcript",
            str(folder / "chat.md"),
            "--yes",
            "-p",
            "is the build log clean?",
            *flags,
            cwd=folder,
            dirs=dirs,
        )


def test_the_model_gets_the_start_and_a_note_while_the_transcript_keeps_it_whole(tmp_path, isolated_user_dirs):
    script = [tool_reply("read_log", {"lines": LINES}), "The log is clean."]
    with ScriptedEndpoint(script) as endpoint:
        result = ask_for_the_log(endpoint, tmp_path, isolated_user_dirs, "--context-length", "2000")
    assert result.returncode == 0, result.stderr
    [tool_message] = [m for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    sent = tool_message["content"]
    whole = "\n".join(f"line {n}: compiled module_{n}.py without warnings" for n in range(1, LINES + 1))
    used = DEFAULT_PROMPT_TOKENS + 3  # the first reply's usage: its prompt, and one call in three pieces
    share = result_share(2000, used)
    assert share == (2000 - used) // 2
    assert sent.startswith("line 1: compiled") and f"line {LINES}:" not in sent
    assert estimate_tokens(sent) <= share  # no tokenizer behind an endpoint: the estimate counts
    kept, note = sent.split("\n\n" + NOTE)
    assert whole.startswith(kept + "\n")  # cut at a line's end
    total = estimate_tokens(whole)
    assert note.startswith(
        f"{estimate_tokens(kept):,} of {total:,} tokens ({len(kept):,} of {len(whole):,} characters)"
    )
    assert "call the tool again for a smaller part: its own paging or range arguments" in note
    assert f"line {LINES}: compiled" in read_transcript_text(tmp_path / "chat.md")  # the transcript: whole
    said = " ".join(result.stderr.split())
    assert f"✂ read_log: cut for the model: {short_count(estimate_tokens(kept))} of {short_count(total)} tokens" in said
    assert "context 44/2k tokens" in said  # the plain stats line: the last reply's prompt and reply


def test_without_a_known_context_length_the_model_gets_the_whole_result(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([tool_reply("read_log", {"lines": LINES}), "The log is clean."]) as endpoint:
        result = ask_for_the_log(endpoint, tmp_path, isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    [tool_message] = [m for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_message["content"].endswith(f"line {LINES}: compiled module_{LINES}.py without warnings")
    assert "✂" not in result.stderr and "context 44 tokens" in " ".join(result.stderr.split())


def test_config_tomls_context_length_reaches_the_remote_engine(tmp_path, isolated_user_dirs):
    config = tmp_path / "config.toml"
    config.write_text('[models."scripted"]\ncontext_length = 1000\n')
    with ScriptedEndpoint([tool_reply("read_log", {"lines": LINES}), "The log is clean."]) as endpoint:
        result = ask_for_the_log(endpoint, tmp_path, isolated_user_dirs, "--config", str(config))
    assert result.returncode == 0, result.stderr
    [tool_message] = [m for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert NOTE in tool_message["content"] and estimate_tokens(tool_message["content"]) <= result_share(1000, 43)


def test_a_nearly_full_context_still_leaves_a_result_its_floor():
    text = "word " * 5000
    cut = cut_to_share(text, result_share(4096, 4090), estimate_tokens)
    assert cut is not None and result_share(4096, 4090) == RESULT_FLOOR
    assert 0 < cut.kept_tokens and estimate_tokens(cut.text) <= RESULT_FLOOR
    assert cut_to_share("short", RESULT_FLOOR, estimate_tokens) is None
    assert usage_label(1234, 4096) == "1.2k/4.1k tokens" and usage_label(950, None) == "950 tokens"


async def test_the_card_marks_the_cut_and_the_detail_keeps_the_whole_result():
    engine = ScriptedEngine(
        [[call("read_log", {"lines": LINES})], "The log is clean."], context_length=4096, prompt_tokens=3000
    )
    app = make_app(engine, [long_result_config()], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "is the build log clean?")
        await wait_turn_done(pilot, app)
        [tool_message] = [m for m in engine.prompts[1] if m["role"] == "tool"]
        assert NOTE in tool_message["content"] and f"line {LINES}:" not in tool_message["content"]
        [record] = app.calls_table.records.values()
        assert record.cut_for_model.startswith("cut for the model: ")
        [card] = app.query(ToolCallCard)
        assert "✂ cut for the model" in str(card.render())
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallDetailScreen), what="the call detail")
        report = call_report(record, app.clock)
        assert f"line {LINES}: compiled module_{LINES}.py without warnings" in report
        assert record.cut_for_model in report and NOTE not in report
        assert "3k/4.1k tokens" in str(app.status_bar.render())


async def test_the_status_bar_shows_tokens_used_of_the_demo_models_context():
    engine = MlxEngine(demo_model_path())
    app = make_app(engine, policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "tokens" not in str(app.status_bar.render())  # nothing counted before a reply
        await send(pilot, "what is 12 * 7?")
        await wait_turn_done(pilot, app)
        used = app.status_bar.context_tokens
        # The last reply's prompt and reply: what the engine's cache holds (the last token is not fed back).
        assert used - len(engine.cached_tokens) in (0, 1)
        assert f"  ·  {short_count(used)}/4.1k tokens  ·  " in str(app.status_bar.render())

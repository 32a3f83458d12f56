"""A resumed conversation's tool results follow the context budget: one the file says was cut reaches
the model cut exactly as before (so the KV cache beside the file still matches), one that was not (an
older file, a smaller context, a 50 MB result) is cut before the model is sent it, with the same note;
the transcript, the card and the detail keep it whole, and the card shows the mark. The real CLI behind
the scripted endpoint, the real app with Pilot, a real MCP server (tests/servers/long_result_server.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.budget import recut, result_share, short_count
from mcp_chat_tui.agent.events import ResultCut
from mcp_chat_tui.core.tools import CutForModel
from mcp_chat_tui.engine.context import estimate_tokens
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript, parse, read_transcript_text
from mcp_chat_tui.transcript.format import render
from mcp_chat_tui.ui.screens.detail import call_report
from mcp_chat_tui.ui.widgets.chat import ToolCallCard
from tests.fakes import ScriptedEngine
from tests.scripted_endpoint import ScriptedEndpoint, tool_reply
from tests.test_context_budget import LINES, NOTE, ask_for_the_log, long_result_config, servers_file
from tests.test_oneshot import run_cli
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

LOG_LINE = "line {n}: compiled module_{n}.py without warnings"


def build_log(lines: int) -> str:
    return "\n".join(LOG_LINE.format(n=n) for n in range(1, lines + 1))


def tool_messages(request: dict) -> list[dict]:
    return [message for message in request["messages"] if message["role"] == "tool"]


def resume_cli(endpoint: ScriptedEndpoint, folder: Path, dirs: Path, prompt: str, context_length: int):
    """One ``-p`` turn that resumes ``folder/chat.md``."""
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
        prompt,
        "--context-length",
        str(context_length),
        cwd=folder,
        dirs=dirs,
    )


def read_log_exchange(content: str, cut: CutForModel | None = None, call_id: str = "call_1") -> Exchange:
    """An exchange that read the build log (``content``), as a file holds it; ``cut``: recorded as cut."""
    call = {"id": call_id, "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    result = ToolResult(name="read_log", call_id=call_id, content=content, server="builds", cut=cut)
    return Exchange(
        user="is the build log clean?",
        model="scripted",
        steps=[Step(proposals=[Proposal(call=call, choice="auto", result=result)]), Step(text="It is clean.")],
    )


def write_transcript(path: Path, *exchanges: Exchange) -> Transcript:
    path.write_text(render(Transcript(list(exchanges))), encoding="utf-8")
    return parse(path.read_text(encoding="utf-8"), path)


@pytest.mark.parametrize("resumed_context", [2000, 8000])
def test_a_result_cut_live_reaches_the_model_cut_the_same_after_a_resume(resumed_context, tmp_path, isolated_user_dirs):
    # The same text, to the character, whatever share it would get now: the prompt is the one the
    # KV cache file beside the conversation holds, and the model reads what it read before.
    with ScriptedEndpoint([tool_reply("read_log", {"lines": LINES}), "The log is clean."]) as live:
        first = ask_for_the_log(live, tmp_path, isolated_user_dirs, "--context-length", "2000")
    assert first.returncode == 0, first.stderr
    [sent_live] = tool_messages(live.requests[1])
    [proposal] = parse(read_transcript_text(tmp_path / "chat.md")).all_proposals()
    assert proposal.result.content == build_log(LINES)  # the transcript keeps it whole
    assert (
        proposal.result.cut is not None and recut(proposal.result.content, proposal.result.cut) == sent_live["content"]
    )

    with ScriptedEndpoint(["It ends at line 1500."]) as resumed:
        second = resume_cli(resumed, tmp_path, isolated_user_dirs, "where does it end?", resumed_context)
    assert second.returncode == 0, second.stderr
    [sent_resumed] = tool_messages(resumed.requests[0])
    assert sent_resumed == sent_live
    said = " ".join(second.stderr.split())
    assert f"→ done (✂ cut for the model: {short_count(proposal.result.cut.kept_tokens)} of " in said
    assert "✂ read_log" not in said  # nothing was cut again


def test_a_recorded_cut_that_no_longer_fits_a_smaller_context_is_cut_again_and_recorded(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint([tool_reply("read_log", {"lines": LINES}), "The log is clean."]) as live:
        assert ask_for_the_log(live, tmp_path, isolated_user_dirs, "--context-length", "2000").returncode == 0
    [sent_live] = tool_messages(live.requests[1])
    with ScriptedEndpoint(["It ends at line 1500."]) as resumed:
        second = resume_cli(resumed, tmp_path, isolated_user_dirs, "where does it end?", 800)
    assert second.returncode == 0, second.stderr
    [sent] = tool_messages(resumed.requests[0])
    assert sent["content"].startswith("line 1: compiled") and NOTE in sent["content"]
    assert len(sent["content"]) < len(sent_live["content"])
    [proposal] = parse(read_transcript_text(tmp_path / "chat.md")).all_proposals()[:1]
    cut = proposal.result.cut
    assert recut(build_log(LINES), cut) == sent["content"] and proposal.result.content == build_log(LINES)
    said = " ".join(second.stderr.split())
    assert f"✂ read_log: cut for the model: {short_count(cut.kept_tokens)} of {short_count(cut.total_tokens)}" in said


def test_a_50_mb_result_in_a_resumed_file_is_cut_for_the_model_and_kept_whole_in_the_file(tmp_path, isolated_user_dirs):
    huge = build_log(1_100_000)  # about 52 MB, written by a version that did not record cuts
    assert len(huge) > 50_000_000
    write_transcript(tmp_path / "chat.md", read_log_exchange(huge))
    started = time.monotonic()
    with ScriptedEndpoint(["It is very long."]) as endpoint:
        result = resume_cli(endpoint, tmp_path, isolated_user_dirs, "how long is it?", 4000)
    assert result.returncode == 0, result.stderr
    [request] = endpoint.requests
    [sent] = tool_messages(request)
    assert len(json.dumps(request)) < 40_000  # not 50 MB
    used = sum(estimate_tokens(m["content"]) for m in request["messages"][: request["messages"].index(sent)])
    assert estimate_tokens(sent["content"]) <= result_share(4000, used)
    kept, note = sent["content"].split("\n\n" + NOTE)
    assert huge.startswith(kept + "\n")
    assert note.startswith(f"{estimate_tokens(kept):,} of {estimate_tokens(huge):,} tokens")
    said = " ".join(result.stderr.split())
    assert f"✂ read_log: cut for the model: {short_count(estimate_tokens(kept))} of " in said
    [loaded, _] = parse(read_transcript_text(tmp_path / "chat.md")).exchanges
    [proposal] = loaded.steps[0].proposals
    assert proposal.result.content == huge  # whole in the file, with how the model got it
    assert proposal.result.cut == CutForModel(len(kept), estimate_tokens(kept), estimate_tokens(huge))
    assert time.monotonic() - started < 110  # run_cli's own limit is 120 s


def _window_agent(engine: ScriptedEngine, max_turns: int) -> Agent:
    return Agent(engine, ServerHub([]), ApprovalPolicy("auto"), max_turns=max_turns)


async def test_only_the_results_the_prompt_sends_in_full_are_fitted_and_the_same_every_time():
    # Four loaded turns, two in the window: turn 0 goes as its summary (its result is not sent, and is
    # left whole), turn 1's summary is missing (sent in full: fitted), turns 2 and 3 in the window.
    messages = []
    for turn in range(4):
        call_id = f"call_{turn + 1}"
        messages += [
            {"role": "user", "content": f"read part {turn}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "name": "read_log", "content": build_log(400 + turn)},
            {"role": "assistant", "content": f"Part {turn} is clean."},
        ]
    prompts = []
    for _ in range(2):
        engine = ScriptedEngine(["All clean."], context_length=4096)
        agent = _window_agent(engine, max_turns=2)
        agent.load_messages(messages, ["Read part 0: clean.", None, None, None])
        events: list = []
        await agent.run_turn("and now?", events.append)
        prompts.append(engine.prompts[0])
        cuts = [event for event in events if isinstance(event, ResultCut)]
        assert [event.call.id for event in cuts] == ["call_2", "call_3", "call_4"]
        assert agent.turns[0][2]["content"] == build_log(400)  # summarised: not sent, not cut
    assert prompts[0] == prompts[1]  # deterministic: the same prompt from the same file
    sent = [m["content"] for m in prompts[0] if m["role"] == "tool"]
    assert len(sent) == 3 and all(NOTE in text for text in sent)
    assert prompts[0][0]["content"].endswith("- Read part 0: clean.")
    shares, used = [], 0
    for message in prompts[0]:
        if message["role"] == "tool":
            shares.append(result_share(4096, used))
            assert estimate_tokens(message["content"]) <= shares[-1]
        used += estimate_tokens(str(message["content"] or ""))
    assert shares == sorted(shares, reverse=True)  # each later result gets half of what is left


async def test_the_resumed_card_shows_the_mark_and_the_model_gets_the_cut_result(tmp_path):
    path = tmp_path / "chat.md"
    whole = build_log(LINES)
    saved = write_transcript(path, read_log_exchange(whole))  # not recorded as cut
    engine = ScriptedEngine(["It ends at line 1500."], context_length=4096)
    app = make_app(
        engine, [long_result_config()], transcript_file=path, transcript=saved, policy=ApprovalPolicy("auto")
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        [record] = app.calls_table.records.values()
        await wait_for(pilot, lambda: record.cut_for_model.startswith("cut for the model: "), what="the cut mark")
        [card] = app.query(ToolCallCard)
        assert "✂ cut for the model" in str(card.render())
        report = call_report(record, app.clock)
        assert f"line {LINES}: compiled module_{LINES}.py without warnings" in report and NOTE not in report
        await send(pilot, "where does it end?")
        await wait_turn_done(pilot, app)
        [sent] = [m for m in engine.prompts[0] if m["role"] == "tool"]
        assert NOTE in sent["content"] and f"line {LINES}:" not in sent["content"]
    [proposal] = parse(read_transcript_text(path)).all_proposals()
    assert proposal.result.content == whole and recut(whole, proposal.result.cut) == sent["content"]


async def test_a_cut_the_file_records_is_marked_at_once_and_sent_as_recorded(tmp_path):
    path = tmp_path / "chat.md"
    whole = build_log(LINES)
    cut = CutForModel(3000, 750, estimate_tokens(whole))  # what an earlier run gave the model
    saved = write_transcript(path, read_log_exchange(whole, cut))
    engine = ScriptedEngine(["It ends at line 1500."], context_length=4096)
    app = make_app(
        engine, [long_result_config()], transcript_file=path, transcript=saved, policy=ApprovalPolicy("auto")
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.query(ToolCallCard)) == 1, what="the loaded call's card")
        [record] = app.calls_table.records.values()
        assert record.cut_for_model == f"cut for the model: 750 of {short_count(cut.total_tokens)} tokens"
        await wait_ready(pilot, app)
        await send(pilot, "where does it end?")
        await wait_turn_done(pilot, app)
        [sent] = [m for m in engine.prompts[0] if m["role"] == "tool"]
        assert sent["content"] == recut(whole, cut)
        assert sent["content"].startswith(whole[:3000] + "\n\n" + NOTE + "750 of ")


def test_on_the_demo_model_a_resumed_cut_result_keeps_the_kv_cache_file_matching(tmp_path, isolated_user_dirs):
    # The real MLX engine: the demo model reads a long file, cut for it; after a restart the prompt
    # starts with every token the cache file beside the conversation holds, so only the new ones are
    # computed (sent whole, the result alone would take five times the context, and be refused).
    notes = ["buy milk", "call Anna", "fix the login bug", "meeting at 10", "water the plants", "ship version 2"]
    (tmp_path / "notes.txt").write_text("".join(f"{n}: {notes[n % 6]}\n" for n in range(1500)), encoding="utf-8")

    def ask(prompt: str) -> dict:
        flags = ("--yes", "--json", "--context-length", "3000", "--transcript", str(tmp_path / "chat.md"))
        result = run_cli("--demo", "-p", prompt, *flags, cwd=tmp_path, dirs=isolated_user_dirs)
        assert result.stdout, result.stderr
        return json.loads(result.stdout)

    first = ask("read notes.txt")
    assert [c["tool"] for c in first["calls"]][:1] == ["read_file"], first
    [proposal, *_] = parse(read_transcript_text(tmp_path / "chat.md")).all_proposals()
    assert proposal.result.cut is not None and proposal.result.content.endswith("1499: ship version 2\n")
    resumed = ask("what is 12 * 7?")
    [generation, *_] = resumed["tokens"]["generations"]
    assert generation["prompt"] < 3000 and generation["prefilled"] < generation["prompt"] * 0.1, generation


async def test_a_conversation_opened_once_the_model_is_ready_is_fitted_at_once(tmp_path):
    path = tmp_path / "chat.md"
    write_transcript(path, read_log_exchange(build_log(LINES)))
    app = make_app(ScriptedEngine([], context_length=4096), [long_result_config()], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert await app.open_conversation(path)
        await wait_for(pilot, lambda: len(app.query(ToolCallCard)) == 1, what="the opened call's card")
        [record] = app.calls_table.records.values()
        await wait_for(pilot, lambda: record.cut_for_model.startswith("cut for the model: "), what="the cut mark")
        [tool_message] = [m for m in app.agent.messages if m["role"] == "tool"]
        assert NOTE in tool_message["content"] and record.content_for_model == build_log(LINES)

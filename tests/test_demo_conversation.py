"""The demo survives a whole conversation: the README's questions, asked one after another in one
conversation, are each answered through the right tool with the right arguments and an answer that
uses the result, in the full-screen app (approvals answered with keys) and in ``--plain`` (a real
subprocess reading stdin lines); and a longer conversation, whose first exchanges leave the window
for the summaries the model writes, stays right to its end.

The real demo model (greedy, on the CPU) and the real demo server, its clock fixed so the time in
Tokyo is known.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.demo import TRY_ASKING, try_asking_line
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.transcript import parse, read_transcript_text, to_openai_messages
from mcp_chat_tui.ui.screens.approval import ApprovalScreen
from tests import cli_in_process
from tests.helpers import demo_config, mentions
from tests.test_plain import environment
from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

pytestmark = pytest.mark.slow

NOW = "2026-03-14T15:09:00+00:00"  # the demo server's clock: 00:09 on 2026-03-15 in Tokyo
REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"


@dataclass(frozen=True)
class Question:
    text: str
    tool: str
    arguments: tuple[dict, ...]  # the arguments accepted
    in_answer: str  # what the result says and the answer must repeat


README_QUESTIONS = [
    Question("what is 12 * 7?", "calculator", ({"expression": "12 * 7"},), "84"),
    Question("what time is it in Tokyo?", "current_time", ({"timezone": "Tokyo"}, {"timezone": "Asia/Tokyo"}), "00:09"),
    Question(
        "convert 5 km to miles", "convert_units", ({"value": 5, "from_unit": "km", "to_unit": "miles"},), "3.10686"
    ),
    Question(
        "search the web for the speed of light",
        "web_search",
        ({"query": "the speed of light"}, {"query": "speed of light"}),
        "299,792,458",
    ),
]
LONGER = [
    *README_QUESTIONS,
    Question("search the web for MLX", "web_search", ({"query": "MLX"},), "MLX: an array framework for Apple silicon"),
    Question("what is 9 * 8?", "calculator", ({"expression": "9 * 8"},), "72"),
    Question("what is 345 + 89?", "calculator", ({"expression": "345 + 89"},), "434"),
]


def problems(turn: list[dict], question: Question) -> list[str]:
    """What is wrong with one exchange as the agent keeps it (nothing: one call of the right tool with
    accepted arguments, its result, and an answer that repeats the result)."""
    roles = [message["role"] for message in turn]
    if roles != ["user", "assistant", "tool", "assistant"]:
        return [f"{question.text!r}: the exchange is {roles}, not one call and an answer: {turn}"]
    found = []
    [call] = turn[1]["tool_calls"]
    name, arguments = call["function"]["name"], call["function"]["arguments"]
    try:
        arguments = json.loads(arguments)
    except ValueError:  # a malformed call, kept as the model wrote it
        pass
    if name != question.tool or arguments not in question.arguments:
        found.append(f"{question.text!r}: called {name}({arguments})")
    if question.in_answer not in turn[2]["content"]:
        found.append(f"{question.text!r}: the result is {turn[2]['content']!r}")
    if not mentions(turn[3]["content"], question.in_answer):
        found.append(f"{question.text!r}: the answer {turn[3]['content']!r} does not use the result")
    found += [f"{question.text!r}: a special token in {m['content']!r}" for m in turn if "<|" in str(m["content"])]
    return found


def turns_of(messages: list[dict]) -> list[list[dict]]:
    turns: list[list[dict]] = []
    for message in messages:
        if message["role"] == "user":
            turns.append([])
        turns[-1].append(message)
    return turns


def test_these_are_the_questions_the_docs_show():
    """docs/reference.md#the-demo-model names the questions a newcomer asks first, in this order."""
    section = REFERENCE.read_text(encoding="utf-8").split("## The demo model", 1)[1].split("\n## ", 1)[0]
    asked = section.split("Asked ", 1)[1].split(", it calls", 1)[0]
    assert [q.text for q in README_QUESTIONS] == [" ".join(q.split()) for q in re.findall(r'"([^"]+)"', asked)]


def demo_app(policy: ApprovalPolicy, monkeypatch: pytest.MonkeyPatch):
    """The app with the demo model and the demo server in this process, its clock fixed at ``NOW`` (the
    server reads MCP_CHAT_TUI_DEMO_NOW at each call: this process's environment, not a process's own)."""
    monkeypatch.setenv("MCP_CHAT_TUI_DEMO_NOW", NOW)
    engine = MlxEngine(demo_model_path())
    return make_app(engine, [demo_config()], policy=policy, frozen=False)


def test_the_questions_the_app_suggests_for_the_demo_are_the_ones_tested_here():
    assert set(TRY_ASKING) <= {question.text for question in README_QUESTIONS}


async def test_the_readme_questions_in_one_conversation_in_the_app_approved_with_keys(monkeypatch):
    app = demo_app(ApprovalPolicy("ask"), monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert try_asking_line() in chat_text(app).replace("\n", " ")  # what to ask it, at the start
        for question in README_QUESTIONS:
            await send(pilot, question.text)
            await wait_for(  # armed: a key pressed before then answers nothing
                pilot, lambda: dialog_armed(app, ApprovalScreen), 120, f"the dialog for {question.text!r}"
            )
            assert (app.screen.call.tool, app.screen.call.arguments in question.arguments) == (question.tool, True)
            await pilot.press("y")
            await wait_turn_done(pilot, app, 180)
            assert not problems(app.agent.turns[-1], question)
            assert mentions(chat_text(app), question.in_answer)
        assert [r.state for r in app.calls_table.records.values()] == [CallState.DONE] * len(README_QUESTIONS)


@pytest.mark.xfail(
    strict=True,
    reason="not yet: the shipped demo model gets the first 6 of these 7 right, then miscopies "
    "'what is 345 + 89?' into a malformed call; played by scripts/demo_eval.py it also writes a wrong "
    "time in its summary of the Tokyo exchange (4 of 5 summaries right)",
)
async def test_a_longer_conversation_stays_right_once_exchanges_leave_the_window(monkeypatch):
    app = demo_app(ApprovalPolicy("ask", yes=True), monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        for question in LONGER:
            await send(pilot, question.text)
            await wait_turn_done(pilot, app, 180)
            assert not problems(app.agent.turns[-1], question)
        assert app.agent.max_turns == 3
        summaries = app.agent.memory.summaries
        assert app.agent.summarised_count == len(LONGER) - 2  # the prompt sent the first 5 as their summaries
    for question, summary in zip(LONGER, summaries[: len(LONGER) - 2], strict=True):
        assert summary and question.text in summary and mentions(summary, question.in_answer), summary


def test_the_readme_questions_in_one_plain_conversation(tmp_path, isolated_user_dirs):
    config = tmp_path / "mcp.json"
    server = {
        "command": sys.executable,
        "args": ["-m", "mcp_chat_tui.demo.server"],
        "env": {"MCP_CHAT_TUI_DEMO_NOW": NOW},
    }
    config.write_text(json.dumps({"servers": {"demo": server}}))
    result = cli_in_process.run_cli(  # in this process (tests/cli_in_process.py): its output and file are checked
        ["--demo", "--plain", "--yes", "--mcp-config", str(config)],
        cwd=tmp_path,
        env=environment(isolated_user_dirs),
        stdin="".join(f"{question.text}\n" for question in README_QUESTIONS) + "bye\n",
    )
    assert result.returncode == 0, result.stderr
    assert "malformed" not in result.stdout and "<|" not in result.stdout, result.stdout
    [saved] = (isolated_user_dirs / "data" / "conversations").glob("*.md")
    transcript = parse(read_transcript_text(saved))
    turns = turns_of(to_openai_messages(transcript))
    assert [turn[0]["content"] for turn in turns] == [question.text for question in README_QUESTIONS]
    for turn, question in zip(turns, README_QUESTIONS, strict=True):
        assert not problems(turn, question)
    shown = [result.stdout.find(turn[-1]["content"]) for turn in turns]  # each answer printed, in order
    assert -1 not in shown and shown == sorted(shown), result.stdout
    assert transcript.exchanges[0].summary  # the first left the window (max_turns 3) for its summary

"""What the app shows when a turn ends without an answer (the cap on tool rounds, repeated calls, a
reply with no text) and how a repeated call appears (not run: the sidebar, its card), live and after
a resume. The real app driven by Pilot, the demo server, a scripted model."""

from __future__ import annotations

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import Settings
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.fakes import ScriptedEngine, call
from tests.ui_helpers import SIZE, chat_text, make_app, send, wait_for, wait_ready, wait_turn_done

LIMIT_NOTE = "■ stopped after 3 tool rounds (max_tool_rounds)"
REPEAT_NOTE = "■ stopped: the model called calculator again with the same arguments (2 repeated calls in this turn)"
NO_ANSWER_NOTE = "■ no answer: the model's last reply had no text"


def calculation(expression: str) -> list:
    return [call("calculator", {"expression": expression})]


REPLIES = [
    # the cap (3 rounds): the fourth reply's call is not run, the model answers with what it has
    *(calculation(f"{n} + {n}") for n in range(4)),
    "0, 2 and 4 so far.",
    # repeats: the same call again twice
    *(calculation("5 * 5") for _ in range(3)),
    # no text after a call
    calculation("7 * 7"),
    [],
]


def states(app) -> list[tuple[str, CallState]]:
    return [(record.arguments.get("expression", ""), record.state) for record in app.calls_table.records.values()]


EXPECTED_STATES = [
    ("0 + 0", CallState.DONE),
    ("1 + 1", CallState.DONE),
    ("2 + 2", CallState.DONE),
    ("3 + 3", CallState.CANCELLED),
    ("5 * 5", CallState.DONE),
    ("5 * 5", CallState.REPEATED),
    ("5 * 5", CallState.REPEATED),
    ("7 * 7", CallState.DONE),
]


async def test_the_app_shows_why_each_turn_ended_and_the_repeats_as_not_run(tmp_path):
    path = tmp_path / "chat.md"
    app = make_app(
        ScriptedEngine(REPLIES),
        policy=ApprovalPolicy("auto"),
        settings=Settings(max_tool_rounds=3),
        transcript_file=path,
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        for prompt, note in (("count", LIMIT_NOTE), ("five squared", REPEAT_NOTE), ("seven squared", NO_ANSWER_NOTE)):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app)
            await wait_for(pilot, lambda note=note: note in chat_text(app), what=note)
        assert states(app) == EXPECTED_STATES
        records = list(app.calls_table.records.values())
        refused, repeat = records[3], records[5]
        assert refused.reason.startswith("Not run: this turn has reached its limit of 3 tool rounds")
        assert repeat.started_at is None and repeat.duration is None and repeat.allowed_by == ""
        assert repeat.reason == (
            "not run: the same call as call_5 earlier in this turn; the model was given that result again"
        )
        card = str(app.call_store.cards[repeat.key].render())
        assert (
            "↻ calculator" in card
            and "repeated" in card
            and "(not run: the model already had the result of call_5)" in card
        )
        assert "↻ repeated" in str(app.calls_table.get_cell(repeat.key, "state"))
        assert app.hub.status("demo").call_count == 5
    resumed = make_app(ScriptedEngine([]), transcript_file=path, transcript=parse(read_transcript_text(path)))
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        text = chat_text(resumed)
        assert LIMIT_NOTE in text and REPEAT_NOTE in text and NO_ANSWER_NOTE in text
        assert states(resumed) == EXPECTED_STATES
        repeat = list(resumed.calls_table.records.values())[5]
        assert repeat.reason.startswith("not run: the same call as call_5") and repeat.duration is None

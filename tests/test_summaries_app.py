"""Summaries in the app (Pilot) and in --plain: written after the reply into the transcript's 📝:
line and the next prompt, /compact, a resumed file's summaries, the status bar, a failure."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from mcp_chat_tui.agent.memory_window import SUMMARIES_HEADING, SUMMARY_INSTRUCTION
from mcp_chat_tui.config import Settings
from mcp_chat_tui.transcript import Exchange, Step, Transcript, parse, read_transcript_text, render
from mcp_chat_tui.ui.widgets.completion import CompletionMenu
from mcp_chat_tui.ui.widgets.status import StatusBar
from tests.fakes import ScriptedEngine
from tests.test_summaries import FailingSummaries
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

TOP = Path(__file__).resolve().parent.parent


class SlowSummaries(ScriptedEngine):
    """Plays its script, but a summary request waits until ``release`` is set."""

    def __init__(self, replies: list) -> None:
        super().__init__(replies)
        self.release = asyncio.Event()

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False):
        if messages[0]["content"] == SUMMARY_INSTRUCTION:
            await self.release.wait()
        async for event in super().stream(messages, tools, known_tools=known_tools):
            yield event


def status_text(app) -> str:
    return str(app.query_one(StatusBar).render())


async def send_compact(pilot) -> None:
    """Type ``/compact`` and Enter: sent at once, whether the completion list is open on it or not."""
    await send(pilot, "/compact")


async def wait_for_status(pilot, text: str) -> None:
    await wait_for(pilot, lambda: text in status_text(pilot.app), what=f"{text!r} in the status bar")


def turn_prompts(engine) -> list[list[dict]]:
    return [prompt for prompt in engine.prompts if prompt[0]["content"] != SUMMARY_INSTRUCTION]


def summary_prompts(engine) -> list[list[dict]]:
    return [prompt for prompt in engine.prompts if prompt[0]["content"] == SUMMARY_INSTRUCTION]


def answered(*pairs: tuple[str, str]) -> Transcript:
    return Transcript([Exchange(user, "scripted", [Step(text=reply)]) for user, reply in pairs])


async def test_after_the_reply_the_leaving_exchange_is_summarised_into_the_file_and_the_next_prompt(tmp_path):
    path = tmp_path / "chat.md"
    engine = ScriptedEngine(["Paris.", "Asked for the capital of France: Paris.", "Lyon.", "Second city: Lyon."])
    app = make_app(engine, settings=Settings(max_turns=1), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        assert "summarised" not in status_text(app)
        await send(pilot, "capital of France?")
        await wait_turn_done(pilot, app)
        await wait_for_status(pilot, "📝 1 summarised")
        assert parse(read_transcript_text(path)).exchanges[0].summary == "Asked for the capital of France: Paris."
        await send(pilot, "second city?")
        await wait_turn_done(pilot, app)
    asked = summary_prompts(engine)[0]
    assert asked[1]["content"] == "User: capital of France?\nAssistant: Paris."
    assert turn_prompts(engine)[-1][-2:] == [
        {"role": "user", "content": f"{SUMMARIES_HEADING}\n- Asked for the capital of France: Paris."},
        {"role": "user", "content": "second city?"},
    ]
    saved = parse(read_transcript_text(path))
    assert [e.summary for e in saved.exchanges] == ["Asked for the capital of France: Paris.", "Second city: Lyon."]
    assert "📝: Asked for the capital of France: Paris.\n" in read_transcript_text(path)


async def test_compact_summarises_all_but_the_last_exchange_and_says_so(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(render(answered(("q0", "a0"), ("q1", "a1"), ("q2", "a2"))), encoding="utf-8")
    engine = ScriptedEngine(["s0", "s1", "next answer"])
    app = make_app(engine, settings=Settings(max_turns=5), transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_turn_done(pilot, app)
        assert not summary_prompts(engine), "the exchanges fit the window: nothing to summarise yet"
        await send_compact(pilot)
        await wait_turn_done(pilot, app)
        await wait_for_status(pilot, "📝 2 summarised")
        assert [e.summary for e in parse(read_transcript_text(path)).exchanges] == ["s0", "s1", None]
        await send(pilot, "q3")
        await wait_turn_done(pilot, app)
    assert turn_prompts(engine)[-1][-4:] == [
        {"role": "user", "content": f"{SUMMARIES_HEADING}\n- s0\n- s1"},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "q3"},
    ]
    assert [m["content"] for m in turn_prompts(engine)[-1] if m["role"] == "user"].count("q0") == 0


async def test_compact_typed_in_full_is_sent_by_one_enter_with_the_list_open(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(render(answered(("q0", "a0"), ("q1", "a1"), ("q2", "a2"))), encoding="utf-8")
    engine = ScriptedEngine(["s0", "s1"])
    app = make_app(engine, settings=Settings(max_turns=5), transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_turn_done(pilot, app)
        prompt = app.query_one("#prompt")
        prompt.focus()
        await pilot.press(*"/compact")
        menu = app.query_one(CompletionMenu)
        await wait_for(pilot, lambda: [c.name for c in menu.candidates] == ["/compact"], what="/compact offered")
        await pilot.press("enter")
        await wait_for_status(pilot, "📝 2 summarised")
        assert prompt.value == "" and not menu.is_open
    assert [e.summary for e in parse(read_transcript_text(path)).exchanges] == ["s0", "s1", None]


async def test_a_resumed_file_keeps_its_hand_written_summary_and_gets_the_missing_ones(tmp_path):
    path = tmp_path / "chat.md"
    conversation = answered(("q0", "a0"), ("q1", "a1"), ("q2", "a2"), ("q3", "a3"), ("q4", "a4"))
    conversation.exchanges[0].summary = "Written *by hand*, kept as it is."
    path.write_text(render(conversation), encoding="utf-8")
    engine = ScriptedEngine(["The model's summary of q1.", "The model's summary of q2.", "answer 5", "Of q3."])
    app = make_app(engine, transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await wait_turn_done(pilot, app)  # q1 and q2 leave the window at the next prompt: summarised now
        await wait_for_status(pilot, "📝 3 summarised")
        await send(pilot, "q5")
        await wait_turn_done(pilot, app)
    assert [asked[1]["content"] for asked in summary_prompts(engine)] == [
        "User: q1\nAssistant: a1",
        "User: q2\nAssistant: a2",
        "User: q3\nAssistant: a3",
    ]
    assert turn_prompts(engine)[-1][1] == {
        "role": "user",
        "content": f"{SUMMARIES_HEADING}\n- Written *by hand*, kept as it is.\n- The model's summary of q1.\n"
        "- The model's summary of q2.",
    }
    saved = parse(read_transcript_text(path))
    assert [e.summary for e in saved.exchanges] == [
        "Written *by hand*, kept as it is.",
        "The model's summary of q1.",
        "The model's summary of q2.",
        "Of q3.",  # after the reply to q5, q3 leaves the window
        None,
        None,
    ]


async def test_a_failed_summary_is_shown_and_the_exchange_stays_whole(tmp_path):
    path = tmp_path / "chat.md"
    engine = FailingSummaries(["Paris.", "Lyon."])
    app = make_app(engine, settings=Settings(max_turns=1), transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "capital of France?")
        await wait_turn_done(pilot, app)
        await wait_for(
            pilot,
            lambda: any(
                "exchange 1 was not summarised: the model ran out of memory" in str(n.message)
                for n in app._notifications
            ),
            what="the failure's notification",
        )
        assert "summarised" not in status_text(app) and app.query_one(StatusBar).engine_state == "ready"
        await send(pilot, "second city?")
        await wait_turn_done(pilot, app)
    assert {"role": "assistant", "content": "Paris."} in turn_prompts(engine)[-1]
    assert len(summary_prompts(engine)) == 2, "tried once after each reply, not again before the turn"
    assert parse(read_transcript_text(path)).exchanges[0].summary is None


def test_plain_compact_writes_the_summaries_into_the_file(tmp_path, isolated_user_dirs):
    path = tmp_path / "chat.md"
    path.write_text(render(answered(("q0", "a0"), ("q1", "a1"))), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(TOP / "tests" / "apps" / "summarising_plain.py"), str(path), "s0"],
        input="/compact\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "📝 exchange 1: s0" in done.stdout and "📝 1 exchange sent as its summary" in done.stdout
    assert [e.summary for e in parse(read_transcript_text(path)).exchanges] == ["s0", None]


async def test_compact_is_offered_after_slash_and_esc_stops_the_summaries(tmp_path):
    path = tmp_path / "chat.md"
    path.write_text(render(answered(("q0", "a0"), ("q1", "a1"), ("q2", "a2"))), encoding="utf-8")
    engine = SlowSummaries([])
    app = make_app(engine, settings=Settings(max_turns=5), transcript_file=path, transcript=parse(path.read_text()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.query_one("#prompt").focus()
        await pilot.press("/", "c", "o")
        menu = app.query_one(CompletionMenu)
        await wait_for(pilot, lambda: [c.name for c in menu.candidates] == ["/compact"], what="/compact offered")
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.query_one("#prompt").value == "/compact ", what="/compact written out")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.status_bar.engine_state == "summarising", what="summarising")
        assert "summarising exchange 1 (1 of 2)" in status_text(app)
        await pilot.press("escape")
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: app.status_bar.engine_state == "ready", what="ready again")
        assert "summarised" not in status_text(app)
    assert [e.summary for e in parse(read_transcript_text(path)).exchanges] == [None, None, None]
    assert not app.agent.summarising and not engine.prompts, "the summary's request was stopped"

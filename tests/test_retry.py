"""``/retry`` and Ctrl+R: the last reply leaves the conversation (not the world) and the model is asked
again; the file keeps the discarded reply as discarded, and a resume neither sends it nor runs its calls."""

from __future__ import annotations

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import ApprovalChoice, ApprovalNeeded, CallFinished, Notice, TurnStarted
from mcp_chat_tui.agent.retrying import GREEDY_RETRY, NOTHING_TO_RETRY, RETRY_BUSY, RETRY_LINE
from mcp_chat_tui.conversation import Conversation
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.generation import GenerationSettings, retry_seed
from mcp_chat_tui.servers import ServerHub
from mcp_chat_tui.transcript import parse, read_transcript_text, render, to_openai_messages
from mcp_chat_tui.transcript.model import RETRIED, RETRIED_NOTE
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.fakes import ScriptedEngine, call
from tests.helpers import demo_config
from tests.test_agent import Recorder

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

ADD = {"expression": "2 + 2"}


def _sampling(temperature: float, seed: int | None) -> GenerationSettings:
    settings = GenerationSettings()
    settings.values.update(temperature=temperature, seed=seed)
    return settings


def test_a_retry_is_sampled_from_another_seed_and_a_greedy_one_from_none():
    assert retry_seed(_sampling(0.7, 5), 1) == 6 and retry_seed(_sampling(0.7, 5), 2) == 7
    assert retry_seed(_sampling(0.7, None), 1) is not None
    assert retry_seed(_sampling(0.0, 5), 1) is None and retry_seed(None, 1) is None


async def test_the_retried_reply_and_its_results_leave_the_prompt_and_the_file_keeps_them_discarded():
    engine = ScriptedEngine([[call("calculator", ADD)], "It is 4.", "Four."])
    engine.generation = GenerationSettings()  # greedy: the retry says the reply is likely the same
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        conversation = Conversation(Agent(engine, hub, ApprovalPolicy("auto")), "scripted", save=False)
        sink = Recorder()
        both = lambda event: (conversation.record(event), sink(event))  # noqa: E731
        assert conversation.retry_problem() == NOTHING_TO_RETRY
        await conversation.agent.run_turn("what is 2 + 2?", both)
        await conversation.retry(both)
    retry_prompt = [m for m in engine.prompts[2] if m["role"] != "system"]
    assert [m["role"] for m in retry_prompt] == ["user"] and retry_prompt[0]["content"] == "what is 2 + 2?"
    assert sink.of(TurnStarted)[1].retried and sink.of(Notice)[-1].text == GREEDY_RETRY
    assert len(sink.of(CallFinished)) == 1  # the call that ran is not run again
    again = parse(render(conversation.transcript))
    discarded, kept = again.exchanges
    assert discarded.end == RETRIED and discarded.note == RETRIED_NOTE and discarded.discarded
    assert discarded.steps[0].proposals[0].result.status == CallState.DONE  # what ran stays on record
    assert kept.user == discarded.user and kept.end is None and kept.steps[-1].text == "Four."
    assert to_openai_messages(again) == [
        {"role": "user", "content": "what is 2 + 2?"},
        {"role": "assistant", "content": "Four."},
    ]
    assert conversation.agent.messages == to_openai_messages(again)


def test_a_discarded_replys_open_call_is_never_resumed():
    from datetime import datetime

    from mcp_chat_tui.transcript import TranscriptRecorder

    recorder = TranscriptRecorder()
    recorder.user("what is 2 + 2?")
    recorder.reply_started("scripted")
    proposal = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "calculator", "arguments": '{"expression": "2 + 2"}'},
    }
    recorder.proposed(proposal)
    recorder.chose("call_1", "yo", "you (once)")
    recorder.started("call_1", "demo", datetime(2026, 1, 1))  # the app ended while it ran: interrupted
    assert parse(render(recorder.transcript)).turn_goes_on()  # without the retry, a resume asks about it
    recorder.retried()
    recorder.reply_started("scripted")
    recorder.text("Four.")
    recorder.turn_ended()
    again = parse(render(recorder.transcript))
    assert again.exchanges[0].discarded and again.exchanges[0].steps[0].proposals[0].interrupted
    assert not again.turn_goes_on() and again.pending_proposals() == []
    assert [m["role"] for m in to_openai_messages(again)] == ["user", "assistant"]


async def test_always_given_in_the_discarded_reply_is_taken_back_so_the_new_reply_asks_again():
    engine = ScriptedEngine([[call("calculator", ADD)], "It is 4.", [call("calculator", ADD, "call_9")], "Four."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        policy = ApprovalPolicy("ask")
        agent = Agent(engine, hub, policy)
        sink = Recorder(ApprovalChoice.ALWAYS_TOOL, ApprovalChoice.ALLOW_ONCE)
        await agent.run_turn("what is 2 + 2?", sink)
        [spec] = [spec for spec in hub.tools() if spec.name == "calculator"]
        assert policy.verdict(spec).runs
        await agent.retry_turn(sink, "what is 2 + 2?")
    assert len(sink.of(ApprovalNeeded)) == 2  # asked again for the new reply's call
    assert not policy.verdict(spec).runs


async def test_always_given_before_the_discarded_reply_stands():
    engine = ScriptedEngine(
        [
            [call("calculator", ADD)],
            "4.",
            [call("calculator", ADD, "call_5")],
            "4 again.",
            [call("calculator", ADD, "call_7")],
            "Four.",
        ]
    )
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask"))
        sink = Recorder(ApprovalChoice.ALWAYS_TOOL)
        await agent.run_turn("what is 2 + 2?", sink)
        await agent.run_turn("and again?", sink)
        await agent.retry_turn(sink, "and again?")
    assert len(sink.of(ApprovalNeeded)) == 1


async def test_retry_is_refused_during_a_turn():
    engine = ScriptedEngine(["a b c d e f g h"], delay=0.2)
    async with ServerHub([]) as hub:
        agent = Agent(engine, hub, ApprovalPolicy("auto"))
        import asyncio

        running = asyncio.ensure_future(agent.run_turn("hi", Recorder()))
        while not agent.busy:
            await asyncio.sleep(0.01)
        assert agent.retry_problem() == RETRY_BUSY
        agent.stop()
        await running
    assert agent.retry_problem() is None


async def test_ctrl_r_in_the_app_discards_the_reply_asks_again_and_a_resume_shows_both(tmp_path):
    from mcp_chat_tui.transcript.media import read_conversation
    from mcp_chat_tui.ui.screens.approval import ApprovalScreen
    from tests.ui_helpers import SIZE, chat_text, dialog_armed, make_app, send, wait_for, wait_ready

    path = tmp_path / "chat.md"
    engine = ScriptedEngine(
        [[call("calculator", ADD)], "It is 4.", [call("calculator", ADD, "call_2")], "Four, again."]
    )
    app = make_app(engine, [demo_config()], transcript_file=path)

    def idle() -> bool:
        return not app.turns.running and not app.reply.is_open

    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: NOTHING_TO_RETRY in _notices(app), what="nothing to retry said")
        await send(pilot, "what is 2 + 2?")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the first dialog")
        await pilot.press("t")  # always, this session
        await wait_for(pilot, lambda: len(engine.prompts) == 2 and idle(), what="the first reply")
        assert [key.display for key in app.screen.query("FooterKey") if key.action == "retry"] == [True]
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: dialog_armed(app, ApprovalScreen), what="the retried reply's dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: len(engine.prompts) == 4 and idle(), what="the second reply")
        shown = chat_text(app)
        assert RETRY_LINE in shown and "It is 4." in shown and shown.rindex("Four, again.") > shown.index(RETRY_LINE)
        assert [m["role"] for m in engine.prompts[2] if m["role"] != "system"] == ["user"]
    saved = read_conversation(path)
    assert [e.end for e in saved.exchanges] == [RETRIED, None]
    resumed = make_app(ScriptedEngine([]), [demo_config()], transcript_file=path, transcript=saved)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        shown = chat_text(resumed)
        assert RETRIED_NOTE in shown and shown.index("It is 4.") < shown.index(RETRIED_NOTE) < shown.index(
            "Four, again."
        )
        assert not resumed.turns.resume_pending
        assert [m["role"] for m in resumed.agent.messages] == ["user", "assistant", "tool", "assistant"]


def _notices(app) -> str:
    return " ".join(str(note.message) for note in app._notifications)


def test_retry_in_plain_asks_the_demo_model_again_and_says_so(tmp_path, isolated_user_dirs):
    from tests.test_plain import demo_servers_in, run_cli

    config = demo_servers_in(tmp_path)
    stdin = "/retry\nwhat is 12 * 7?\n/retry\nbye\n"
    result = run_cli("--demo", "--plain", "--yes", "--mcp-config", str(config), dirs=isolated_user_dirs, stdin=stdin)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert NOTHING_TO_RETRY in out and RETRY_LINE in out
    [saved] = (isolated_user_dirs / "data" / "conversations").glob("*.md")
    transcript = parse(read_transcript_text(saved))
    assert [e.end for e in transcript.exchanges] == [RETRIED, None]
    assert [e.user for e in transcript.exchanges] == ["what is 12 * 7?"] * 2
    ran = [[p.result.status for step in e.steps for p in step.proposals] for e in transcript.exchanges]
    assert ran == [["done"], ["done"]]  # the new reply's call is a call of its own, allowed (--yes) anew


async def _demo_model_reply(agent_seed: int, *, retry: bool) -> tuple[str, dict, dict | None]:
    """The demo model's reply to one prompt at temperature 1.5 with ``agent_seed``; with ``retry``,
    the reply ``/retry`` gives after it. Returns the last reply's text and the settings recorded
    with it (and, after a retry, with the discarded one)."""
    from mcp_chat_tui.cli.chat import demo_model_path
    from mcp_chat_tui.engine.mlx_engine import MlxEngine
    from mcp_chat_tui.engine.settings import EngineSettings

    engine = MlxEngine(demo_model_path(), EngineSettings(temperature=1.5, seed=agent_seed, max_tokens=30))
    await engine.load()
    try:
        async with ServerHub([]) as hub:
            conversation = Conversation(Agent(engine, hub, ApprovalPolicy("ask")), "demo", save=False)
            await conversation.agent.run_turn("tell me about the weather", conversation.record)
            if retry:
                await conversation.retry(conversation.record)
    finally:
        await engine.close()
    exchanges = conversation.transcript.exchanges
    text = "".join(step.text for step in exchanges[-1].steps)
    return text, exchanges[-1].settings, exchanges[0].settings if retry else None


async def test_a_real_model_retried_with_sampling_answers_from_the_next_seed_on_a_trimmed_cache():
    retried, settings, discarded_settings = await _demo_model_reply(2, retry=True)
    assert discarded_settings is not None and discarded_settings["seed"] == 2 and settings["seed"] == 3
    first, _, _ = await _demo_model_reply(2, retry=False)
    fresh, _, _ = await _demo_model_reply(3, retry=False)
    # The same as a new engine seeded 3 gives: the discarded reply's tokens, cached after the prompt,
    # were trimmed away (a prefix of them would change what follows), and the retry sampled anew.
    assert retried == fresh and retried != first, (first, retried)

"""A reply cut at its repeated calls still counts in the turn's figures (issue 30).

A real run of Qwen2.5-Coder-0.5B ("What time is it in Tokyo?", the reference time server) wrote
four generations; the two cut at their repeats were missing from the figures line, which said
"88 tokens in 2 generations". The engine's stream offers ``cut()``: it stops within a token and
still ends with the reply's ``Stats``. The engine part runs the real MLX engine on a tiny model;
the agent part a scripted stream that can be cut as the MLX one can."""

from __future__ import annotations

from collections.abc import AsyncIterator

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import CallFinished, GenerationStats, TurnEnd
from mcp_chat_tui.agent.figures import TurnFigures
from mcp_chat_tui.core.call_state import CallState
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.engine.events import Done, EngineEvent, Stats, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.servers import ServerHub
from tests.fakes import call
from tests.helpers import demo_config, fixture_config
from tests.test_agent import Recorder
from tests.test_mlx_engine import QUESTION, collect, wait_idle


async def test_a_cut_stream_stops_and_still_ends_with_the_replys_figures(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=5000)
    await engine.load()
    try:
        stream = engine.stream(QUESTION)
        seen = 0
        async for event in stream:
            seen += isinstance(event, TextDelta)
            if seen == 3:
                break
        stream.cut()
        rest = await collect(stream)
        assert rest[-1] == Done("cancelled")
        stats = rest[-2]
        assert isinstance(stats, Stats)
        assert 3 <= stats.generated_tokens < 5000, "generation went on after the cut"
        assert stats.prefilled_tokens == stats.prompt_tokens > 0 and stats.decode_time > 0
        await wait_idle(engine)
        engine.max_tokens = 3
        assert (await collect(engine.stream(QUESTION)))[-1] == Done("length")
    finally:
        await engine.close()


class CuttableEngine(Engine):
    """Plays scripted replies as the MLX engine's stream does: ``cut()`` ends a reply at once with
    its figures (ten tokens for each event given) and ``Done("cancelled")``."""

    model_name = "cuttable"
    supports_tools = True

    def __init__(self, replies: list[list[EngineEvent]], *, late: bool = False) -> None:
        self.replies = replies
        self.cuts = 0
        self.late = late  # a cut takes effect after the events already decoded (the MLX thread's batch)

    def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None) -> CutStream:
        return CutStream(self, self.replies.pop(0))


class CutStream:
    def __init__(self, engine: CuttableEngine, events: list[EngineEvent]) -> None:
        self.engine, self.events, self.given, self.was_cut = engine, events, 0, False

    def cut(self) -> None:
        self.was_cut = True
        self.engine.cuts += 1

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        return self._play()

    async def _play(self) -> AsyncIterator[EngineEvent]:
        for event in self.events:
            if self.was_cut and not self.engine.late:
                break
            self.given += 1
            yield event
        yield Stats(100, 100, self.given * 10, 1.0, 5.0, 1.0, prefill_time=1.0, decode_time=2.0)
        yield Done("cancelled" if self.was_cut else "stop")


async def test_a_reply_cut_at_its_repeats_counts_in_the_turns_figures():
    """As the real run of "Convert 9:00 in New York to Tokyo time": one call, then a reply writing it
    over and over (cut at its second repeat), then the next reply."""
    replies: list[list[EngineEvent]] = [
        [call("echo", {"text": "a"})],
        [call("echo", {"text": "a"}), call("echo", {"text": "a"}), *[call("echo", {"text": "a"})] * 6],
        [TextDelta("It is 15:18 in Tokyo.")],
    ]
    engine = CuttableEngine(replies)
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        agent = Agent(engine, servers, ApprovalPolicy("auto"))
        sink = Recorder()
        assert await agent.run_turn("x", sink) == TurnEnd.ANSWERED
    assert engine.cuts == 1
    assert [event.status for event in sink.of(CallFinished)] == [CallState.DONE] + [CallState.REPEATED] * 2
    figures = TurnFigures([event.stats for event in sink.of(GenerationStats)])
    assert len(figures.generations) == 3, "the cut reply's figures were lost"
    assert figures.generated == 10 + 20 + 10
    assert figures.line().startswith("40 tokens in 3 generations")


async def test_calls_given_after_the_cut_are_not_taken():
    """What the stream still holds when it is cut (a call already decoded in the same batch) is not
    proposed."""
    held = [call("echo", {"text": "a"})] * 2 + [ToolCallProposed("call_9", "echo", {"text": "b"})]
    engine = CuttableEngine([[call("echo", {"text": "a"})], held, [TextDelta("done")]], late=True)
    servers = ServerHub([demo_config("demo"), fixture_config("fx", timeout=1.0, in_process=True)])
    async with servers:
        await servers.start_all()
        sink = Recorder()
        assert await Agent(engine, servers, ApprovalPolicy("auto")).run_turn("x", sink) == TurnEnd.ANSWERED
    assert "b" not in [event.call.arguments.get("text") for event in sink.of(CallFinished)]
    assert len(sink.of(GenerationStats)) == 3

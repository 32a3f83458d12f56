"""Benchmark: transcript saving and loading, and whether autosave ever stalls the screen.

Prints, measured in one run:
- save_ms_10 / save_ms_100 / save_ms_1000: rendering and atomically writing
  conversations of 10, 100 and 1,000 turns (each turn: a prompt, a tool call
  with its result, an answer); growth should be no worse than linear;
- load_ms_per_turn: reading the 1,000-turn file back, per turn;
- load_s_1k / load_s_10k: opening a saved file of 1,000 and 10,000 exchanges as the app and
  ``--plain`` do before showing it (read, check it is UTF-8 text, parse, and render the text the
  next save writes), and load_10k_vs_1k_ratio, their ratio (linear: about 10; target at most 12,
  and load_s_10k under 2 s);
- search_ms_1k_conversations: ``--search`` (and the palette's search) through 1,000 saved
  conversations of 10 exchanges each for a word that 10 of them say (target at most 500 ms), and
  search_ms_1k_common for a word every one says (the first 200 matches);
- stall_autosave_ratio: the longest event-loop pause while a reply streams into
  the real app (headless) with autosave on, divided by the same with autosave
  off (target at most 1.2), runs alternated, medians taken.
The last line is one JSON object of the figures. ``--smoke``: small sizes and one round, to check the
bench still runs (its figures mean nothing then); .ci/run runs it so.

The history streamed over is text only (its tool calls would add nothing to what is measured:
the time to save while a reply streams).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_chat_tui.agent import ApprovalPolicy  # noqa: E402
from mcp_chat_tui.config import ServerConfig, Settings  # noqa: E402
from mcp_chat_tui.engine.events import TextDelta  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from mcp_chat_tui.transcript import (  # noqa: E402
    Exchange,
    Proposal,
    Step,
    ToolResult,
    Transcript,
    TranscriptRecorder,
    parse,
    read_transcript_text,
    render,
    write_atomically,
)
from mcp_chat_tui.ui.app import ChatApp  # noqa: E402
from tests.fakes import ScriptedEngine  # noqa: E402

STREAM_TOKENS = 800
HISTORY_TURNS = 20


def conversation(turns: int) -> Transcript:
    exchanges = []
    for index in range(turns):
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "web_search", "arguments": json.dumps({"query": f"topic {index}"})},
        }
        result = ToolResult(
            "web_search",
            "call_1",
            "done",
            f"- Result {index} (https://example.org/{index}): some text about topic {index}. " * 5,
            "demo",
            0.01,
        )
        exchanges.append(
            Exchange(
                user=f"question number {index}: what do you know about topic {index}?",
                model="demo model",
                steps=[
                    Step(text="Let me search.", proposals=[Proposal(call, "yo", result)]),
                    Step(text=f"Here is what I found about topic {index}:\n\n- one\n- two\n\n```\ncode {index}\n```"),
                ],
            )
        )
    return Transcript(exchanges)


def time_save(turns: int, folder: Path, repeats: int = 5) -> float:
    transcript = conversation(turns)
    samples = []
    for _attempt in range(repeats):
        started = time.perf_counter()
        write_atomically(folder / f"save-{turns}.md", render(transcript))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def time_load(turns: int, folder: Path, repeats: int = 5) -> float:
    text = render(conversation(turns))
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        loaded = parse(text)
        samples.append(time.perf_counter() - started)
    assert len(loaded.exchanges) == turns
    return statistics.median(samples) * 1000 / turns


def time_open(turns: int, folder: Path, repeats: int = 3) -> float:
    """Seconds to open a saved file of ``turns`` exchanges: read, parse, and the next save's text."""
    path = folder / f"open-{turns}.md"
    write_atomically(path, render(conversation(turns)))
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        recorder = TranscriptRecorder(parse(read_transcript_text(path), path))
        recorder.rendered()
        samples.append(time.perf_counter() - started)
    assert len(recorder.transcript.exchanges) == turns
    return statistics.median(samples)


def time_search(folder: Path, repeats: int = 3, conversations: int = 1000) -> tuple[float, float]:
    """Milliseconds to search 1,000 saved conversations (fewer for a smoke run) for a rare word
    (said by one in a hundred) and for a common one (said by all: the first 200 matches)."""
    from mcp_chat_tui.transcript.search import search_conversations

    saved = folder / "conversations"
    saved.mkdir()
    for index in range(conversations):
        transcript = conversation(10)
        if index % 100 == 7:
            transcript.exchanges[5].steps[1].text += " the zebra crossing"
        write_atomically(saved / f"conversation-{index:04}.md", render(transcript))
    figures = []
    for word, expected in (("zebra", conversations // 100), ("topic", 200)):
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            matches = search_conversations(word, saved)
            samples.append(time.perf_counter() - started)
        assert len(matches) == expected, (word, len(matches))
        figures.append(statistics.median(samples) * 1000)
    return figures[0], figures[1]


async def longest_pause(autosave: bool, folder: Path, run: int, tokens: int = STREAM_TOKENS) -> float:
    """Stream a long reply into the headless app on top of a long history; the loop's worst lateness."""
    path = folder / f"stream-{run}-{autosave}.md"
    history = conversation(HISTORY_TURNS)
    for exchange in history.exchanges:  # text only, see the module docstring
        exchange.steps = [Step(text=exchange.steps[-1].text)]
        exchange.summary = (
            f"topic {exchange.user.rsplit(' ', 1)[-1]}"  # none is written at resume: the script is the reply's
        )
    path.write_text(render(history), encoding="utf-8")
    words = [TextDelta(f"word{index} ") for index in range(tokens)]
    engine = ScriptedEngine([words], delay=0.001)
    # Started as a user's would be, given time on a busy machine (the default 10 s was not enough at a load of 11).
    demo = ServerConfig(
        name="demo", type="stdio", command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"], init_timeout=120
    )
    app = ChatApp(
        engine=engine,
        hub=ServerHub([demo]),
        policy=ApprovalPolicy("ask"),
        settings=Settings(),
        transcript_file=path,
        transcript=history,
        autosave=autosave,
    )
    worst = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.ready.is_set() or app.fatal_error is not None, "the app to be ready")
        assert app.fatal_error is None, f"the app did not start: {app.fatal_error}"
        streaming = True

        async def monitor() -> None:
            nonlocal worst
            tick = 0.002
            while streaming:
                started = time.perf_counter()
                await asyncio.sleep(tick)
                worst = max(worst, time.perf_counter() - started - tick)

        watcher = asyncio.create_task(monitor())
        prompt = app.query_one("#prompt")
        prompt.value = "stream please"
        before = len(app.agent.turns)
        await pilot.press("enter")
        # until the turn began (its prompt joined the conversation), however late, then ended
        await until(pilot, lambda: len(app.agent.turns) > before, "the turn to begin")
        await until(pilot, lambda: not (app.turns.running or app.reply.is_open), "the turn to end")
        streaming = False
        await watcher
    if autosave:
        assert f"word{tokens - 1}" in path.read_text(encoding="utf-8"), "autosave did not save the streamed reply"
    return worst


async def until(pilot, condition, what: str, timeout: float = 300) -> None:
    """Wait for ``condition`` as the app runs; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        await pilot.pause(0.02)


async def stall_ratio(folder: Path, rounds: int = 3, tokens: int = STREAM_TOKENS) -> tuple[float, float]:
    on, off = [], []
    for run in range(rounds):
        off.append(await longest_pause(False, folder, run, tokens))
        on.append(await longest_pause(True, folder, run, tokens))
    return statistics.median(on), statistics.median(off)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, one round: only checks that it runs")
    smoke = parser.parse_args().smoke
    scale = 10 if smoke else 1  # the sizes below are divided by it
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if smoke:
            print("smoke run: a tenth of the sizes named below, one round; the figures mean nothing")
        save = {turns: time_save(turns // scale, folder) for turns in (10, 100, 1000)}
        load_per_turn = time_load(1000 // scale, folder)
        print(
            f"save: 10 turns {save[10]:.2f} ms, 100 turns {save[100]:.2f} ms, 1000 turns {save[1000]:.2f} ms "
            f"(1000/100 = {save[1000] / save[100]:.1f}x for 10x the turns)"
        )
        print(f"load: {load_per_turn:.3f} ms per turn")
        open_1k, open_10k = time_open(1000 // scale, folder), time_open(10_000 // scale, folder)
        size_10k = (folder / f"open-{10_000 // scale}.md").stat().st_size / 1e6
        print(
            f"open: 1,000 exchanges {open_1k:.3f} s, 10,000 exchanges ({size_10k:.1f} MB) {open_10k:.3f} s "
            f"(10,000/1,000 = {open_10k / open_1k:.1f}x for 10x the exchanges)"
        )
        search_rare, search_common = time_search(folder, 1 if smoke else 3, 1000 // scale)
        print(f"search 1,000 conversations: a word 10 say {search_rare:.0f} ms, a word all say {search_common:.0f} ms")
        on, off = asyncio.run(stall_ratio(folder, 1 if smoke else 3, STREAM_TOKENS // scale))
        print(f"longest event-loop pause while streaming: autosave on {on * 1000:.1f} ms, off {off * 1000:.1f} ms")
    print(
        json.dumps(
            {
                "save_ms_10": round(save[10], 3),
                "save_ms_100": round(save[100], 3),
                "save_ms_1000": round(save[1000], 3),
                "load_ms_per_turn": round(load_per_turn, 4),
                "stall_autosave_ratio": round(on / off, 3),
                "load_s_1k": round(open_1k, 4),
                "load_s_10k": round(open_10k, 4),
                "load_10k_vs_1k_ratio": round(open_10k / open_1k, 2),
                "search_ms_1k_conversations": round(search_rare, 1),
                "search_ms_1k_common": round(search_common, 1),
            }
        )
    )


if __name__ == "__main__":
    main()

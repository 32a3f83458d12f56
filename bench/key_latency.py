"""Milliseconds from a key to the first frame that shows what it did, in the real app under Pilot.

The app (``ChatApp``, 140x40, headless, the demo server in process, a scripted model) is run twice:
with nothing in it, and with a 500-exchange conversation loaded whose exchanges made 1,000 tool
calls (the sidebar lists them all; the chat shows the last 15 exchanges, as it does). In each, every
key below is pressed ``--rounds`` times. A key reaches the app as a terminal's does (the driver
posts the key event); its time runs from then to the end of the first frame drawn with its effect
on screen. The headless driver writes frames nowhere, so the bench makes each frame's text for the
terminal itself (``render_segments``), as a real terminal's driver would, and counts it.

- F2, F3, F4, F5: the focus in the chat, the calls, the servers, the prompt.
- Enter on a row of the calls sidebar (loaded app) and of the servers pane: its detail screen.
- Ctrl+P: the command palette open.
- Enter on "Change theme: …" in the palette: the palette closed and the app in the new theme
  (mcp-light and mcp-dark in turn).
- Enter on a prompt the model answers with a tool call: the approval dialog open.

Keys that only set up the next one (Esc to close a screen, typing in the palette, answering the
dialog) are not timed. ``key_to_screen_ms_p95`` is the 95th percentile over every timed key of both
apps (target <= 100 ms). Each key's median CPU time of the app's main thread over the same span is
printed beside it: on a shared machine it moves less than the wall time.
Run alone: ``.venv/bin/python bench/key_latency.py [--rounds 10]``; ``bench/ui_stream.py`` runs it too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402
from textual.command import CommandList, CommandPalette  # noqa: E402

from mcp_chat_tui.agent import ApprovalPolicy  # noqa: E402
from mcp_chat_tui.config import Settings  # noqa: E402
from mcp_chat_tui.servers import ServerHub  # noqa: E402
from mcp_chat_tui.transcript import Exchange, Proposal, Step, ToolResult, Transcript  # noqa: E402
from mcp_chat_tui.ui.app import ChatApp  # noqa: E402
from mcp_chat_tui.ui.format import FrozenClock  # noqa: E402
from mcp_chat_tui.ui.screens.approval import ApprovalScreen  # noqa: E402
from mcp_chat_tui.ui.screens.detail import CallDetailScreen, ServerDetailScreen  # noqa: E402
from tests.fakes import ScriptedEngine, call  # noqa: E402
from tests.helpers import demo_config  # noqa: E402

SIZE = (140, 40)
EXCHANGES = 500
CALLS_PER_EXCHANGE = 2
TIMEOUT = 120.0  # seconds for anything awaited (a loaded app starts in several on a busy machine)


def loaded_conversation(exchanges: int = EXCHANGES) -> Transcript:
    """``exchanges`` exchanges, each a prompt, two calculator calls with their results and an answer."""
    made = []
    for index in range(exchanges):
        proposals = []
        for number in range(CALLS_PER_EXCHANGE):
            call_id = f"call_{index}_{number}"
            arguments = json.dumps({"expression": f"{index} * {number} + 1"})
            proposals.append(
                Proposal(
                    {"id": call_id, "type": "function", "function": {"name": "calculator", "arguments": arguments}},
                    "yo",
                    ToolResult("calculator", call_id, "done", str(index * number + 1), "demo", 0.01),
                    proposed_at=datetime(2026, 11, 28, 9, 0, 0),
                    started_at=datetime(2026, 11, 28, 9, 0, 0),
                )
            )
        made.append(
            Exchange(
                user=f"question {index}: what is {index} times 0 and 1, plus one?",
                model="scripted",
                steps=[
                    Step(text="Let me work it out.", proposals=proposals),
                    Step(text=f"They are 1 and {index + 1}."),
                ],
            )
        )
    return Transcript(made)


class Timing(float):
    """Milliseconds from a key to its frame, with ``cpu``: the main thread's CPU milliseconds over them."""

    cpu: float


class TimedApp(ChatApp):
    """The real app, noting when the first frame that shows what a key did is drawn."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.waiting: tuple[Callable[[], bool], float, float, asyncio.Future[Timing]] | None = None

    def _display(self, screen, renderable) -> None:
        super()._display(screen, renderable)
        if renderable is None or self.waiting is None:
            return
        shown, started, cpu_started, done = self.waiting
        if shown():
            if isinstance(renderable, CompositorUpdate):  # what the terminal's driver would write
                renderable.render_segments(self.console)
            self.waiting = None
            timing = Timing((time.perf_counter() - started) * 1000)
            timing.cpu = (time.thread_time() - cpu_started) * 1000
            done.set_result(timing)


async def until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.perf_counter() + TIMEOUT
    while not predicate():
        if time.perf_counter() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def press(app: ChatApp, key: str, character: str | None = None) -> None:
    """A key as a terminal sends it: the driver posts the event to the app."""
    app._driver.send_message(events.Key(key, character))


async def timed(app: TimedApp, key: str, character: str | None, shown: Callable[[], bool]) -> Timing:
    """Milliseconds from ``key`` to the end of the first frame drawn while ``shown()``."""
    await asyncio.sleep(0.05)  # the frames of what came before are drawn
    done: asyncio.Future[Timing] = asyncio.get_running_loop().create_future()
    app.waiting = (shown, time.perf_counter(), time.thread_time(), done)
    press(app, key, character)
    return await asyncio.wait_for(done, TIMEOUT)


def focused(app: ChatApp, name: str) -> Callable[[], bool]:
    return lambda: app.focused is not None and app.focused.id == name


async def close_screen(app: ChatApp) -> None:
    press(app, "escape", "\x1b")
    await until(lambda: len(app.screen_stack) == 1, "the screen to close")


async def focus_keys(app: TimedApp, times: dict[str, list[float]]) -> None:
    for key, pane in (("f2", "chat"), ("f3", "calls"), ("f4", "servers"), ("f5", "prompt")):
        times[key.upper()].append(await timed(app, key, None, focused(app, pane)))


async def detail_keys(app: TimedApp, times: dict[str, list[float]]) -> None:
    for key, pane, screen in (("f3", "calls", CallDetailScreen), ("f4", "servers", ServerDetailScreen)):
        table = app.query_one(f"#{pane}")
        if not table.row_count:  # type: ignore[attr-defined]
            continue
        press(app, key)
        await until(focused(app, pane), f"the focus in {pane}")
        times[f"Enter on a {pane} row"].append(
            await timed(app, "enter", "\r", lambda screen=screen: isinstance(app.screen, screen))
        )
        await close_screen(app)


def theme_on_top(palette: CommandPalette, theme: str) -> bool:
    """The palette lists ``Change theme: theme`` first, highlighted (Enter runs it)."""
    hits = palette.query_one(CommandList)
    if not hits.option_count or hits.highlighted != 0:
        return False
    hit = hits.get_option_at_index(0).hit  # type: ignore[attr-defined]
    return str(hit.text) == f"Change theme: {theme}"


async def palette_keys(app: TimedApp, times: dict[str, list[float]], theme: str) -> None:
    times["Ctrl+P"].append(await timed(app, "ctrl+p", None, lambda: isinstance(app.screen, CommandPalette)))
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    for character in f"change theme: {theme}":
        press(app, "space" if character == " " else character, character)
    await until(lambda: palette.query_one(CommandList).option_count > 0, "the palette's hits")
    if palette.query_one(CommandList).highlighted is None:
        press(app, "down")
    await until(lambda: theme_on_top(palette, theme), "the theme at the top of the palette")
    times["Enter on a theme"].append(
        await timed(app, "enter", "\r", lambda: app.theme == theme and not isinstance(app.screen, CommandPalette))
    )


async def approval_key(app: TimedApp, times: dict[str, list[float]]) -> None:
    press(app, "f5")
    await until(focused(app, "prompt"), "the focus in the prompt")
    app.query_one("#prompt").value = "what is 2 + 2?"  # type: ignore[attr-defined]
    times["Enter: approval dialog"].append(
        await timed(app, "enter", "\r", lambda: isinstance(app.screen, ApprovalScreen))
    )
    await until(lambda: getattr(app.screen, "armed", False), "the dialog to take keys")
    press(app, "n", "n")
    await until(lambda: not app.turns.running, "the turn to end")


class CallingEngine(ScriptedEngine):
    """A prompt is answered with a calculator call, the call's result with a sentence, a request
    aside (a summary of a loaded exchange) with a line."""

    def __init__(self) -> None:
        super().__init__([])

    async def stream(self, messages, tools=None, *, known_tools=None, aside=False, overrides=None):
        if aside:
            self.replies = ["A summary."]
        elif messages[-1]["role"] == "tool":
            self.replies = ["It is 4."]
        else:
            self.replies = [[call("calculator", {"expression": "2 + 2"})]]
        async for event in super().stream(messages, tools, known_tools=known_tools, aside=aside, overrides=overrides):
            yield event


def make_app(transcript: Transcript | None) -> TimedApp:
    return TimedApp(
        engine=CallingEngine(),
        hub=ServerHub([demo_config()]),
        policy=ApprovalPolicy("ask"),
        settings=Settings(),
        clock=FrozenClock(),
        transcript=transcript,
        autosave=False,
    )


async def one_app(label: str, transcript: Transcript | None, rounds: int) -> dict[str, list[float]]:
    """Every key ``rounds`` times in one app; milliseconds by key."""
    times: dict[str, list[float]] = {}
    for name in ("F2", "F3", "F4", "F5", "Enter on a calls row", "Enter on a servers row", "Ctrl+P"):
        times[name] = []
    times["Enter on a theme"], times["Enter: approval dialog"] = [], []
    app = make_app(transcript)
    async with app.run_test(size=SIZE):
        await until(lambda: app.ready.is_set() or app.fatal_error is not None, "start-up")
        if app.fatal_error:
            raise SystemExit(app.fatal_error)
        await asyncio.sleep(0.5)  # the loaded conversation drawn
        # A loaded conversation's exchanges are summarised first (as a real model would be asked to)
        await until(lambda: not app.turns.running, "the loaded exchanges' summaries")
        for index in range(rounds):
            await focus_keys(app, times)
            await detail_keys(app, times)
            await palette_keys(app, times, ("mcp-light", "mcp-dark")[index % 2])
            await approval_key(app, times)
        calls = len(app.calls_table.records)
    print(f"   {label} ({calls} calls in the sidebar at the end), ms: median / p95 / max, and CPU median")
    for name, samples in times.items():
        if samples:
            cpu = statistics.median(getattr(sample, "cpu", 0.0) for sample in samples)
            print(
                f"     {name:<24} {statistics.median(samples):7.1f} {percentile(samples, 95):7.1f} {max(samples):7.1f}"
                f"   {cpu:7.1f}"
            )
    return times


def percentile(samples: list[float], percent: float) -> float:
    """The ``percent``-th percentile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered) - 1, round(percent / 100 * len(ordered) + 0.5) - 1))]


async def key_to_screen(rounds: int, exchanges: int = EXCHANGES) -> float:
    """The 95th percentile, in ms, of every key's time to the screen over both apps."""
    print(f"5. key to screen: the real app at {SIZE[0]}x{SIZE[1]}, each key {rounds} times per app")
    every: list[float] = []
    for label, transcript in (("empty", None), (f"{exchanges} exchanges loaded", loaded_conversation(exchanges))):
        for samples in (await one_app(label, transcript, rounds)).values():
            every += samples
    p95 = percentile(every, 95)
    print(f"   p95 over {len(every)} keys: {p95:.1f} ms (median {statistics.median(every):.1f}; target <= 100)")
    return p95


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    asyncio.run(key_to_screen(parser.parse_args().rounds))

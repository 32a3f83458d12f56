"""Benchmark: what the server hub adds over the raw MCP SDK, measured in one run.

Prints its ratios and rates (and the figures behind them):
- call_overhead_ratio: the hub's median ``call_tool`` latency divided by the raw
  SDK ``Client.call_tool`` median (asking, as the hub does, for progress and log
  messages), both against the demo server over stdio, in alternating batches
  (target at most 1.10);
- startup_8_vs_1_ratio: the time until 8 servers that each take 1 s to start
  are all ready, divided by the time for one (target at most 1.3);
- progress_to_screen_ms: in the real app (headless), the median time from a
  progress notification leaving the server (its message holds the time) to the
  first frame drawn after its sidebar row shows it (target at most 50 ms);
- result_mb_per_s: megabytes a second of a 200 MB result through the hub from a
  server process (tiny_server.py's ``big``, which writes as fast as the pipe
  takes it), beside pipe_mb_per_s, the same answer read raw from the pipe;
- result_10_vs_80_mb_ratio: the time per MB of an 80 MB result over that of a
  10 MB one (target at most 1.5: linear), beside the app's CPU time per MB at each size.
The last line is one JSON object of the figures. ``--smoke``: a tenth of the sizes, few calls and
runs, to check the bench still runs (its figures mean nothing then); .ci/run runs it so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.engine.base import Engine
from mcp_chat_tui.servers import ServerHub, ServerState

TINY = str(Path(__file__).with_name("tiny_server.py"))
PROGRESS_SERVER = str(Path(__file__).with_name("progress_server.py"))
PROGRESS_TICKS = 40
DEMO_ARGS = ["-m", "mcp_chat_tui.demo.server"]
BATCHES = 10
CALLS_PER_BATCH = 50
SMOKE = False  # --smoke: a tenth of the result sizes, one batch of 5 calls, one run of each
ARGUMENTS = {"expression": "12 * 7"}


async def timed_calls(call, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def ignore_log(params) -> None:
    return None


async def call_overhead() -> tuple[float, float]:
    raw_samples: list[float] = []
    hub_samples: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=DEMO_ARGS)
    hub = ServerHub([ServerConfig(name="demo", type="stdio", command=sys.executable, args=DEMO_ARGS)])
    # The raw client asks for what the hub asks for on every call (a progress token, log messages
    # at "info"): an SDK server spends about 2-3 ms more per call on those, which is the server's
    # cost, not the hub's.
    async with Client(params, log_level="info", logging_callback=ignore_log) as raw, hub:
        await hub.start_all()

        async def raw_call():
            await raw.call_tool("calculator", ARGUMENTS, progress_callback=ignore_progress)

        async def hub_call():
            result = await hub.call_tool("demo", "calculator", ARGUMENTS)
            assert result.ok, result.for_model()

        await timed_calls(raw_call, 2 if SMOKE else 20)  # warm both paths
        await timed_calls(hub_call, 2 if SMOKE else 20)
        for _ in range(1 if SMOKE else BATCHES):
            raw_samples += await timed_calls(raw_call, 5 if SMOKE else CALLS_PER_BATCH)
            hub_samples += await timed_calls(hub_call, 5 if SMOKE else CALLS_PER_BATCH)
    return statistics.median(hub_samples), statistics.median(raw_samples)


async def time_to_ready(count: int, delay: float) -> float:
    configs = [
        ServerConfig(name=f"slow{i}", type="stdio", command=sys.executable, args=[TINY, "--delay", str(delay)])
        for i in range(count)
    ]
    hub = ServerHub(configs, init_timeout=30)
    async with hub:
        started = time.perf_counter()
        statuses = await hub.start_all()
        elapsed = time.perf_counter() - started
        assert all(s.state == ServerState.READY for s in statuses), [s.summary() for s in statuses]
    return elapsed


class OneCallEngine(Engine):
    """A scripted model for the app: the first reply calls ``tick``, the next one answers."""

    model_name = "bench"
    supports_tools = True

    def __init__(self, count: int) -> None:
        self.count = count
        self.replies = 0

    async def stream(self, messages, tools=None, *, known_tools=None):
        from mcp_chat_tui.engine.events import Done, TextDelta, ToolCallProposed

        self.replies += 1
        if self.replies == 1:
            yield ToolCallProposed("call_1", "tick", {"count": self.count})
            yield Done("tool_calls")
        else:
            yield TextDelta("ticked")
            yield Done("stop")


async def progress_to_screen(count: int = PROGRESS_TICKS) -> list[float]:
    """Milliseconds from each progress notification leaving the server to the first frame after
    the call's sidebar row shows it, in the real app run headless."""
    from mcp_chat_tui.agent import ApprovalPolicy
    from mcp_chat_tui.config import Settings
    from mcp_chat_tui.ui.app import ChatApp
    from mcp_chat_tui.ui.widgets.sidebar import ToolCallTable

    config = ServerConfig(name="bench", type="stdio", command=sys.executable, args=[PROGRESS_SERVER])
    engine = OneCallEngine(count)
    app = ChatApp(
        engine=engine,  # type: ignore[arg-type]
        hub=ServerHub([config]),
        policy=ApprovalPolicy("auto"),
        settings=Settings(),
        autosave=False,
    )
    latencies: list[float] = []
    shown: set[str] = set()
    update_record = ToolCallTable.update_record

    def noting_update(table, record, *args, **kwargs):
        update_record(table, record, *args, **kwargs)
        progress = record.progress
        if progress is not None and progress.message not in shown:
            shown.add(progress.message)
            sent_ns = int(progress.message.split()[-1])
            table.call_after_refresh(lambda: latencies.append((time.time_ns() - sent_ns) / 1e6))

    ToolCallTable.update_record = noting_update  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            while not app.ready.is_set():
                await pilot.pause(0.05)
            prompt = app.query_one("#prompt")
            prompt.value = "tick"  # type: ignore[attr-defined]
            prompt.focus()
            await pilot.press("enter")
            deadline = time.perf_counter() + 60
            while (len(latencies) < count or app.turns.running) and time.perf_counter() < deadline:
                await pilot.pause(0.05)
    finally:
        ToolCallTable.update_record = update_record  # type: ignore[method-assign]
    # Two notifications that arrive before the row is drawn again show as the later one: the screen
    # shows a call's newest progress, so on a busy machine some are never on screen (and not timed).
    print(f"progress notifications seen on screen: {len(latencies)} of {count}")
    assert latencies, f"none of {count} progress notifications was seen on screen"
    return latencies


async def result_seconds(hub: ServerHub, megabytes: int, runs: int) -> tuple[float, float]:
    """The median time of ``runs`` calls for a result of ``megabytes`` MB, each arriving whole
    (after one call of that size not counted: the server builds its answer once), and the median
    CPU time this process spent on each (what the app's reading costs, whatever the load)."""
    times, cpu_times = [], []
    for _ in range(runs + 1):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = await hub.call_tool("tiny", "big", {"megabytes": megabytes}, timeout=600)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
        assert result.ok and result.full_size == megabytes * 1_000_000, result.for_model()
    return statistics.median(times[1:]), statistics.median(cpu_times[1:])


async def result_speed() -> dict[str, float]:
    """Seconds for results of 10, 80 and 200 MB through the hub (and the app's CPU seconds for each,
    ``cpu_10``...), and for 200 MB read raw from the pipe (each the median of some calls after the
    first: the server builds its answer once)."""
    hub = ServerHub([ServerConfig(name="tiny", type="stdio", command=sys.executable, args=[TINY])])
    figures: dict[str, float] = {}
    async with hub:
        await hub.start_all()
        scale, runs = (10, 1) if SMOKE else (1, 3)
        for megabytes, count in ((10, 1 if SMOKE else 5), (80, runs), (200, runs)):
            seconds, cpu_seconds = await result_seconds(hub, megabytes // scale, count)
            figures[str(megabytes)], figures[f"cpu_{megabytes}"] = seconds * scale, cpu_seconds * scale
    figures["pipe_200"] = pipe_seconds(200 // scale, runs) * scale
    return figures


def pipe_seconds(megabytes: int, runs: int) -> float:
    """The median time of ``runs`` reads of the same answer, raw from the server's stdout with
    ``os.read`` (after one not counted): what copying it through the pipe costs."""
    process = subprocess.Popen([sys.executable, TINY], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    times = []
    for run in range(runs + 1):
        call = {"name": "big", "arguments": {"megabytes": megabytes}}
        request = {"jsonrpc": "2.0", "id": run, "method": "tools/call", "params": call}
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
        started, read = time.perf_counter(), 0
        while not (chunk := os.read(process.stdout.fileno(), 1 << 20)).endswith(b"\n"):
            read += len(chunk)
        times.append(time.perf_counter() - started)
        assert read + len(chunk) > megabytes * 1_000_000
    process.kill()
    process.wait()
    return statistics.median(times[1:])


def cpu_ms_per_mb(sizes: dict[str, float], megabytes: int) -> float:
    """The app's CPU milliseconds per MB of a result of ``megabytes`` MB."""
    return round(sizes[f"cpu_{megabytes}"] * 1000 / megabytes, 2)


async def main() -> None:
    global SMOKE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="a tenth of the sizes, few calls: only checks that it runs"
    )
    SMOKE = parser.parse_args().smoke
    sizes = await result_speed()
    per_mb_ratio = (sizes["80"] / 80) / (sizes["10"] / 10)
    print(
        f"results: 10 MB {sizes['10']:.2f} s, 80 MB {sizes['80']:.2f} s, 200 MB {sizes['200']:.2f} s "
        f"({200 / sizes['200']:.0f} MB/s; read raw from the pipe {200 / sizes['pipe_200']:.0f} MB/s); "
        f"the app's CPU per MB: {cpu_ms_per_mb(sizes, 10)}, {cpu_ms_per_mb(sizes, 80)} and "
        f"{cpu_ms_per_mb(sizes, 200)} ms"
    )
    progress_ms = statistics.median(await progress_to_screen(5 if SMOKE else PROGRESS_TICKS))
    print(f"progress notification to screen: median {progress_ms:.1f} ms over {PROGRESS_TICKS}")
    hub_median, raw_median = await call_overhead()
    print(f"tool call median: hub {hub_median * 1000:.3f} ms, raw SDK {raw_median * 1000:.3f} ms")
    samples = 1 if SMOKE else 3
    one = statistics.median([await time_to_ready(1, 1.0) for _ in range(samples)])
    eight = statistics.median([await time_to_ready(2 if SMOKE else 8, 1.0) for _ in range(samples)])
    print(f"time to ready: 1 server {one:.3f} s, 8 servers {eight:.3f} s")
    print(
        json.dumps(
            {
                "hub_call_ms": round(hub_median * 1000, 4),
                "raw_call_ms": round(raw_median * 1000, 4),
                "startup_1_s": round(one, 4),
                "startup_8_s": round(eight, 4),
                "result_10_mb_s": round(sizes["10"], 3),
                "result_80_mb_s": round(sizes["80"], 3),
                "result_200_mb_s": round(sizes["200"], 3),
                "pipe_mb_per_s": round(200 / sizes["pipe_200"], 1),
                "result_cpu_ms_per_mb": [cpu_ms_per_mb(sizes, size) for size in (10, 80, 200)],
            }
        )
    )
    print(
        json.dumps(
            {
                "call_overhead_ratio": round(hub_median / raw_median, 4),
                "startup_8_vs_1_ratio": round(eight / one, 4),
                "progress_to_screen_ms": round(progress_ms, 2),
                "result_mb_per_s": round(200 / sizes["200"], 1),
                "result_10_vs_80_mb_ratio": round(per_mb_ratio, 3),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())

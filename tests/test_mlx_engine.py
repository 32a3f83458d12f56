"""MlxEngine with a real (tiny, random) MLX model on the CPU: streaming, stats, KV reuse, stopping, loading."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.engine import Engine, loading
from mcp_chat_tui.engine.events import (
    Done,
    EngineError,
    LoadProgress,
    Stats,
    TextDelta,
    Throughput,
    ToolCallProposed,
)
from mcp_chat_tui.engine.message_shapes import for_template
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.thread_load import LOAD_WINDOW, ThreadLoad, available_cores
from tests.fakes import FakeHubDownload
from tests.helpers import eventually
from tests.models import build_tiny_model, tool_schemas

DEMO_MODEL = Path(__file__).resolve().parents[1] / "mcp_chat_tui" / "demo" / "model"
QUESTION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is the time in Tokyo?"}]


@pytest.fixture(scope="session")
def plain_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-plain", tools=False)


@pytest.fixture(scope="session")
def raw(tiny_model):
    """The same model loaded straight through mlx-lm, to compare the engine against."""
    from mlx_lm.utils import load

    return load(str(tiny_model))


def raw_generate(raw, prompt: list[int], max_tokens: int) -> tuple[list[int], str]:
    from mlx_lm.generate import stream_generate

    model, tokenizer = raw
    ids, text = [], ""
    for response in stream_generate(model, tokenizer, prompt, max_tokens=max_tokens):
        ids.append(response.token)
        text += response.text
    return ids, text


def template_tokens(raw, messages, tools=None) -> list[int]:
    kwargs = {"tools": tools} if tools else {}
    return list(raw[1].apply_chat_template(for_template(messages), add_generation_prompt=True, **kwargs))


def common_prefix(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


async def collect(stream):
    return [event async for event in stream]


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def wait_idle(engine: MlxEngine, limit: float = 1.0) -> float:
    """Seconds until the MLX thread is idle; fails past ``limit``."""
    start = time.monotonic()
    while engine.busy:
        assert time.monotonic() - start < limit, "the MLX thread kept generating after the stop"
        await asyncio.sleep(0.005)
    return time.monotonic() - start


@pytest.fixture
async def engine(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=12)
    await engine.load()
    yield engine
    await engine.close()


# -- streaming ------------------------------------------------------------------------------


async def test_streams_the_same_text_as_raw_mlx_lm_then_stats_and_done(engine, raw):
    events = await collect(engine.stream(QUESTION, tool_schemas()))
    prompt = template_tokens(raw, QUESTION, tool_schemas())
    _, expected_text = raw_generate(raw, prompt, 12)
    assert sum(isinstance(e, TextDelta) for e in events) >= 1
    assert text_of(events) == expected_text
    stats, done = events[-2:]
    assert isinstance(stats, Stats) and done == Done("length")
    assert (stats.prompt_tokens, stats.prefilled_tokens, stats.generated_tokens) == (len(prompt), len(prompt), 12)
    assert stats.time_to_first_token > 0 and stats.tokens_per_second > 0 and stats.peak_memory_gb > 0
    # the prefill and the 11 tokens after the first, timed apart (agent/figures.py reads the rates from them)
    assert 0 < stats.prefill_time <= stats.time_to_first_token and stats.decode_time > 0
    assert engine.supports_tools
    assert isinstance(engine, Engine)


async def test_text_arrives_as_it_is_made_and_what_piled_up_arrives_as_one_piece(tiny_model, raw):
    engine = MlxEngine(str(tiny_model), max_tokens=60)
    await engine.load()
    try:
        stream = engine.stream(QUESTION)
        first = await anext(stream)
        assert isinstance(first, TextDelta), "the first text is passed on at once, before the reply is done"
        await wait_idle(engine, limit=60)  # the model writes the rest while nobody reads
        rest = await collect(stream)
    finally:
        await engine.close()
    pieces = [first] + [e for e in rest if isinstance(e, TextDelta)]
    _, expected_text = raw_generate(raw, template_tokens(raw, QUESTION), 60)
    assert text_of(pieces) == expected_text
    stats = next(e for e in rest if isinstance(e, Stats))
    assert stats.generated_tokens == 60
    # what was written while nobody read is taken in one batch: its tokens make one piece of
    # text (split only where another event, such as a rate report, came between them)
    assert not any(
        isinstance(a, TextDelta) and isinstance(b, TextDelta) for a, b in zip(rest, rest[1:], strict=False)
    ), rest
    assert len(pieces) < 10, [p.text for p in pieces]


async def test_kv_cache_is_reused_across_requests_and_a_tool_loop(engine, raw):
    tools = tool_schemas()
    t1 = template_tokens(raw, QUESTION, tools)
    first = await collect(engine.stream(QUESTION, tools))
    assert first[-2].prefilled_tokens == len(t1)
    g1, _ = raw_generate(raw, t1, 12)
    assert list(engine.cached_tokens) == t1 + g1

    # The next turn: the previous reply and a new question. Only what is not cached is prefilled.
    second_messages = QUESTION + [
        {"role": "assistant", "content": text_of(first)},
        {"role": "user", "content": "And in Paris?"},
    ]
    t2 = template_tokens(raw, second_messages, tools)
    second = await collect(engine.stream(second_messages, tools))
    expected = len(t2) - common_prefix(t2, t1 + g1)
    assert second[-2].prefilled_tokens == expected
    assert expected < len(t2) - len(t1) + 12  # the whole first prompt was reused
    g2, text2 = raw_generate(raw, t2, 12)
    assert text_of(second) == text2, "a reused cache must give what a fresh one gives"

    # A tool loop: each step appends an assistant tool call and its result.
    messages = second_messages + [{"role": "assistant", "content": text_of(second)}]
    previous, previous_prompt = t2 + g2, t2
    for step in range(3):
        messages = messages + [
            {"role": "user", "content": f"step {step}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{step}",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": json.dumps({"expression": f"{step} + 1"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"call_{step}", "name": "calculator", "content": f"{step + 1}"},
        ]
        prompt = template_tokens(raw, messages, tools)
        events = await collect(engine.stream(messages, tools))
        new_tokens = len(prompt) - common_prefix(prompt, previous)
        assert events[-2].prefilled_tokens == new_tokens
        # only the new messages (and the re-rendered previous reply) are computed
        assert new_tokens <= len(prompt) - len(previous_prompt) + 12 < len(prompt) // 2
        generated, _ = raw_generate(raw, prompt, 12)
        previous, previous_prompt = prompt + generated, prompt
        assert list(engine.cached_tokens) == previous


async def test_identical_request_prefills_one_token(engine):
    await collect(engine.stream(QUESTION))
    again = await collect(engine.stream(QUESTION))
    assert again[-2].prefilled_tokens == 1


async def test_arguments_as_json_string_or_dict_render_the_same(engine):
    def conversation(arguments):
        return QUESTION + [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "current_time", "arguments": arguments}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "name": "current_time", "content": "10:00"},
        ]

    as_text = await collect(engine.stream(conversation('{"timezone": "Asia/Tokyo"}'), tool_schemas()))
    as_dict = await collect(engine.stream(conversation({"timezone": "Asia/Tokyo"}), tool_schemas()))
    assert as_dict[-2].prompt_tokens == as_text[-2].prompt_tokens
    assert as_dict[-2].prefilled_tokens == 1  # the very same prompt
    prompt = engine.tokenizer.decode(list(engine.cached_tokens)[: as_dict[-2].prompt_tokens])
    assert '"arguments": {"timezone": "Asia/Tokyo"}' in prompt


async def test_model_without_tool_template_says_so_and_gets_no_tools(plain_model):
    engine = MlxEngine(str(plain_model), max_tokens=4)
    await engine.load()
    try:
        assert engine.supports_tools is False
        events = await collect(engine.stream(QUESTION, tool_schemas()))
        expected = engine.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
        assert events[-2].prompt_tokens == len(expected)
        assert events[-1] == Done("length")
    finally:
        await engine.close()


async def test_a_conversation_the_template_cannot_render_is_an_error_and_the_engine_goes_on(engine):
    with pytest.raises(EngineError, match="chat template of model .* cannot render this conversation"):
        await collect(engine.stream([]))
    assert (await collect(engine.stream(QUESTION)))[-1] == Done("length")


# -- stopping -------------------------------------------------------------------------------


async def test_breaking_out_stops_within_a_second_and_the_next_request_works(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=5000)
    await engine.load()
    try:
        seen = 0
        async for event in engine.stream(QUESTION):
            seen += isinstance(event, TextDelta)
            if seen == 3:
                break
        await wait_idle(engine)
        cached = list(engine.cached_tokens)
        assert len(cached) < 5000, "generation went on after the consumer left"
        engine.max_tokens = 4
        follow_up = QUESTION + [{"role": "user", "content": "again"}]
        events = await collect(engine.stream(follow_up))
        assert events[-1] == Done("length")
        prompt = engine.tokenizer.apply_chat_template(follow_up, add_generation_prompt=True)
        assert events[-2].prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
    finally:
        await engine.close()


async def test_a_long_reply_reports_its_rate_about_once_a_second(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=100_000)
    await engine.load()
    try:
        assert engine.thread_load.share == 1.0  # nothing measured yet: taken as busy as can be
        rates, texts, loads, spares = [], 0, set(), set()
        started = None
        async for event in engine.stream(QUESTION):
            if isinstance(event, TextDelta):
                texts += 1
                started = started or time.monotonic()
            elif isinstance(event, Throughput):
                rates.append(event)
            loads.add(engine.thread_load.share)
            spares.add(engine.thread_load.spare_cores)
            if started is not None and time.monotonic() - started > 2.5:
                break
        elapsed = time.monotonic() - started
        assert 1 <= len(rates) <= elapsed + 1, (len(rates), elapsed)
        counts = [rate.generated_tokens for rate in rates]
        assert counts == sorted(counts) and counts[0] > 0
        assert all(rate.tokens_per_second > 0 for rate in rates)
        assert texts > len(rates)
        # The thread's load is measured every quarter of a second while the reply is written.
        assert len(loads) >= 3 and all(0.0 < load <= 1.0 for load in loads), loads
        # So is how many cores the process leaves idle: generating keeps at least part of one busy.
        assert len(spares) >= 3 and all(0.0 <= spare < available_cores() for spare in spares), spares
    finally:
        await engine.close()


def test_thread_load_is_the_share_of_each_window_the_thread_ran():
    cpu, process = [0.0], [0.0]
    load = ThreadLoad(cpu_clock=lambda: cpu[0], process_clock=lambda: process[0])
    assert (load.share, load.spare_cores) == (1.0, 0.0)  # until measured
    load.start(10.0)
    cpu[0], process[0] = 0.1, 0.15
    load.sample(10.1)  # within the first window: nothing measured yet
    assert (load.share, load.spare_cores) == (1.0, 0.0)
    cpu[0], process[0] = 0.15, 0.35
    load.sample(10.0 + LOAD_WINDOW)
    assert load.share == pytest.approx(0.15 / LOAD_WINDOW)
    assert load.spare_cores == pytest.approx(available_cores() - 0.35 / LOAD_WINDOW)
    cpu[0] += 0.01
    process[0] += 0.01
    load.sample(10.0 + 3 * LOAD_WINDOW)  # the next window: 10 ms over two windows' time
    assert load.share == pytest.approx(0.01 / (2 * LOAD_WINDOW))
    assert load.spare_cores == pytest.approx(available_cores() - 0.01 / (2 * LOAD_WINDOW))
    load.start(20.0)  # the next reply starts from the last figures
    assert load.share == pytest.approx(0.01 / (2 * LOAD_WINDOW))
    process[0] += 100 * available_cores()
    load.sample(20.0 + LOAD_WINDOW)  # more CPU than the cores could give (clock granularity): none spare
    assert load.spare_cores == 0.0


async def test_aclose_and_task_cancel_both_stop(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=5000)
    await engine.load()
    try:
        stream = engine.stream(QUESTION)
        assert isinstance(await anext(stream), TextDelta)
        await stream.aclose()
        await wait_idle(engine)

        started = asyncio.Event()

        async def consume():
            async for _ in engine.stream(QUESTION):
                started.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_idle(engine)
        engine.max_tokens = 3
        assert (await collect(engine.stream(QUESTION)))[-1] == Done("length")
    finally:
        await engine.close()


async def test_stop_during_prefill_keeps_the_cache_consistent(tiny_model):
    engine = MlxEngine(str(tiny_model), max_tokens=3, prefill_step_size=4)
    await engine.load()
    try:
        long_question = [{"role": "user", "content": "tell me about the weather today " * 40}]
        task = asyncio.create_task(collect(engine.stream(long_question)))
        assert await eventually(lambda: engine.busy, 30, 0.001), "the MLX thread never started the prefill"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_idle(engine)
        cached = list(engine.cached_tokens)
        prompt = engine.tokenizer.apply_chat_template(long_question, add_generation_prompt=True)
        events = await collect(engine.stream(long_question))
        assert events[-2].prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
        assert events[-1] == Done("length")
    finally:
        await engine.close()


@pytest.mark.parametrize("ending", ["left generating", "closed"])
def test_exiting_does_not_abort(tiny_model, ending):
    """MLX aborts the process if its thread state is torn down while Python exits: the engine's thread
    stays alive and idle, and generation is stopped at exit."""
    code = f"""
import asyncio
from mcp_chat_tui.engine.mlx_engine import MlxEngine

held = []

async def main():
    engine = MlxEngine({str(tiny_model)!r}, max_tokens=100000)
    await engine.load()
    stream = engine.stream([{{"role": "user", "content": "hi"}}])
    held.append(stream)  # still referenced, so still generating unless closed
    for _ in range(3):
        await anext(stream)
    assert engine.busy
    if {ending == "closed"!r}:
        await engine.close()

asyncio.run(main())
print("exiting")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, "exiting"), result.stderr


# -- loading --------------------------------------------------------------------------------


async def test_missing_local_folder_is_an_error_naming_the_model(tmp_path):
    name = str(tmp_path / "no" / "such-model")
    with pytest.raises(EngineError) as info:
        await MlxEngine(name).load()
    assert f"cannot load model '{name}'" in str(info.value) and "no such folder" in str(info.value)
    assert isinstance(info.value, UserFacingError)


async def test_unknown_repo_is_an_error_naming_the_model():
    name = "mcp-chat-tui-tests/no-such-model-3f9a"
    with pytest.raises(EngineError) as info:
        await MlxEngine(name).load()
    assert f"cannot load model '{name}'" in str(info.value)


async def test_invalid_repo_id_is_an_error_naming_the_model():
    with pytest.raises(EngineError, match="cannot load model 'not a repo!': not a local folder and not a valid"):
        await MlxEngine("not a repo!").load()


async def test_repository_not_found_on_the_hub(monkeypatch):
    import httpx2
    from huggingface_hub.errors import RepositoryNotFoundError

    def not_found(repo_id, **kwargs):
        response = httpx2.Response(404, request=httpx2.Request("GET", f"https://huggingface.co/api/models/{repo_id}"))
        raise RepositoryNotFoundError("404 Client Error", response=response)

    monkeypatch.setattr(loading, "snapshot_download", not_found)
    with pytest.raises(EngineError, match="cannot load model 'foo/bar': repository not found on the Hugging Face hub"):
        await MlxEngine("foo/bar").load()


async def test_folder_that_is_not_a_model(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(EngineError, match="no config.json"):
        await MlxEngine(str(tmp_path)).load()
    (tmp_path / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(EngineError, match=f"cannot load model '{tmp_path}'"):
        await MlxEngine(str(tmp_path)).load()


async def test_stream_before_load_is_an_error(tiny_model):
    with pytest.raises(EngineError, match="not loaded"):
        MlxEngine(str(tiny_model)).stream(QUESTION)


async def test_download_reports_byte_progress(tiny_model, tmp_path, monkeypatch):
    """The hub is unreachable here: a fake snapshot_download drives the tqdm hook like the real one."""
    calls = {}
    fake_snapshot_download = FakeHubDownload(tiny_model, tmp_path / "snapshot", calls)
    monkeypatch.setattr(loading, "snapshot_download", fake_snapshot_download)
    reports: list[LoadProgress] = []
    engine = MlxEngine("someone/tiny-model", max_tokens=3)
    await engine.load(reports.append)
    try:
        assert await eventually(lambda: reports and reports[-1].stage == "ready", 10), "the load never reported ready"
        assert calls["repo_id"] == "someone/tiny-model" and "model*.safetensors" in calls["allow_patterns"]
        downloads = [r for r in reports if r.stage == "download"]
        total = sum(p.stat().st_size for p in tiny_model.iterdir() if p.is_file())
        assert len(downloads) >= 3
        done = [r.bytes_done for r in downloads]
        assert done == sorted(done) and any(0 < d < total for d in done)
        assert (downloads[-1].bytes_done, downloads[-1].bytes_total) == (total, total)
        assert [r.stage for r in reports][-1] == "ready"
        assert (await collect(engine.stream(QUESTION)))[-1] == Done("length")
    finally:
        await engine.close()


# -- the demo model -------------------------------------------------------------------------


@pytest.mark.skipif(
    not (DEMO_MODEL / "config.json").exists(),
    reason="the demo model (mcp_chat_tui/demo/model/) has not been built yet",
)
async def test_demo_model_calls_the_calculator():
    from mlx_lm.generate import generate
    from mlx_lm.utils import load

    from mcp_chat_tui.core.tools import ToolSpec
    from mcp_chat_tui.demo.server import server as demo_server
    from mcp_chat_tui.engine.toolcalls import parse_tool_calls

    tools = [
        ToolSpec(server="demo", name=t.name, description=t.description or "", input_schema=t.input_schema).to_openai()
        for t in await demo_server.list_tools()
    ]
    question = [{"role": "user", "content": "what is 12 * 7?"}]
    engine = MlxEngine(str(DEMO_MODEL), max_tokens=200)
    await engine.load()
    try:
        events = await collect(engine.stream(question, tools))
    finally:
        await engine.close()
    calls = [e for e in events if isinstance(e, ToolCallProposed)]

    # What the model itself says, straight through mlx-lm: the engine must agree with it ...
    model, tokenizer = load(str(DEMO_MODEL))
    raw_text = generate(
        model,
        tokenizer,
        tokenizer.apply_chat_template(question, tools=tools, add_generation_prompt=True),
        max_tokens=200,
    )
    raw_calls = parse_tool_calls(
        raw_text,
        tools=tools,
        tool_call_start=tokenizer.tool_call_start,
        tool_call_end=tokenizer.tool_call_end,
        tool_parser=tokenizer.tool_parser,
    ).calls
    assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in raw_calls if hasattr(c, "name")]
    # ... and the model must be the trained one.
    assert [(c.name, c.arguments) for c in calls] == [("calculator", {"expression": "12 * 7"})], (
        f"the demo model itself answers {raw_text!r}: it needs (re)training"
    )
    assert events[-1] == Done("tool_calls")


def test_engine_modules_do_not_import_textual():
    code = (
        "import sys, mcp_chat_tui.engine.mlx_engine, mcp_chat_tui.engine.remote, mcp_chat_tui.engine.toolcalls; "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

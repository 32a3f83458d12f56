"""What MlxEngine costs over raw mlx-lm, and how much prompt a tool loop really recomputes.

Run: ``.venv/bin/python bench/engine_overhead.py [--model FOLDER] [--runs 12] [--tokens 200]``

1. engine_vs_raw_tps_ratio: tokens per second through ``MlxEngine.stream``'s event
   iterator (from asking to the last event), divided by ``mlx_lm.stream_generate`` on the
   same model and prompt doing the same work (the prompt already cached but its last
   token; the engine gets there by reusing its KV cache). Runs alternate (raw, engine,
   engine, raw, ...) and the medians are compared. Target >= 0.97.
2. prefill_fraction_tool_loop: tokens prefilled / prompt tokens, summed over a 6-step
   tool loop where each step appends an assistant tool call and its result. Target <= 0.25.
3. resume_prefill_fraction: a conversation of three turns (tool calls and answers) on one
   engine keeping its KV cache beside the conversation file, then a new engine object (a
   restart) asked the next question: tokens it prefilled / prompt tokens of that reply. Target <= 0.1.
4. new_conversation_prefill_fraction: a conversation's first question with forty tools on one
   engine, then another conversation's first question on a new engine object (a new run of the
   app, the same system prompt and tools): tokens it prefilled / its prompt's tokens (the system
   prompt's and tools' KV cache kept across conversations: engine/prefix_cache.py). Target <= 0.1.

Uses the demo model when ``mcp_chat_tui/demo/model`` exists, else builds a small random
qwen2 model (like the test models, a bit bigger) in a temporary folder; when the chosen
model's reply to the story prompt is too short (or not text) for a fair decode rate, the
decode figure uses the built model. The last line printed is one JSON object with both figures.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp_chat_tui.engine.blas import load_blas  # noqa: E402
from mcp_chat_tui.engine.compute import prepare as prepare_compute  # noqa: E402
from mcp_chat_tui.engine.events import Stats, TextDelta, ToolCallProposed  # noqa: E402
from mcp_chat_tui.engine.mlx_engine import MlxEngine  # noqa: E402

load_blas()  # before mlx.core is imported, as the app does

DEMO_MODEL = ROOT / "mcp_chat_tui" / "demo" / "model"
SYSTEM = "You are a helpful assistant. Use the tools when they help."
STORY = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Tell me a long story about a fox."}]
BENCH_MODEL = dict(hidden_size=256, layers=4, heads=4, kv_heads=2, intermediate_size=512, vocab_size=1000)


MIN_DECODE_TOKENS = 64  # fewer tokens than this make a decode rate mostly noise


def built_model(scratch: Path) -> tuple[str, str]:
    from tests.models import build_tiny_model

    folder = build_tiny_model(scratch / "bench-qwen2", **BENCH_MODEL)
    return str(folder), "random qwen2 {hidden_size}x{layers}, vocab {vocab_size}".format(**BENCH_MODEL)


def pick_model(explicit: str | None, scratch: Path) -> tuple[str, str]:
    if explicit:
        return explicit, "the given model"
    if (DEMO_MODEL / "config.json").exists():
        return str(DEMO_MODEL), "demo model"
    return built_model(scratch)


def long_enough(name: str, max_tokens: int) -> tuple[bool, int]:
    """Whether the model's greedy reply to the story prompt is long enough for a fair rate."""
    from mlx_lm.utils import load

    model, tokenizer = load(name)
    prompt = list(tokenizer.apply_chat_template(STORY, add_generation_prompt=True))
    count = sum(1 for _ in stream_generate_plain(model, tokenizer, prompt, max_tokens))
    return count >= MIN_DECODE_TOKENS, count


def stream_generate_plain(model, tokenizer, prompt: list[int], max_tokens: int, cache=None):
    from mlx_lm.generate import stream_generate
    from mlx_lm.sample_utils import make_sampler

    return stream_generate(
        model, tokenizer, prompt, max_tokens=max_tokens, sampler=make_sampler(temp=0.0), prompt_cache=cache
    )


async def demo_tools() -> list[dict]:
    from mcp_chat_tui.core.tools import ToolSpec
    from mcp_chat_tui.demo.server import server

    return [
        ToolSpec(server="demo", name=t.name, description=t.description or "", input_schema=t.input_schema).to_openai()
        for t in await server.list_tools()
    ]


def raw_run(model, tokenizer, prompt: list[int], max_tokens: int) -> tuple[float, int]:
    """Raw ``stream_generate`` with all but the last prompt token already in a fresh cache (not timed).

    That is exactly the work the engine does when asked the same prompt again: prefill one
    token, then decode. Returns (tokens per second over the whole call, tokens).
    """
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    model(mx.array(prompt[:-1])[None], cache=cache)
    mx.eval([c.state for c in cache])
    started = time.perf_counter()
    count = sum(1 for _ in stream_generate_plain(model, tokenizer, prompt[-1:], max_tokens, cache))
    return count / (time.perf_counter() - started), count


async def engine_run(engine: MlxEngine, messages: list[dict]) -> tuple[float, int]:
    """The same through the engine: from asking to the last event, template and threads included."""
    stats = None
    started = time.perf_counter()
    async for event in engine.stream(messages):
        if isinstance(event, Stats):
            stats = event
    elapsed = time.perf_counter() - started
    assert stats is not None
    if stats.prefilled_tokens != 1:
        raise SystemExit(f"the engine prefilled {stats.prefilled_tokens} tokens, expected 1: not comparable")
    return stats.generated_tokens / elapsed, stats.generated_tokens


async def tps_ratio(name: str, runs: int, max_tokens: int) -> tuple[float, float, float]:
    from mlx_lm.utils import load

    model, tokenizer = load(name)  # the same model folder, loaded straight through mlx-lm
    prepare_compute(model, MlxEngine(name).settings.compute_dtype)  # computing in the dtype the engine does
    prompt = list(tokenizer.apply_chat_template(STORY, add_generation_prompt=True))
    engine = MlxEngine(name, max_tokens=max_tokens)
    await engine.load()
    raw_rates: list[float] = []
    engine_rates: list[float] = []
    try:
        # Raw runs on this thread while the engine is idle. Warm up both, and fill the engine's cache.
        raw_run(model, tokenizer, prompt, 16)
        await engine.stream(STORY).__anext__()
        await asyncio.sleep(0.2)

        def raw_once() -> int:
            rate, count = raw_run(model, tokenizer, prompt, max_tokens)
            raw_rates.append(rate)
            return count

        async def engine_once(count: int) -> None:
            rate, generated = await engine_run(engine, STORY)
            if generated != count:
                raise SystemExit(f"the engine generated {generated} tokens and raw mlx-lm {count}: not comparable")
            engine_rates.append(rate)

        for _ in range(max(1, runs // 2)):
            # raw, engine, engine, raw: slow drifts of the machine's load hit both alike
            count = raw_once()
            await engine_once(count)
            await engine_once(count)
            raw_once()
    finally:
        await engine.close()
    raw_median, engine_median = statistics.median(raw_rates), statistics.median(engine_rates)
    return engine_median / raw_median, raw_median, engine_median


async def tool_loop_prefill(name: str, tools: list[dict], steps: int = 6) -> tuple[float, list[Stats]]:
    engine = MlxEngine(name, max_tokens=16)
    await engine.load()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is 12 * 7, then 84 / 2?"}]
    all_stats = []
    try:
        for step in range(steps):
            stats = None
            async for event in engine.stream(messages, tools):
                if isinstance(event, Stats):
                    stats = event
            assert stats is not None
            all_stats.append(stats)
            call_id = f"call_{step + 1}"
            expression = f"{12 + step} * 7"
            messages = messages + [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "calculator", "arguments": json.dumps({"expression": expression})},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": "calculator",
                    "content": f"{expression} = {(12 + step) * 7}",
                },
            ]
    finally:
        await engine.close()
    fraction = sum(s.prefilled_tokens for s in all_stats) / sum(s.prompt_tokens for s in all_stats)
    return fraction, all_stats


def tool_step(messages: list[dict], call: ToolCallProposed, result: str) -> list[dict]:
    arguments = json.dumps(call.arguments)
    function = {"name": call.name, "arguments": arguments}
    return messages + [
        {"role": "assistant", "content": "", "tool_calls": [{"id": call.id, "type": "function", "function": function}]},
        {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result},
    ]


async def turn(engine: MlxEngine, messages: list[dict], tools: list[dict]) -> tuple[list[dict], Stats]:
    """One question to its answer (tool calls given a fixed result); the messages after it and the first reply's figures."""
    first = None
    for _ in range(4):
        text, calls, stats = "", [], None
        async for event in engine.stream(messages, tools):
            if isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, ToolCallProposed):
                calls.append(event)
            elif isinstance(event, Stats):
                stats = event
        first = first or stats
        if not calls:
            return messages + [{"role": "assistant", "content": text}], first
        messages = tool_step(messages, calls[0], "12 * 7 = 84")
    return messages, first


async def resume_prefill(name: str, tools: list[dict], scratch: Path) -> tuple[float, Stats]:
    """Three turns saved beside a conversation file, then the fourth question on a new engine."""
    conversation = scratch / "conversation.md"
    conversation.write_text("", encoding="utf-8")
    questions = ["What is 12 * 7?", "What is the time in Tokyo?", "What is 84 / 2?", "What is 6 * 7?"]
    messages = [{"role": "system", "content": SYSTEM}]
    engine = MlxEngine(name, max_tokens=48)
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        for question in questions[:-1]:
            messages, _ = await turn(engine, messages + [{"role": "user", "content": question}], tools)
    finally:
        await engine.close()
    restarted = MlxEngine(name, max_tokens=48)
    await restarted.load()
    restarted.keep_cache_in(conversation)
    try:
        _, stats = await turn(restarted, messages + [{"role": "user", "content": questions[-1]}], tools)
    finally:
        await restarted.close()
    return stats.prefilled_tokens / stats.prompt_tokens, stats


def forty_tools() -> list[dict]:
    """Forty tool schemas of the size real servers have (four servers' worth)."""
    return [
        {
            "type": "function",
            "function": {
                "name": f"server{index // 10}__tool_{index}",
                "description": f"Tool {index}: reads, writes, lists or searches the items of the place it is given, "
                "and says what it found or why it could not.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "where to look"},
                        "pattern": {"type": "string", "description": "what to look for"},
                        "limit": {"type": "integer", "description": "how many results at most"},
                    },
                    "required": ["path"],
                },
            },
        }
        for index in range(40)
    ]


async def new_conversation_prefill(name: str, scratch: Path) -> tuple[float, Stats]:
    """A first conversation with forty tools on one engine, then another conversation's first question
    on a new engine (a new run of the app): tokens it prefilled / its prompt's tokens."""
    import os

    os.environ["MCP_CHAT_TUI_CACHE_DIR"] = str(scratch / "cache")
    tools = forty_tools()
    stats = []
    for question in ("What is 12 * 7?", "What is the time in Tokyo?"):
        engine = MlxEngine(name, max_tokens=16, context_length=32768)
        await engine.load()
        try:
            _, reply = await turn(
                engine, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}], tools
            )
            stats.append(reply)
        finally:
            await engine.close()
    return stats[-1].prefilled_tokens / stats[-1].prompt_tokens, stats[-1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model folder or repo id (default: demo model, else a built one)")
    parser.add_argument("--runs", type=int, default=12, help="runs of each kind (rounded to even)")
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        name, kind = pick_model(args.model, Path(scratch))
        decode_name, decode_kind = name, kind
        fair, count = long_enough(name, args.tokens)
        if not fair:
            decode_name, decode_kind = built_model(Path(scratch))
            print(f"{kind} replies with {count} tokens to the story prompt: decode rates use {decode_kind}")
        print(f"decode model: {decode_name} ({decode_kind}); tool loop model: {name} ({kind})")
        ratio, raw_tps, engine_tps = await tps_ratio(decode_name, args.runs, args.tokens)
        print(
            f"generation: raw stream_generate {raw_tps:.1f} tok/s, through MlxEngine {engine_tps:.1f} tok/s "
            f"(medians of {max(1, args.runs // 2) * 2} alternating runs each, {args.tokens} tokens per run)"
        )
        fraction, steps = await tool_loop_prefill(name, await demo_tools())
        for i, s in enumerate(steps, 1):
            print(f"tool loop step {i}: prompt {s.prompt_tokens} tokens, prefilled {s.prefilled_tokens}")
        resumed, first = await resume_prefill(name, await demo_tools(), Path(scratch))
        print(f"after a restart: prompt {first.prompt_tokens} tokens, prefilled {first.prefilled_tokens}")
        fresh, new = await new_conversation_prefill(name, Path(scratch))
        print(f"a new conversation with 40 tools: prompt {new.prompt_tokens} tokens, prefilled {new.prefilled_tokens}")
    figures = {"engine_vs_raw_tps_ratio": round(ratio, 4), "prefill_fraction_tool_loop": round(fraction, 4)}
    figures["resume_prefill_fraction"] = round(resumed, 4)
    print(json.dumps(figures | {"new_conversation_prefill_fraction": round(fresh, 4)}))


if __name__ == "__main__":
    asyncio.run(main())

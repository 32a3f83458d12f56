"""LlamaCppEngine: a GGUF model through llama.cpp, with the MLX engine's events, cache reuse, stopping and settings.

The GGUF files are the demo model written as llama.cpp's converter writes them (tests/gguf_files.py),
so the same model is run by both engines and compared. Needs llama-cpp-python (the ``llama`` extra).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="the llama.cpp engine needs llama-cpp-python: pip install '.[llama]'")

from gguf import GGMLQuantizationType  # noqa: E402

from mcp_chat_tui.engine.events import Done, EngineError, Stats, TextDelta, ToolCallProposed  # noqa: E402
from mcp_chat_tui.engine.generation import ReplyOverrides  # noqa: E402
from mcp_chat_tui.engine.llama_engine import LLAMA_CPP, MLX, LlamaCppEngine, choose_engine  # noqa: E402
from mcp_chat_tui.engine.mlx_engine import MlxEngine  # noqa: E402
from tests import cli_in_process  # noqa: E402
from tests.gguf_files import DEMO_MODEL, write_gguf  # noqa: E402
from tests.test_llama_spin import busy_process as busy_process  # noqa: E402 (a fixture)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "current_time",
            "description": "The time in a time zone",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
        },
    },
]
QUESTION = [{"role": "user", "content": "What is 12 * 7?"}]


@pytest.fixture(scope="module")
def demo_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("gguf") / "demo-f32.gguf", matrix_type=GGMLQuantizationType.F32)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_CHAT_TUI_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "llama-cache"))


async def reply(engine, messages=QUESTION, tools=TOOLS, **kwargs) -> tuple[str, list, Stats, str]:
    text, calls, stats, finish = "", [], None, ""
    async for event in engine.stream(messages, tools, **kwargs):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, ToolCallProposed):
            calls.append((event.name, event.arguments))
        elif isinstance(event, Stats):
            stats = event
        elif isinstance(event, Done):
            finish = event.finish_reason
    assert stats is not None
    return text, calls, stats, finish


@pytest.fixture
async def llama(demo_gguf: Path):
    engine = LlamaCppEngine(str(demo_gguf))
    await engine.load()
    yield engine
    await engine.close()


async def test_the_same_model_gives_the_same_greedy_reply_and_call_as_with_mlx(llama, demo_gguf: Path) -> None:
    mlx = MlxEngine(str(demo_gguf))
    await mlx.load()
    try:
        ours, theirs = await reply(llama), await reply(mlx)
    finally:
        await mlx.close()
    assert ours[:2] == theirs[:2]
    assert [name for name, _ in ours[1]] == ["calculator"]
    assert ours[3] == theirs[3] == "tool_calls"
    assert ours[2].prompt_tokens == theirs[2].prompt_tokens


@pytest.mark.parametrize("penalty", [1.3, 2.0])
async def test_a_repetition_penalty_gives_the_mlx_engines_reply(demo_gguf: Path, penalty: float) -> None:
    """llama.cpp's penalty looks back over the same 20 tokens as mlx-lm's (the prompt's last ones, then
    the reply's, each counted once), so the two engines' greedy replies stay the same."""
    story = [{"role": "user", "content": "Tell me a long story about the sea and the moon."}]
    replies = []
    for kind in (LlamaCppEngine, MlxEngine):
        engine = kind(str(demo_gguf), repetition_penalty=penalty, max_tokens=80)
        await engine.load()
        try:
            replies.append(await reply(engine, story, None))
        finally:
            await engine.close()
    assert replies[0][0] == replies[1][0]


async def test_the_next_request_prefills_only_what_the_cache_does_not_hold(llama) -> None:
    first = await reply(llama)
    assert first[2].prefilled_tokens == first[2].prompt_tokens
    follow = [*QUESTION, {"role": "assistant", "content": "84."}, {"role": "user", "content": "What is 5 + 6?"}]
    second = await reply(llama, follow)
    assert 0 < second[2].prefilled_tokens < second[2].prompt_tokens / 2
    fresh = LlamaCppEngine(llama.model_name)
    await fresh.load()
    try:
        assert (await reply(fresh, follow))[:2] == second[:2]  # a reused cache answers as a fresh one
    finally:
        await fresh.close()


async def test_a_request_aside_leaves_the_conversations_cache(llama) -> None:
    await reply(llama)
    await reply(llama, [{"role": "user", "content": "Say hello."}], None, aside=True)
    again = await reply(llama)
    assert again[2].prefilled_tokens == 1  # the same prompt again: everything but its last token was kept


async def test_a_reply_stops_at_max_tokens_and_a_seeded_one_repeats(llama) -> None:
    short = await reply(llama, overrides=ReplyOverrides(max_tokens=3))
    assert short[2].generated_tokens == 3 and short[3] == "length"
    hot = ReplyOverrides(temperature=1.5)
    llama.settings.seed = 11
    llama.generation = llama._generation()
    assert (await reply(llama, overrides=hot))[:2] == (await reply(llama, overrides=hot))[:2]


async def test_breaking_out_stops_and_the_next_request_works(llama) -> None:
    stream = llama.stream([{"role": "user", "content": "Tell me everything " * 200}], TOOLS)
    async for _ in stream:
        break
    await stream.aclose()
    assert [name for name, _ in (await reply(llama))[1]] == ["calculator"]


async def test_a_conversation_longer_than_the_context_is_an_error_and_the_engine_goes_on(demo_gguf: Path) -> None:
    engine = LlamaCppEngine(str(demo_gguf), context_length=64)
    await engine.load()
    try:
        with pytest.raises(EngineError, match="context"):
            await reply(engine, [{"role": "user", "content": "word " * 200}])
        engine.context_length = 4096  # the check before the model: lifted, llama.cpp's own limit speaks
        with pytest.raises(EngineError, match=r"longer than the context of \d+ tokens"):
            await reply(engine, [{"role": "user", "content": "word " * 200}])
        assert await reply(engine, [{"role": "user", "content": "Hi"}], None, overrides=ReplyOverrides(max_tokens=2))
    finally:
        await engine.close()


async def test_a_folder_is_not_a_gguf_for_llama_cpp() -> None:
    engine = LlamaCppEngine(str(DEMO_MODEL))
    with pytest.raises(EngineError, match="not a GGUF file.*--engine mlx"):
        await engine.load()


def test_auto_takes_llama_cpp_for_a_gguf_file_on_a_linux_cpu(demo_gguf: Path) -> None:
    expected = LLAMA_CPP if sys.platform != "darwin" else MLX
    assert choose_engine("auto", str(demo_gguf)) == (expected, "")
    assert choose_engine("auto", str(DEMO_MODEL)) == (MLX, "")
    assert choose_engine("mlx", str(demo_gguf)) == (MLX, "")
    assert choose_engine(LLAMA_CPP, str(DEMO_MODEL)) == (LLAMA_CPP, "")


def test_auto_takes_mlx_where_llama_cpp_crashes_on_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A llama.cpp built for another CPU dies of a signal: tried once in a child process, never in the app."""
    fake = tmp_path / "fake"
    (fake / "llama_cpp").mkdir(parents=True)
    (fake / "llama_cpp" / "__init__.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=GGMLQuantizationType.F16)
    if sys.platform == "darwin":
        pytest.skip("MLX is the engine on Apple silicon")
    engine, note = choose_engine("auto", str(path))
    assert engine == MLX and "signal 11 (SIGSEGV)" in note and "demo.gguf" in note
    assert choose_engine("auto", str(path)) == (MLX, note)  # remembered, not tried again
    monkeypatch.delenv("PYTHONPATH")
    assert choose_engine("auto", str(path)) == (MLX, note)  # for this file and this llama-cpp-python


def test_our_tokenizer_gives_llama_cpps_tokens(demo_gguf: Path) -> None:
    """The tokenizer rebuilt from the file (which renders the prompt) and llama.cpp's own agree."""
    import llama_cpp

    from mcp_chat_tui.engine.gguf import gguf_folder
    from mcp_chat_tui.engine.loading import load_tokenizer

    ours = load_tokenizer(gguf_folder(demo_gguf, lambda progress: None, weights=False))
    theirs = llama_cpp.Llama(str(demo_gguf), n_ctx=64, verbose=False, vocab_only=True)
    texts = [
        "What is 17 times 23?",
        "12 * 7 + 3",
        "convert 5 km to miles",
        "  spaces\tand\nlines  ",
        "Zürich ☕ 東京",
        "x" * 50,
    ]
    rendered = ours.apply_chat_template(QUESTION, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    for text in [*texts, rendered]:
        assert ours.encode(text, add_special_tokens=False) == theirs.tokenize(
            text.encode(), add_bos=False, special=True
        ), text


def test_the_app_answers_with_llama_cpp_as_with_mlx(demo_gguf: Path, tmp_path: Path) -> None:
    import json

    from mcp_chat_tui.core.paths import bundled_path

    def ask(engine: str) -> dict:
        command = [str(demo_gguf), "--engine", engine, "--yes"]
        command += ["--mcp-config", str(bundled_path("mcp.json")), "--no-save", "--json", "-p", "what is 12 * 7?"]
        env = {**os.environ, "MCP_CHAT_TUI_DATA_DIR": str(tmp_path / "data")}
        done = cli_in_process.run_cli(command, cwd=tmp_path, env=env)  # in this process: its report is checked
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    with_llama, with_mlx = ask(LLAMA_CPP), ask(MLX)
    assert with_llama["answer"] == with_mlx["answer"] and "84" in with_llama["answer"]
    assert [c["arguments"] for c in with_llama["calls"]] == [c["arguments"] for c in with_mlx["calls"]]


def test_the_real_files_tokenizer_and_template_match_llama_cpp() -> None:
    """On the real Qwen2.5-Coder GGUF when it is on this machine (../shared/real-models fetches it)."""
    real = Path.home() / ".cache" / "real-models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if not real.exists():
        pytest.skip("the real model is not on this machine")
    import llama_cpp

    from mcp_chat_tui.engine.gguf import gguf_folder
    from mcp_chat_tui.engine.loading import load_tokenizer

    ours = load_tokenizer(gguf_folder(real, lambda progress: None, weights=False))
    theirs = llama_cpp.Llama(str(real), n_ctx=64, verbose=False, vocab_only=True)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What time is it in Tokyo? Ünïcödé 東京 42"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "current_time", "content": '{"time": "21:04"}'},
    ]
    rendered = ours.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    tokens = ours.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True)
    assert tokens == theirs.tokenize(rendered.encode(), add_bos=False, special=True)
    assert set(ours.eos_token_ids) >= {151643, 151645}  # <|endoftext|> and <|im_end|>: both end a reply


async def test_many_requests_keep_cache_and_model_in_step(llama) -> None:
    """Stopping, asides and replies one after another: the cache's count stays the engine's."""
    for round_ in range(3):
        stream = llama.stream(QUESTION, TOOLS)
        async for _ in stream:
            break
        await stream.aclose()
        aside = [{"role": "user", "content": f"round {round_}"}]  # "round 0" runs on for 1,177 tokens
        await reply(llama, aside, None, aside=True, overrides=ReplyOverrides(max_tokens=64))
        await reply(llama)
        await asyncio.sleep(0)
        assert llama._model.tokens == len(llama._cache_tokens)


async def test_a_new_conversation_starts_from_the_kept_state_of_the_tools(
    demo_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with MLX (tests/test_prefix_cache.py): the system prompt's and the tools' KV state is kept."""
    from tests.test_prefix_cache import SYSTEM, many_tools

    monkeypatch.setenv("MCP_CHAT_TUI_CACHE_DIR", str(tmp_path / "cache"))
    tools = many_tools(20)  # the demo model's template writes a tool in fewer tokens than the tiny qwen2's

    async def first(question: str) -> tuple:
        engine = LlamaCppEngine(str(demo_gguf), context_length=8192, max_tokens=8)
        await engine.load()
        try:
            return await reply(engine, [SYSTEM, {"role": "user", "content": question}], tools)
        finally:
            await engine.close()

    before = await first("list my notes")
    assert before[2].prefilled_tokens == before[2].prompt_tokens
    after = await first("what is in the file called todo?")
    assert after[2].prompt_tokens > 1000 and after[2].prefilled_tokens <= 0.1 * after[2].prompt_tokens
    (tmp_path / "cache" / "prompt-prefixes").rename(tmp_path / "elsewhere")
    assert (await first("what is in the file called todo?"))[:2] == after[:2]


async def test_the_special_tokens_and_the_end_of_turn_are_learnt_as_the_mlx_engine_learns_them(llama) -> None:
    # what Run.take drops by id, and where generation stops: tests/test_special_tokens.py runs them
    assert set(llama._special_tokens.values()) >= {"<|im_start|>", "<|im_end|>", "<|endoftext|>"}
    end = llama.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert end in llama.tokenizer.eos_token_ids


@pytest.mark.parametrize(
    ("given", "expected"),
    [({}, "1000 -"), ({"GOMP_SPINCOUNT": "5"}, "5 -"), ({"OMP_WAIT_POLICY": "active"}, "- active")],
)
def test_llama_cpps_threads_spin_briefly_on_a_busy_machine_unless_the_user_says(given, expected, busy_process):
    """OpenMP reads its variables once, when llama_cpp loads it: beside a busy process the app sets
    a short spin first, keeping what the user set."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")} | given
    code = (
        "import os\n"
        "from mcp_chat_tui.engine.llama_engine import import_llama_cpp\n"
        "import_llama_cpp()\n"
        "print(os.environ.get('GOMP_SPINCOUNT', '-'), os.environ.get('OMP_WAIT_POLICY', '-'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected

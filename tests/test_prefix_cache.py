"""The system prompt's and the tools' KV cache is kept across conversations (engine/prefix_cache.py).

A new engine (as in a new run of the app) with the same model, system prompt and tools starts its
first reply from the kept prefix and prefills only the conversation's own tokens, and answers as it
would have without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.engine.events import Stats, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.prefix_cache import MIN_TOKENS, static_prefix_length

SYSTEM = {"role": "system", "content": "You are a careful assistant. Use the tools when they help."}


def many_tools(count: int = 10) -> list[dict]:
    """``count`` tool schemas of the size real servers have (a description and a few arguments): ten
    make a prefix of about 1,900 tokens with the tiny model's template, enough for the conversation's
    own tokens to be a small part of the prompt (forty made 7,400, each prefilled again per engine)."""
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{index}",
                "description": f"Tool number {index}: reads, writes or searches something in the place it is given.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "where"},
                        "limit": {"type": "integer", "description": "how many at most"},
                    },
                    "required": ["path"],
                },
            },
        }
        for index in range(count)
    ]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MCP_CHAT_TUI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


async def first_reply(model: Path, messages: list[dict], tools: list[dict]) -> tuple[str, list, Stats]:
    """A new engine's first reply (its memory holds nothing)."""
    engine = MlxEngine(str(model), max_tokens=12, context_length=32768)
    await engine.load()
    try:
        text, calls, stats = "", [], None
        async for event in engine.stream(messages, tools):
            if isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, ToolCallProposed):
                calls.append((event.name, event.arguments))
            elif isinstance(event, Stats):
                stats = event
        assert stats is not None
        return text, calls, stats
    finally:
        await engine.close()


async def test_a_new_conversation_prefills_only_what_follows_the_tools(tiny_model: Path, cache_dir: Path) -> None:
    tools = many_tools()
    first = await first_reply(tiny_model, [SYSTEM, {"role": "user", "content": "list my notes"}], tools)
    assert first[2].prefilled_tokens == first[2].prompt_tokens  # nothing kept yet: all computed
    assert len(list((cache_dir / "prompt-prefixes").glob("*.cache.safetensors"))) == 1
    question = [SYSTEM, {"role": "user", "content": "what is in the file called todo, please?"}]
    second = await first_reply(tiny_model, question, tools)
    assert second[2].prefilled_tokens <= 0.1 * second[2].prompt_tokens
    assert second[2].prompt_tokens > 1000  # ten tools' schemas
    (cache_dir / "prompt-prefixes").rename(cache_dir / "elsewhere")
    assert (await first_reply(tiny_model, question, tools))[:2] == second[:2]  # as without the kept prefix


async def test_another_system_prompt_or_other_tools_do_not_take_the_kept_prefix(
    tiny_model: Path, cache_dir: Path
) -> None:
    tools = many_tools()
    await first_reply(tiny_model, [SYSTEM, {"role": "user", "content": "hi"}], tools)
    other = {"role": "system", "content": "You are terse."}
    reply = await first_reply(tiny_model, [other, {"role": "user", "content": "hi"}], tools)
    assert reply[2].prefilled_tokens == reply[2].prompt_tokens
    reply = await first_reply(tiny_model, [SYSTEM, {"role": "user", "content": "hi"}], many_tools(9))
    assert reply[2].prefilled_tokens == reply[2].prompt_tokens
    assert len(list((cache_dir / "prompt-prefixes").glob("*.cache.safetensors"))) == 3


async def test_a_damaged_kept_prefix_is_ignored_and_made_again(tiny_model: Path, cache_dir: Path) -> None:
    tools = many_tools()
    question = [SYSTEM, {"role": "user", "content": "hi"}]
    clean = await first_reply(tiny_model, question, tools)
    (kept,) = (cache_dir / "prompt-prefixes").glob("*.cache.safetensors")
    data = bytearray(kept.read_bytes())
    data[-100] ^= 0xFF  # a flipped bit in the arrays: the digest no longer matches
    kept.write_bytes(bytes(data))
    again = await first_reply(tiny_model, question, tools)
    assert again[:2] == clean[:2]
    assert again[2].prefilled_tokens == again[2].prompt_tokens


async def test_a_short_prefix_is_not_kept(tiny_model: Path, cache_dir: Path) -> None:
    await first_reply(tiny_model, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], [])
    assert not list(cache_dir.glob("prompt-prefixes/*"))


def test_the_static_prefix_ends_where_the_conversation_begins(tiny_model: Path) -> None:
    from mlx_lm.tokenizer_utils import load

    tokenizer = load(tiny_model)
    tools = many_tools(3)

    def render(messages: list[dict]) -> list[int]:
        return list(tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True))

    length = static_prefix_length(render, [SYSTEM, {"role": "user", "content": "anything"}])
    for text in ("hello", "  spaced", "12 * 7", "\nnew line first"):
        prompt = render([SYSTEM, {"role": "user", "content": text}])
        assert length < len(prompt)
        assert tokenizer.decode(prompt[:length]) in tokenizer.decode(render([SYSTEM, {"role": "user", "content": "x"}]))
    assert length >= MIN_TOKENS or len(render([SYSTEM])) < MIN_TOKENS * 2

"""A quantized KV cache (kv_bits, kv_group_size) and speculative decoding with a draft model
(draft_model, num_draft_tokens) on the real MLX engine, with locally built random-weight models."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mcp_chat_tui.engine.events import Done, EngineError, Stats, TextDelta
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from tests.helpers import eventually
from tests.models import build_tiny_model
from tests.test_mlx_engine import QUESTION, collect, common_prefix, text_of, wait_idle

# head size 64 (hidden 128 over 2 heads): the KV cache quantizes in groups of 32 or 64
WIDE = {"hidden_size": 128, "heads": 2, "kv_heads": 1}


@pytest.fixture(scope="session")
def main_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "kv-main", **WIDE)


@pytest.fixture(scope="session")
def other_draft(tmp_path_factory) -> Path:
    """A smaller model with other random weights and the same tokenizer: it proposes mostly wrong tokens."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "kv-draft", hidden_size=64, heads=1, kv_heads=1, seed=7)


@pytest.fixture(scope="session")
def foreign_draft(tmp_path_factory) -> Path:
    """A model whose tokenizer has another vocabulary."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "kv-foreign", vocab_size=300)


def raw_tokens(model: Path, prompt: list[int], max_tokens: int, **kwargs) -> list[int]:
    """What mlx-lm itself generates (greedy) from ``prompt``, with ``kwargs`` for ``stream_generate``."""
    from mlx_lm.generate import stream_generate
    from mlx_lm.utils import load

    loaded, tokenizer = load(str(model))
    return [r.token for r in stream_generate(loaded, tokenizer, prompt, max_tokens=max_tokens, **kwargs)]


def follow_up(messages: list[dict], reply: str, question: str) -> list[dict]:
    return messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": question}]


async def conversation(engine: MlxEngine, turns: int) -> list[tuple[str, Stats, list[int], list[int]]]:
    """``turns`` turns, each answering the one before: (text, stats, prompt, cached before) per turn."""
    messages, results = QUESTION, []
    for turn in range(turns):
        cached = list(engine.cached_tokens)
        prompt = engine.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        events = await collect(engine.stream(messages))
        results.append((text_of(events), events[-2], prompt, cached))
        messages = follow_up(messages, text_of(events), f"and then {turn}?")
    return results


async def loaded(model: Path, **settings) -> MlxEngine:
    engine = MlxEngine(str(model), **settings)
    await engine.load()
    return engine


# -- speculative decoding -------------------------------------------------------------------------


@pytest.mark.parametrize("draft", ["same weights", "other weights"])
async def test_greedy_output_with_a_draft_model_is_token_identical_over_turns(main_model, other_draft, draft):
    plain = await loaded(main_model, max_tokens=24)
    drafted = await loaded(
        main_model, max_tokens=24, draft_model=str(main_model if draft == "same weights" else other_draft)
    )
    try:
        expected, got = await conversation(plain, 3), await conversation(drafted, 3)
        assert "draft" in drafted.compute_label
    finally:
        await plain.close()
        await drafted.close()
    assert [text for text, *_ in got] == [text for text, *_ in expected]
    for text, stats, prompt, cached in got:
        assert stats.generated_tokens == 24 and text
        # the cache is reused across turns: only what it does not hold is computed
        assert stats.prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
    drafted_tokens = [stats.drafted_tokens for _, stats, *_ in got]
    if draft == "same weights":
        # A draft that always agrees, when its cache holds what the model's holds: of each 4 tokens
        # (3 drafted, then the model's own) 3 come from it. A draft cache a token behind agrees less.
        assert drafted_tokens == [18, 18, 18], drafted_tokens
    assert all(0 <= count < 24 for count in drafted_tokens)


async def test_the_first_reply_with_a_draft_is_mlx_lms_greedy_tokens(main_model, other_draft):
    engine = await loaded(main_model, max_tokens=20, draft_model=str(other_draft), num_draft_tokens=2)
    try:
        assert engine.compute_label.endswith("draft kv-draft (2 tokens)")
        prompt = engine.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
        events = await collect(engine.stream(QUESTION))
        cached = list(engine.cached_tokens)
    finally:
        await engine.close()
    expected = raw_tokens(main_model, prompt, 20)
    assert cached[: len(prompt)] == prompt
    generated = cached[len(prompt) :]
    assert len(generated) >= 18 and generated == expected[: len(generated)], "the cache holds what was generated"
    assert events[-1] == Done("length")


async def test_stopping_during_speculative_decoding_keeps_both_caches_in_step(main_model):
    engine = await loaded(main_model, max_tokens=5000, draft_model=str(main_model))
    try:
        seen = 0
        async for event in engine.stream(QUESTION):
            seen += isinstance(event, TextDelta)
            if seen == 3:
                break
        await wait_idle(engine)
        cached = list(engine.cached_tokens)
        assert len(cached) < 5000, "generation went on after the consumer left"
        engine.max_tokens = 12
        messages = follow_up(QUESTION, "", "again")
        prompt = engine.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        events = await collect(engine.stream(messages))
        expected = engine.tokenizer.decode(raw_tokens(main_model, prompt, 12))
    finally:
        await engine.close()
    stats = events[-2]
    assert stats.prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
    # the model's and the draft's caches still hold the same tokens: the draft keeps agreeing
    assert stats.drafted_tokens == 9 and events[-1] == Done("length")
    assert text_of(events) == expected


async def test_stopping_during_the_prefill_with_a_draft_stops_it(main_model, other_draft):
    engine = await loaded(main_model, max_tokens=3, prefill_step_size=4, draft_model=str(other_draft))
    try:
        long_question = [{"role": "user", "content": "tell me about the weather today " * 40}]
        prompt = engine.tokenizer.apply_chat_template(long_question, add_generation_prompt=True)
        task = asyncio.create_task(collect(engine.stream(long_question)))
        assert await eventually(lambda: engine.busy, 30, 0.001), "the MLX thread never started the prefill"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_idle(engine)
        cached = list(engine.cached_tokens)
        assert len(cached) < len(prompt), "the prefill went on after the stop"
        events = await collect(engine.stream(long_question))
    finally:
        await engine.close()
    assert events[-2].prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
    assert events[-1] == Done("length")


# -- a quantized KV cache -------------------------------------------------------------------------


async def test_a_quantized_cache_gives_what_mlx_lm_gives_with_the_same_settings(main_model):
    engine = await loaded(main_model, max_tokens=16, kv_bits=4, kv_group_size=32, quantized_kv_start=0)
    try:
        prompt = engine.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
        text = text_of(await collect(engine.stream(QUESTION)))
    finally:
        await engine.close()
    quantized = raw_tokens(main_model, prompt, 16, kv_bits=4, kv_group_size=32, quantized_kv_start=0)
    assert quantized != raw_tokens(main_model, prompt, 16), "4-bit makes no difference here: the test shows nothing"
    from mlx_lm.utils import load

    assert text == load(str(main_model))[1].decode(quantized)


@pytest.mark.parametrize("draft", [False, True])
async def test_a_quantized_cache_is_reused_across_turns(main_model, draft):
    """Quantized from the 20th token on: the first prompt crosses that line, the turns after reuse the cache."""
    options = {"draft_model": str(main_model)} if draft else {}
    engine = await loaded(main_model, max_tokens=16, kv_bits=8, quantized_kv_start=20, **options)
    try:
        assert "KV 8-bit" in engine.compute_label and ("draft kv-main (3 tokens)" in engine.compute_label) == draft
        turns = await conversation(engine, 3)
    finally:
        await engine.close()
    for text, stats, prompt, cached in turns:
        assert text and stats.generated_tokens == 16
        assert stats.prefilled_tokens == len(prompt) - common_prefix(prompt, cached)
    assert turns[2][1].prefilled_tokens < len(turns[2][2]) // 2, "the quantized cache was not reused"
    if draft:
        assert all(stats.drafted_tokens >= 8 for _, stats, *_ in turns)


# -- bad values -----------------------------------------------------------------------------------


async def test_a_draft_with_another_tokenizer_is_refused_at_load(main_model, foreign_draft):
    engine = MlxEngine(str(main_model), draft_model=str(foreign_draft))
    with pytest.raises(
        EngineError, match=r"draft_model in config.toml, or --draft-model: .* does not share the tokenizer"
    ):
        await engine.load()
    await engine.close()


async def test_a_draft_that_does_not_exist_is_refused_at_load(main_model, tmp_path):
    engine = MlxEngine(str(main_model), draft_model=str(tmp_path / "nope"))
    with pytest.raises(
        EngineError, match=r"draft_model in config.toml, or --draft-model: cannot load .*no such folder"
    ):
        await engine.load()
    await engine.close()


async def test_a_group_size_the_heads_do_not_divide_is_refused_at_load(tiny_model):
    engine = MlxEngine(str(tiny_model), kv_bits=4, kv_group_size=32)  # heads of 16
    with pytest.raises(EngineError, match=r"kv_bits and kv_group_size in config.toml.*kv_group_size that divides"):
        await engine.load()
    await engine.close()


def test_every_kv_bits_and_group_size_offered_is_one_mlx_quantizes_to():
    import mlx.core as mx

    from mcp_chat_tui.config.model_options import KV_BITS, KV_GROUP_SIZES

    values = mx.random.normal((1, 1, 4, 128))
    for bits in KV_BITS:
        for group in KV_GROUP_SIZES:
            mx.eval(mx.quantize(values, group_size=group, bits=bits))
    with pytest.raises(ValueError):
        mx.quantize(values, group_size=64, bits=7)

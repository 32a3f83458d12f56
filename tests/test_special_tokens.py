"""A model's special tokens never reach the reply: dropped by id in a real MLX run, generation ending at
the template's end-of-turn token, and a server's chat markup stripped at the start and end of its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.engine.events import Done, TextDelta
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.remote import OpenAIEngine
from mcp_chat_tui.engine.special_tokens import SpecialTokenText, TurnMarkup, special_tokens, template_end_of_turn
from tests.models import build_tiny_model
from tests.scripted_endpoint import ScriptedEndpoint

QUESTION = [{"role": "user", "content": "What is the time in Tokyo?"}]


@pytest.fixture(scope="session")
def chatty_model(tmp_path_factory) -> Path:
    """A tiny model that generates ``<|im_start|>`` (a special token, not an end of turn) now and then."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-im-start", loud=("<|im_start|>",))


@pytest.fixture(scope="session")
def eot_model(tmp_path_factory) -> Path:
    """A tiny model whose eos is ``<|endoftext|>`` while its template closes an assistant turn with
    ``<|im_end|>``, which it generates often."""
    folder = tmp_path_factory.getbasetemp() / "tiny-qwen2-eot"
    return build_tiny_model(folder, loud=("<|im_end|>",), eos="<|endoftext|>")


def raw_reply(folder: Path, max_tokens: int, **load_kwargs) -> tuple[list[int], str]:
    """The tokens and text mlx-lm itself generates for QUESTION."""
    from mlx_lm import load, stream_generate

    model, tokenizer = load(str(folder))
    prompt = tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
    pieces = list(stream_generate(model, tokenizer, prompt, max_tokens=max_tokens))
    return [p.token for p in pieces], "".join(p.text for p in pieces)


async def reply_of(folder: Path, max_tokens: int) -> tuple[str, Done]:
    engine = MlxEngine(str(folder), max_tokens=max_tokens, compute_dtype="stored")
    await engine.load()
    try:
        events = [event async for event in engine.stream(QUESTION)]
    finally:
        await engine.close()
    return "".join(e.text for e in events if isinstance(e, TextDelta)), events[-1]


async def test_a_special_token_the_model_generates_never_reaches_the_reply(chatty_model):
    tokens, raw_text = raw_reply(chatty_model, 40)
    assert "<|im_start|>" in raw_text and 1 in tokens  # mlx-lm gives the token's text like any other
    text, done = await reply_of(chatty_model, 40)
    assert text == raw_text.replace("<|im_start|>", "")
    assert done == Done("length")


async def test_generation_ends_at_the_token_the_template_ends_a_turn_with(eot_model):
    tokens, raw_text = raw_reply(eot_model, 40)
    from mlx_lm import load

    _, tokenizer = load(str(eot_model))
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert end not in tokenizer.eos_token_ids and end in tokens  # mlx-lm alone runs past it
    text, done = await reply_of(eot_model, 40)
    assert done == Done("stop")
    assert text == raw_text[: raw_text.index("<|im_end|>")]


def test_the_template_end_of_turn_is_found_from_the_rendered_template(eot_model):
    from mlx_lm import load

    _, tokenizer = load(str(eot_model))
    specials = special_tokens(tokenizer)
    assert set(specials.values()) == {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
    assert specials[template_end_of_turn(tokenizer, specials)] == "<|im_end|>"


def test_text_held_back_by_the_detokenizer_loses_the_special_token_in_a_later_piece():
    specials = {1: "<|im_start|>", 7: "<tool_call>"}
    drop = SpecialTokenText(specials, keep={"<tool_call>"})
    assert drop.take(1, "") == ""  # a detokenizer that gives the text later
    assert drop.take(5, "Hi<|im_start|>assistant") == "Hiassistant"
    assert drop.take(1, " <|im_start|>") == " "  # the space it held, then the token
    assert drop.take(7, "<tool_call>") == "<tool_call>"  # a marker the recogniser reads
    assert drop.take(5, "a literal <|im_start|> the model spelt out") == "a literal <|im_start|> the model spelt out"
    assert drop.dropped == 2


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["<|im_start|>", "assistant\n", "Hello", " there"], "Hello there"),
        (["<|im_st", "art|>assistant\nHi<|im_", "end|>\n<|im_start|>user\nmore"], "Hi"),
        (["<|start_header_id|>assistant<|end_header_id|>\n\nHi", "<|eot_id|>"], "Hi"),
        (["<s>", "Hi</s>"], "Hi"),
        (["<strong>Hi</strong>"], "<strong>Hi</strong>"),
        (["<", "s"], "<s"),  # the reply ended before it could be markup
        (["Use ", "<|im_start|> to open a turn"], "Use <|im_start|> to open a turn"),
    ],
)
def test_a_server_s_turn_markup_is_stripped_at_the_start_and_ends_the_reply(pieces, expected):
    markup = TurnMarkup()
    text = "".join(markup.feed(piece) for piece in pieces if not markup.ended) + markup.rest()
    assert text == expected


async def test_the_remote_engine_strips_the_markup_a_server_sends_as_text():
    reply = "<|im_start|>assistant\nThe time is 10:00.<|im_end|>\n<|im_start|>user\nAnd in Paris?"
    with ScriptedEndpoint([reply]) as endpoint:
        engine = OpenAIEngine(endpoint.url, "scripted")
        events = [event async for event in engine.stream(QUESTION)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The time is 10:00."
    assert events[-1] == Done("stop")

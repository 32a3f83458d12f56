"""The bundled demo model: loads with mlx-lm, declares tool calling, and calls the demo tools right.

Uses the shipped weights (never retrains) with greedy decoding on the CPU, and the tool list of the
real demo server, rendered exactly as the app renders it (``ToolSpec.to_openai()``, no system prompt).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import mcp_chat_tui.demo.server as demo
from mcp_chat_tui.core.tools import ToolSpec
from tests.helpers import mentions

MODEL_DIR = Path(demo.__file__).with_name("model")

pytestmark = pytest.mark.slow


async def _demo_tools() -> list[dict]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"])
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
    specs = [
        ToolSpec(server="demo", name=t.name, description=t.description or "", input_schema=t.input_schema)
        for t in tools
    ]
    return [spec.to_openai() for spec in specs]


@pytest.fixture(scope="module")
def tools() -> list[dict]:
    return asyncio.run(_demo_tools())


@pytest.fixture(scope="module")
def loaded():
    import mlx.core as mx
    from mlx_lm import load

    mx.set_default_device(mx.cpu)
    return load(str(MODEL_DIR))


def _reply(loaded, tools, messages) -> str:
    from mlx_lm import generate
    from mlx_lm.sample_utils import make_sampler

    model, tokenizer = loaded
    prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True)
    return generate(model, tokenizer, prompt, max_tokens=80, sampler=make_sampler(temp=0.0))


def _tool_call(tokenizer, text: str) -> dict:
    start, end = tokenizer.tool_call_start, tokenizer.tool_call_end
    assert start in text and end in text, f"no tool call in {text!r}"
    return tokenizer.tool_parser(text.split(start, 1)[1].split(end, 1)[0], None)


def test_model_folder_is_small_and_complete():
    names = {path.name for path in MODEL_DIR.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= names
    size = sum(path.stat().st_size for path in MODEL_DIR.iterdir() if path.is_file())
    assert size < 8 * 1024 * 1024
    assert json.loads((MODEL_DIR / "config.json").read_text())["model_type"] == "qwen2"


def test_tokenizer_declares_json_tool_calling(loaded):
    _, tokenizer = loaded
    assert tokenizer.has_tool_calling
    assert (tokenizer.tool_call_start, tokenizer.tool_call_end) == ("<tool_call>", "</tool_call>")
    for marker in ("<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"):
        assert len(tokenizer.encode(marker, add_special_tokens=False)) == 1
    assert tokenizer.eos_token == "<|im_end|>"


def test_template_renders_both_argument_shapes_alike(loaded, tools):
    _, tokenizer = loaded
    call = {"name": "calculator", "arguments": {"expression": "12 * 7"}}

    def conversation(arguments):
        return [
            {"role": "user", "content": "what is 12 * 7?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": call["name"], "arguments": arguments}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"},
        ]

    as_dict = tokenizer.apply_chat_template(
        conversation(call["arguments"]), tools=tools, tokenize=False, add_generation_prompt=True
    )
    as_string = tokenizer.apply_chat_template(
        conversation(json.dumps(call["arguments"])), tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert as_dict == as_string
    assert '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call>' in as_dict
    assert as_dict.endswith("<|im_start|>tool\n12 * 7 = 84<|im_end|>\n<|im_start|>assistant\n")
    assert as_dict.count("\n", 0, as_dict.index("<|im_end|>")) == 1 + len(tools)  # one line per tool


@pytest.mark.parametrize(
    ("request_text", "name", "accepted_arguments"),
    [
        ("what is 12 * 7?", "calculator", [{"expression": "12 * 7"}]),
        ("what time is it in Tokyo?", "current_time", [{"timezone": "Tokyo"}, {"timezone": "Asia/Tokyo"}]),
        (
            "search the web for the speed of light",
            "web_search",
            [{"query": "the speed of light"}, {"query": "speed of light"}],
        ),
        ("convert 5 km to miles", "convert_units", [{"value": 5, "from_unit": "km", "to_unit": "miles"}]),
    ],
)
def test_calls_the_right_tool_with_the_right_arguments(loaded, tools, request_text, name, accepted_arguments):
    text = _reply(loaded, tools, [{"role": "user", "content": request_text}])
    call = _tool_call(loaded[1], text)
    assert call["name"] == name, text
    assert call["arguments"] in accepted_arguments, text


def test_answers_with_the_tool_result(loaded, tools):
    result = demo.calculator("12 * 7")
    messages = [
        {"role": "user", "content": "what is 12 * 7?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": {"expression": "12 * 7"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": result},
    ]
    answer = _reply(loaded, tools, messages)
    assert "<tool_call>" not in answer
    assert mentions(answer, "84"), answer


@pytest.mark.xfail(
    strict=True,
    reason="regression of the demo model retrained on whole conversations: it starts a tool call for a "
    "greeting (through the app too: 'hello' gets a malformed call, then an answer about another question)",
)
def test_greeting_calls_no_tool(loaded, tools):
    answer = _reply(loaded, tools, [{"role": "user", "content": "hello"}])
    assert "<tool_call>" not in answer
    assert "calculator" in answer, answer

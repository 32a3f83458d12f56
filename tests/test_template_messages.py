"""What the model is sent follows its chat template: a real agent turn's messages rendered by the
Qwen 2.5 template (tests/models.py holds it; the real model's differs only in its default system
line) equal the template's rendering of the canonical messages; a template without a system role
gets the system prompt in the first user turn; one without tools gets calls and results as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.message_shapes import for_template
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config
from tests.models import STRICT_TEMPLATE, build_tiny_model

NO_SYSTEM_TEMPLATE = r"""{%- if messages[0]['role'] == 'system' %}
    {{- raise_exception('System role not supported') }}
{%- endif %}
{%- for message in messages %}
    {{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""  # like Gemma's: no system role


@pytest.fixture(scope="session")
def no_system_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-no-system", template=NO_SYSTEM_TEMPLATE)


@pytest.fixture(scope="session")
def strict_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-strict", template=STRICT_TEMPLATE)


@pytest.fixture(scope="session")
def qwen_tokenizer(tiny_model):
    from mlx_lm.utils import load_tokenizer

    return load_tokenizer(tiny_model)


async def loaded(folder: Path) -> MlxEngine:
    engine = MlxEngine(str(folder), max_tokens=1, compute_dtype="stored")
    await engine.load()
    return engine


async def rendered_prompt(engine: MlxEngine, messages: list[dict]) -> str:
    """The prompt the engine rendered for ``messages`` (what its KV cache holds before the reply)."""
    events = [event async for event in engine.stream(messages)]
    [stats] = [event for event in events if isinstance(event, Stats)]
    assert isinstance(events[-1], Done)
    return engine.tokenizer.decode(list(engine.cached_tokens[: stats.prompt_tokens]))


async def test_a_real_turn_with_two_calls_renders_as_the_qwen_template_renders_canonical_messages(qwen_tokenizer):
    calls = [
        TextDelta("Let me check."),
        ToolCallProposed("call_1", "current_time", {"timezone": "Asia/Tokyo"}),
        ToolCallProposed("call_2", "calculator", {"expression": "12 * 7"}),
    ]
    engine = ScriptedEngine([calls, "It is late, and 84."])
    async with ServerHub([demo_config("demo")]) as hub:
        await hub.start_all()
        agent = Agent(engine, hub, ApprovalPolicy("ask", yes=True), system_prompt="Be brief.")
        await agent.run_turn("What time is it in Tokyo, and what is 12 * 7?", lambda event: None)
    sent = engine.prompts[1]  # what the model was given after its calls
    tools = engine.tools_sent[1]
    time_result, product = (m["content"] for m in sent if m["role"] == "tool")
    assert "84" in product and time_result
    system = sent[0]["content"]  # the system prompt, then the demo server's instructions
    assert sent[0]["role"] == "system" and system.startswith("Be brief.\n\n")
    canonical = [
        {"role": "system", "content": system},
        {"role": "user", "content": "What time is it in Tokyo, and what is 12 * 7?"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {"type": "function", "function": {"name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}}},
                {"type": "function", "function": {"name": "calculator", "arguments": {"expression": "12 * 7"}}},
            ],
        },
        {"role": "tool", "content": time_result},
        {"role": "tool", "content": product},
    ]

    def render(messages):
        return qwen_tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)

    prompt = render(for_template(sent))
    assert prompt == render(canonical)
    assert prompt.startswith(f"<|im_start|>system\n{system}\n\n# Tools\n")
    assert prompt.endswith(
        "<|im_start|>user\nWhat time is it in Tokyo, and what is 12 * 7?<|im_end|>\n"
        "<|im_start|>assistant\nLet me check.\n"
        '<tool_call>\n{"name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call><|im_end|>\n'
        f"<|im_start|>user\n<tool_response>\n{time_result}\n</tool_response>\n"
        f"<tool_response>\n{product}\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )


async def test_a_template_without_a_system_role_gets_the_system_prompt_in_the_first_user_turn(no_system_model):
    engine = await loaded(no_system_model)
    try:
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
        prompt = await rendered_prompt(engine, messages)
    finally:
        await engine.close()
    assert prompt == "<|im_start|>user\nBe brief.\n\nHi<|im_end|>\n<|im_start|>assistant\n"


async def test_a_template_without_tools_gets_earlier_calls_and_results_as_the_turns_it_takes(strict_model):
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 12 * 7?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "calculator", "content": "84"},
        {"role": "assistant", "content": "84."},
        {"role": "user", "content": "Thanks"},
    ]
    engine = await loaded(strict_model)  # e.g. a conversation resumed with a model whose template has no tools
    try:
        assert not engine.supports_tools
        prompt = await rendered_prompt(engine, conversation)
    finally:
        await engine.close()
    assert prompt == (
        "<|im_start|>user\nBe brief.\n\nWhat is 12 * 7?<|im_end|>\n"
        '<|im_start|>assistant\n<tool_call>\n{"name": "calculator", "arguments": {}}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\n84\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n84.<|im_end|>\n"
        "<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n"
    )

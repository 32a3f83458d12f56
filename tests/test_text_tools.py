"""Tools described in text (``tool_prompt = "text"``): the prompt a real MLX model gets through a chat
template without tools, the parser reading the calls it is told to write, the agent's line, config.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.events import Notice
from mcp_chat_tui.config import load_settings
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.engine.events import Done, Stats
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.text_tools import CALL_SHAPE, describe_tools, with_tools_in_text
from mcp_chat_tui.engine.toolcalls import parse_tool_calls
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config
from tests.models import STRICT_TEMPLATE, build_tiny_model, tool_schemas

QUESTION = [{"role": "user", "content": "What is 12 * 7?"}]
EXAMPLE = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "text"}}\n</tool_call>'
CALL = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call>'
ROUND = [  # a user turn whose reply made two calls, one of them malformed, then the results
    {"role": "user", "content": "What is 12 * 7?"},
    {
        "role": "assistant",
        "content": "Let me compute.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expression": "12 * 7"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "malformed_tool_call", "arguments": "<tool_call>{oops</tool_call>"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "12 * 7 = 84"},
    {"role": "tool", "tool_call_id": "call_2", "name": "malformed_tool_call", "content": "Error: bad call"},
]
RESULTS = "<tool_response>\n12 * 7 = 84\n</tool_response>\n<tool_response>\nError: bad call\n</tool_response>"


@pytest.fixture(scope="session")
def plain_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-plain", tools=False)


@pytest.fixture(scope="session")
def strict_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-strict", template=STRICT_TEMPLATE)


async def loaded(folder: Path, **settings) -> MlxEngine:
    engine = MlxEngine(str(folder), max_tokens=2, **settings)
    await engine.load()
    return engine


async def prompt_of(engine: MlxEngine, messages: list[dict], tools: list[dict] | None) -> list[int]:
    """The prompt tokens the engine rendered for ``messages`` (what its KV cache holds before the reply)."""
    events = [event async for event in engine.stream(messages, tools)]
    [stats] = [event for event in events if isinstance(event, Stats)]
    assert events[-1] == Done("length")
    return list(engine.cached_tokens[: stats.prompt_tokens])


def chatml(*turns: tuple[str, str]) -> str:
    """What the plain ChatML template renders, ending with the assistant's turn opened."""
    return "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in turns) + "<|im_start|>assistant\n"


# -- the description ----------------------------------------------------------------------------


def test_the_description_has_each_tool_its_schema_and_the_shape_of_a_call_with_no_value_to_copy():
    text = describe_tools(tool_schemas())
    for tool in tool_schemas():
        function = tool["function"]
        assert f"## {function['name']}\n{function['description']}\n" in text
        assert f"Arguments (JSON schema): {json.dumps(function['parameters'])}" in text
    assert f":\n{CALL_SHAPE}\n" in text
    assert text.count("<tool_call>") == 2  # the shape, and the instruction naming the block
    # placeholders only: nothing in it parses as a call a model could copy into its own
    assert parse_tool_calls(CALL_SHAPE, {"calculator", "current_time"}).calls[0].reason.startswith("invalid JSON")


def test_the_shape_names_no_tool_and_no_argument_value_whatever_the_schemas_say():
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["km", "mi"], "examples": ["km"]},
            "count": {"type": "integer", "default": 3},
            "expression": {"type": "string"},
        },
        "required": ["unit", "count", "expression"],
    }
    text = describe_tools([{"type": "function", "function": {"name": "convert", "parameters": schema}}])
    call_part = text[text.index("To call a tool") :]
    for literal in ('"km"', '"text"', "3", '"convert"', "convert"):
        assert literal not in call_part


def test_calls_become_text_and_results_one_user_message_that_a_following_prompt_joins():
    messages = [{"role": "system", "content": "Be brief."}, *ROUND, {"role": "user", "content": "And 6 * 7?"}]
    before = json.dumps(messages)
    out = with_tools_in_text(messages, tool_schemas())
    assert json.dumps(messages) == before  # the caller's list is not changed
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"] == "Be brief.\n\n" + describe_tools(tool_schemas())
    assert out[2] == {"role": "assistant", "content": f"Let me compute.\n{CALL}\n<tool_call>{{oops</tool_call>"}
    assert out[3] == {"role": "user", "content": RESULTS + "\n\nAnd 6 * 7?"}


# -- the prompt a real model gets ----------------------------------------------------------------


async def test_a_template_without_tools_gets_them_in_the_system_prompt_token_for_token(plain_model):
    engine = await loaded(plain_model, tool_prompt="text")
    try:
        assert not engine.supports_tools and engine.tools_in_text
        description = describe_tools(tool_schemas())
        expected = chatml(("system", description), ("user", "What is 12 * 7?"))
        encode = engine.tokenizer.encode
        assert await prompt_of(engine, QUESTION, tool_schemas()) == encode(expected, add_special_tokens=False)
        later = chatml(
            ("system", description),
            ("user", "What is 12 * 7?"),
            ("assistant", f"Let me compute.\n{CALL}\n<tool_call>{{oops</tool_call>"),
            ("user", RESULTS),
        )
        assert await prompt_of(engine, ROUND, tool_schemas()) == encode(later, add_special_tokens=False)
    finally:
        await engine.close()


async def test_by_default_a_template_without_tools_gets_no_tools(plain_model):
    engine = await loaded(plain_model)
    try:
        assert not engine.tools_in_text
        expected = engine.tokenizer.encode(chatml(("user", "What is 12 * 7?")), add_special_tokens=False)
        assert await prompt_of(engine, QUESTION, tool_schemas()) == expected
    finally:
        await engine.close()


async def test_text_wins_over_a_template_that_takes_tools(tiny_model):
    engine = await loaded(tiny_model, tool_prompt="text")
    try:
        assert engine.supports_tools
        prompt = engine.tokenizer.decode(await prompt_of(engine, QUESTION, tool_schemas()))
        assert describe_tools(tool_schemas()) in prompt
        assert "<tools>" not in prompt  # the template's own tool section is not rendered
    finally:
        await engine.close()


async def test_a_strict_template_renders_results_as_the_user_turn_it_accepts(strict_model):
    conversation = [{"role": "system", "content": "Be brief."}, *ROUND, {"role": "user", "content": "And 6 * 7?"}]
    template_engine = await loaded(strict_model)
    try:  # given as they are, the tool role breaks this template's alternation: they go as text
        prompt = template_engine.tokenizer.decode(await prompt_of(template_engine, conversation, tool_schemas()))
        assert prompt.endswith(f"<|im_start|>user\n{RESULTS}\n\nAnd 6 * 7?<|im_end|>\n<|im_start|>assistant\n")
        assert describe_tools(tool_schemas()) not in prompt  # the template takes no tools: none are offered
    finally:
        await template_engine.close()
    engine = await loaded(strict_model, tool_prompt="text")
    try:
        prompt = engine.tokenizer.decode(await prompt_of(engine, conversation, tool_schemas()))
        assert prompt.endswith(f"<|im_start|>user\n{RESULTS}\n\nAnd 6 * 7?<|im_end|>\n<|im_start|>assistant\n")
        assert prompt.startswith("<|im_start|>user\nBe brief.\n\n" + describe_tools(tool_schemas()))
    finally:
        await engine.close()


# -- the agent ----------------------------------------------------------------------------------


@pytest.fixture
async def hub():
    servers = ServerHub([demo_config("demo")])
    async with servers:
        await servers.start_all()
        yield servers


@pytest.mark.parametrize("template_tools", [False, True])
async def test_the_agent_offers_the_tools_and_says_once_that_they_go_in_text(hub, template_tools):
    engine = ScriptedEngine(["hello", "again"], supports_tools=template_tools)
    engine.tools_in_text = True
    events: list = []
    agent = Agent(engine, hub, ApprovalPolicy("ask"))
    await agent.run_turn("hi", events.append)
    await agent.run_turn("hi", events.append)
    notices = [event.text for event in events if isinstance(event, Notice)]
    assert notices == ['scripted: the tools are described in text in the system prompt (tool_prompt = "text").']
    assert all(
        tools and {"calculator", "current_time"} <= {t["function"]["name"] for t in tools}
        for tools in engine.tools_sent
    )


# -- config.toml --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[model]\ntool_prompt = "txt"', "model.tool_prompt: Input should be 'template' or 'text'"),
        ('[models."org/m"]\ntool_prompt = 1', "models.org/m.tool_prompt: Input should be 'template' or 'text'"),
        ('[model]\ntool_promt = "text"', "model.tool_promt: unknown key"),
    ],
)
def test_a_bad_tool_prompt_in_config_toml_is_named(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.exit_code == 2 and str(caught.value) == f"{path}: {expected}"


def test_one_models_tool_prompt_is_over_every_models(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[model]\ntool_prompt = "text"\n[models."org/m"]\ntool_prompt = "template"\n', encoding="utf-8")
    settings = load_settings(path)
    assert settings.model_options("org/m").tool_prompt == "template"
    assert settings.model_options("other").tool_prompt == "text"

"""The pieces behind a server's requests: a requested schema as form fields and each typed value checked;
a sampling request as chat messages (the tool loop's second round too) and stopped at maxTokens."""

from __future__ import annotations

import pytest
from mcp_types import (
    CreateMessageRequestParams,
    SamplingMessage,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)

from mcp_chat_tui.agent.sampling import chat_messages, generate
from mcp_chat_tui.servers.elicit_form import form_fields, redacted_values
from tests.fakes import ScriptedEngine

SCHEMA = {
    "type": "object",
    "properties": {
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "meeting": {"type": "string", "format": "date-time"},
        "ratio": {"type": "number", "minimum": 0.5, "maximum": 2},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"], "default": "m"},
        "agree": {"type": "boolean", "default": True},
        "password": {"type": "string", "format": "password"},
        "nick": {"type": "string", "maxLength": 3},
    },
    "required": ["site"],
}


DATE_TIME_PROBLEM = "a date and time, such as 2026-01-31T12:00:00Z (without an offset: your local time)"


@pytest.fixture
def fields():
    return {field.name: field for field in form_fields(SCHEMA)}


@pytest.mark.parametrize(
    ("name", "typed", "value", "problem"),
    [
        ("site", "https://example.com/x", "https://example.com/x", ""),
        ("site", "example", None, "a URI, such as https://example.com"),
        ("site", "", None, "required"),
        ("born", "2026-01-31", "2026-01-31", ""),
        ("born", "31/01/2026", None, "a date, such as 2026-01-31"),
        ("born", "20260131", None, "a date, such as 2026-01-31"),  # ISO 8601's basic form is no JSON Schema date
        ("meeting", "2026-01-31T12:00:00Z", "2026-01-31T12:00:00+00:00", ""),
        ("meeting", "2026-01-31T12:00+02:00", "2026-01-31T12:00:00+02:00", ""),
        ("meeting", "noon", None, DATE_TIME_PROBLEM),
        ("meeting", "2026-01-31", None, DATE_TIME_PROBLEM),  # a date alone is no date-time
        ("ratio", "1_0", None, "a number"),
        ("ratio", "nan", None, "a number"),
        ("ratio", "1e999", None, "a number"),
        ("ratio", "2", 2, ""),  # typed as a whole number, sent as one
        ("ratio", "1.5", 1.5, ""),
        ("ratio", "0.1", None, "at least 0.5"),
        ("ratio", "many", None, "a number"),
        ("size", "Small", "s", ""),
        ("size", "2", "m", ""),
        ("size", "xl", None, "choose one of Small, Medium"),
        ("agree", "no", False, ""),
        ("agree", "maybe", None, "answer yes or no"),
        ("nick", "abcd", None, "at most 3 characters"),
        ("nick", "", None, ""),  # optional and empty: left out of the answer
    ],
)
def test_each_typed_value_is_checked_against_its_field(fields, name, typed, value, problem):
    assert fields[name].parse(typed) == (value, problem)


MULTI_SCHEMA = {
    "type": "object",
    "properties": {
        "plays": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
            "default": ["Piano"],
        },
        "fish": {
            "type": "array",
            "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Cod"}]},
        },
        "age": {"type": "integer", "minimum": 0},
        "agree": {"type": "boolean"},
    },
    "required": ["age"],
}


@pytest.mark.parametrize(
    ("name", "given", "value", "problem"),
    [
        ("plays", ["Drums", "Guitar"], ["Guitar", "Drums"], ""),  # in the schema's order
        ("plays", "3, Guitar", ["Guitar", "Drums"], ""),  # typed: numbers, values or titles
        ("plays", "", None, ""),  # nothing typed: the terminal uses the default (below)
        ("plays", [], None, "choose at least 1"),
        ("plays", ["Guitar", "Piano", "Drums"], None, "choose at most 2"),
        ("plays", "Banjo", None, "'Banjo' is not one of Guitar, Piano, Drums"),
        ("fish", "Cod", ["f2"], ""),
        ("fish", [], None, ""),  # optional, no default: left out
        ("fish", "-", None, ""),
        ("age", "٤٢", None, "a whole number"),  # digits of another script are not JSON
        ("age", "", None, "required"),
        ("agree", "", None, ""),  # a yes or no without a default, unanswered: left out, never false
        ("agree", "no", False, ""),
    ],
)
def test_multi_selects_numbers_and_booleans_give_their_json_types(name, given, value, problem):
    fields = {field.name: field for field in form_fields(MULTI_SCHEMA)}
    assert fields[name].parse(given) == (value, problem)


def test_a_multi_selects_default_and_how_it_is_typed():
    plays, fish, *_ = form_fields(MULTI_SCHEMA)
    assert (plays.kind, fish.kind) == ("multi", "multi")
    assert plays.shown_default() == "2" and plays.default_choices() == ["Piano"]
    assert plays.parse(plays.shown_default()) == (["Piano"], "")
    assert plays.hint() == "1-2 of Guitar, Piano, Drums" and fish.hint() == "any of Tuna, Cod"
    assert fish.numbered_options() == "1 Tuna · 2 Cod"
    assert fish.typed_choice_hint() == "any of them, by numbers such as 1,3, - for none"


def test_fields_keep_the_schema_order_required_marks_defaults_and_secrets(fields):
    assert list(fields) == ["site", "born", "meeting", "ratio", "size", "agree", "password", "nick"]
    assert fields["site"].required and not fields["born"].required
    assert fields["size"].shown_default() == "m" and fields["agree"].shown_default() == "yes"
    assert fields["size"].options == (("s", "Small"), ("m", "Medium"))
    assert [name for name, field in fields.items() if field.secret] == ["password"]
    assert redacted_values(list(fields.values()), {"password": "hunter22", "nick": "ab"}) == {
        "password": "[redacted]",
        "nick": "ab",
    }


def test_the_tool_loops_second_round_becomes_tool_calls_and_tool_messages():
    params = CreateMessageRequestParams(
        max_tokens=10,
        messages=[
            SamplingMessage(role="user", content=TextContent(text="Define ketch")),
            SamplingMessage(
                role="assistant", content=[ToolUseContent(id="t1", name="lookup", input={"word": "ketch"})]
            ),
            SamplingMessage(
                role="user",
                content=[ToolResultContent(tool_use_id="t1", content=[TextContent(text="a two-masted boat")])],
            ),
        ],
    )
    assert chat_messages(params) == [
        {"role": "user", "content": "Define ketch"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": '{"word": "ketch"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "a two-masted boat"},
    ]


async def test_a_sampled_reply_stops_at_max_tokens():
    engine = ScriptedEngine(["one two three four five six seven eight"])
    params = CreateMessageRequestParams(
        max_tokens=3, messages=[SamplingMessage(role="user", content=TextContent(text="count"))]
    )
    reply = await generate(engine, params)
    assert reply.text == "one two three " and reply.stop_reason == "maxTokens"
    assert engine.closed_streams == 1

"""Calls written as loose JSON (a ```json fence, JSON standing alone on its lines), names that are not
offered, and JSON that is not a call: each streamed in chunks of every size and at every split."""

from __future__ import annotations

import json

import pytest

from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.toolcalls import ToolCallStream
from tests.test_toolcalls import run

OFFERED = {"get_current_time", "convert_time", "read_file", "list_directory", "echo", "get-sum", "get-env"}
TOKYO = {"timezone": "Asia/Tokyo"}


def parsed(text: str, known=OFFERED) -> tuple[str, list]:
    """The visible text and calls of ``text``, checked to be the same fed whole, in chunks of every
    size from 1 to its length, and split in two at every point."""
    whole = run(text, known=known)[:3]
    for size in range(1, len(text) + 1):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        assert run(text, chunks, known=known)[:3] == whole, f"chunks of {size}"
    for cut in range(1, len(text)):
        assert run(text, [text[:cut], text[cut:]], known=known)[:3] == whole, f"split at {cut}"
    return whole[0], whole[2]


def call(name, arguments, id="call_1"):
    return ToolCallProposed(id, name, arguments)


# -- fences ---------------------------------------------------------------------------------------


def test_a_fenced_json_call_as_a_small_qwen_writes_it():
    text = '```json\n{\n  "name": "get_current_time",\n  "arguments": {\n    "timezone": "Asia/Tokyo"\n  }\n}\n```'
    assert parsed(text) == ("", [call("get_current_time", TOKYO)])


def test_a_fenced_call_between_sentences_and_the_fence_kinds_that_hold_calls():
    for info in ("json", "JSON", "tool_call", "", "json "):
        text = f'Let me check.\n```{info}\n{{"name": "get_current_time", "arguments": {json.dumps(TOKYO)}}}\n```\nOne moment.'
        assert parsed(text) == ("Let me check.\n\nOne moment.", [call("get_current_time", TOKYO)]), info


def test_two_fences_and_a_fenced_list_are_several_calls():
    first = '{"name": "echo", "arguments": {"message": "hi"}}'
    second = '{"name": "get-sum", "arguments": {"a": 17, "b": 25}}'
    expected = [call("echo", {"message": "hi"}), call("get-sum", {"a": 17, "b": 25}, "call_2")]
    assert parsed(f"```json\n{first}\n```\n```json\n{second}\n```") == ("", expected)
    assert parsed(f"```json\n[{first}, {second}]\n```") == ("", expected)
    assert parsed(f"```json\n{first}\n{second}\n```") == ("", expected)


def test_a_fence_the_reply_ends_in_is_a_call_when_its_json_is_whole_and_malformed_when_cut():
    assert parsed('```json\n{"name": "echo", "arguments": {"message": "hi"}}\n') == (
        "",
        [call("echo", {"message": "hi"})],
    )
    _, [cut] = parsed('```json\n{"name": "echo", "argum')
    assert isinstance(cut, ToolCallMalformed) and "incomplete JSON tool call" in cut.reason


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"title": "Dune", "author": "Frank Herbert"}\n```',
        '```json\n{"name": "Dune", "author": "Frank Herbert"}\n```',  # a name, but no arguments: data
        "```json\n[1, 2, 3]\n```\nThose are the numbers.",
        '```json\n{"name": "echo", "arguments": {}}\nthat is how a call looks\n```',
        '```python\ndef f():\n    return {"name": "echo", "arguments": {}}\n```\n',
        '```python\n{"name": "echo", "arguments": {}}\n```\n',  # a dict in Python code is code
        '```\nplain code\n```\n{"title": "x"}\n',
        "- [link](http://example.com)\n[1, 2]\n{braces} in maths\n",
        '{\n  "title": "x",\n  "items": [\n    {"name": "echo", "arguments": {}}\n  ]\n}\nok',  # a call inside data
        '{"name": "echo", "arguments": {}} is how a call looks',
        "\n```JSON\n",  # whitespace before what was held is kept when it turns out to be text
        '\n\n{"title": "x"}',
        "  \n[1]",
    ],
)
def test_json_and_code_that_are_not_calls_stay_text_as_written(text):
    assert parsed(text) == (text, [])


def test_without_offered_tools_loose_json_is_text():
    text = '```json\n{"name": "get_current_time", "arguments": {}}\n```\n{"name": "echo", "arguments": {}}'
    assert parsed(text, known=set()) == (text, [])


# -- JSON standing alone on its lines ------------------------------------------------------------


def test_a_json_call_on_its_own_line_after_and_before_prose():
    text = 'I will look it up.\n  {"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}\nThen I answer.'
    assert parsed(text) == ("I will look it up.\nThen I answer.", [call("get_current_time", TOKYO)])


def test_a_list_of_calls_and_every_call_shape():
    shapes = [
        {"name": "echo", "arguments": {"message": "a"}},
        {"name": "echo", "parameters": {"message": "b"}},
        {"function": {"name": "echo", "arguments": {"message": "c"}}},
        {"type": "function", "function": {"name": "echo", "arguments": json.dumps({"message": "d"})}},
        {"name": "echo", "arguments": json.dumps({"message": "e"})},
    ]
    visible, calls = parsed(json.dumps(shapes))
    assert visible == ""
    assert [(c.name, c.arguments) for c in calls] == [("echo", {"message": m}) for m in "abcde"]
    assert [c.id for c in calls] == [f"call_{n}" for n in range(1, 6)]


def test_a_name_alone_is_a_call_only_of_an_offered_tool():
    assert parsed('{"name": "get-env"}') == ("", [call("get-env", {})])
    assert parsed('{"name": "Ada Lovelace"}') == ('{"name": "Ada Lovelace"}', [])


# -- names that are not offered ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "nearest"),
    [
        ("add-17-and-25", ()),
        ("get-time", ("get_current_time",)),
        ("filesystem.read_file", ("read_file",)),
        ("get_sum", ("get-sum",)),
    ],
)
def test_a_name_not_offered_is_malformed_with_the_nearest_offered_names(name, nearest):
    text = f'```json\n{{"name": "{name}", "arguments": {{}}}}\n```'
    visible, [malformed] = parsed(text)
    assert visible == "" and isinstance(malformed, ToolCallMalformed)
    assert malformed.reason.startswith(f"unknown tool '{name}'")
    assert malformed.nearest[: len(nearest)] == nearest and len(malformed.nearest) <= 3
    for near in malformed.nearest:
        assert f"'{near}'" in malformed.reason
    if not nearest:
        assert malformed.nearest == () and "no offered tool has a similar name" in malformed.reason


def test_a_server_qualified_name_is_the_tool_offered_as_server__tool_and_nothing_else():
    known = {"filesystem__read_file", "other__read_file"}
    for written in ("filesystem.read_file", "filesystem/read_file", "filesystem__read_file"):
        text = f'{{"name": "{written}", "arguments": {{"path": "a"}}}}'
        assert parsed(text, known=known) == ("", [call("filesystem__read_file", {"path": "a"})])
    _, [unknown] = parsed('{"name": "nosuch.read_file", "arguments": {}}', known=known)
    assert isinstance(unknown, ToolCallMalformed)


# -- streaming: held only while it could still be a call -------------------------------------------


def test_a_code_block_streams_as_it_comes():
    stream = ToolCallStream(OFFERED)
    assert stream.feed("Here:\n") == [TextDelta("Here:\n")]
    assert stream.feed("```py") == [TextDelta("```py")]  # "py" is no fence that holds calls
    assert stream.feed('thon\nprint({"name": 1})\n') == [TextDelta('thon\nprint({"name": 1})\n')]
    assert stream.feed('{"name": "echo", "arguments": {}}\n') == [TextDelta('{"name": "echo", "arguments": {}}\n')]
    assert stream.feed("```\n") == [TextDelta("```\n")]
    assert stream.finish() == []


def test_json_that_is_data_streams_once_its_first_key_says_so():
    stream = ToolCallStream(OFFERED)
    assert stream.feed("```js") == []  # could still be ```json
    assert stream.feed("on\n") == []
    assert stream.feed('{"tit') == []
    assert stream.feed('le": "Du') == [TextDelta('```json\n{"title": "Du')]
    assert stream.feed("ne") == [TextDelta("ne")]
    stream = ToolCallStream(OFFERED)
    assert stream.feed('{"title": "Dune",\n') == [TextDelta('{"title": "Dune",\n')]
    assert stream.feed('{"name": "echo", "arguments": {}}}\n') == [TextDelta('{"name": "echo", "arguments": {}}}\n')]


def test_a_call_is_reported_when_its_fence_closes():
    stream = ToolCallStream(OFFERED)
    assert stream.feed('```json\n{"name": "echo", "arguments": {"message": "x"}}\n') == []
    assert stream.feed("```") == [call("echo", {"message": "x"})]
    assert stream.feed("\n\nDone.") == [TextDelta("Done.")]


def test_a_call_line_then_the_reply_ends_inside_something_else():
    echo = '{"name": "echo", "arguments": {}}'
    assert parsed(echo + "\n[") == ("[", [call("echo", {})])
    assert parsed(echo + '\n{"na') == ('{"na', [call("echo", {})])

"""The tool-call recogniser: every format, streamed at every split point, and every malformed case."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_chat_tui.engine.events import TextDelta, ThinkingDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.toolcalls import ToolCallStream, parse_tool_calls, tool_names
from tests.helpers import examples

KNOWN = {"calculator", "current_time", "web_search", "brave-search__search"}
MARKERS = ["<tool_call>", "</tool_call>", "<tool_use>", "</tool_use>", "[TOOL_CALLS]", "<think>", "</think>"]


def run(text: str, chunks: list[str] | None = None, known=KNOWN, **markers):
    """Feed ``text`` (or ``chunks``) through a fresh stream; return (text, thinking, calls, all events)."""
    stream = ToolCallStream(known, **markers)
    events = []
    for chunk in chunks if chunks is not None else [text]:
        events.extend(stream.feed(chunk))
    events.extend(stream.finish())
    visible = "".join(e.text for e in events if isinstance(e, TextDelta))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    calls = [e for e in events if isinstance(e, (ToolCallProposed, ToolCallMalformed))]
    return visible, thinking, calls, events


def assert_same_at_every_split(text: str, **markers) -> tuple[str, str, list]:
    """One char at a time and every two-chunk split give the same result as the whole text."""
    whole = run(text, **markers)[:3]
    assert run(text, list(text), **markers)[:3] == whole
    for cut in range(1, len(text)):
        assert run(text, [text[:cut], text[cut:]], **markers)[:3] == whole, f"split at {cut}"
    return whole


def proposed(name, arguments, id="call_1"):
    return ToolCallProposed(id, name, arguments)


# -- each format ----------------------------------------------------------------------------


def test_tool_call_json_block_with_text_before_and_after():
    text = (
        'Let me compute.\n<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call>\nok'
    )
    visible, thinking, calls = assert_same_at_every_split(text)
    assert visible == "Let me compute.\n\nok"
    assert calls == [proposed("calculator", {"expression": "12 * 7"})]


def test_tool_use_xml_block_with_server():
    text = (
        "<tool_use>\n  <server>brave-search</server>\n  <tool>search</tool>\n"
        '  <arguments>{"query": "weather today"}</arguments>\n</tool_use>'
    )
    visible, _, calls = assert_same_at_every_split(text)
    assert visible == ""
    # "search" is exposed as server__tool because two servers have it
    assert calls == [proposed("brave-search__search", {"query": "weather today"})]


def test_tool_use_xml_block_without_server():
    text = '<tool_use><tool>web_search</tool><arguments>{"query": "mlx"}</arguments></tool_use>'
    _, _, calls = assert_same_at_every_split(text)
    assert calls == [proposed("web_search", {"query": "mlx"})]


def test_tool_use_without_arguments_gives_empty_object():
    _, _, calls = assert_same_at_every_split("<tool_use><tool>current_time</tool></tool_use>")
    assert calls == [proposed("current_time", {})]


def test_mistral_json_list_with_two_calls():
    text = '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "1+1"}}, {"name": "current_time", "arguments": {"timezone": "UTC"}}]'
    visible, _, calls = assert_same_at_every_split(text)
    assert visible == ""
    assert calls == [
        proposed("calculator", {"expression": "1+1"}, "call_1"),
        proposed("current_time", {"timezone": "UTC"}, "call_2"),
    ]


def test_mistral_header_form_keeps_its_call_id():
    text = '[TOOL_CALLS]calculator[CALL_ID]abc123[ARGS]{"expression": "2*3"}'
    _, _, calls = assert_same_at_every_split(text)
    assert calls == [proposed("calculator", {"expression": "2*3"}, "abc123")]


def test_bare_json_reply_with_parameters_key():
    text = '  {"name": "calculator", "parameters": {"expression": "3 - 1"}}\n'
    visible, _, calls = assert_same_at_every_split(text)
    assert visible == ""
    assert calls == [proposed("calculator", {"expression": "3 - 1"})]


def test_bare_json_reply_with_two_objects():
    text = '{"name": "calculator", "arguments": {"expression": "1"}}; {"name": "current_time", "arguments": {}}'
    _, _, calls = assert_same_at_every_split(text)
    assert [c.name for c in calls] == ["calculator", "current_time"]
    assert [c.id for c in calls] == ["call_1", "call_2"]


def test_json_followed_by_prose_is_text_not_a_call():
    text = '{"name": "calculator", "arguments": {}} is how a call looks'
    visible, _, calls = assert_same_at_every_split(text)
    assert visible == text and calls == []


def test_json_that_is_not_call_shaped_is_text():
    text = '{"answer": 42, "unit": "m"}'
    visible, _, calls = assert_same_at_every_split(text)
    assert visible == text and calls == []


def test_prose_starting_with_a_brace_is_text():
    text = "{braces} mark sets in maths"
    assert assert_same_at_every_split(text)[:2] == (text, "")


def test_several_formats_in_one_reply_get_unique_ids():
    text = (
        '<tool_call>{"name": "calculator", "arguments": {"expression": "1"}}</tool_call>'
        '<tool_call>{"name": "calculator", "arguments": {"expression": "2"}}</tool_call>'
        "<tool_use><tool>current_time</tool><arguments>{}</arguments></tool_use>"
    )
    _, _, calls = assert_same_at_every_split(text)
    assert [c.id for c in calls] == ["call_1", "call_2", "call_3"]
    assert [c.arguments for c in calls] == [{"expression": "1"}, {"expression": "2"}, {}]


def test_list_inside_one_block_and_given_ids_kept_unique():
    text = (
        '<tool_call>[{"id": "call_2", "name": "calculator", "arguments": {"expression": "1"}},'
        ' {"name": "calculator", "arguments": {"expression": "2"}},'
        ' {"id": "call_2", "name": "current_time", "arguments": {}}]</tool_call>'
    )
    _, _, calls = assert_same_at_every_split(text)
    assert [c.id for c in calls] == ["call_2", "call_1", "call_3"]


def test_openai_function_shape_and_string_arguments():
    text = '<tool_call>{"id": "x1", "type": "function", "function": {"name": "calculator", "arguments": "{\\"expression\\": \\"5\\"}"}}</tool_call>'
    _, _, calls = assert_same_at_every_split(text)
    assert calls == [proposed("calculator", {"expression": "5"}, "x1")]


def test_function_tag_body_inside_tool_call():
    text = "<tool_call>\n<function=calculator>\n<parameter=expression>\n12 * 7\n</parameter>\n</function>\n</tool_call>"
    _, _, calls = assert_same_at_every_split(text)
    assert calls == [proposed("calculator", {"expression": "12 * 7"})]


def test_braces_quotes_and_markers_inside_strings():
    args = {"expression": 'len("{a}") + "}\\"{"', "note": "a </tool_use> b"}
    text = "<tool_call>" + json.dumps({"name": "calculator", "arguments": args}) + "</tool_call>"
    _, _, calls = assert_same_at_every_split(text)
    assert calls == [proposed("calculator", args)]
    bare = json.dumps({"name": "calculator", "arguments": {"expression": '{"}" [', "x": "\\"}})
    _, _, calls = assert_same_at_every_split(bare)
    assert calls == [proposed("calculator", {"expression": '{"}" [', "x": "\\"})]


def test_thinking_is_separate_and_markers_inside_it_are_not_calls():
    text = '<think>maybe <tool_call>{"name": "calculator"}</tool_call>?</think>\n\nThe answer.'
    visible, thinking, calls = assert_same_at_every_split(text)
    assert thinking == 'maybe <tool_call>{"name": "calculator"}</tool_call>?'
    assert visible == "The answer." and calls == []


def test_reply_that_starts_inside_thinking():
    stream = ToolCallStream(KNOWN, in_thinking=True)
    events = stream.feed("still thinking</think>\n\ndone") + stream.finish()
    assert events == [ThinkingDelta("still thinking"), TextDelta("done")]
    stream = ToolCallStream(KNOWN)
    events = stream.feed("Hi <think>x</think> there") + stream.finish()
    assert events == [TextDelta("Hi "), ThinkingDelta("x"), TextDelta(" there")]


def test_tokenizer_markers_and_parser_are_used():
    def parser(text, tools):
        name, _, arg = text.strip().partition(":")
        return {"name": name, "arguments": {"expression": arg}}

    markers = dict(tool_call_start="<|tool_call_start|>", tool_call_end="<|tool_call_end|>", tool_parser=parser)
    text = "Sure.<|tool_call_start|>calculator:6*7<|tool_call_end|>"
    visible, _, calls = assert_same_at_every_split(text, **markers)
    assert visible == "Sure."
    assert calls == [proposed("calculator", {"expression": "6*7"})]


def test_block_the_tokenizer_parser_rejects_falls_back_to_json():
    def parser(text, tools):
        raise ValueError("not my format")

    markers = dict(tool_call_start="<|tc|>", tool_call_end="<|/tc|>", tool_parser=parser)
    _, _, calls, _ = run('<|tc|>{"name": "calculator", "arguments": {"expression": "1"}}<|/tc|>', **markers)
    assert calls == [proposed("calculator", {"expression": "1"})]
    _, _, calls, _ = run("<|tc|>garbage<|/tc|>", **markers)
    assert isinstance(calls[0], ToolCallMalformed)
    assert "not my format" in calls[0].reason and calls[0].raw == "<|tc|>garbage<|/tc|>"


def test_tokenizer_parser_that_returns_a_list():
    def parser(text, tools):
        return [{"name": "calculator", "arguments": {"expression": "1"}}, {"name": "current_time", "arguments": {}}]

    _, _, calls, _ = run("[TOOL_CALLS]whatever", tool_call_start="[TOOL_CALLS]", tool_call_end="", tool_parser=parser)
    assert [c.name for c in calls] == ["calculator", "current_time"]


def test_known_tools_default_to_the_schema_names():
    schemas = [{"type": "function", "function": {"name": "calculator", "parameters": {}}}]
    assert tool_names(schemas) == {"calculator"}
    stream = ToolCallStream(tools=schemas)
    events = stream.feed('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>') + stream.finish()
    assert events == [
        ToolCallMalformed(
            "call_1",
            '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
            "unknown tool 'rm_rf': no offered tool has a similar name",
        )
    ]


def test_any_name_is_accepted_without_known_tools_or_schemas():
    _, _, calls, _ = run('<tool_call>{"name": "anything", "arguments": {}}</tool_call>', known=None)
    assert calls == [proposed("anything", {})]


# -- malformed ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        ('<tool_call>{"name": "calculator", "arguments": {"expression": "1"</tool_call>', "invalid JSON"),
        ('<tool_call>{"name": "nope", "arguments": {}}</tool_call>', "unknown tool 'nope'"),
        (
            '<tool_call>{"name": "calculator", "arguments": [1, 2]}</tool_call>',
            "arguments must be a JSON object, got a list",
        ),
        ('<tool_call>{"name": "calculator", "arguments": "12 * 7"}</tool_call>', "arguments are not valid JSON"),
        ('<tool_call>{"name": "calculator", "arguments": "[1]"}</tool_call>', "got a list"),
        ('<tool_call>{"name": "calculator", "arguments": 7}</tool_call>', "got a number"),
        ('<tool_call>{"arguments": {}}</tool_call>', 'no "name"'),
        ('<tool_call>{"name": 5, "arguments": {}}</tool_call>', 'no "name"'),
        ('<tool_call>"calculator"</tool_call>', 'expected a JSON object with "name" and "arguments", got a string'),
        ("<tool_call></tool_call>", "empty"),
        ('<tool_call>{"name": "calculator", "arguments": {"expression": "1"}}', "unclosed <tool_call> block"),
        ('<tool_call>{"name": "calculator", "argu', "unclosed"),
        (
            '<tool_use><tool>calculator</tool><arguments>{"expression": </arguments></tool_use>',
            "<arguments> is not valid JSON",
        ),
        ("<tool_use><arguments>{}</arguments></tool_use>", "no <tool> name"),
        ("<tool_use><server>x</server><tool>search</tool></tool_use>", "unknown tool 'search' (server 'x')"),
        ("<tool_use><tool>calculator</tool><arguments>[1]</arguments></tool_use>", "got a list"),
        ('[TOOL_CALLS][{"name": "calculator", "arguments": {', "invalid JSON"),
        ('[TOOL_CALLS]calculator[ARGS]{"expression": ', "invalid JSON arguments for calculator"),
        ("[TOOL_CALLS] hello", "no tool call after [TOOL_CALLS]"),
        ('{"name": "calculator", "arguments": "not json"}', "arguments are not valid JSON"),
        ('{"name": "calculator", "arguments": {"expression": "1"', "incomplete JSON tool call"),
        ('{"name": "ghost", "parameters": {}}', "unknown tool 'ghost'"),
    ],
)
def test_malformed_calls_are_reported_never_dropped(text, reason_part):
    visible, _, calls = assert_same_at_every_split(text)
    assert len(calls) == 1, calls
    call = calls[0]
    assert isinstance(call, ToolCallMalformed)
    assert reason_part in call.reason
    assert call.id == "call_1"
    assert call.raw and call.raw in text  # what the model wrote, to show the user
    assert visible == ""


def test_malformed_item_in_a_list_keeps_the_good_ones():
    text = '<tool_call>[{"name": "calculator", "arguments": {"expression": "1"}}, {"name": "calculator", "arguments": "x"}]</tool_call>'
    _, _, calls, _ = run(text)
    assert isinstance(calls[0], ToolCallProposed) and calls[0].id == "call_1"
    assert isinstance(calls[1], ToolCallMalformed) and calls[1].id == "call_2"
    assert json.loads(calls[1].raw) == {"name": "calculator", "arguments": "x"}


def test_good_call_then_cut_off_bare_json():
    text = '{"name": "calculator", "arguments": {}} {"name": "current_time", "argum'
    _, _, calls, _ = run(text, list(text))
    assert isinstance(calls[0], ToolCallProposed)
    assert isinstance(calls[1], ToolCallMalformed) and "incomplete" in calls[1].reason


# -- streaming behaviour --------------------------------------------------------------------


def test_text_streams_without_delay_and_only_marker_prefixes_are_held():
    stream = ToolCallStream(KNOWN)
    assert stream.feed("Hello") == [TextDelta("Hello")]
    assert stream.feed(" wor") == [TextDelta(" wor")]
    assert stream.feed("ld <tool") == [TextDelta("ld ")]  # "<tool" could start <tool_call>
    assert stream.feed("bar>") == [TextDelta("<toolbar>")]
    assert stream.feed(" [TOOL") == [TextDelta(" ")]
    assert stream.finish() == [TextDelta("[TOOL")]


def test_call_is_reported_as_soon_as_its_block_closes():
    stream = ToolCallStream(KNOWN)
    assert stream.feed('<tool_call>{"name": "calculator", "arguments": {}}') == []
    assert stream.feed("</tool_call>") == [proposed("calculator", {})]
    assert stream.feed("\n") == []  # whitespace after a call is not shown
    assert stream.finish() == []


def test_parse_tool_calls_helper():
    reply = parse_tool_calls(
        '<think>hm</think>Sure <tool_call>{"name": "calculator", "arguments": {"expression": "2"}}</tool_call>',
        KNOWN,
    )
    assert reply.text == "Sure " and reply.thinking == "hm"
    assert reply.calls == [proposed("calculator", {"expression": "2"})]


def test_counts_of_proposed_and_malformed_calls():
    stream = ToolCallStream(KNOWN)
    stream.feed('<tool_call>{"name": "calculator", "arguments": {}}</tool_call><tool_call>{"name": "x"}</tool_call>')
    stream.finish()
    assert (stream.calls_proposed, stream.calls_malformed) == (1, 1)


def test_with_mlx_lm_s_own_parsers():
    from mlx_lm.tool_parsers import json_tools, mistral

    qwen = dict(
        tool_call_start=json_tools.tool_call_start,
        tool_call_end=json_tools.tool_call_end,
        tool_parser=json_tools.parse_tool_call,
    )
    text = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 7"}}\n</tool_call>'
    assert assert_same_at_every_split(text, **qwen)[2] == [proposed("calculator", {"expression": "12 * 7"})]
    _, _, calls = assert_same_at_every_split("<tool_call>{'name': 'calculator'}</tool_call>", **qwen)
    assert isinstance(calls[0], ToolCallMalformed) and "parser rejected it" in calls[0].reason

    mistral_markers = dict(
        tool_call_start=mistral.tool_call_start,
        tool_call_end=mistral.tool_call_end,
        tool_parser=mistral.parse_tool_call,
    )
    text = 'I will check.[TOOL_CALLS]calculator[ARGS]{"expression": "1"}current_time[ARGS]{}'
    visible, _, calls = assert_same_at_every_split(text, **mistral_markers)
    assert visible == "I will check."
    assert calls == [proposed("calculator", {"expression": "1"}, "call_1"), proposed("current_time", {}, "call_2")]


# -- properties -----------------------------------------------------------------------------

_alphabet = st.sampled_from(
    list("abc <>/[]{}\"':,_\n\\`")
    + ["tool_call", "tool_use", "TOOL_CALLS", "think", "name", "arguments", "```json\n", "```", '"calculator"']
)
_texts = st.lists(_alphabet, max_size=40).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.one_of(st.text(max_size=80), _texts), cuts=st.lists(st.integers(0, 80), max_size=6))
def test_never_raises_and_chunking_does_not_matter(text, cuts):
    bounds = sorted({c for c in cuts if c <= len(text)} | {0, len(text)})
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    whole = run(text)
    assert run(text, chunks)[:3] == whole[:3]
    for event in whole[3]:
        assert isinstance(event, (TextDelta, ThinkingDelta, ToolCallProposed, ToolCallMalformed))


@settings(max_examples=examples(300), deadline=None)
@given(text=st.one_of(st.text(max_size=80), _texts), cuts=st.lists(st.integers(0, 80), max_size=6))
def test_text_without_markers_comes_out_unchanged(text, cuts):
    if any(m in text for m in MARKERS) or any(line.lstrip().startswith(("{", "[")) for line in text.split("\n")):
        return  # markers, or loose JSON that may be a call
    bounds = sorted({c for c in cuts if c <= len(text)} | {0, len(text)})
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    visible, thinking, calls, _ = run(text, chunks)
    assert (visible, thinking, calls) == (text, "", [])

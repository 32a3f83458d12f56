"""Transcripts: exact round trips, bad files, and the OpenAI message shapes."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_chat_tui.core.attachments import Attachment
from mcp_chat_tui.core.content import ContentPart
from mcp_chat_tui.core.progress import ToolProgress
from mcp_chat_tui.transcript import (
    Exchange,
    Proposal,
    ServerRequest,
    Step,
    ToolResult,
    Transcript,
    TranscriptError,
    TranscriptRecorder,
    parse,
    render,
    to_openai_messages,
)
from mcp_chat_tui.transcript.model import CHOICES, STATUSES
from tests.helpers import examples

# Text of every kind, and lines built to look like markers, fences and escapes.
TRICKY_LINES = [
    "💬: fake user",
    "🤖:[x]",
    "🧠: no",
    "❓:[yo] `{}`",
    "🛠️: [t][c]",
    "📝: s",
    "📨: {}",
    '📎: {"kind": "resource"}',
    "🤔: unknown",
    "```",
    "````done",
    "\\",
    "\\💬: x",
    "",
    " ",
    "`",
    "\r",
    "emoji 🎉 ✨",
    "\x00",
    "\ud800 \udfff",
    "\x1b[31m red",
    "\\{U+0000}",  # an escape's look: written with its backslash doubled
    "\\\\{U+D800}\\",
    "{U+000D}",
]
# Any code point: NUL, controls and lone surrogates included (the file escapes what UTF-8 cannot hold).
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
line_text = st.lists(st.one_of(any_text, st.sampled_from(TRICKY_LINES)), max_size=5).map("\n".join)
text = st.one_of(any_text, line_text)
# Strategies built once, here: one built inside a composite at each draw is validated again by
# Hypothesis each time (a fifth of this file's CPU); what they draw is the same.
maybe_text = st.one_of(st.just(""), any_text)
maybe_any_text = st.one_of(st.none(), any_text)
maybe_lines = st.one_of(st.none(), text)
call_ids = st.one_of(st.sampled_from(["call_1", "call_2"]), any_text)


@st.composite
def calls(draw):
    call = {
        "id": draw(call_ids),
        "type": "function",
        "function": {"name": draw(any_text), "arguments": draw(text)},
    }
    return call


content_parts = st.builds(
    ContentPart,
    kind=st.sampled_from(["text", "image", "audio", "resource", "link"]),
    text=any_text,
    mime_type=st.sampled_from(["", "image/png", "audio/wav"]),
    size=st.integers(0, 10**9),
    data=st.one_of(st.none(), st.binary(max_size=30)),
    note=st.one_of(st.just(""), any_text),
    audience=st.one_of(st.none(), st.lists(st.sampled_from(["user", "assistant"]), max_size=2).map(tuple)),
    priority=st.one_of(st.none(), st.floats(0, 1)),
    file=st.one_of(st.just(""), any_text),
)
media_parts = content_parts.filter(lambda part: part.is_media)  # an attached image or audio
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), any_text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(any_text, inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def results(draw, call):
    return ToolResult(
        name=call["function"]["name"],
        call_id=call["id"],
        status=draw(statuses),
        content=draw(text),
        server=draw(maybe_text),
        duration=draw(durations),
        parts=draw(part_lists),
        structured=draw(structured_contents),
        progress=draw(maybe_progress),
    )


@st.composite
def progresses(draw):
    """A call's last progress: a count, with or without a total and a message."""
    return ToolProgress(
        float(draw(progress_counts)) / draw(progress_steps),
        draw(progress_totals),
        draw(maybe_text),
    )


statuses = st.sampled_from(STATUSES)
durations = st.one_of(st.none(), st.integers(0, 10**6).map(lambda n: n / 10_000))
part_lists = st.lists(content_parts, max_size=3)
structured_contents = st.one_of(st.none(), st.dictionaries(any_text, json_values, max_size=3))
progress_counts, progress_steps = st.integers(0, 10**6), st.sampled_from([1, 4, 10])
progress_totals = st.one_of(st.none(), st.integers(1, 10**6).map(float))
maybe_progress = st.one_of(st.none(), progresses())


seconds = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda moment: moment.replace(microsecond=0)
)
maybe_seconds = st.one_of(st.none(), seconds)
request_kinds = st.sampled_from(["sampling", "elicitation"])
max_tokens = st.integers(1, 10**6)
answers = st.sampled_from(["approved", "edited", "rejected", "refused", "accept", "decline", "cancel"])
request_results = st.dictionaries(any_text, text, max_size=2)


@st.composite
def server_requests(draw):
    return ServerRequest(
        server=draw(any_text),
        kind=draw(request_kinds),
        request={"message": draw(text), "maxTokens": draw(max_tokens)},
        answer=draw(answers),
        result=draw(request_results),
        at=draw(maybe_seconds),
    )


@st.composite
def steps(draw, final: bool):
    proposals = []
    # Ids are unique within one reply (the agent makes them so).
    for call in draw(final_calls if final else calls_to_answer):
        has_result = True if not final else draw(st.booleans())
        choice = draw(maybe_choices)
        proposals.append(
            Proposal(
                call,
                choice,
                draw(results(call)) if has_result else None,
                proposed_at=draw(maybe_seconds),
                started_at=draw(maybe_seconds),
                server=draw(maybe_text),
            )
        )
    # A server asks while the step's calls run, so its requests follow the calls.
    requests = draw(request_lists) if proposals else []
    return Step(thought=draw(maybe_lines), text=draw(text), proposals=proposals, requests=requests)


final_calls = st.lists(calls(), min_size=0, max_size=3, unique_by=lambda c: c["id"])
calls_to_answer = st.lists(calls(), min_size=1, max_size=3, unique_by=lambda c: c["id"])
maybe_choices = st.one_of(st.none(), st.sampled_from(CHOICES))
request_lists = st.lists(server_requests(), max_size=2)


@st.composite
def attachments(draw):
    kind = draw(attachment_kinds)
    return Attachment(
        kind=kind,
        server=draw(any_text),
        name=draw(any_text),
        uri=draw(any_text),
        mime_type=draw(maybe_text),
        text="" if kind == "prompt" else draw(text),
        size=draw(sizes),
        arguments=draw(prompt_arguments) if kind == "prompt" else {},
        media=None if kind == "prompt" else draw(maybe_media),
    )


attachment_kinds = st.sampled_from(["resource", "image", "prompt"])
sizes = st.one_of(st.none(), st.integers(0, 10**9))
prompt_arguments = st.dictionaries(any_text, any_text, max_size=3)
maybe_media = st.one_of(st.none(), media_parts)


finite = st.floats(0, 100, allow_nan=False, allow_infinity=False)
generation_records = st.fixed_dictionaries(  # a reply's settings not left at their default (engine/generation.py)
    {},
    optional={
        "temperature": finite,
        "top_p": st.floats(0.01, 1),
        "min_p": st.floats(0, 1),
        "top_k": st.integers(0, 10**5),
        "repetition_penalty": st.floats(0.01, 10),
        "max_tokens": st.integers(1, 10**6),
        "seed": st.integers(0, 2**63 - 1),
    },
)


middle_steps, last_steps = st.lists(steps(final=False), max_size=2), steps(final=True)
ends = st.sampled_from([None, "stopped", "error"])
attachment_lists = st.lists(attachments(), max_size=3)


@st.composite
def exchanges(draw):
    model = draw(maybe_any_text)
    chosen = []
    if model is not None:
        chosen = draw(middle_steps) + [draw(last_steps)]
    end = draw(ends) if model is not None else None
    return Exchange(
        user=draw(text),
        model=model,
        steps=chosen,
        summary=draw(maybe_lines),
        end=end,
        error=draw(any_text) if end == "error" else "",
        attachments=draw(attachment_lists),
        settings=draw(generation_records) if model is not None else {},
    )


@given(st.lists(exchanges(), max_size=4))
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_conversation_written_and_read_back_is_identical(conversation):
    transcript = Transcript(conversation)
    for exchange in transcript.exchanges:  # a reply that said nothing is one empty step
        if exchange.model is not None and len(exchange.steps) == 1:
            step = exchange.steps[0]
            if step.thought is None and not step.text and not step.proposals:
                exchange.steps = [Step()]
    written = render(transcript)
    assert "\0" not in written and len(written.encode("utf-8")) >= len(written)  # a UTF-8 text file can hold it
    assert parse(written) == transcript
    assert render(parse(written)) == written


@given(st.lists(exchanges(), min_size=1, max_size=4), st.data())
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_summaries_written_into_any_exchange_as_it_goes_read_back_identical(conversation, data):
    """The recorder writes a summary into an exchange it already wrote out (the file is not written
    from scratch each time): the file is still ``render`` of the conversation, and reads back."""
    recorder = TranscriptRecorder(Transcript(conversation))
    recorder.rendered()  # every exchange but the last is kept rendered from here on
    for index in data.draw(st.lists(st.integers(0, len(conversation) - 1), max_size=4)):
        recorder.summarised(index, data.draw(st.one_of(text, st.just("Asked for 12 * 7; the calculator said 84."))))
        written = recorder.rendered()
        assert written == render(recorder.transcript)
        assert [e.summary for e in parse(written).exchanges] == [e.summary for e in recorder.transcript.exchanges]


def test_a_summary_is_the_exchanges_last_line_and_a_blank_one_counts_as_none():
    transcript = parse("💬: q0\n\n🤖:[m]\n\na0\n\n📝: Asked q0, got a0.\n\n💬: q1\n\n📝:\n\n💬: q2\n")
    assert transcript.summaries() == ["Asked q0, got a0.", None, None]
    assert render(transcript).startswith("💬: q0\n\n🤖:[m]\n\na0\n\n📝: Asked q0, got a0.\n\n💬: q1")


DOCUMENT_000_EXAMPLE = """💬: can you find the latest stock price of google and microsoft?

🤖:[Claude-Sonnet]

Should, I need to search the web.

❓:[yA] `{"id":"call_1","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"google stock price\\"}"}}`

🛠️: [web_search][call_1]

`{"matches":["google stock GOOGL price is $911 as of today"]}`

❓:[yA] `{"id":"call_2","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"microsoft stock price\\"}"}}`
🛠️: [web_search][call_2]

```
{"matches":["microsoft stock MSFT price is $544 as of today"]}
```

Ok, I found the price of GOOGL is $911 and MSFT is $544 as of today. Do you want something else?

💬: thanks
"""


def test_document_000s_example_reads_and_rebuilds_openai_messages():
    transcript = parse(DOCUMENT_000_EXAMPLE)
    messages = to_openai_messages(transcript)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert messages[1] == {
        "role": "assistant",
        "content": "Should, I need to search the web.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "web_search", "arguments": '{"query":"google stock price"}'},
            }
        ],
    }
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "web_search",
        "content": '{"matches":["google stock GOOGL price is $911 as of today"]}',
    }
    assert messages[5]["content"].startswith("Ok, I found the price")
    assert [p.choice for p in transcript.all_proposals()] == ["yA", "yA"]


def test_openai_shape_matches_the_chat_completions_documentation():
    # The shape documented for chat completions: an assistant message with tool_calls
    # (arguments as a JSON string), then one role=tool message per call id.
    transcript = Transcript(
        [
            Exchange(
                "Find usages of loginWithToken in the repo.",
                "m",
                [
                    Step(
                        text="",
                        proposals=[
                            Proposal(
                                {
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {"name": "repo_search", "arguments": '{"query":"loginWithToken"}'},
                                },
                                "yo",
                                ToolResult(
                                    "repo_search", "call_1", "done", '{"matches":[{"file":"auth.ts","line":42}]}'
                                ),
                            )
                        ],
                    ),
                ],
            )
        ]
    )
    messages = to_openai_messages(parse(render(transcript)))
    assert messages == [
        {"role": "user", "content": "Find usages of loginWithToken in the repo."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "repo_search", "arguments": '{"query":"loginWithToken"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "repo_search",
            "content": '{"matches":[{"file":"auth.ts","line":42}]}',
        },
    ]


BAD_FILES = {
    "unknown marker": ("💬: hi\n\n🤔: what\n", 3, "unknown marker '🤔:'"),
    "broken proposal JSON": ('💬: hi\n\n🤖:[m]\n\n❓:[yo] `{"id": "call_1", "function": `\n', 5, "JSON is broken"),
    "result without proposal": (
        "💬: hi\n\n🤖:[m]\n\n🛠️: [t][call_9]\n```done\nx\n```\n",
        5,
        "call 'call_9' without its ❓: proposal",
    ),
    "unknown choice": (
        '💬: hi\n\n🤖:[m]\n\n❓:[maybe] `{"id":"c","function":{"name":"t"}}`\n',
        5,
        "unknown choice [maybe]",
    ),
    "text before any prompt": ("hello\n💬: hi\n", 1, "expected a 💬: line"),
    "attachment after the reply": ('💬: hi\n\n🤖:[m]\n\nok\n\n📎: {"kind": "resource"}\n', 7, "after the reply"),
    "attachment without JSON": ("💬: hi\n\n📎: notes\n", 3, "needs a JSON object"),
    "attachment of no known kind": ('💬: hi\n\n📎: {"kind": "video"}\n', 3, "kind must be one of"),
    "unclosed attachment": ('💬: hi\n\n📎: {"kind": "resource"}\n```\nx\n', 4, "no closing ```"),
    "unclosed result": (
        '💬: hi\n\n🤖:[m]\n\n❓: `{"id":"c","function":{"name":"t"}}`\n\n🛠️: [t][c]\n```done\nx\n',
        7,
        "no closing ```",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_name_the_line_and_what_was_expected(case):
    text, line, words = BAD_FILES[case]
    with pytest.raises(TranscriptError) as caught:
        parse(text, "chat.md")
    assert caught.value.line == line
    assert f"chat.md: line {line}:" in str(caught.value) and words in str(caught.value)


def test_a_hand_edited_file_is_read_as_edited():
    written = render(Transcript([Exchange("what is 2+2?", "m", [Step(text="It is 5.")])]))
    edited = written.replace("It is 5.", "It is 4.\n\nI checked twice.")
    messages = to_openai_messages(parse(edited))
    assert messages[-1] == {"role": "assistant", "content": "It is 4.\n\nI checked twice."}


def test_a_started_call_without_result_reads_back_as_interrupted_and_old_files_still_read():
    call = '{"id":"c1","type":"function","function":{"name":"t","arguments":"{\\"q\\": \\"`x` {y}\\"}"}}'
    meta = '{"proposed": "2026-01-31T12:00:01", "started": "2026-01-31T12:00:02", "server": "a\\u0060b"}'
    new = parse(f'💬: hi\n\n🤖:[m] {{"end": "stopped"}}\n\n❓:[yo] `{call}` {meta}\n')
    [proposal] = new.pending_proposals()
    assert proposal.interrupted and proposal.server == "a`b" and proposal.arguments == {"q": "`x` {y}"}
    assert (proposal.proposed_at, proposal.started_at) == (
        datetime(2026, 1, 31, 12, 0, 1),
        datetime(2026, 1, 31, 12, 0, 2),
    )
    assert new.exchanges[0].end == "stopped"
    assert "`" not in render(new).split("` ")[-1], "the details after a call never hold a backtick"
    old = parse(f"💬: hi\n\n🤖:[m]\n\n❓:[yo] `{call}`\n")
    [proposal] = old.pending_proposals()
    assert (
        not proposal.interrupted and proposal.allowed and proposal.started_at is None and old.exchanges[0].end is None
    )


def test_a_replys_generation_settings_follow_its_model_and_older_files_read_as_before():
    settings = {"temperature": 0.7, "top_k": 20, "seed": 42}
    written = render(Transcript([Exchange("hi", "Qwen [4B]", [Step(text="Hello.")], settings=settings)]))
    assert written.splitlines()[2] == '🤖:[Qwen [4B\\]] {"settings": {"temperature": 0.7, "top_k": 20, "seed": 42}}'
    assert parse(written).exchanges[0].settings == settings
    stopped = parse('💬: hi\n\n🤖:[m] {"end": "stopped", "settings": {"max_tokens": 5}}\n\nHel\n')
    assert (stopped.exchanges[0].end, stopped.exchanges[0].settings) == ("stopped", {"max_tokens": 5})
    old = parse("💬: hi\n\n🤖:[m]\n\nHello.\n")
    assert old.exchanges[0].settings == {} and render(old) == "💬: hi\n\n🤖:[m]\n\nHello.\n\n"
    assert parse('💬: hi\n\n🤖:[m] {"settings": "warm"}\n\nHello.\n').exchanges[0].settings == {}


def test_pending_proposals_are_found():
    transcript = parse(
        '💬: hi\n\n🤖:[m]\n\n❓: `{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}`\n'
        '❓:[yo] `{"id":"c2","type":"function","function":{"name":"t","arguments":"{}"}}`\n'
    )
    pending = transcript.pending_proposals()
    assert [(p.call_id, p.choice) for p in pending] == [("c1", None), ("c2", "yo")]
    assert pending[0].awaiting_choice and not pending[1].awaiting_choice and pending[1].allowed
    assert transcript.turn_goes_on()


def test_a_reply_goes_on_after_results_it_never_answered_but_not_after_a_stop_or_an_answer():
    call = '❓:[yo] `{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}`\n\n'
    result = "🛠️: [t][c1]\n```done\nok\n```\n\n"

    def ending(header: str, after: str = "") -> Transcript:
        return parse(f"💬: hi\n\n🤖:[m]{header}\n\n{call}{result}{after}")

    assert ending("").turn_goes_on(), "a file written before replies were marked unfinished"
    assert ending(' {"end": "unfinished"}').turn_goes_on()
    assert ending(' {"end": "unfinished"}').exchanges[0].cut_short
    assert not ending(' {"end": "stopped"}').turn_goes_on()
    assert not ending(' {"end": "error", "error": "the engine failed"}').turn_goes_on()
    assert not ending("", "It is ok.\n").turn_goes_on()
    assert not ending(' {"end": "unfinished"}', "It is").turn_goes_on(), "a reply cut while it streamed"
    assert not parse("💬: hi\n\n🤖:[m]\n\nHello.\n").turn_goes_on() and not Transcript().turn_goes_on()
    assert render(ending(' {"end": "unfinished"}')).startswith('💬: hi\n\n🤖:[m] {"end": "unfinished"}\n')


def test_attachments_reach_the_model_after_the_prompt_and_old_files_read_without_them():
    notes = Attachment("resource", "docs", "today", "notes://today", "text/plain", "buy milk")
    command = Attachment("prompt", "docs", "summarise", arguments={"style": "short list"})
    pixel = Attachment(
        "image", "docs", "pixel", "images://pixel", "image/png", "[binary contents: image/png, 70 B]", 70
    )
    transcript = Transcript([Exchange("Summarise these notes.", attachments=[command, notes, pixel])])
    written = render(transcript)
    assert (
        '📎: {"kind": "prompt", "server": "docs", "name": "summarise", "arguments": {"style": "short list"}}' in written
    )
    assert parse(written) == transcript
    content = to_openai_messages(parse(written))[0]["content"]
    assert content.startswith("Summarise these notes.\n\n[attached: docs › notes://today (text/plain)]\nbuy milk")
    assert "[attached: docs › images://pixel (image/png, 70 B)]" in content and "summarise" not in content
    assert to_openai_messages(parse("💬: hi\n"))[0]["content"] == "hi"


def test_a_reply_reads_as_unfinished_until_it_ends_and_an_empty_answer_to_results_is_kept():
    recorder = TranscriptRecorder()
    recorder.user("what is 12 * 7?")
    recorder.reply_started("m")
    recorder.proposed({"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}})
    recorder.chose("c1", "auto")
    recorder.finished(ToolResult("t", "c1", "done", "84"))
    under_way = parse(recorder.rendered())
    assert under_way.exchanges[0].cut_short and under_way.turn_goes_on(), "killed here, the results await an answer"
    recorder.turn_ended()  # the model answered the results with no text at all
    answered = parse(recorder.rendered())
    assert answered.exchanges[0].end is None and not answered.turn_goes_on(), "resuming would ask the model again"
    assert to_openai_messages(answered)[-1] == {"role": "assistant", "content": ""}

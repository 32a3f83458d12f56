"""bench/tool_use.py's own judge: its call detector (independent of the app's parser) and its scoring,
on ``-p --json`` reports recorded from real runs (tests/data/tool_use_records.jsonl: the model, the
question, the offered tools, the report) and on the forms real models write calls in.

The bench itself runs a model for an hour; it is not run here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from tool_use import chosen, parse_options  # noqa: E402
from tool_use_questions import all_questions  # noqa: E402
from tool_use_score import (  # noqa: E402
    OfferedTool,
    WrittenCall,
    decode_rate,
    detect_calls,
    leaked_tokens,
    prefill_rate,
    repeats_run,
    score,
    summary,
)

RECORDS = Path(__file__).resolve().parent / "data" / "tool_use_records.jsonl"
QUESTIONS = {question.name: question for question in all_questions()}
TIME_TOOLS = [
    OfferedTool(
        "get_current_time",
        "time",
        "get_current_time",
        {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
    ),
    OfferedTool(
        "convert_time",
        "time",
        "convert_time",
        {
            "type": "object",
            "properties": {n: {"type": "string"} for n in ("source_timezone", "time", "target_timezone")},
            "required": ["source_timezone", "time", "target_timezone"],
        },
    ),
]


def records() -> list[dict]:
    return [json.loads(line) for line in RECORDS.read_text(encoding="utf-8").splitlines()]


def recorded(model_part: str, question: str) -> dict:
    return next(r for r in records() if model_part in r["model"] and r["question"] == question)


def scored(record: dict):
    offered = [OfferedTool(**tool) for tool in record["offered"]]
    return score(QUESTIONS[record["question"]], record["report"], offered, record["folder"], record["failure"])


# ----- the detector ----------------------------------------------------------------------------

TOKYO = WrittenCall("get_current_time", {"timezone": "Asia/Tokyo"})


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{\n  "name": "get_current_time",\n  "arguments": {\n    "timezone": "Asia/Tokyo"\n  }\n}\n```',
        '<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>',
        'Sure. {"name": "get_current_time", "parameters": {"timezone": "Asia/Tokyo"}} Done.',
        '{"type": "function", "function": {"name": "get_current_time", "arguments": "{\\"timezone\\": \\"Asia/Tokyo\\"}"}}',
        '[{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]',
        '{"tool_calls": [{"function": {"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}}]}',
        "```tool_call\n{'name': 'get_current_time', 'arguments': {'timezone': 'Asia/Tokyo'}}\n```",
    ],
    ids=["fenced-json", "tags", "bare-parameters", "function-string-arguments", "list", "tool_calls", "python-quotes"],
)
def test_the_detector_reads_every_form_a_call_comes_in(text):
    assert detect_calls(text) == [TOKYO]


def test_the_detector_finds_several_calls_and_keeps_unreadable_arguments_as_none():
    text = (
        '{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}\n'
        '{"name": "convert_time", "arguments": "not json"}'
    )
    assert detect_calls(text) == [TOKYO, WrittenCall("convert_time", None)]


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 42.",
        '```json\n{"name": "Alice", "age": 30}\n```',  # data a user asked for: no arguments, no call
        '[1, 2, {"a": 1}]',
        '{"name": "get_current_time", "arguments": {"timezone": "Asia/To',  # cut inside a value: not a call
        "def f(x): return {x: [1, 2]}",
    ],
)
def test_json_of_other_shapes_and_broken_json_are_not_calls(text):
    assert detect_calls(text) == []


def test_a_call_the_text_ends_inside_counts_when_only_closing_brackets_are_missing():
    # Qwen2.5-Coder-0.5B on "Which directories are you allowed to access?" (bench run, three times)
    raw = '{"name": "list_allowed_directories", "arguments": {"paths": ["/"]}'
    assert detect_calls(raw) == [WrittenCall("list_allowed_directories", {"paths": ["/"]})]
    assert detect_calls('<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"\n') == [TOKYO]
    # cut inside a string, or brackets that do not match: not a call
    assert detect_calls('{"name": "get_current_time", "arguments": {"timezone": "Asia/To') == []
    assert detect_calls('{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"]') == []


def test_special_token_text_counts_as_a_leak():
    assert leaked_tokens("<|im_start|>assistant\nhello") and leaked_tokens("ok<|eot_id|>")
    assert leaked_tokens("<｜end▁of▁sentence｜>")
    assert not leaked_tokens("a | b < c > d") and not leaked_tokens("<tool_call>")


# ----- scoring recorded reports ----------------------------------------------------------------


def test_a_call_the_app_ran_and_answered_from_scores_on_every_count():
    result = scored(recorded("demo", "demo.calc"))
    assert (result.written, result.written_offered, result.caught_offered, result.run_offered) == (
        ["calculator"],
        1,
        1,
        1,
    )
    assert result.right_tool and result.args_valid and result.used_result
    assert (result.repeats, result.leaked) == (0, 0)
    assert result.decode_tps is not None and result.decode_tps > 0 and result.prefill_tps > 0


def test_a_call_to_a_tool_that_is_not_offered_is_written_but_not_counted_against_the_app():
    result = scored(recorded("demo", "time.tokyo"))  # the toy model calls its own current_time
    assert result.written == ["current_time"] and result.written_offered == 0 and result.run_offered == 0
    assert not result.right_tool and not result.args_valid and not result.used_result


def test_the_issues_fenced_call_shown_as_the_answer_is_a_call_written_and_not_run():
    """Recorded from Qwen2.5-Coder-0.5B-Instruct through the app on main: the call in a fenced block
    became the answer (``calls: []``)."""
    result = scored(recorded("qwen2.5-coder-0.5b", "time.tokyo"))
    assert result.written == ["get_current_time"] and (result.written_offered, result.run_offered) == (1, 0)
    assert result.right_tool and result.args_valid and not result.used_result


def test_a_call_caught_then_written_again_as_bare_json_counts_both():
    """Qwen2.5-Coder-0.5B on main: the first call ran; its next reply was the same call as bare JSON,
    shown as the answer."""
    result = scored(recorded("qwen2.5-coder-0.5b", "demo.calc"))
    assert result.written == ["calculator", "calculator"]
    assert (result.written_offered, result.caught_offered, result.run_offered) == (2, 1, 1)
    assert result.used_result and result.repeats == 0  # the answer holds 84; the repeat never ran


def test_the_same_call_run_nineteen_times_is_eighteen_repeats():
    """Qwen2.5-Coder-0.5B on main: the same conversion, 19 calls in one turn, and an empty answer."""
    result = scored(recorded("qwen2.5-coder-0.5b", "demo.units_mass"))
    assert (result.written_offered, result.caught_offered, result.run_offered) == (19, 19, 19)
    assert result.repeats == 18 and not result.used_result and result.end == "answered"


def test_a_reply_with_im_start_is_a_leak_and_broken_calls_are_no_calls():
    """The demo model off its training (the everything server): unreadable calls, ``<|im_start|>`` in a reply."""
    result = scored(recorded("demo", "every.sum"))
    assert result.leaked == 1 and result.written == []


def test_a_malformed_calls_raw_text_is_read_for_the_call_in_it():
    report = {
        "answer": "",
        "calls": [
            {
                "server": None,
                "tool": None,
                "arguments": None,
                "raw": '<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}',
                "reason": "no closing tag",
                "outcome": "malformed",
            }
        ],
        "replies": [""],
        "tokens": {"generations": []},
    }
    result = score(QUESTIONS["time.tokyo"], report, TIME_TOOLS)
    assert (result.written_offered, result.run_offered, result.right_tool, result.args_valid) == (1, 0, True, True)


def test_arguments_must_fit_the_schema_and_the_question():
    def report_with(arguments: dict) -> dict:
        call = {"server": "time", "tool": "get_current_time", "arguments": arguments, "outcome": "error"}
        return {"answer": "", "calls": [call], "replies": [""], "tokens": {"generations": []}}

    question = QUESTIONS["time.tokyo"]
    assert score(question, report_with({"timezone": "Asia/Tokyo"}), TIME_TOOLS).args_valid
    assert not score(question, report_with({"timezone": "Europe/Paris"}), TIME_TOOLS).args_valid  # valid, not asked
    assert not score(question, report_with({"zone": "Asia/Tokyo"}), TIME_TOOLS).args_valid  # against the schema
    assert score(question, report_with({"timezone": "Asia/Tokyo"}), TIME_TOOLS).run_offered == 1  # ran, failed


def test_a_repeat_the_app_caught_and_did_not_run_again_is_caught_not_run_and_not_a_repeat_run():
    """What the app should do with the same call again (issue 30): caught, given the earlier result."""
    call = {"server": "time", "tool": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
    report = {
        "answer": "",
        "calls": [call | {"outcome": "done", "result": "{}"}, call | {"outcome": "repeated", "result": None}],
        "replies": ["", ""],
        "tokens": {"generations": []},
    }
    result = score(QUESTIONS["time.tokyo"], report, TIME_TOOLS)
    assert (result.written_offered, result.caught_offered, result.run_offered, result.repeats) == (2, 2, 1, 0)


def test_the_answer_must_say_what_the_result_said():
    result = '{"timezone": "Asia/Tokyo", "datetime": "2026-11-26T09:05:41+09:00", "day_of_week": "Thursday"}'
    used = QUESTIONS["time.tokyo"].used
    assert used(result, "It is 09:05 in Tokyo.") and used(result, "It's 9:05 AM.")
    assert not used(result, "It is 19:05 in Tokyo.") and not used(result, "It is 09:50.")
    calc = QUESTIONS["demo.units"].used
    assert calc("5 km = 3.10686 miles", "5 km is 3.11 miles") and calc("5 km = 3.10686 miles", "about 3.1069 mi")
    assert not calc("5 km = 3.10686 miles", "5 km is 8 miles") and not calc("5 km = 3.10686 miles", "3.2 miles")


def test_an_answer_that_is_the_call_again_does_not_use_the_result():
    """Qwen2.5-Coder-0.5B on main: echo ran, then the answer was the same call as JSON, which holds
    the message but not the result."""
    call = {"server": "everything", "tool": "echo", "arguments": {"message": "hello world"}}
    echo = OfferedTool("echo", "everything", "echo", {"type": "object"})
    answer = '{"name": "echo", "arguments": {"message": "hello world"}}\n{"name": "tool_response"}'
    report = {
        "answer": answer,
        "calls": [call | {"outcome": "done", "result": "Echo: hello world"}],
        "replies": ["", answer],
        "tokens": {"generations": []},
    }
    assert not score(QUESTIONS["every.echo"], report, [echo]).used_result
    report["answer"] = "The server echoed: hello world"
    assert score(QUESTIONS["every.echo"], report, [echo]).used_result


def test_repeats_count_each_run_after_the_first_with_the_same_arguments():
    def call(arguments: dict, outcome: str = "done") -> dict:
        return {"server": "everything", "tool": "echo", "arguments": arguments, "outcome": outcome}

    same = {"message": "hi"}
    assert repeats_run([call(same)] * 5) == 4
    assert repeats_run([call(same), call({"message": "other"}), call(same, "malformed")]) == 0


def test_the_summary_is_the_issues_figures_first_with_calls_caught_as_a_ratio_of_calls():
    results = [scored(record) for record in records()]
    figures = summary(results)
    assert list(figures)[:5] == ["calls_caught", "right_tool", "leaked_tokens", "repeats_run", "decode_tps"]
    written = sum(r.written_offered for r in results)
    assert figures["calls_caught"] == round(sum(r.caught_offered for r in results) / written, 3)
    assert figures["right_tool"] == round(sum(r.right_tool for r in results) / len(results), 3)


def test_rates_read_each_generations_own_decode_and_prefill_times_and_skip_what_was_not_timed():
    # the app's --json gives each generation's decode_time and prefill_time, and a null
    # tokens_per_second for a generation it could not time (one token, or one burst)
    generations = [
        {"prompt": 900, "prefilled": 800, "generated": 11, "tokens_per_second": 2.0, "time_to_first_token": 20.0,
         "prefill_time": 16.0, "decode_time": 5.0},
        {"prompt": 950, "prefilled": 50, "generated": 1, "tokens_per_second": None, "time_to_first_token": 2.0,
         "prefill_time": 1.0, "decode_time": 0.0},
        {"prompt": 990, "prefilled": 40, "generated": 21, "tokens_per_second": 4.0, "time_to_first_token": 1.5,
         "prefill_time": 1.0, "decode_time": 5.0},
    ]  # fmt: skip
    assert decode_rate(generations) == pytest.approx((10 + 20) / (5.0 + 5.0))
    assert prefill_rate(generations) == pytest.approx((800 + 50 + 40) / (16.0 + 1.0 + 1.0))
    assert decode_rate([generations[1]]) is None
    # an older report: the rate and the time to the first token only
    older = [{"prefilled": 100, "generated": 10, "tokens_per_second": 2.0, "time_to_first_token": 4.0}]
    assert decode_rate(older) == pytest.approx(2.0) and prefill_rate(older) == pytest.approx(25.0)


def test_a_run_without_a_report_scores_nothing_and_says_why():
    result = score(QUESTIONS["demo.calc"], None, [], failure="timeout after 900 s")
    assert result.failure == "timeout after 900 s" and not result.right_tool and result.written_offered == 0
    assert summary([result])["no_report"] == 1 and summary([result])["calls_caught"] is None


# ----- the question set ------------------------------------------------------------------------


def test_the_question_set_covers_the_demo_and_three_reference_servers():
    questions = all_questions()
    assert len(questions) >= 30 and len({q.name for q in questions}) == len(questions)
    assert {q.server for q in questions} == {"demo", "time", "filesystem", "everything"}
    assert all(q.server in q.servers for q in questions)


def test_only_and_questions_pick_a_subset():
    assert [q.name for q in chosen(parse_options(["m", "--only", "demo.calc,time.tokyo"]))] == [
        "demo.calc",
        "time.tokyo",
    ]
    assert {q.server for q in chosen(parse_options(["m", "--only", "time"]))} == {"time"}
    assert len(chosen(parse_options(["m", "--questions", "3"]))) == 3
    with pytest.raises(SystemExit):
        chosen(parse_options(["m", "--only", "nothing.like.this"]))

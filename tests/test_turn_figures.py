"""A turn's figures over all its generations (agent/figures.py): never a rate from a one-token
generation or a burst, the whole turn in the line and in ``--json``'s ``tokens``. The generations are
those a real run of Qwen2.5-Coder-0.5B gave for "how many kg is 10 pounds?" (issue 30's bench
records: five generations, the last one token long, reported as 23322.5 tok/s)."""

from __future__ import annotations

from mcp_chat_tui.agent.events import GenerationStats, TurnEnd, TurnFinished
from mcp_chat_tui.agent.figures import TurnFigures, generation_rate
from mcp_chat_tui.cli.report import OneShotReport
from mcp_chat_tui.engine.events import Stats


def stats(prompt: int, prefilled: int, generated: int, first: float, prefill: float, decode: float) -> Stats:
    rate = generated / decode if decode else 0.0
    return Stats(prompt, prefilled, generated, first, rate, 1.0, prefill_time=prefill, decode_time=decode)


REAL = [
    stats(707, 707, 33, 57.77, 56.9, 29.6),
    stats(774, 67, 512, 6.38, 5.9, 532.3),
    stats(1711, 937, 33, 72.38, 71.5, 27.7),
    stats(1778, 67, 33, 9.19, 8.6, 29.0),
    stats(1845, 67, 1, 8.09, 8.0, 0.00004),  # one token: 1 / 0.00004 s would be 25000 tok/s
]


def test_a_one_token_generation_gives_no_rate():
    assert generation_rate(REAL[-1]) is None
    assert TurnFigures(REAL[-1:]).decode_rate is None
    line = TurnFigures(REAL[-1:]).line()
    assert line == "1 tokens, prefilled 67 of 1845 prompt tokens at 8.4 tok/s, first token 8.1 s"


def test_the_rates_are_the_whole_turns():
    figures = TurnFigures(REAL)
    decoded = 32 + 511 + 32 + 32
    assert figures.decode_rate == decoded / (29.6 + 532.3 + 27.7 + 29.0)
    assert figures.prefill_rate == (707 + 67 + 937 + 67 + 67) / (56.9 + 5.9 + 71.5 + 8.6 + 8.0)
    assert figures.time_to_first_token == 57.77
    assert figures.line() == (
        "612 tokens in 5 generations at 1.0 tok/s, prefilled 1845 of 6815 prompt tokens at 12.2 tok/s, "
        "first token 57.8 s"
    )


def test_a_reply_that_came_in_one_burst_is_not_timed():
    burst = stats(40, 40, 9, 0.01, 0.01, 0.0002)  # a server that sent its whole reply at once
    assert TurnFigures([burst]).decode_rate is None


def test_json_tokens_cover_the_turn_and_each_generation():
    report = OneShotReport("how many kg is 10 pounds?", "qwen")
    for generation in REAL:
        report.record(GenerationStats(generation, 32768))
    report.record(TurnFinished(TurnEnd.NO_ANSWER, 5, note="no answer: the model's last reply had no text"))
    tokens = report.tokens()
    assert (tokens["prompt"], tokens["prefilled"], tokens["generated"]) == (6815, 1845, 612)
    assert tokens["decode_tokens_per_second"] == round(TurnFigures(REAL).decode_rate or 0, 2) == 0.98
    assert tokens["time_to_first_token"] == 57.77
    assert [g["tokens_per_second"] for g in tokens["generations"]][-1] is None
    assert tokens["generations"][1]["decode_time"] == 532.3
    assert report.to_json()["end"] == "no_answer" and report.exit_code == 3

"""The recogniser over what real models wrote (tests/data/real_replies/*.jsonl, recorded with
scripts/record_real_replies.py; what each should parse to was decided by reading it).

Each sample is fed as the MLX engine feeds it: token by token, each special token's text dropped by
its id, then the recogniser; and its text again in chunks of every size up to 64 and split in two at
every point, which must give the same result."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.special_tokens import SpecialTokenText
from mcp_chat_tui.engine.toolcalls import ToolCallStream

DATA = Path(__file__).parent / "data" / "real_replies"
SAMPLES = [
    pytest.param(sample, id=f"{path.stem}:{number}")
    for path in sorted(DATA.glob("*.jsonl"))
    for number, sample in enumerate(json.loads(line) for line in path.read_text().splitlines() if line.strip())
]


def markers(sample: dict) -> dict:
    """The tool-call markers and parser mlx-lm gave the model's tokenizer (``tool_parser``: its module)."""
    if not sample.get("tool_parser"):
        return {}
    module = importlib.import_module(f"mlx_lm.tool_parsers.{sample['tool_parser']}")
    return dict(
        tool_call_start=module.tool_call_start, tool_call_end=module.tool_call_end, tool_parser=module.parse_tool_call
    )


def specials(sample: dict) -> dict[int, str]:
    return {int(token): text for token, text in sample.get("special", {}).items()}


def recognise(sample: dict, chunks: list[tuple[int | None, str]]) -> tuple[str, list]:
    stream = ToolCallStream(set(sample["tools"]), **markers(sample))
    special = SpecialTokenText(specials(sample), stream.markers)
    events = []
    for token, text in chunks:
        piece = special.take(token, text) if token is not None else text
        events.extend(stream.feed(piece))
    events.extend(stream.finish())
    visible = "".join(e.text for e in events if isinstance(e, TextDelta))
    return visible, [e for e in events if isinstance(e, (ToolCallProposed, ToolCallMalformed))]


def described(calls: list) -> list[dict]:
    """Calls as the samples' ``expect`` writes them."""
    out = []
    for call in calls:
        if isinstance(call, ToolCallProposed):
            out.append({"name": call.name, "arguments": call.arguments})
        else:
            out.append({"malformed": call.reason, "nearest": list(call.nearest)})
    return out


def matches(calls: list[dict], expected: list[dict]) -> bool:
    if len(calls) != len(expected):
        return False
    for call, want in zip(calls, expected, strict=True):
        if "malformed" in want:
            if "malformed" not in call or not call["malformed"].startswith(want["malformed"]):
                return False
            if "nearest" in want and call["nearest"] != want["nearest"]:
                return False
        elif call != want:
            return False
    return True


def test_there_are_samples_of_every_kind_the_issue_names():
    kinds = {kind for sample in SAMPLES for kind in sample.values[0]["expect"].get("kinds", [])}
    assert {"fenced json call", "leading special token", "two calls", "invented name", "json or code as text"} <= kinds


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_real_reply_parses_as_read(sample):
    expect = sample["expect"]
    pieces = [(token, text) for token, text in sample.get("pieces") or [[None, sample["raw"]]]]
    visible, calls = recognise(sample, pieces)
    assert visible == expect["text"]
    assert matches(described(calls), expect["calls"]), described(calls)
    dropped = SpecialTokenText(specials(sample))
    text = "".join(dropped.take(token, piece) if token is not None else piece for token, piece in pieces)
    whole = recognise(sample, [(None, text)])
    assert (visible, described(calls)) == (whole[0], described(whole[1]))
    for size in range(1, min(len(text), 64) + 1):
        chunks = [(None, text[i : i + size]) for i in range(0, len(text), size)]
        got = recognise(sample, chunks)
        assert (got[0], described(got[1])) == (visible, described(calls)), f"chunks of {size}"
    for cut in range(1, len(text)):
        got = recognise(sample, [(None, text[:cut]), (None, text[cut:])])
        assert (got[0], described(got[1])) == (visible, described(calls)), f"split at {cut}"

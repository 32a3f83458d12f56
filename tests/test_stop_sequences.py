"""Stop sequences matched in streamed text (engine/stops.py), and through the remote engine against
the scripted endpoint, which streams a reply word by word and ignores ``stop``: the app ends the
reply before the first stop sequence itself, across pieces, and gives on text that only began one."""

from __future__ import annotations

import pytest

from mcp_chat_tui.engine.events import Done, TextDelta
from mcp_chat_tui.engine.generation import ReplyOverrides
from mcp_chat_tui.engine.remote import OpenAIEngine
from mcp_chat_tui.engine.stops import StopSequences
from tests.scripted_endpoint import ScriptedEndpoint


def streamed(stops: StopSequences, pieces: list[str]) -> str:
    return "".join(stops.feed(piece) for piece in pieces) + stops.rest()


@pytest.mark.parametrize(
    ("pieces", "sequences", "text", "matched"),
    [
        (["one ", "two ", "three"], ["two three"], "one ", "two three"),  # across pieces
        (["one ", "tw", "o ", "four"], ["two three"], "one two four", None),  # began one, was not
        (["a b", "c d"], ["d", "bc"], "a ", "bc"),  # the earliest in the text wins
        (["abc"], ["", "x"], "abc", None),  # an empty sequence stops nothing
        (["END"], ["END"], "", "END"),
    ],
)
def test_text_ends_before_the_first_stop_sequence(pieces, sequences, text, matched):
    stops = StopSequences(sequences)
    assert streamed(stops, pieces) == text
    assert stops.matched == matched


async def reply(endpoint: ScriptedEndpoint, overrides: ReplyOverrides) -> tuple[str, str]:
    engine = OpenAIEngine(endpoint.url, "m")
    text, finish = "", ""
    async for event in engine.stream([{"role": "user", "content": "go"}], overrides=overrides):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, Done):
            finish = event.finish_reason
    return text, finish


async def test_the_remote_engine_sends_the_stop_sequences_and_ends_the_reply_at_one_itself():
    with ScriptedEndpoint(["one two three four", "one two four six"]) as endpoint:
        assert await reply(endpoint, ReplyOverrides(stop=("two three",))) == ("one ", "stop_sequence")
        assert await reply(endpoint, ReplyOverrides(stop=("two three",))) == ("one two four six", "stop")
    assert [request["stop"] for request in endpoint.requests] == [["two three"], ["two three"]]

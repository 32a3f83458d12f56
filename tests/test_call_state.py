"""One vocabulary for a call's outcome: the agent's, the transcript's and both front ends' words and
symbols come from core/call_state.py, and transcripts written before it still load."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from mcp_chat_tui.agent.events import CallFinished, PlannedCall
from mcp_chat_tui.cli.plain_console import PlainConsole
from mcp_chat_tui.core.call_state import OUTCOMES, CallState
from mcp_chat_tui.transcript import parse
from mcp_chat_tui.ui.transcript_view import call_state_for
from mcp_chat_tui.ui.widgets.call_columns import call_state_label

# The words a transcript's result fence has always carried (docs/transcript-format.md, "Result statuses").
WORDS_ON_DISK = ("done", "error", "timeout", "denied", "malformed", "cancelled", "interrupted", "repeated")


def transcript_with(status: str) -> str:
    """A conversation file as the app wrote it before this vocabulary: one call with that result status."""
    return (
        "💬: look it up\n\n"
        '🤖:[demo]\n❓:[yo] `{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}`\n\n'
        f'🛠️: [lookup][call_1] {{"server": "demo", "duration": 0.5}}\n```{status}\nthe result\n```\n\n'
        "that is all\n"
    )


@pytest.mark.parametrize("word", WORDS_ON_DISK)
def test_a_transcript_written_before_loads_into_the_same_outcome(word: str) -> None:
    transcript = parse(transcript_with(word))
    proposal = transcript.exchanges[0].steps[0].proposals[0]
    assert proposal.result is not None and proposal.result.status == word
    state = call_state_for(proposal)
    assert state.value == word and state.finished


def test_the_outcomes_are_the_words_on_disk() -> None:
    assert tuple(state.value for state in OUTCOMES) == WORDS_ON_DISK


def plain_title(status: CallState) -> str:
    """The title of the panel --plain prints when a call ends with ``status``."""
    out = io.StringIO()
    console = PlainConsole(Console(file=out, width=100, color_system=None), None)
    console(CallFinished(PlannedCall("call_1", "lookup", {}), status, "the result", None, 0.5))
    return out.getvalue().splitlines()[0]


@pytest.mark.parametrize("status", [s for s in OUTCOMES if s is not CallState.MALFORMED])
def test_plain_and_the_sidebar_mark_an_outcome_alike(status: CallState) -> None:
    """Before: --plain said "timeout" where the screen said "timed out"."""
    glyph, words = call_state_label(status).split(" ", 1)
    title = plain_title(status)
    assert f"{glyph} lookup {words}" in title


def test_a_malformed_call_has_one_symbol() -> None:
    """Before: --plain marked it "?", the symbol the screen gives a call awaiting approval."""
    assert plain_title(CallState.MALFORMED).split()[1] == CallState.MALFORMED.glyph == "!"
    assert len({state.glyph for state in CallState}) == len(CallState)

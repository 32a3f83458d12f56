"""What the app sends the demo model over a whole conversation, built with the app's own code.

At each exchange the agent sends (``Agent.prompt_messages``): a system message holding the demo
server's instructions, one user message with the summaries of the turns that left the window (the
last ``max_turns``), then the window's turns in full. After each reply the app asks the model for
the one-line summary of each turn that leaves the window, in a request of its own
(``agent/memory_window.py``: ``summary_request``). ``play`` runs a synthetic conversation through the
agent's own ``Memory`` and prompt code, so the prompts and summary requests the model is trained on
are those the app sends, token for token (``tests/test_demo_training_data.py`` checks it against the
real agent and server).

The summary the model is taught to write is built from the exchange's own text (the request, the
tools called, the answer), so writing it is copying, which a model this small can do, and reading it
back is reading its own format. A few summaries in other words stand for the ones a user writes by
hand in the transcript; a few fail (the turn then stays in full, as in the app).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from mcp_chat_tui.agent import Agent, ApprovalPolicy  # noqa: E402
from mcp_chat_tui.agent.memory_window import MAX_SUMMARY_CHARS, summary_request  # noqa: E402
from mcp_chat_tui.agent.turn import DENIED_MESSAGE  # noqa: E402
from mcp_chat_tui.core.text import one_line  # noqa: E402
from mcp_chat_tui.servers.notifications import instructions_prompt  # noqa: E402

# max_turns of the conversations played (weights): the default, 3, most of the time
MAX_TURNS = {3: 70, 1: 5, 2: 10, 4: 10, 5: 5}
COMPACT_SHARE = 0.04  # of conversations, in which the user types /compact before one exchange
HAND_SUMMARY_SHARE = 0.05  # of summaries, written in other words (as a user may write them in the file)
FAILED_SUMMARY_SHARE = 0.04  # of summary requests, that fail (the turn stays in full until the next try)


def system_text(server_instructions: str) -> str:
    """The system message the app sends with the demo server and no system prompt of the user's."""
    return instructions_prompt([("demo", server_instructions)])


def summary_line(turn: list[dict[str, Any]]) -> str:
    """The one line the model is taught to write for ``turn``: what was asked, the tools it called
    (a denied one marked so), and its answer (lines joined by " / "), within the app's limit."""
    asked = str(turn[0]["content"])
    results = {m.get("tool_call_id"): m.get("content") for m in turn if m["role"] == "tool"}
    called = []
    for message in turn:
        for call in message.get("tool_calls") or []:
            denied = results.get(call.get("id")) == DENIED_MESSAGE
            called.append(call["function"]["name"] + (" (denied)" if denied else ""))
    answer = " / ".join(line.strip() for line in str(turn[-1]["content"]).splitlines() if line.strip())
    head = f"You asked: {asked}; I " + (f"called {', '.join(called)} and answered: " if called else "answered: ")
    return one_line(head + answer, MAX_SUMMARY_CHARS)


def hand_summary(turn: list[dict[str, Any]], rng: random.Random) -> str:
    """A summary in other words, as a person might write one in the transcript."""
    asked = str(turn[0]["content"])
    answer = one_line(str(turn[-1]["content"]), 100)
    tools = [c["function"]["name"] for m in turn for c in m.get("tool_calls") or []]
    forms = [f"{asked} -> {answer}", f"The user asked {asked!r} and got: {answer}", f"asked about {asked}"]
    if tools:
        forms.append(f"used {tools[0]} for {asked!r}")
    return rng.choice(forms)


class Instructions:
    """The agent's tool provider, as far as the prompt goes: the servers' instructions."""

    def __init__(self, text: str):
        self.text = text

    def instructions_prompt(self) -> str:
        return self.text


@dataclass
class View:
    """One request the app sends: its messages, and where the reply being taught starts (every
    assistant message from ``taught`` on is what the model must write; the rest is the prompt).
    ``tools``: whether the tools are offered (the summary requests have none)."""

    messages: list[dict[str, Any]]
    taught: int
    tools: bool = True


def play(
    turns: list[list[dict[str, Any]]], system: str, rng: random.Random, max_turns: int | None = None
) -> list[View]:
    """Every request the app makes over ``turns``, in order: one per exchange (the window, the
    summaries message) and one per summary it asks for. Without ``max_turns`` it is drawn, and so are
    an occasional ``/compact`` and hand-written and failed summaries; with it, none of those."""
    drawn = max_turns is None
    if max_turns is None:
        max_turns = rng.choices(list(MAX_TURNS), list(MAX_TURNS.values()))[0]
    agent = Agent(None, Instructions(system), ApprovalPolicy("auto"), max_turns=max_turns)  # type: ignore[arg-type]
    compact = drawn and len(turns) > 1 and rng.random() < COMPACT_SHARE
    compact_before = rng.randrange(1, len(turns)) if compact else None
    views = []
    for number, turn in enumerate(turns):
        if number == compact_before:
            agent.turns = turns[:number]
            views += _summarise(agent, agent.memory.due_compacting(number), rng, drawn)
        agent.turns = turns[: number + 1]
        messages = agent.prompt_messages()
        views.append(View(messages, len(messages) - len(turn) + 1))
        views += _summarise(agent, agent.memory.due(number + 2), rng, drawn)  # after the reply: what leaves the window
    return views


def _summarise(agent: Agent, due: list[int], rng: random.Random, noisy: bool) -> list[View]:
    """Write the summaries of the ``due`` turns as the app does (oldest first, the first failure ends
    it); the requests whose line is the model's are returned, to be taught. ``noisy``: some fail,
    some are written by hand."""
    agent.memory.fit(len(agent.turns))
    views = []
    for index in due:
        if noisy and rng.random() < FAILED_SUMMARY_SHARE:
            return views
        turn = agent.turns[index]
        if noisy and rng.random() < HAND_SUMMARY_SHARE:
            agent.memory.summaries[index] = hand_summary(turn, rng)
            continue
        line = summary_line(turn)
        agent.memory.summaries[index] = line
        views.append(View([*summary_request(turn), {"role": "assistant", "content": line}], 2, tools=False))
    return views

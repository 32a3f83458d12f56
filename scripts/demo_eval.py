"""How well the demo model does what the app asks of it: greedy replies (mlx-lm) to the prompts the app sends.

- One request of each kind (held-out cities, topics, words), alone or after an earlier exchange: the
  call (name and exact arguments), and the answer using the result; plain chat; a denied call.
- Whole conversations played as the app plays them (``max_turns`` 3): the model's own calls, the
  tools' real results, its answers and the summaries it writes go back into its prompt. First the
  README's questions in order, then held-out conversations of up to seven exchanges. Each exchange
  counts as right when the call and the answer are; each summary is compared with the line it was
  taught (``demo_memory.summary_line``).

Used by ``train_demo_model.py`` (at the end of training, and ``--eval-only``).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo_conversations import README_QUESTIONS, TOOL_KINDS, Conversations, ToolRunner, error_reason
from demo_memory import Instructions, summary_line

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.agent.memory_window import MAX_SUMMARY_CHARS, summary_request
from mcp_chat_tui.agent.turn import DENIED_MESSAGE
from mcp_chat_tui.core.text import one_line
from mcp_chat_tui.engine.message_shapes import for_template

CALL_START, CALL_END = "<tool_call>", "</tool_call>"
MOMENT = datetime(2026, 3, 14, 15, 9, tzinfo=UTC)  # the clock of the conversations played


class Replier:
    """Greedy replies of the model in ``folder`` to what the app would send."""

    def __init__(self, folder: Path, tools: list[dict], system: str):
        import mlx.core as mx
        from mlx_lm import load
        from mlx_lm.sample_utils import make_sampler

        mx.set_default_device(mx.cpu)
        self.model, self.tokenizer = load(str(folder))
        assert self.tokenizer.has_tool_calling, "the chat template does not select a tool parser"
        self.tools, self.system, self.greedy = tools, system, make_sampler(temp=0.0)

    def reply(self, messages: list[dict], tools: bool = True, max_tokens: int = 120) -> str:
        from mlx_lm import generate

        prompt = self.tokenizer.apply_chat_template(
            for_template(messages), tools=self.tools if tools else None, add_generation_prompt=True
        )
        return generate(self.model, self.tokenizer, prompt, max_tokens=max_tokens, sampler=self.greedy)

    def with_system(self, messages: list[dict]) -> list[dict]:
        return [{"role": "system", "content": self.system}, *messages]

    def call_in(self, text: str) -> dict | None:
        """The call in generated text, parsed with the tokenizer's own markers and parser, or None."""
        if CALL_START not in text or CALL_END not in text:
            return None
        try:
            return self.tokenizer.tool_parser(text.split(CALL_START, 1)[1].split(CALL_END, 1)[0], None)
        except Exception:
            return None


def result_key(kind: str, result: str) -> str:
    """The part of a tool result a correct answer must contain."""
    if result.startswith("Error: "):
        return error_reason(result).rstrip(".")[:20]
    if result.startswith("No results"):
        return "no results"
    if result == DENIED_MESSAGE:
        return "denied"
    if kind in ("calculator", "convert_units"):
        return result.split(" = ")[-1]
    if kind == "current_time":
        return result.split(" ")[1]
    if kind == "web_search":
        return result.split("\n")[0][2:].split(" (")[0]
    if kind == "read_file":
        return result.strip().split("\n")[0]
    return result.split(" ")[1]  # sleep: "Slept N seconds."


def expected_call(turn: list[dict]) -> dict | None:
    calls = turn[1].get("tool_calls") if len(turn) > 2 else None
    if not calls:
        return None
    function = calls[0]["function"]
    arguments = function["arguments"]
    return {"name": function["name"], "arguments": json.loads(arguments) if isinstance(arguments, str) else arguments}


def evaluate_requests(replier: Replier, maker: Conversations, per_kind: int) -> None:
    """One held-out request per kind at a time (after an earlier exchange 30% of the time)."""
    print(f"\nheld-out requests ({per_kind} per kind, greedy, with the app's system message):")
    for kind in TOOL_KINDS + ["chat"]:
        calls_ok = answers_use = 0
        failures = []
        for _ in range(per_kind):
            earlier = maker.turn(maker.rng.choice(TOOL_KINDS)) if maker.rng.random() < 0.3 else []
            turn = maker.turn(kind)
            text = replier.reply(replier.with_system(earlier + turn[:1]))
            if kind == "chat":
                calls_ok += CALL_START not in text
                answers_use += text.strip() == turn[1]["content"]
                continue
            good = replier.call_in(text) == expected_call(turn)
            calls_ok += good
            if not good and len(failures) < 3:
                failures.append(f"    {turn[0]['content']!r} -> {text!r}")
            answer = replier.reply(replier.with_system(earlier + turn[:3]))
            answers_use += CALL_START not in answer and result_key(kind, turn[2]["content"]) in answer
        what = "no tool call" if kind == "chat" else "tool call (name + exact arguments)"
        use = "exact reply" if kind == "chat" else "answer uses the result"
        print(f"  {kind:14s} {what} {calls_ok}/{per_kind}; {use} {answers_use}/{per_kind}")
        for line in failures:
            print(line)
    denied_ok = 0
    for _ in range(per_kind):
        turn = maker.turn(maker.rng.choice(TOOL_KINDS))
        turn[2] = dict(turn[2], content=DENIED_MESSAGE)
        answer = replier.reply(replier.with_system(turn[:3]))
        denied_ok += CALL_START not in answer and "denied" in answer
    print(f"  {'denied call':14s} answer says it was denied {denied_ok}/{per_kind}")


class Conversation:
    """One conversation played as the app plays it, on the model's own replies."""

    def __init__(self, replier: Replier, run_tool: ToolRunner, max_turns: int = 3):
        self.replier, self.run_tool = replier, run_tool
        self.agent = Agent(None, Instructions(replier.system), ApprovalPolicy("auto"), max_turns=max_turns)  # type: ignore[arg-type]
        self.summaries_right = self.summaries_written = 0
        self.log: list[str] = []

    def exchange(self, kind: str, expected: list[dict]) -> bool:
        """Ask ``expected``'s request; True when the model called as ``expected`` does and its answer
        uses the result (or, for chat, answered as ``expected`` does without a call)."""
        turn: list[dict[str, Any]] = [{"role": "user", "content": expected[0]["content"]}]
        self.agent.turns.append(turn)
        text = self.replier.reply(self.agent.prompt_messages())
        call = self.replier.call_in(text)
        if call is None or kind == "chat":
            turn.append({"role": "assistant", "content": text.strip()})
            right = kind == "chat" and text.strip() == expected[-1]["content"]
        else:
            call_id = f"call_{len(self.agent.messages)}"
            wire = {"name": call["name"], "arguments": json.dumps(call.get("arguments") or {})}
            turn.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": call_id, "type": "function", "function": wire}],
                }
            )
            known = call["name"] in TOOL_KINDS and isinstance(call.get("arguments"), dict)
            result = self.run_tool(call["name"], call["arguments"], MOMENT) if known else "Error: unknown tool"
            turn.append({"role": "tool", "tool_call_id": call_id, "name": call["name"], "content": result})
            answer = self.replier.reply(self.agent.prompt_messages()).strip()
            turn.append({"role": "assistant", "content": answer})
            right = call == expected_call(expected) and CALL_START not in answer and result_key(kind, result) in answer
        self.log.append(f"    {'ok ' if right else 'BAD'} {turn[0]['content']!r} -> {turn[1:]!r}"[:400])
        self.summarise()
        return right

    def summarise(self) -> None:
        """The summaries the app asks for after a reply, written by the model (first line, cut)."""
        memory = self.agent.memory
        memory.fit(len(self.agent.turns))
        for index in memory.due(len(self.agent.turns) + 1):
            turn = self.agent.turns[index]
            written = self.replier.reply(summary_request(turn), tools=False, max_tokens=90).strip()
            line = one_line(written.split("\n", 1)[0], MAX_SUMMARY_CHARS)
            memory.summaries[index] = line or None
            self.summaries_written += 1
            self.summaries_right += line == summary_line(turn)
            if not line:
                return


def evaluate_conversations(replier: Replier, maker: Conversations, run_tool: ToolRunner, count: int) -> None:
    """The README's questions in order, then ``count`` held-out conversations of 3 to 7 exchanges."""
    kinds = TOOL_KINDS + ["chat"]
    plays = [[(kind, maker.turn(kind, (text, arguments))) for kind, text, arguments in README_QUESTIONS]]
    rng = random.Random(maker.rng.random())
    for _ in range(count):
        plays.append([(kind, maker.turn(kind)) for kind in rng.choices(kinds, k=rng.randint(3, 7))])
    right = total = 0
    summaries_right = summaries = 0
    print(f"\nwhole conversations (the README's questions, then {count} held-out; max_turns 3, greedy):")
    for number, play in enumerate(plays):
        conversation = Conversation(replier, run_tool)
        marks = [conversation.exchange(kind, turn) for kind, turn in play]
        right, total = right + sum(marks), total + len(marks)
        summaries_right += conversation.summaries_right
        summaries += conversation.summaries_written
        print(f"  {'README' if number == 0 else number:>6}: {''.join('+' if m else '-' for m in marks)}")
        if number == 0 or (not all(marks) and number < 4):
            print("\n".join(conversation.log))
    print(
        f"  exchanges right {right}/{total} = {right / max(total, 1):.0%}; summaries as taught {summaries_right}/{summaries}"
    )

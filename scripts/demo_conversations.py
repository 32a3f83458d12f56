"""The synthetic conversations the demo model is trained on, made with the real demo tools.

Every tool result is a real output of the demo server's tool functions (the clock and
``asyncio.sleep`` patched so results vary and sleeping is instant, ``read_file`` reading from a
scratch folder); the tools themselves come from the real demo server over stdio. Used by
``train_demo_model.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import types
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import available_timezones

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

import mcp_chat_tui.demo.server as demo  # noqa: E402
from mcp_chat_tui.agent.turn import DENIED_MESSAGE  # noqa: E402
from mcp_chat_tui.core.tools import ToolSpec  # noqa: E402

GREETING = (
    "Hello! I am the tiny demo model of mcp-chat-tui. I can use the demo tools: "
    "calculator, current_time, convert_units, web_search, read_file and sleep."
)


# --------------------------------------------------------------------------- tools


async def _list_demo_server() -> tuple[list[ToolSpec], str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_chat_tui.demo.server"], cwd=str(REPO_ROOT))
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        instructions = client.instructions or ""
    specs = [
        ToolSpec(
            server="demo",
            name=t.name,
            description=t.description or "",
            input_schema=t.input_schema,
            annotations=t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else {},
            title=t.title,
        )
        for t in tools
    ]
    return specs, instructions


def demo_server_listing() -> tuple[list[dict], str]:
    """The demo server's tools exactly as the app passes them to the chat template, and its instructions
    (which the app puts in the system message)."""
    specs, instructions = asyncio.run(_list_demo_server())
    return [spec.to_openai() for spec in specs], instructions


def demo_tools_openai() -> list[dict]:
    """The demo server's tools exactly as the app passes them to the chat template."""
    return demo_server_listing()[0]


class _Clock:
    """Stands in for ``datetime`` in the demo server so ``current_time`` reports chosen moments."""

    moment = datetime(2025, 1, 1, tzinfo=UTC)

    @classmethod
    def now(cls, tz=None):
        return cls.moment.astimezone(tz) if tz else cls.moment


async def _no_sleep(seconds):
    return None


class ToolRunner:
    """Calls the demo tools through the real server object (``demo.server.call_tool``: the SDK checks the
    arguments and words the errors); returns the text the app puts in the tool message.

    ``tests/test_demo_training_data.py`` checks that text against what the agent sends after a call
    through the real server over stdio.
    """

    def __init__(self, workdir: Path):
        self.workdir = workdir

    def __call__(self, name: str, arguments: dict, moment: datetime | None = None) -> str:
        saved = demo.datetime, demo.asyncio
        demo.datetime = _Clock
        demo.asyncio = types.SimpleNamespace(sleep=_no_sleep)
        if moment is not None:
            _Clock.moment = moment
        cwd = os.getcwd()
        os.chdir(self.workdir)
        try:
            result = asyncio.run(demo.server.call_tool(name, arguments))
        except ToolError as exc:
            return f"Error: {exc}"  # ToolCallResult.for_model() of an error result: "Error: Error executing tool ..."
        finally:
            os.chdir(cwd)
            demo.datetime, demo.asyncio = saved
        [block] = result.content
        return f"Error: {block.text}" if result.is_error else block.text


def error_reason(result: str) -> str:
    """What went wrong, from a tool message: "Error: Error executing tool NAME: REASON" gives REASON."""
    reason = result.removeprefix("Error: ")
    if reason.startswith("Error executing tool ") and ": " in reason:
        reason = reason.split(": ", 1)[1]
    return reason


# --------------------------------------------------------------------------- synthetic conversations

ZONE_PREFIXES = ("Africa", "America", "Asia", "Australia", "Europe", "Pacific", "Atlantic", "Indian")


def demo_zones() -> list[str]:
    return sorted(
        z for z in available_timezones() if z.count("/") == 1 and z.split("/")[0] in ZONE_PREFIXES and "GMT" not in z
    )


UNITS = {
    "length": ["km", "miles", "m", "meters", "feet", "ft", "inches", "cm", "yards", "mm", "kilometers", "mi"],
    "mass": ["kg", "pounds", "lb", "grams", "g", "ounces", "oz", "kilograms", "tonnes"],
    "volume": ["liters", "l", "ml", "gallons", "cups", "litres"],
    "speed": ["km/h", "mph", "m/s", "knots"],
    "temperature": ["celsius", "fahrenheit", "kelvin", "c", "f"],
}

SEARCH_TOPICS = [
    "the speed of light",
    "speed of light",
    "MLX",
    "MLX framework",
    "Model Context Protocol",
    "MCP",
    "Textual",
    "Tokyo",
    "Tokyo travel",
    "Paris weather",
    "weather in Paris",
    "Python",
    "Python programming",
    "Rust",
    "Rust language",
    "Mount Everest",
    "Everest height",
    "coffee roasting",
    "how coffee is roasted",
    "planets",
    "solar system",
    "marathon distance",
    "marathon",
    "language models",
    "large language models",
    "chess champions",
    "world chess champions",
    "sourdough bread",
    "sourdough",
    "Linux kernel",
    "Linux",
    "bees",
    "pollination",
    "Great Wall of China",
    "the Great Wall",
    "stock market",
    "stocks",
    "moon landing",
    "Apollo 11",
    "light speed",
    "tool calling",
    "Apple silicon",
    "cherry blossoms",
]
SEARCH_WORDS = [
    "history",
    "jazz",
    "football",
    "volcano",
    "piano",
    "ocean",
    "tea",
    "guitar",
    "desert",
    "robots",
    "origami",
    "tango",
    "whales",
    "pizza",
    "cycling",
    "tennis",
    "poetry",
    "glaciers",
    "dinosaurs",
    "vikings",
    "opera",
    "sushi",
    "kites",
    "owls",
    "castles",
    "comets",
    "rainbows",
    "yoga",
    "cheese",
    "trains",
    "bridges",
    "deserts",
    "jungle",
    "wolves",
    "cactus",
    "ballet",
]
FILE_STEMS = [
    "notes",
    "todo",
    "readme",
    "plan",
    "ideas",
    "log",
    "draft",
    "list",
    "report",
    "config",
    "summary",
    "journal",
    "shopping",
    "recipe",
    "agenda",
    "memo",
    "data",
    "tasks",
    "hello",
    "story",
]
FILE_EXTS = [".txt", ".md", ".txt", ".csv", ".log", ".toml", ".json", ".py"]
FILE_LINES = [
    "buy milk",
    "call Anna",
    "fix the login bug",
    "meeting at 10",
    "water the plants",
    "ship version 2",
    "read a book",
    "pay rent",
    "book a train",
    "clean the desk",
    "learn MLX",
    "try the demo",
    "walk the dog",
    "send the report",
    "backup the laptop",
]

CHAT = [
    (
        ["hello", "hi", "hey", "hello!", "hi there", "hey there", "good morning", "good evening", "hello there"],
        [GREETING],
    ),
    (["who are you?", "what are you?", "what can you do?", "help", "what tools do you have?"], [GREETING]),
    (["thanks", "thank you", "thanks!", "thank you!", "great, thanks"], ["You're welcome!"]),
    (["bye", "goodbye", "see you"], ["Goodbye!"]),
]


def _num(rng: random.Random, small: bool = False) -> int | float:
    roll = rng.random()
    if roll < 0.15:
        return round(rng.uniform(0.1, 99.9), 1)
    if small or roll < 0.55:
        return rng.randint(1, 20)
    if roll < 0.85:
        return rng.randint(10, 999)
    return rng.randint(1000, 99999)


def _fmt(value: int | float) -> str:
    return f"{value:g}"


class Conversations:
    """Makes conversations for one split: train or held-out (new cities, queries, numbers seen by chance)."""

    def __init__(
        self,
        rng: random.Random,
        run_tool: ToolRunner,
        zones: list[str],
        topics: list[str],
        words: list[str],
        denials: random.Random | None = None,
    ):
        self.rng, self.run_tool, self.zones, self.topics, self.words = rng, run_tool, zones, topics, words
        self.denials = denials  # draws which calls the user denies (None: none are), apart from rng

    # Each request maker returns (user text, tool name, arguments, answer maker(result) -> text); ``given``
    # arguments (a request asked as written, such as the README's) replace the ones drawn.

    def calculator(self, given: dict | None = None):
        rng = self.rng
        a, b = _num(rng), _num(rng)
        kind = rng.random()
        if kind < 0.7:
            op = rng.choice(["+", "-", "*", "/", "*", "+"])
            expression = f"{_fmt(a)} {op} {_fmt(b)}"
        elif kind < 0.8:
            expression = f"{rng.randint(2, 12)}^{rng.randint(2, 12)}"
        elif kind < 0.9:
            c = _num(rng, small=True)
            ops = rng.choices(["+", "-", "*"], k=2)
            expression = f"{_fmt(a)} {ops[0]} {_fmt(b)} {ops[1]} {_fmt(c)}"
        elif kind < 0.96:
            expression = f"sqrt({rng.randint(1, 999)})"
        else:
            expression = f"{_fmt(a)} / 0"
        if given:
            expression = given["expression"]
        phrase = rng.choice(
            [
                "what is {e}?",
                "what is {e}",
                "calculate {e}",
                "how much is {e}",
                "how much is {e}?",
                "compute {e}",
                "what's {e}?",
                "{e} = ?",
                "can you work out {e}?",
                "evaluate {e}",
                "please calculate {e}",
                "what does {e} make?",
                "{e}?",
                "solve {e}",
            ]
        )

        def answer(result: str) -> str:
            if result.startswith("Error: "):
                return f"I could not calculate that: {error_reason(result)}."
            return f"{result}."

        return phrase.format(e=expression), "calculator", {"expression": expression}, answer

    def current_time(self, given: dict | None = None):
        rng = self.rng
        zone = rng.choice(self.zones)
        place = zone if rng.random() < 0.3 else zone.split("/")[1].replace("_", " ")
        if given:
            place = given["timezone"]
        phrase = rng.choice(
            [
                "what time is it in {p}?",
                "current time in {p}",
                "what's the time in {p}?",
                "time in {p}",
                "what time is it in {p}",
                "tell me the time in {p}",
                "what is the time in {p} right now?",
                "current time in {p}?",
                "clock in {p}?",
            ]
        )

        def answer(result: str) -> str:
            if result.startswith("Error: "):
                return f"I could not get the time: {error_reason(result)}."
            day, clock, _, key = result.split(" ")[:4]
            return f"It is {clock} on {day} in {key}."

        return phrase.format(p=place), "current_time", {"timezone": place}, answer

    def convert_units(self, given: dict | None = None):
        rng = self.rng
        dimension = rng.choice(list(UNITS))
        source, target = rng.sample(UNITS[dimension], 2)
        value = _num(rng)
        if given:
            value, source, target = given["value"], given["from_unit"], given["to_unit"]
        phrase = rng.choice(
            [
                "convert {v} {a} to {b}",
                "how many {b} is {v} {a}?",
                "{v} {a} in {b}?",
                "what is {v} {a} in {b}?",
                "convert {v} {a} into {b}",
                "{v} {a} to {b}",
                "how many {b} are {v} {a}?",
                "please convert {v} {a} to {b}",
            ]
        )

        def answer(result: str) -> str:
            if result.startswith("Error: "):
                return f"I could not convert that: {error_reason(result)}."
            left, right = result.split(" = ")
            return f"{left} is {right}."

        arguments = {"value": value, "from_unit": source, "to_unit": target}
        return phrase.format(v=_fmt(value), a=source, b=target), "convert_units", arguments, answer

    def web_search(self, given: dict | None = None):
        rng = self.rng
        if rng.random() < 0.75:
            query = rng.choice(self.topics)
        else:
            query = " ".join(rng.sample(self.words, rng.choice([1, 2])))
        if given:
            query = given["query"]
        phrase = rng.choice(
            [
                "search the web for {q}",
                "look up {q}",
                "search for {q}",
                "find {q} on the web",
                "web search {q}",
                "search the web for {q}",
                "can you look up {q}?",
                "find information about {q}",
                "google {q}",
            ]
        )

        def answer(result: str) -> str:
            if result.startswith("No results for"):
                return f"I found no results for {query}."
            first = result.split("\n")[0][2:]
            title, rest = first.split(" (", 1)
            snippet = rest.split("): ", 1)[1]
            sentence = snippet.split(". ")[0].rstrip(".")
            return f'From "{title}": {sentence}.'

        return phrase.format(q=query), "web_search", {"query": query}, answer

    def read_file(self, given: dict | None = None):
        rng = self.rng
        path = rng.choice(FILE_STEMS) + rng.choice(FILE_EXTS)
        if given:
            path = given["path"]
        if rng.random() < 0.8:
            lines = rng.sample(FILE_LINES, rng.randint(1, 3))
            (self.run_tool.workdir / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
        else:
            (self.run_tool.workdir / path).unlink(missing_ok=True)
        phrase = rng.choice(
            [
                "read the file {f}",
                "read {f}",
                "show me {f}",
                "what's in {f}?",
                "open {f}",
                "cat {f}",
                "read the file {f} please",
                "what does {f} say?",
            ]
        )

        def answer(result: str) -> str:
            if result.startswith("Error: "):
                return f"I could not read {path}: {error_reason(result)}."
            return f"{path} says:\n{result.rstrip()}"

        return phrase.format(f=path), "read_file", {"path": path}, answer

    def sleep(self, given: dict | None = None):
        rng = self.rng
        seconds = rng.choice([1, 2, 3, 5, 10, 0.5, 1.5, 4, 30, 60, rng.randint(1, 120)])
        if given:
            seconds = given["seconds"]
        phrase = rng.choice(
            [
                "wait {s} seconds",
                "sleep for {s} seconds",
                "pause for {s} seconds",
                "wait {s} seconds please",
                "sleep {s} seconds",
                "take a {s} second break",
            ]
        )

        def answer(result: str) -> str:
            return f"Done: I waited {_fmt(seconds)} seconds."

        return phrase.format(s=_fmt(seconds)), "sleep", {"seconds": seconds}, answer

    def turn(self, kind: str, asked: tuple[str, dict] | None = None, moment: datetime | None = None) -> list[dict]:
        """One finished turn: the user's message and everything the assistant and the tools add.
        ``asked``: the request's text and the call's arguments, as given (else drawn); ``moment``:
        the clock's time for the call (else drawn)."""
        if kind == "chat":
            asks, replies = next(((a, r) for a, r in CHAT if asked and asked[0] in a), self.rng.choice(CHAT))
            return [
                {"role": "user", "content": asked[0] if asked else self.rng.choice(asks)},
                {"role": "assistant", "content": self.rng.choice(replies)},
            ]
        user, name, arguments, answer = getattr(self, kind)(asked[1] if asked else None)
        if asked:
            user = asked[0]
        drawn = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=self.rng.randrange(3 * 365 * 24 * 60))
        moment = moment or drawn
        if self.denials and self.denials.random() < DENIAL_SHARE:
            # the user said no in the approval dialog: the model is told so, as the agent tells it
            result = DENIED_MESSAGE
            answer = lambda _: f"You denied the {name} call, so I did not run it."  # noqa: E731
        else:
            result = self.run_tool(name, arguments, moment)
        call_id = f"call_{self.rng.randrange(16**8):08x}"
        call_arguments = json.dumps(arguments) if self.rng.random() < 0.5 else arguments  # both shapes
        return [
            {"role": "user", "content": user},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": call_arguments}}
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": result},
            {"role": "assistant", "content": answer(result)},
        ]


DENIAL_SHARE = 0.06  # of tool calls, when denials are drawn

TOOL_KINDS = ["calculator", "current_time", "convert_units", "web_search", "read_file", "sleep"]
KIND_WEIGHTS = [5, 4, 4, 4, 2, 1, 1]  # the six tools, then plain chat


# The questions the README and docs/reference.md show, in the order a newcomer asks them, and the
# screenshots' conversation (scripts/make_screenshots.py): (kind, request, the call's arguments).
README_QUESTIONS = [
    ("calculator", "what is 12 * 7?", {"expression": "12 * 7"}),
    ("current_time", "what time is it in Tokyo?", {"timezone": "Tokyo"}),
    ("convert_units", "convert 5 km to miles", {"value": 5, "from_unit": "km", "to_unit": "miles"}),
    ("web_search", "search the web for the speed of light", {"query": "the speed of light"}),
]
SCREENSHOT_QUESTIONS = [
    ("calculator", "what is 12 * 7?", {"expression": "12 * 7"}),
    ("web_search", "search the web for MLX", {"query": "MLX"}),
    ("current_time", "what time is it in Tokyo?", {"timezone": "Tokyo"}),
]
# How many exchanges a conversation has (weights): one to seven, so the window (3 by default) fills
# and turns leave it for their summaries.
EXCHANGE_COUNTS = {1: 14, 2: 12, 3: 14, 4: 15, 5: 16, 6: 15, 7: 14}
README_SHARE = 0.06  # of conversations, which begin with the README's questions (or the screenshots') in order


def make_conversations(maker: Conversations, count: int) -> list[list[list[dict]]]:
    """``count`` conversations, each a list of turns (a turn: its messages, as the agent keeps them)."""
    kinds = TOOL_KINDS + ["chat"]
    rng = maker.rng
    conversations = []
    for _ in range(count):
        asked: list = []
        if rng.random() < README_SHARE:
            asked = list(README_QUESTIONS if rng.random() < 0.7 else SCREENSHOT_QUESTIONS)
            asked += [None] * rng.choice([0, 0, 1, 2, 3])
        else:
            asked = [None] * rng.choices(list(EXCHANGE_COUNTS), list(EXCHANGE_COUNTS.values()))[0]
        turns = []
        for question in asked:
            if question is None:
                turns.append(maker.turn(rng.choices(kinds, KIND_WEIGHTS)[0]))
            else:
                kind, text, arguments = question
                turns.append(maker.turn(kind, (text, arguments)))
        conversations.append(turns)
    return conversations

"""The questions of bench/tool_use.py: what a user asks, which servers are offered, the tool that
answers it, how to check the arguments the model wrote, and how to tell that the answer used the result.

``{folder}`` in a prompt is the bench's scratch folder (``prompt_in``) (the filesystem server's root and the working
folder of the app, where the demo server's ``read_file`` reads). ``FILES`` are put there afresh
before each question.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FILES = {
    "notes.txt": "The team meeting moved to Thursday at 10:30 in room B12.\nBring the budget draft.\n",
    "todo.md": "# To do\n\n- renew the passport\n- call the plumber\n",
    "poem.txt": "Roses are red,\nviolets are blue,\nsugar is sweet,\nand so are you.\n",
    "data/prices.csv": "item,price\napple,0.40\npear,0.55\nplum,0.30\n",
    "projects/alpha/README.md": "# Alpha\n\nThe alpha project is a kite that flies itself.\n",
}
PRICES_BYTES = len(FILES["data/prices.csv"].encode())

ArgsCheck = Callable[[dict[str, Any], str], bool]  # (arguments, the scratch folder) -> what the question asked
UsedCheck = Callable[[str, str], bool]  # (result, answer) -> the answer says what the result said


@dataclass(frozen=True)
class Question:
    """One question; ``tools`` are the names that answer it on ``server`` (the first is the one shown)."""

    name: str
    prompt: str
    servers: tuple[str, ...]
    server: str
    tools: tuple[str, ...]
    check_args: ArgsCheck
    used: UsedCheck


# ----- checks of the arguments -----------------------------------------------------------------


def _norm(value: Any) -> str:
    return str(value).strip().strip("'\"").strip().lower()


def equal(**wanted: Any) -> ArgsCheck:
    """Each named argument equals its value (text compared without case or quotes, numbers as numbers)."""

    def check(arguments: dict[str, Any], folder: str) -> bool:
        for key, value in wanted.items():
            given = arguments.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                if not _number(given) == float(value):
                    return False
            elif isinstance(value, tuple):
                if _norm(given) not in {_norm(v) for v in value}:
                    return False
            elif _norm(given) != _norm(value):
                return False
        return True

    return check


def path_ends(key: str, *endings: str) -> ArgsCheck:
    """``arguments[key]`` is a path ending with one of ``endings`` (a slash at its end ignored)."""

    def check(arguments: dict[str, Any], folder: str) -> bool:
        given = str(arguments.get(key, "")).rstrip("/")
        return any(given == e or given.endswith("/" + e) for e in endings)

    return check


def in_folder(key: str = "path") -> ArgsCheck:
    """``arguments[key]`` names the scratch folder itself (its full path, its name, or ".")."""

    def check(arguments: dict[str, Any], folder: str) -> bool:
        given = str(arguments.get(key, "")).rstrip("/")
        return given in {folder, ".", folder.rsplit("/", 1)[-1]}

    return check


def contains(key: str, *words: str) -> ArgsCheck:
    def check(arguments: dict[str, Any], folder: str) -> bool:
        given = _norm(arguments.get(key, ""))
        return all(word.lower() in given for word in words)

    return check


def both(*checks: ArgsCheck) -> ArgsCheck:
    return lambda arguments, folder: all(check(arguments, folder) for check in checks)


def sum_of(a: float, b: float) -> ArgsCheck:
    def check(arguments: dict[str, Any], folder: str) -> bool:
        return sorted([_number(arguments.get("a")), _number(arguments.get("b"))]) == sorted([a, b])

    return check


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def anything(arguments: dict[str, Any], folder: str) -> bool:
    return True


# ----- checks that the answer used the result --------------------------------------------------


def says(*words: str) -> UsedCheck:
    """Each word is in the result and in the answer (without case)."""

    def used(result: str, answer: str) -> bool:
        return all(w.lower() in result.lower() and w.lower() in answer.lower() for w in words)

    return used


def says_number(pattern: str) -> UsedCheck:
    """The number ``pattern``'s group finds in the result is in the answer (rounded as the answer rounds it)."""

    def used(result: str, answer: str) -> bool:
        found = re.search(pattern, result, re.S)
        if found is None:
            return False
        value = float(found.group(1).replace(",", ""))
        for text in re.findall(r"-?\d[\d,]*(?:\.\d+)?", answer):
            given = float(text.replace(",", ""))
            decimals = len(text.split(".")[1]) if "." in text else 0
            if abs(given - value) <= 0.5 * 10**-decimals + 1e-9 and (decimals or abs(value) >= 1 or given == value):
                return True
        return False

    return used


def says_time(pattern: str) -> UsedCheck:
    """The clock time (``HH:MM``) ``pattern``'s group finds in the result is in the answer, written
    as 14:05, 2:05 (pm), or 02:05."""

    def used(result: str, answer: str) -> bool:
        found = re.search(pattern, result, re.S)
        if found is None:
            return False
        hours, minutes = (int(part) for part in found.group(1).split(":")[:2])
        twelve = hours % 12 or 12
        forms = {f"{hours:02d}:{minutes:02d}", f"{hours}:{minutes:02d}", f"{twelve}:{minutes:02d}"}
        return any(re.search(rf"(?<!\d){re.escape(form)}(?!\d)", answer) for form in forms)

    return used


def says_json_field(key: str) -> UsedCheck:
    """The value of ``key`` in the result's JSON (a number or text) is in the answer."""

    def used(result: str, answer: str) -> bool:
        found = re.search(rf'"{re.escape(key)}"\s*:\s*"?([^",}}]+)"?', result)
        return found is not None and found.group(1).strip().lower() in answer.lower()

    return used


def says_last_name(result: str, answer: str) -> bool:
    """The name of the last path in the result (a folder the server allows) is in the answer."""
    paths = re.findall(r"(/[^\s]+)", result)
    return bool(paths) and paths[-1].rstrip("/").rsplit("/", 1)[-1] in answer


ISO_TIME = r"T(\d\d:\d\d)"  # the time servers' "datetime": "2026-11-26T14:05:03+09:00"


def _time_server() -> list[Question]:
    return [
        Question("time.tokyo", "What time is it in Tokyo?", ("time",), "time", ("get_current_time",),
                 equal(timezone="Asia/Tokyo"), says_time(ISO_TIME)),
        Question("time.new_york", "What is the current time in New York?", ("time",), "time", ("get_current_time",),
                 equal(timezone="America/New_York"), says_time(ISO_TIME)),
        Question("time.london", "Tell me the time in London right now.", ("time",), "time", ("get_current_time",),
                 equal(timezone="Europe/London"), says_time(ISO_TIME)),
        Question("time.sydney_day", "What day of the week is it in Sydney now?", ("time",), "time",
                 ("get_current_time",), equal(timezone="Australia/Sydney"), says_json_field("day_of_week")),
        Question("time.convert", "Convert 14:30 London time to Tokyo time.", ("time",), "time", ("convert_time",),
                 equal(source_timezone="Europe/London", time="14:30", target_timezone="Asia/Tokyo"),
                 says_time(r'"target".*?' + ISO_TIME)),
        Question("time.convert_paris", "When it is 09:00 in New York, what time is it in Paris?", ("time",), "time",
                 ("convert_time",), equal(source_timezone="America/New_York", time="09:00",
                                          target_timezone="Europe/Paris"), says_time(r'"target".*?' + ISO_TIME)),
    ]  # fmt: skip


READ_TOOLS = ("read_text_file", "read_file")


def _filesystem_server() -> list[Question]:
    fs = ("filesystem",)
    return [
        Question("fs.read", "Read the file {folder}/notes.txt and tell me what it says.", fs, "filesystem",
                 READ_TOOLS, path_ends("path", "notes.txt"), says("B12")),
        Question("fs.read_price", "What is the price of a pear in {folder}/data/prices.csv?", fs, "filesystem",
                 READ_TOOLS, path_ends("path", "data/prices.csv"), says("0.55")),
        Question("fs.list", "List the files in the folder {folder}.", fs, "filesystem",
                 ("list_directory", "list_directory_with_sizes", "directory_tree"), in_folder(), says("todo.md")),
        Question("fs.size", "How many bytes is the file {folder}/data/prices.csv?", fs, "filesystem",
                 ("get_file_info",), path_ends("path", "data/prices.csv"), says(str(PRICES_BYTES))),
        Question("fs.search", "Find every .md file under {folder}.", fs, "filesystem", ("search_files",),
                 both(in_folder(), contains("pattern", "md")), says("README.md")),
        Question("fs.tree", "Show me the directory tree of {folder}.", fs, "filesystem", ("directory_tree",),
                 in_folder(), says("alpha")),
        Question("fs.head", "Show the first 2 lines of {folder}/poem.txt.", fs, "filesystem", READ_TOOLS,
                 both(path_ends("path", "poem.txt"), equal(head=2)), says("violets")),
        Question("fs.write", "Create a file {folder}/hello.txt containing the text: Hello from the bench",
                 fs, "filesystem", ("write_file",),
                 both(path_ends("path", "hello.txt"), contains("content", "hello from the bench")), says("hello.txt")),
        Question("fs.mkdir", "Create a folder named archive in {folder}.", fs, "filesystem", ("create_directory",),
                 path_ends("path", "archive"), says("archive")),
        Question("fs.move", "Rename {folder}/todo.md to {folder}/done.md.", fs, "filesystem", ("move_file",),
                 both(path_ends("source", "todo.md"), path_ends("destination", "done.md")), says("done.md")),
        Question("fs.allowed", "Which directories are you allowed to access?", fs, "filesystem",
                 ("list_allowed_directories",), anything, says_last_name),
    ]  # fmt: skip


def _everything_server() -> list[Question]:
    ev = ("everything",)
    return [
        Question("every.echo", "Echo the message: hello world", ev, "everything", ("echo",),
                 equal(message="hello world"), says("hello world")),
        Question("every.sum", "What is the sum of 17 and 25?", ev, "everything", ("get-sum",), sum_of(17, 25),
                 says_number(r"is (-?[\d.]+)")),
        Question("every.sum_decimals", "Add 3.5 and 4.25.", ev, "everything", ("get-sum",), sum_of(3.5, 4.25),
                 says_number(r"is (-?[\d.]+)")),
        Question("every.weather", "What is the weather in Chicago?", ev, "everything", ("get-structured-content",),
                 equal(location="Chicago"), says_number(r'"temperature"\s*:\s*(-?[\d.]+)')),
        Question("every.image", "Show me the tiny MCP logo image.", ev, "everything", ("get-tiny-image",), anything,
                 lambda result, answer: "image" in answer.lower()),
        Question("every.env", "What environment variables does the server see? Is PATH set?", ev, "everything",
                 ("get-env",), anything, says("PATH")),
        Question("every.links", "Give me 2 resource links.", ev, "everything", ("get-resource-links",),
                 equal(count=2), says("resource")),
        Question("every.long_op", "Run a long-running operation that takes 2 seconds in 2 steps.", ev, "everything",
                 ("trigger-long-running-operation",), equal(duration=2, steps=2), says("completed")),
    ]  # fmt: skip


def _demo_server() -> list[Question]:
    demo = ("demo",)
    return [
        Question("demo.calc", "what is 12 * 7?", demo, "demo", ("calculator",), contains("expression", "12", "7"),
                 says_number(r"= (-?[\d.]+)")),
        Question("demo.calc_sum", "calculate 1234 + 4321", demo, "demo", ("calculator",),
                 contains("expression", "1234", "4321"), says_number(r"= (-?[\d.]+)")),
        Question("demo.time", "what time is it in Tokyo?", demo, "demo", ("current_time",),
                 equal(timezone=("Asia/Tokyo", "Tokyo")), says_time(r" (\d\d:\d\d) in ")),
        Question("demo.time_london", "what's the time in London?", demo, "demo", ("current_time",),
                 equal(timezone=("Europe/London", "London")), says_time(r" (\d\d:\d\d) in ")),
        Question("demo.units", "convert 5 km to miles", demo, "demo", ("convert_units",),
                 equal(value=5, from_unit=("km", "kilometers", "kilometres"), to_unit=("miles", "mi", "mile")),
                 says_number(r"= (-?[\d.]+)")),
        Question("demo.units_mass", "how many kg is 10 pounds?", demo, "demo", ("convert_units",),
                 equal(value=10, from_unit=("pounds", "lb", "lbs", "pound"), to_unit=("kg", "kilograms", "kilogram")),
                 says_number(r"= (-?[\d.]+)")),
        Question("demo.search", "search the web for the speed of light", demo, "demo", ("web_search",),
                 contains("query", "light"), says_number(r"at ([\d,]+) metres")),
        Question("demo.read", "read the file notes.txt", demo, "demo", ("read_file",), path_ends("path", "notes.txt"),
                 says("B12")),
    ]  # fmt: skip


def all_questions() -> list[Question]:
    """Every question, the demo server's first."""
    return _demo_server() + _time_server() + _filesystem_server() + _everything_server()


def prompt_in(question: Question, folder: str) -> str:
    return question.prompt.replace("{folder}", folder)

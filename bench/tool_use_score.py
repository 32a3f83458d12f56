"""How bench/tool_use.py judges one run of the app: the calls the model wrote, found in what the app
reports by a detector of the bench's own (it does not trust the parser it measures), and the figures.

``detect_calls(text)`` finds every call-shaped JSON value in a text: an object with a name and
arguments (``name``/``arguments``, ``name``/``parameters``, ``function: {name, arguments}``,
``tool_calls: [...]``; arguments as an object or as a JSON string), alone or in a list, whether
it sits in a fenced block, between tags such as ``<tool_call>``, or bare in the text. Single-quoted
(Python-style) objects count too, and so does a call the text ends inside with only its closing
brackets missing (Qwen2.5-Coder-0.5B left off the last brace of ``list_allowed_directories``).
``score(question, report, offered)`` reads one ``-p --json``
report: the calls the app ran, the malformed ones (their raw text), and every reply's text (a call
the app missed is text there).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z0-9_.:\-]{1,40}\|>|<｜[^｜\n]{1,40}｜>")
NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
RAN = {"done", "error", "timeout"}  # outcomes of a call that went to its server


@dataclass(frozen=True)
class WrittenCall:
    """A call the model wrote: the name it used and its arguments (None: not an object)."""

    name: str
    arguments: dict[str, Any] | None
    raw: str = field(default="", compare=False)


@dataclass(frozen=True)
class OfferedTool:
    """A tool the model was offered: the name it saw, its server and tool, and its input schema."""

    model_name: str
    server: str
    tool: str
    schema: dict[str, Any]


# ----- the detector ----------------------------------------------------------------------------


def detect_calls(text: str) -> list[WrittenCall]:
    """Every call-shaped JSON value in ``text``, in order (see the module's docstring)."""
    calls: list[WrittenCall] = []
    position = 0
    while True:
        start = _next_opening(text, position)
        if start < 0:
            return calls
        value, end = _read_value(text, start)
        if end is None:
            unclosed = _read_unclosed(text, start)
            if unclosed is not None and (found := call_shapes(unclosed, text[start:])):
                return calls + found  # the text ends inside the call: only closing brackets are missing
            position = start + 1
            continue
        found = call_shapes(value, text[start:end])
        calls.extend(found)
        position = end if found else start + 1


def _next_opening(text: str, position: int) -> int:
    braces = [index for index in (text.find("{", position), text.find("[", position)) if index >= 0]
    return min(braces) if braces else -1


def _read_value(text: str, start: int) -> tuple[Any, int | None]:
    """The JSON (or Python-literal) value that starts at ``start`` and where it ends (None: none)."""
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
        return value, end
    except ValueError:
        pass
    end = _balanced_end(text, start)
    if end is None:
        return None, None
    try:
        return ast.literal_eval(text[start:end]), end
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, None


def _read_unclosed(text: str, start: int) -> Any:
    """The value opening at ``start`` when the text ends inside it, outside any string, with only its
    closing brackets missing (``{"name": "x", "arguments": {}``: a small model left off the last
    brace); None otherwise."""
    missing = _missing_closers(text, start)
    if not missing:
        return None
    return _read_value(text[start:].rstrip() + missing, 0)[0]


def _missing_closers(text: str, start: int) -> str:
    """The brackets that would close what is open at the end of ``text`` ("" when the span closes,
    a bracket does not match, or the text ends inside a string)."""
    return _scan(text, start)[1]


def _balanced_end(text: str, start: int) -> int | None:
    """Where the bracketed span opening at ``start`` closes, skipping quoted strings (None: it does not)."""
    return _scan(text, start)[0]


def _scan(text: str, start: int) -> tuple[int | None, str]:
    """The bracketed span opening at ``start``, quoted strings skipped: (where it closes, "") when it
    does; (None, the brackets that would close it) when the text ends with it open outside a string;
    else (None, "") (a bracket that does not match, or the text ends inside a string)."""
    closing = {"{": "}", "[": "]"}
    stack: list[str] = []
    quote = ""
    index = start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in closing:
            stack.append(closing[char])
        elif stack and char == stack[-1]:
            stack.pop()
            if not stack:
                return index + 1, ""
        elif char in "}]":
            return None, ""
        index += 1
    return None, "" if quote else "".join(reversed(stack))


def call_shapes(value: Any, raw: str = "") -> list[WrittenCall]:
    """The calls a parsed JSON value holds: a call object, a list of them, or ``{"tool_calls": [...]}``."""
    if isinstance(value, list):
        found = [call for item in value for call in call_shapes(item, raw)]
        return found if found and all(isinstance(item, dict) for item in value) else []
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return call_shapes(value["tool_calls"], raw)
    inner = value.get("function")
    if isinstance(inner, dict):
        merged = {**{k: v for k, v in value.items() if k != "function"}, **inner}
        return call_shapes(merged, raw)
    name = next((value[key] for key in NAME_KEYS if isinstance(value.get(key), str)), None)
    present = [key for key in ARGUMENT_KEYS if key in value]
    if not name or not present:
        return []
    return [WrittenCall(name, _arguments(value[present[0]]), raw)]


def _arguments(given: Any) -> dict[str, Any] | None:
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            return None
    return given if isinstance(given, dict) else None


def leaked_tokens(text: str) -> bool:
    """True when ``text`` holds a model's special-token text (``<|im_start|>``, ``<|eot_id|>``…)."""
    return bool(SPECIAL_TOKEN.search(text))


# ----- one question ----------------------------------------------------------------------------


@dataclass
class QuestionScore:
    """What one question's run shows; ``failure`` says why there is no report (a timeout, a crash)."""

    name: str
    wanted: str
    written: list[str] = field(default_factory=list)  # the names the model wrote calls to, in order
    written_offered: int = 0  # calls written naming an offered tool
    caught_offered: int = 0  # those the app took for calls to that tool (run, or kept from running again)
    run_offered: int = 0  # those the app ran
    right_tool: bool = False
    args_valid: bool = False
    used_result: bool = False
    repeats: int = 0
    leaked: int = 0
    generations: list[dict[str, Any]] = field(default_factory=list)
    end: str | None = None
    failure: str = ""

    @property
    def decode_tps(self) -> float | None:
        return decode_rate(self.generations)

    @property
    def prefill_tps(self) -> float | None:
        return prefill_rate(self.generations)


def score(
    question: Any, report: dict[str, Any] | None, offered: Iterable[OfferedTool], folder: str = "", failure: str = ""
) -> QuestionScore:
    """Judge one ``-p --json`` report of ``question`` (bench/tool_use_questions.py's ``Question``) asked
    with the scratch folder ``folder``; ``offered``: the tools the model was offered."""
    result = QuestionScore(question.name, f"{question.server}/{question.tools[0]}", failure=failure)
    if report is None:
        result.failure = failure or "no report"
        return result
    tools = {tool.model_name: tool for tool in offered}
    by_tool = {(tool.server, tool.tool): tool for tool in tools.values()}
    result.end = report.get("end")
    replies = report.get("replies")
    texts = list(replies) if isinstance(replies, list) else [report.get("answer") or ""]
    written: list[Written] = []
    for entry in report.get("calls") or []:
        if entry.get("raw") is not None:  # malformed: the app says so; what did the model write?
            written += [Written(call, tools.get(call.name)) for call in detect_calls(entry["raw"])]
            continue
        tool = by_tool.get((entry.get("server"), entry.get("tool")))
        name = tool.model_name if tool is not None else str(entry.get("tool"))
        call = WrittenCall(name, entry.get("arguments") if isinstance(entry.get("arguments"), dict) else None)
        written.append(
            Written(call, tool, caught=tool is not None, ran=tool is not None and entry.get("outcome") in RAN)
        )
    for text in texts:  # calls the app showed as text
        written += [Written(call, tools.get(call.name)) for call in detect_calls(text)]
    _score_calls(result, question, written, folder)
    result.used_result = _used_result(question, report, by_tool)
    result.repeats = repeats_run(report.get("calls") or [])
    result.leaked = sum(leaked_tokens(text) for text in texts)
    result.generations = list((report.get("tokens") or {}).get("generations") or [])
    return result


@dataclass(frozen=True)
class Written:
    """A call the model wrote, the offered tool it names (None: no such tool), and what the app did:
    took it for a call (``caught``: its entry names the tool) and ran it."""

    call: WrittenCall
    tool: OfferedTool | None
    caught: bool = False
    ran: bool = False


def _score_calls(result: QuestionScore, question: Any, written: list[Written], folder: str) -> None:
    result.written = [w.call.name for w in written]
    offered = [w for w in written if w.tool is not None]
    result.written_offered = len(offered)
    result.caught_offered = sum(w.caught for w in offered)
    result.run_offered = sum(w.ran for w in offered)
    wanted = [w for w in offered if w.tool is not None and _is_wanted(question, w.tool)]
    result.right_tool = bool(wanted)
    result.args_valid = any(arguments_valid(question, w.tool, w.call.arguments, folder) for w in wanted if w.tool)


def _is_wanted(question: Any, tool: OfferedTool) -> bool:
    return tool.server == question.server and tool.tool in question.tools


def arguments_valid(question: Any, tool: OfferedTool, arguments: dict[str, Any] | None, folder: str = "") -> bool:
    """The arguments are an object, valid against the tool's input schema, and what the question asks."""
    if arguments is None:
        return False
    try:
        jsonschema.validate(arguments, tool.schema)
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        pass  # the server's schema is not valid JSON Schema: judge by the question's own check
    try:
        return bool(question.check_args(arguments, folder))
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def _used_result(question: Any, report: dict[str, Any], by_tool: dict[tuple[str, str], OfferedTool]) -> bool:
    """A call of the wanted tool ran, and the answer says what its result said (outside the calls the
    answer holds: a call written again as text repeats its arguments, not the result)."""
    answer = report.get("answer") or ""
    for call in detect_calls(answer):
        answer = answer.replace(call.raw, " ")
    for entry in report.get("calls") or []:
        tool = by_tool.get((entry.get("server"), entry.get("tool")))
        if tool is None or not _is_wanted(question, tool) or entry.get("outcome") != "done":
            continue
        if question.used(str(entry.get("result") or ""), answer):
            return True
    return False


def repeats_run(calls: list[dict[str, Any]]) -> int:
    """Calls run again with the same tool and arguments in the turn (each run after the first counts)."""
    runs = Counter(
        (entry.get("server"), entry.get("tool"), json.dumps(entry.get("arguments"), sort_keys=True))
        for entry in calls
        if entry.get("server") is not None and entry.get("outcome") in RAN
    )
    return sum(count - 1 for count in runs.values())


# ----- rates and the whole run -----------------------------------------------------------------


MIN_DECODE_SECONDS = 0.05  # as the app's figures: a generation decoded in less is not timed


def decode_rate(generations: list[dict[str, Any]]) -> float | None:
    """Tokens a second while decoding, over the generations where that was timed. A generation that
    gives its ``decode_time`` (first token to last) counts the tokens after its first, as the app's
    figures do; an older report's counts its tokens over ``tokens_per_second``'s time (2 tokens or
    more: the rate of a one-token generation is noise). A null rate is a generation not timed."""
    decoded = seconds = 0.0
    for g in generations:
        generated = g.get("generated") or 0
        if "decode_time" in g:
            if generated > 1 and (g.get("decode_time") or 0) >= MIN_DECODE_SECONDS:
                decoded, seconds = decoded + generated - 1, seconds + g["decode_time"]
        elif generated >= 2 and (g.get("tokens_per_second") or 0) > 0:
            decoded, seconds = decoded + generated, seconds + generated / g["tokens_per_second"]
    return decoded / seconds if seconds > 0 else None


def prefill_rate(generations: list[dict[str, Any]]) -> float | None:
    """Prompt tokens computed a second: over ``prefill_time`` where the report gives it, else over the
    time to the first token."""
    prefilled = seconds = 0.0
    for g in generations:
        took = g.get("prefill_time") if "prefill_time" in g else g.get("time_to_first_token")
        if (g.get("prefilled") or 0) > 0 and (took or 0) > 0:
            prefilled, seconds = prefilled + g["prefilled"], seconds + took
    return prefilled / seconds if seconds > 0 else None


def ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


def summary(scores: list[QuestionScore]) -> dict[str, Any]:
    """The figures of a run; the first five are the issue's, in its order."""
    questions = len(scores)
    written = sum(s.written_offered for s in scores)
    caught = sum(s.caught_offered for s in scores)
    generations = [g for s in scores for g in s.generations]
    decode, prefill = decode_rate(generations), prefill_rate(generations)
    return {
        "calls_caught": ratio(caught, written),
        "right_tool": ratio(sum(s.right_tool for s in scores), questions),
        "leaked_tokens": sum(s.leaked for s in scores),
        "repeats_run": sum(s.repeats for s in scores),
        "decode_tps": round(decode, 2) if decode is not None else None,
        "prefill_tps": round(prefill, 1) if prefill is not None else None,
        "args_valid": ratio(sum(s.args_valid for s in scores), questions),
        "answer_used_result": ratio(sum(s.used_result for s in scores), questions),
        "questions": questions,
        "calls_written": written,
        "calls_caught_count": caught,
        "calls_run": sum(s.run_offered for s in scores),
        "no_report": sum(bool(s.failure) for s in scores),
    }

"""``--check-tools``' questions: one short request per tool, made without a model from the tool's name,
description and input schema, with example values for its required arguments.

A value comes from the schema where it says one (``const``, ``enum``, ``examples``, ``default``, an
example in the description such as ``e.g. 'America/New_York'``, a ``format`` such as ``date`` or
``uri``), else from the argument's name (``path``, ``url``, ``timezone``…), else from its type.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_chat_tui.core.tools import ToolSpec

FORMATS = {
    "date": "2025-03-14",
    "date-time": "2025-03-14T09:30:00Z",
    "time": "09:30",
    "uri": "https://example.com",
    "url": "https://example.com",
    "iri": "https://example.com",
    "email": "someone@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
}
NAME_HINTS = (  # (words in the argument's name, a value), first match wins
    (("timezone", "tz"), "Europe/Paris"),
    (("from", "source", "src"), "notes.txt"),  # a unit's and a path's own hints come first (UNIT_HINTS, folders)
    (("to", "destination", "dest", "target"), "archive/notes.txt"),
    (("url", "uri", "link", "href"), "https://example.com"),
    (("email",), "someone@example.com"),
    (("path", "file", "filename"), "notes.txt"),
    (("dir", "directory", "folder"), "docs"),
    (("query", "search", "keyword", "keywords", "q"), "weather in Paris"),
    (("expression", "formula"), "2 + 3"),
    (("pattern", "glob"), "*.txt"),
    (("city", "location", "place"), "Paris"),
    (("language", "lang", "locale"), "en"),
    (("date",), "2025-03-14"),
    (("time",), "09:30"),
    (("topic", "subject"), "solar power"),
    (("id", "key"), "1"),
    (("message", "text", "content", "body", "prompt", "note"), "hello"),
    (("name", "title"), "example"),
)
UNIT_HINTS = {"from": "km", "source": "km", "to": "miles", "target": "miles"}
FOLDER_TOOL_WORDS = {"dir", "directory", "directories", "folder", "tree", "list", "listing"}
DESCRIBED_EXAMPLE = re.compile(r"""e\.g\.,?\s*[:(]?\s*(?:'([^']+)'|"([^"]+)"|`([^`]+)`)""", re.IGNORECASE)
MAX_SENTENCE = 160


def tool_question(spec: ToolSpec) -> str:
    """The request for ``spec``: what it does, by its name, with a value for each required argument."""
    values = example_arguments(spec.input_schema, folders=bool(_words(spec.name) & FOLDER_TOOL_WORDS))
    sentence = first_sentence(spec.description) or spec.model_name.replace("_", " ").replace("-", " ")
    if not values:
        return f"{sentence}: use {spec.model_name}."
    shown = [f"{name} = {json.dumps(value, ensure_ascii=False)}" for name, value in values.items()]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"{sentence}: use {spec.model_name} with {listed}."


def first_sentence(description: str) -> str:
    """The description's first sentence, without its full stop, at most ``MAX_SENTENCE`` characters."""
    text = " ".join(description.split()).replace("e.g.", "e\0g\0").replace("i.e.", "i\0e\0")
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].rstrip(".").replace("\0", ".")
    return sentence if len(sentence) <= MAX_SENTENCE else sentence[: MAX_SENTENCE - 1].rstrip() + "…"


def example_arguments(schema: dict[str, Any], *, folders: bool = False) -> dict[str, Any]:
    """A value for each required property of an object schema (an empty dict when none is required);
    ``folders``: the tool is about folders, so a path names one."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    values: dict[str, Any] = {}
    for index, name in enumerate(n for n in required if isinstance(n, str)):
        prop = properties.get(name)
        values[name] = example_value(name, prop if isinstance(prop, dict) else {}, index, folders=folders)
    return values


def example_value(name: str, schema: dict[str, Any], index: int = 0, *, folders: bool = False) -> Any:
    """A plausible value for one argument; ``index`` tells numbers of the same tool apart (2, 3, 4…)."""
    for key in ("const",):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if schema.get("default") is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        options = [s for s in schema.get(key) or [] if isinstance(s, dict) and s.get("type") != "null"]
        if options:
            return example_value(name, options[0], index, folders=folders)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return _by_type(name, schema, kind, index, folders)


def _by_type(name: str, schema: dict[str, Any], kind: Any, index: int, folders: bool) -> Any:
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = 2 + index if not isinstance(low, int | float) else max(low, 2 + index)
        high = schema.get("maximum")
        return min(value, high) if isinstance(high, int | float) else value
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
        count = schema.get("minItems") if isinstance(schema.get("minItems"), int) else 1
        return [example_value(name, items, index + n, folders=folders) for n in range(max(1, count))]
    if kind == "object":
        return example_arguments(schema, folders=folders)
    if kind == "null":
        return None
    return _string(name, schema, folders)


def _words(name: str) -> set[str]:
    """The words of an identifier (``source_timezone``, ``oldText``, ``get-sum``), lower case, plurals
    also as their singular (``paths``: ``path``)."""
    words = set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()))
    return words | {word[:-1] for word in words if word.endswith("s") and len(word) > 3}


def _string(name: str, schema: dict[str, Any], folders: bool) -> str:
    if isinstance(schema.get("format"), str) and schema["format"] in FORMATS:
        return FORMATS[schema["format"]]
    description = schema.get("description") if isinstance(schema.get("description"), str) else ""
    described = DESCRIBED_EXAMPLE.search(description)
    if described:
        return next(group for group in described.groups() if group)
    if "HH:MM" in description:
        return "09:30"
    words = _words(name)
    if "unit" in words:
        return next((unit for word, unit in UNIT_HINTS.items() if word in words), "km")
    if folders and words & {"path", "dir", "directory", "folder"}:
        return "docs"
    for hints, value in NAME_HINTS:
        if words & set(hints):
            return value
    return "example"

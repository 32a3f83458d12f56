"""An elicitation's requested schema as form fields, and each answer checked against its field.

The spec (2025-11-25's ``PrimitiveSchemaDefinition``) allows a flat object of: string (``format``
email, uri, date, date-time; ``minLength``/``maxLength``), number and integer (``minimum``/
``maximum``), boolean, single-select enums (``enum``, with ``enumNames`` in the legacy form, or
``oneOf`` of ``const``/``title``) and multi-select enums (``type: array`` whose ``items`` hold an
``enum`` or an ``anyOf`` of ``const``/``title``, with ``minItems``/``maxItems``). Both front ends
build their form from ``form_fields`` and check each answer with ``FormField.parse``, so the value
sent has the JSON type the schema asks for: a list for a multi-select, a number for a number, and
nothing at all for a field left empty (a boolean without a default is never sent as false).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import urlparse

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
INTEGER = re.compile(r"^[+-]?[0-9]+$")
NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
DATE_TIME = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?$"
)
SECRET_WORDS = ("password", "secret", "token", "api_key", "apikey", "passphrase")
TRUE_WORDS = {"y", "yes", "true", "1", "on"}
FALSE_WORDS = {"n", "no", "false", "0", "off"}
NONE_CHOSEN = "-"  # typed for a multi-select: none of the options
KINDS = ("string", "number", "integer", "boolean", "enum", "multi", "json")
# "json": what a form cannot show as one field (an object, an array of anything but choices, a value
# of several types): typed as JSON. The spec keeps elicitation flat; a tool's input schema is not.


@dataclass(frozen=True)
class FormField:
    """One property of the requested schema."""

    name: str
    kind: str  # one of KINDS: "enum" is a single select, "multi" a multi-select (a JSON array), "json" any JSON
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    format: str = ""
    options: tuple[tuple[str, str], ...] = field(default=())  # (value, title) of an enum or multi-select
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    secret: bool = False  # a password or secret: typed hidden, redacted in the transcript

    @property
    def label(self) -> str:
        return self.title or self.name

    def hint(self) -> str:
        """What the field takes, in a few words (type, format, bounds, choices)."""
        if self.kind == "enum":
            return "one of " + ", ".join(title for _, title in self.options)
        if self.kind == "multi":
            return f"{self._items_range()} of " + ", ".join(title for _, title in self.options)
        if self.kind == "json":
            return "JSON"
        parts = ["yes or no" if self.kind == "boolean" else self.format or self.kind]
        if self.min_length is not None or self.max_length is not None:
            parts.append(f"{self.min_length or 0}-{self.max_length if self.max_length is not None else '…'} characters")
        if self.minimum is not None or self.maximum is not None:
            low = _number(self.minimum) if self.minimum is not None else "…"
            high = _number(self.maximum) if self.maximum is not None else "…"
            parts.append(f"{low} to {high}")
        return ", ".join(parts)

    def _items_range(self) -> str:
        low, high = self.min_items or 0, self.max_items
        if high is None:
            return "any" if not low else f"at least {low}"
        return f"{low}-{high}" if low != high else f"exactly {low}"

    def typed_choice_hint(self) -> str:
        """How a choice is typed on a terminal (after ``numbered_options``)."""
        if self.kind != "multi":
            return "one of them, by number"
        none = f", {NONE_CHOSEN} for none" if not self.min_items else ""
        return f"{self._items_range()} of them, by numbers such as 1,3{none}"

    def numbered_options(self) -> str:
        """The choices numbered from 1, for a terminal ("1 Tuna · 2 Salmon")."""
        return " · ".join(f"{number} {title}" for number, (_, title) in enumerate(self.options, start=1))

    def parse(self, raw: str | Sequence[str]) -> tuple[Any, str]:
        """The value given as ``raw``, and what is wrong with it ("" when nothing).

        ``raw`` is the text typed; for a multi-select also the list of values chosen. An empty
        optional field gives ``None`` (left out of the answer). A choice may be typed as its value,
        its title or its number in the list (from 1); a multi-select's choices separated by commas."""
        if self.kind == "multi":
            return self._choices(_split_choices(raw) if isinstance(raw, str) else list(raw))
        assert isinstance(raw, str)
        text = raw.strip() if self.kind != "string" else raw
        if not text.strip():
            return None, "required" if self.required else ""
        if self.kind == "json":
            return _json_value(text)
        if self.kind == "boolean":
            word = text.lower()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                return word in TRUE_WORDS, ""
            return None, "answer yes or no"
        if self.kind == "enum":
            value = self._option(text)
            return (value, "") if value is not None else (None, "choose one of " + self._titles())
        if self.kind in ("number", "integer"):
            return self._number(text)
        return self._string(text)

    def _titles(self) -> str:
        return ", ".join(title for _, title in self.options)

    def _option(self, text: str) -> str | None:
        for index, (value, title) in enumerate(self.options, start=1):
            if text in (value, title, str(index)):
                return value
        return None

    def _choices(self, given: list[str] | None) -> tuple[Any, str]:
        if given is None:  # nothing typed on a terminal (a default is typed for the user)
            return None, "required" if self.required else ""
        chosen: list[str] = []
        for text in given:
            value = self._option(text)
            if value is None:
                return None, f"{text!r} is not one of " + self._titles()
            if value not in chosen:
                chosen.append(value)
        chosen.sort(key=[value for value, _ in self.options].index)  # in the schema's order, as shown
        if self.min_items is not None and len(chosen) < self.min_items:
            return None, f"choose at least {self.min_items}"
        if self.max_items is not None and len(chosen) > self.max_items:
            return None, f"choose at most {self.max_items}"
        if not chosen and not self.required and self.default is None:
            return None, ""  # nothing chosen, nothing to override: left out
        return chosen, ""

    def _number(self, text: str) -> tuple[Any, str]:
        pattern = INTEGER if self.kind == "integer" else NUMBER
        value: float | int
        if not pattern.match(text):
            return None, "a whole number" if self.kind == "integer" else "a number"
        value = int(text) if INTEGER.match(text) else float(text)
        if not math.isfinite(value):
            return None, "a number"
        if self.minimum is not None and value < self.minimum:
            return None, f"at least {_number(self.minimum)}"
        if self.maximum is not None and value > self.maximum:
            return None, f"at most {_number(self.maximum)}"
        return value, ""

    def _string(self, text: str) -> tuple[Any, str]:
        if self.min_length is not None and len(text) < self.min_length:
            return None, f"at least {self.min_length} characters"
        if self.max_length is not None and len(text) > self.max_length:
            return None, f"at most {self.max_length} characters"
        if self.format == "date-time":
            return _date_time(text)
        problem = _format_problem(self.format, text)
        return (None, problem) if problem else (text, "")

    def shown_default(self) -> str:
        """The default as the field starts with it ("" when none); a multi-select's as numbers."""
        if self.default is None:
            return ""
        if self.kind == "boolean":
            return "yes" if self.default else "no"
        if self.kind == "json":
            return json.dumps(self.default, ensure_ascii=False)
        if self.kind == "multi":
            values = [value for value, _ in self.options]
            chosen = self.default if isinstance(self.default, list) else []
            return ",".join(str(values.index(value) + 1) for value in chosen if value in values) or NONE_CHOSEN
        return str(self.default)

    def default_choices(self) -> list[str]:
        """The options a multi-select starts with chosen."""
        chosen = self.default if isinstance(self.default, list) else []
        return [value for value, _ in self.options if value in chosen]


def _json_value(text: str) -> tuple[Any, str]:
    try:
        return json.loads(text), ""
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg} (column {exc.colno})"


def _split_choices(text: str) -> list[str] | None:
    """A multi-select typed on a terminal: choices separated by commas, ``-`` for none, "" for none given."""
    if not text.strip():
        return None
    if text.strip() == NONE_CHOSEN:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def _number(value: float) -> str:
    return f"{value:g}"


def _date_time(text: str) -> tuple[Any, str]:
    """RFC 3339 (what JSON Schema's date-time is): a date, a time and an offset. Typed without an
    offset it is the local time, and the local offset is added."""
    problem = "a date and time, such as 2026-01-31T12:00:00Z (without an offset: your local time)"
    if not DATE_TIME.match(text):
        return None, problem
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None, problem
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.isoformat(), ""


def _format_problem(format_name: str, text: str) -> str:
    if format_name == "email" and not EMAIL.match(text):
        return "an email address, such as name@example.com"
    if format_name == "uri":
        parsed = urlparse(text)
        if not (parsed.scheme and (parsed.netloc or parsed.path)) or any(c.isspace() for c in text):
            return "a URI, such as https://example.com"
    if format_name == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return "a date, such as 2026-01-31"
        if not DATE.match(text):
            return "a date, such as 2026-01-31"
    return ""


def _titled(items: object) -> tuple[tuple[str, str], ...]:
    """``oneOf``/``anyOf`` of ``{"const", "title"}`` as (value, title) options."""
    if not isinstance(items, list):
        return ()
    return tuple(
        (str(item.get("const")), str(item.get("title") or item.get("const")))
        for item in items
        if isinstance(item, dict) and "const" in item
    )


def _options(schema: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    titled = _titled(schema.get("oneOf")) or _titled(schema.get("anyOf"))
    if titled:
        return titled
    values = [str(value) for value in schema.get("enum") or []]
    names = schema.get("enumNames")
    titles = [str(name) for name in names] if isinstance(names, list) and len(names) == len(values) else values
    return tuple(zip(values, titles, strict=True))


def _is_secret(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("format") == "password" or schema.get("writeOnly") is True:
        return True
    words = f"{name} {schema.get('title', '')}".lower().replace("-", "_").replace(" ", "_")
    return any(word in words for word in SECRET_WORDS)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number_or_none(value: object) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def form_field(name: str, prop: dict[str, Any], required: bool) -> FormField:
    """One property as a field; a type the spec does not allow is taken as a string."""
    items = prop["items"] if isinstance(prop.get("items"), dict) else {}
    kind_of = prop.get("type")
    if kind_of == "array":
        options = _options(items)
        kind = "multi" if options else "json"
    else:
        options = _options(prop)
        kind = "enum" if options else str(kind_of or "string")
    if kind_of == "object" or isinstance(kind_of, list) or (kind_of is None and not options and _combined(prop)):
        kind = "json"
    if kind not in KINDS:
        kind = "string"
    return FormField(
        name=name,
        kind=kind,
        title=str(prop.get("title", "")),
        description=str(prop.get("description", "")),
        required=required,
        default=prop.get("default"),
        format=str(prop.get("format", "")) if kind == "string" else "",
        options=options,
        min_length=_int_or_none(prop.get("minLength")),
        max_length=_int_or_none(prop.get("maxLength")),
        minimum=_number_or_none(prop.get("minimum")),
        maximum=_number_or_none(prop.get("maximum")),
        min_items=_int_or_none(prop.get("minItems")),
        max_items=_int_or_none(prop.get("maxItems")),
        secret=_is_secret(name, prop),
    )


def _combined(prop: dict[str, Any]) -> bool:
    """A property whose type is given by combining schemas (``anyOf``, ``oneOf``, ``allOf``, ``$ref``)."""
    return any(key in prop for key in ("anyOf", "oneOf", "allOf", "$ref"))


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The fields of a requested schema, in its order."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    return [
        form_field(str(name), prop if isinstance(prop, dict) else {}, name in required)
        for name, prop in (properties if isinstance(properties, dict) else {}).items()
    ]


def redacted_values(fields: list[FormField], values: dict[str, Any]) -> dict[str, Any]:
    """The answer as the transcript keeps it: a secret field's value is ``[redacted]``."""
    secret = {f.name for f in fields if f.secret}
    return {name: "[redacted]" if name in secret else value for name, value in values.items()}

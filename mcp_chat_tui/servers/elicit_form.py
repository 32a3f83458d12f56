"""An elicitation's requested schema as form fields, and each typed value checked against its field.

The spec allows a flat object of primitives: string (``format`` email, uri, date, date-time;
``minLength``/``maxLength``), number and integer (``minimum``/``maximum``), boolean, and enums
(``enum`` with optional ``enumNames``, or ``oneOf`` of ``const``/``title``). Both front ends build
their form from ``form_fields`` and check each answer with ``FormField.parse``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import urlparse

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
SECRET_WORDS = ("password", "secret", "token", "api_key", "apikey", "passphrase")
TRUE_WORDS = {"y", "yes", "true", "1", "on"}
FALSE_WORDS = {"n", "no", "false", "0", "off"}


@dataclass(frozen=True)
class FormField:
    """One property of the requested schema."""

    name: str
    kind: str  # "string", "number", "integer", "boolean", "enum"
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    format: str = ""
    options: tuple[tuple[str, str], ...] = field(default=())  # (value, title) of an enum
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    secret: bool = False  # a password or secret: typed hidden, redacted in the transcript

    @property
    def label(self) -> str:
        return self.title or self.name

    def hint(self) -> str:
        """What the field takes, in a few words (type, format, bounds, choices)."""
        shown_kind = "yes or no" if self.kind == "boolean" else self.format or self.kind
        parts = [shown_kind] if self.kind != "enum" else []
        if self.kind == "enum":
            parts.append("one of " + ", ".join(title for _, title in self.options))
        if self.min_length is not None or self.max_length is not None:
            parts.append(f"{self.min_length or 0}-{self.max_length if self.max_length is not None else '…'} characters")
        if self.minimum is not None or self.maximum is not None:
            low = _number(self.minimum) if self.minimum is not None else "…"
            high = _number(self.maximum) if self.maximum is not None else "…"
            parts.append(f"{low} to {high}")
        return ", ".join(parts)

    def parse(self, raw: str) -> tuple[Any, str]:
        """The value typed as ``raw`` (""/None: left empty), and what is wrong with it ("" when nothing).

        An empty optional field gives ``None`` (left out of the answer); for an enum, ``raw`` may be
        the value, its title, or its number in the list (from 1)."""
        text = raw.strip() if self.kind != "string" else raw
        if not text.strip():
            return None, "required" if self.required else ""
        if self.kind == "boolean":
            word = text.lower()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                return word in TRUE_WORDS, ""
            return None, "answer yes or no"
        if self.kind == "enum":
            return self._choice(text)
        if self.kind in ("number", "integer"):
            return self._number(text)
        return self._string(text)

    def _choice(self, text: str) -> tuple[Any, str]:
        for index, (value, title) in enumerate(self.options, start=1):
            if text in (value, title, str(index)):
                return value, ""
        return None, "choose one of " + ", ".join(title for _, title in self.options)

    def _number(self, text: str) -> tuple[Any, str]:
        try:
            value: float | int = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            return None, "a whole number" if self.kind == "integer" else "a number"
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
        problem = _format_problem(self.format, text)
        return (None, problem) if problem else (text, "")

    def shown_default(self) -> str:
        """The default as the field starts with it ("" when none)."""
        if self.default is None:
            return ""
        if self.kind == "boolean":
            return "yes" if self.default else "no"
        return str(self.default)


def _number(value: float) -> str:
    return f"{value:g}"


def _format_problem(format_name: str, text: str) -> str:
    if format_name == "email" and not EMAIL.match(text):
        return "an email address, such as name@example.com"
    if format_name == "uri":
        parsed = urlparse(text)
        if not (parsed.scheme and (parsed.netloc or parsed.path)):
            return "a URI, such as https://example.com"
    if format_name == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return "a date, such as 2026-01-31"
    if format_name == "date-time":
        try:
            datetime.fromisoformat(text)
        except ValueError:
            return "a date and time, such as 2026-01-31T12:00:00"
    return ""


def _options(schema: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if isinstance(schema.get("oneOf"), list):
        return tuple(
            (str(item.get("const")), str(item.get("title") or item.get("const")))
            for item in schema["oneOf"]
            if isinstance(item, dict) and "const" in item
        )
    values = [str(value) for value in schema.get("enum") or []]
    names = schema.get("enumNames")
    titles = [str(name) for name in names] if isinstance(names, list) and len(names) == len(values) else values
    return tuple(zip(values, titles, strict=True))


def _is_secret(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("format") == "password" or schema.get("writeOnly") is True:
        return True
    words = f"{name} {schema.get('title', '')}".lower().replace("-", "_").replace(" ", "_")
    return any(word in words for word in SECRET_WORDS)


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The fields of a requested schema, in its order; a property of another type is a string."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    fields = []
    for name, prop in (properties or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        options = _options(prop)
        kind = "enum" if options else str(prop.get("type", "string"))
        if kind not in ("string", "number", "integer", "boolean", "enum"):
            kind = "string"
        fields.append(
            FormField(
                name=str(name),
                kind=kind,
                title=str(prop.get("title", "")),
                description=str(prop.get("description", "")),
                required=name in required,
                default=prop.get("default"),
                format=str(prop.get("format", "")) if kind == "string" else "",
                options=options,
                min_length=prop.get("minLength"),
                max_length=prop.get("maxLength"),
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                secret=_is_secret(str(name), prop),
            )
        )
    return fields


def redacted_values(fields: list[FormField], values: dict[str, Any]) -> dict[str, Any]:
    """The answer as the transcript keeps it: a secret field's value is ``[redacted]``."""
    secret = {f.name for f in fields if f.secret}
    return {name: "[redacted]" if name in secret else value for name, value in values.items()}

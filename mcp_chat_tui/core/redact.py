"""Keep the answers to password inputs out of everything shown, recorded or logged.

Where the one ``Redactor`` is applied, and why short answers are not: docs/architecture.md, "Secrets".
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

MIN_SECRET_LENGTH = 4


def _spellings(value: str) -> set[str]:
    """The ways ``value`` may appear in text: as is, JSON-escaped, percent-encoded."""
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value, safe=""),
    }
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor:
    """Replaces secret values with ``[redacted: ID]`` in text and in JSON-like values.

    Built from ``{input id: answer}``; ``repr`` names the ids, never the values.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        markers: dict[str, str] = {}
        self.names: list[str] = []
        self.too_short: list[str] = []  # ids whose answer is too short to redact
        for name, value in (secrets or {}).items():
            if len(value) < MIN_SECRET_LENGTH:
                if value:
                    self.too_short.append(name)
                continue
            self.names.append(name)
            for form in _spellings(value):
                markers.setdefault(form, f"[redacted: {name}]")
        self._markers = markers
        self._compile()

    def _compile(self) -> None:
        # Longest first: at each place the longest spelling wins, so no tail of one is left behind.
        ordered = sorted(self._markers, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.longest = len(ordered[0]) if ordered else 0

    def add(self, name: str, value: str) -> None:
        """Hide one more secret from now on: one the app was given while running (a sign-in token, the
        answers for a folder's mcp.json trusted once the app runs); one too short to hide is listed
        in ``too_short``."""
        forms = _spellings(value) - self._markers.keys()
        if 0 < len(value) < MIN_SECRET_LENGTH and name not in self.too_short:
            self.too_short.append(name)
        if len(value) < MIN_SECRET_LENGTH or not forms:
            return
        if name not in self.names:
            self.names.append(name)
        for form in forms:
            self._markers[form] = f"[redacted: {name}]"
        self._compile()

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:
        return f"Redactor(names={self.names!r})"

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by its marker."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda match: self._markers[match.group()], text)

    def value(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings) with secrets replaced in every string, keys included."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(item) for item in value)
        return value

    def short_warning(self) -> str:
        """A line for the user when some answers are too short to redact ("" when none)."""
        if not self.too_short:
            return ""
        names = ", ".join(self.too_short)
        return (
            f"mcp.json: the answer to password {'input' if len(self.too_short) == 1 else 'inputs'} {names} is shorter than {MIN_SECRET_LENGTH} "
            "characters, too short to hide in tool results and replies; it may be shown"
        )

    def stream(self) -> StreamRedactor:
        """A redactor for text that arrives in pieces (a model's reply as it is generated)."""
        return StreamRedactor(self)

    def held_from(self, text: str) -> int:
        """Where the tail of ``text`` that could still become a secret begins (``len(text)``: none).

        A complete match that such a tail would cut is held back whole.
        """
        if self._pattern is None:
            return len(text)
        hold = len(text)
        for start in range(max(0, len(text) - self.longest + 1), len(text)):
            tail = text[start:]
            if any(len(form) > len(tail) and form.startswith(tail) for form in self._markers):
                hold = start
                break
        if hold < len(text):
            for match in self._pattern.finditer(text):  # from the start: matches depend on where scanning began
                if match.start() < hold < match.end():
                    return match.start()
        return hold


class StreamRedactor:
    """Redacts a text given piece by piece: a piece's end that could begin a secret waits for the next."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._pending = ""

    def feed(self, piece: str) -> str:
        """What of the text so far can be shown now, redacted."""
        text = self._pending + piece
        hold = self._redactor.held_from(text)
        self._pending = text[hold:]
        return self._redactor.text(text[:hold])

    def flush(self) -> str:
        """The rest, at the end of the text."""
        rest, self._pending = self._pending, ""
        return self._redactor.text(rest)


SECRET_QUERY_WORDS = ("key", "token", "secret", "pass", "auth", "sig", "credential", "session")
_USERINFO = re.compile(r"(?<=//)[^/?#@\s]*@")  # ``user:password@`` after a URL's scheme


def _secret_parameter(name: str) -> bool:
    """A query parameter whose value is a credential by its name (``api_key``, ``token``, ``sig``…)."""
    lowered = unquote_plus(name).lower()
    return any(word in lowered for word in SECRET_QUERY_WORDS)


def url_secrets(url: str, label: str) -> dict[str, str]:
    """The credentials ``url`` carries, named for ``Redactor`` (``[redacted: LABEL password]``): its
    userinfo's password, and the values of query parameters named like secrets."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return {}
    found = {f"{label} password": unquote(password)} if password else {}
    for name, value in parse_qsl(parts.query):
        if value and _secret_parameter(name):
            found[f"{label} {name}"] = value
    return found


def shown_url(url: str) -> str:
    """``url`` as it may be shown or logged: without its userinfo (``user:password@``), and with the
    values of query parameters named like secrets (``?api_key=``, ``?token=``) as ``[redacted]``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub("", url)
    query = "&".join(_shown_parameter(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, query, parts.fragment))


def _shown_parameter(pair: str) -> str:
    name, equals, value = pair.partition("=")
    return f"{name}=[redacted]" if equals and value and _secret_parameter(name) else pair


def without_url_secrets(text: str, url: str) -> str:
    """``text`` (an error's message, say) with ``url``'s userinfo and secret query values taken out
    wherever they appear, in ``url`` itself or in another URL of the same server."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub("", text.replace(url, shown_url(url)))
    text = text.replace(url, shown_url(url))
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        text = text.replace(f"{userinfo}@", "").replace(userinfo, "[redacted]")
    for secret in url_secrets(url, "").values():  # a server that repeats them (MIN_SECRET_LENGTH, as Redactor)
        if len(secret) >= MIN_SECRET_LENGTH:
            text = text.replace(secret, "[redacted]")
    for pair in parts.query.split("&") if parts.query else []:
        shown = _shown_parameter(pair)
        if shown != pair:
            text = text.replace(pair, shown)
    return text


class RedactingFilter(logging.Filter):
    """A log filter that writes each record's message (and traceback) with secrets redacted."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redactor:
            return True
        record.msg, record.args = self.redactor.text(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True


def redact_logs(redactor: Redactor) -> None:
    """Filter every handler of the root logger (the log file) through ``redactor``."""
    for handler in logging.getLogger().handlers:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(RedactingFilter(redactor))

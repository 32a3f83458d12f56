"""Reading a server's ``envFile``: the dotenv format VS Code accepts.

One ``KEY=VALUE`` a line; blank lines and ``#`` comments are skipped; ``export KEY=VALUE`` is
allowed; a value may be in single quotes (taken as written) or double quotes (``\\n``, ``\\t``,
``\\"`` and ``\\\\`` are unescaped); an unquoted value ends at `` #``. Variables inside values
are not expanded. Kept here rather than taking python-dotenv as a dependency for twenty lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcp_chat_tui.config._errors import read_text
from mcp_chat_tui.core.errors import ConfigError

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def read_env_file(path: Path) -> dict[str, str]:
    """The variables an env file sets, in file order; a later line wins over an earlier one."""
    variables: dict[str, str] = {}
    for number, line in enumerate(read_text(path, "an env file (KEY=VALUE lines)").splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped.removeprefix("export ").lstrip()
        key, equals, rest = stripped.partition("=")
        key = key.strip()
        if not equals or not _KEY.fullmatch(key):
            raise ConfigError(path, f"line {number}", "expected KEY=VALUE (a name, '=', then the value)")
        variables[key] = _value(rest.strip(), path, number)
    return variables


def _value(text: str, path: Path, number: int) -> str:
    if text[:1] in ("'", '"'):
        quote = text[0]
        end = _closing_quote(text, quote)
        if end < 0:
            raise ConfigError(path, f"line {number}", f"value opened with {quote} is never closed")
        trailing = text[end + 1 :].strip()
        if trailing and not trailing.startswith("#"):
            raise ConfigError(path, f"line {number}", f"unexpected text after the closing {quote}")
        inner = text[1:end]
        return inner if quote == "'" else _unescape(inner)
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()


def _closing_quote(text: str, quote: str) -> int:
    index = 1
    while index < len(text):
        if quote == '"' and text[index] == "\\":
            index += 2
            continue
        if text[index] == quote:
            return index
        index += 1
    return -1


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda match: _ESCAPES.get(match.group(1), match.group(0)), text)

"""What a server is besides its name, so a rule saved for one server is not taken by another.

Any ``mcp.json`` may name a server ``demo``; a saved "always" for ``demo`` was given to the program
(or the address) that answered under that name then. ``ServerIdentity`` is that program: its
command and arguments (and ``cwd`` when the file sets one) for stdio, its URL for http and sse. It
is taken from the display form of the configuration, so no answer to a password input is ever part
of it (it is written to ``config.toml``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from mcp_chat_tui.core.arg_patterns import ArgumentRule


def url_without_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part and with its query's values left out (keys kept):
    where it leads, without the secrets an address may carry."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url.split("?", 1)[0].rsplit("@", 1)[-1]
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    query = "&".join(f"{pair.split('=', 1)[0]}=…" if "=" in pair else pair for pair in parts.query.split("&") if pair)
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


@dataclass(frozen=True)
class ServerIdentity:
    """A stdio server's ``command`` (program and arguments) and ``cwd``, or an http/sse server's ``url``."""

    command: tuple[str, ...] = ()
    cwd: str | None = None
    url: str | None = None

    def describe(self) -> str:
        """One line saying which server this is: ``command `python server.py` `` or ``url https://…``."""
        if self.url is not None:
            return f"url {self.url}"
        where = f" in {self.cwd}" if self.cwd else ""
        return f"command `{shlex.join(self.command)}`{where}"

    def to_toml(self) -> dict[str, str | list[str]]:
        """The keys ``config.toml`` keeps beside a saved choice (``command``/``cwd`` or ``url``)."""
        if self.url is not None:
            return {"url": self.url}
        keys: dict[str, str | list[str]] = {"command": list(self.command)}
        if self.cwd:
            keys["cwd"] = self.cwd
        return keys


@dataclass(frozen=True)
class SavedRule:
    """A choice ``config.toml`` keeps for one tool ("always", "ask" or "never"), and the server it
    was saved for. ``server`` None: a rule written without one (by hand, or by a version before
    server identities), which applies to any server of that name. ``always_when`` / ``never_when``:
    argument patterns (core/arg_patterns.py); a call they do not match takes ``choice``."""

    choice: str
    server: ServerIdentity | None = None
    always_when: ArgumentRule | None = None
    never_when: ArgumentRule | None = None

    def applies_to(self, current: ServerIdentity | None) -> bool:
        """Whether this rule speaks for the server running now (``current``; None: not known)."""
        return self.server is None or self.server == current

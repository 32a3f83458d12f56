"""Which page a server's address would open, and whether the app opens it.

A server may ask the user to open a page (a URL elicitation, a sign-in). The app opens ``https``
addresses, and ``http`` ones only to this computer (``localhost``, ``127.0.0.1``, ``[::1]``);
every other scheme (``file:``, ``javascript:``, ``data:``, ``ftp:``, an app's own) is refused with
the reason. The host is worked out as a browser would resolve it: a user name before ``@`` is not
the host, a Unicode name becomes its ASCII (punycode) form. Anything browsers read in different
ways (spaces, control and direction characters, backslashes, a percent-encoded or numeric-shorthand
host) is refused rather than guessed, so the host shown is the host opened.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import idna

OPENED = "(mcp-chat-tui opens https addresses, and http ones only to this computer: localhost)"
_ASCII_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?")
_NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)\.?", re.IGNORECASE)
_AMBIGUOUS = re.compile(r"[\x00-\x20\x7f-\x9f\\\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]")


@dataclass(frozen=True)
class PageAddress:
    """A server's address as the app would open it; ``refusal`` says why not ("" when it may)."""

    written: str  # the address as the server sent it
    url: str = ""  # what is opened: the address with its host in ASCII
    host: str = ""  # where it goes, as a browser resolves it (with a port that is not the scheme's own)
    written_host: str = ""  # the host as the server wrote it, when that looks different
    user: str = ""  # what stands before ``@``: a user name, which only makes another host look like the one
    refusal: str = ""

    @property
    def openable(self) -> bool:
        return not self.refusal


def check_page_address(address: str) -> PageAddress:
    """``address`` checked: its host as a browser resolves it, and whether the app may open it."""
    if _AMBIGUOUS.search(address):
        return _refused(
            address,
            "it has spaces, control characters or backslashes, which browsers read differently (or show reordered)",
        )
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError as exc:
        return _refused(address, f"it is not a valid address ({exc})")
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        what = f"its scheme is {scheme}:" if scheme else "it is not a web address"
        return _refused(address, f"{what} {OPENED}")
    user, _, host_port = parts.netloc.rpartition("@")
    if not host_port or not parts.netloc or not address[len(parts.scheme) + 1 :].startswith("//"):
        return _refused(address, "it names no host")
    written_host = _host_part(host_port)
    host, problem = _resolved_host(written_host)
    if problem:
        return _refused(address, problem)
    if scheme == "http" and not _is_this_computer(host):
        return _refused(address, f"it goes to {host} unencrypted (http) {OPENED}")
    default_port = {"https": 443, "http": 80}[scheme]
    shown = host if port is None or port == default_port else f"{host}:{port}"
    netloc = (f"{user}@" if user else "") + host + (f":{port}" if port is not None else "")
    return PageAddress(
        written=address,
        url=urlunsplit((scheme, netloc, parts.path, parts.query, parts.fragment)),
        host=shown,
        written_host=written_host if written_host.lower() != host else "",
        user=user,
    )


def _refused(address: str, why: str) -> PageAddress:
    return PageAddress(written=address, refusal=f"not opened: {why}")


def _host_part(host_port: str) -> str:
    """The host of ``host[:port]`` as written (an IPv6 address with its brackets)."""
    if host_port.startswith("["):
        return host_port[: host_port.find("]") + 1]
    return host_port.rsplit(":", 1)[0] if ":" in host_port else host_port


def _resolved_host(written: str) -> tuple[str, str]:
    """(the host as a browser resolves ``written``, "") or ("", why it is refused)."""
    if written.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(written[1:-1]).compressed}]", ""
        except ValueError:
            return "", "its host is not a valid IPv6 address"
    if not written:
        return "", "it names no host"
    if "%" in written:
        return "", "its host is percent-encoded, which browsers decode into another name"
    if written.isascii():
        host = written.lower()
        if not _ASCII_HOST.fullmatch(host):
            return "", "its host has characters no host name has"
    else:
        try:
            host = idna.encode(written, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            return "", f"its host is not a valid international name ({exc})"
    last_label = host.rstrip(".").rsplit(".", 1)[-1]
    if _NUMERIC_LABEL.fullmatch(last_label):
        try:
            return str(ipaddress.IPv4Address(host.rstrip("."))), ""
        except ValueError:
            return "", "its host is a number in a form browsers read as another address"
    return host, ""


def _is_this_computer(host: str) -> bool:
    if host.rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False

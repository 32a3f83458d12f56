"""Which page a server's address opens (core/page_address.py): https, or http to this computer; the
host as a browser resolves it; whatever browsers read in different ways refused, not guessed."""

from __future__ import annotations

import pytest

from mcp_chat_tui.core.page_address import check_page_address


@pytest.mark.parametrize(
    ("address", "host", "opened"),
    [
        ("https://bank.example/authorize?state=xyz", "bank.example", "https://bank.example/authorize?state=xyz"),
        ("HTTPS://Bank.Example/A?B=C#D", "bank.example", "https://bank.example/A?B=C#D"),
        ("https://bank.example:443/x", "bank.example", "https://bank.example:443/x"),
        ("https://bank.example:8443/x", "bank.example:8443", "https://bank.example:8443/x"),
        ("http://127.0.0.1:5000/callback", "127.0.0.1:5000", "http://127.0.0.1:5000/callback"),
        ("http://127.8.9.10/", "127.8.9.10", "http://127.8.9.10/"),
        ("http://[::1]:8765/x", "[::1]:8765", "http://[::1]:8765/x"),
        ("http://localhost/x", "localhost", "http://localhost/x"),
        ("https://bücher.example/", "xn--bcher-kva.example", "https://xn--bcher-kva.example/"),
        ("https://аpple.com/", "xn--pple-43d.com", "https://xn--pple-43d.com/"),  # a Cyrillic а
        ("https://ＢＡＮＫ.example/", "bank.example", "https://bank.example/"),  # full-width letters
        ("https://user:pw@bank.example/", "bank.example", "https://user:pw@bank.example/"),
    ],
)
def test_https_and_local_http_addresses_open_at_the_host_a_browser_resolves(address, host, opened):
    checked = check_page_address(address)
    assert checked.openable, checked.refusal
    assert (checked.host, checked.url) == (host, opened)


def test_a_user_name_before_the_host_is_told_apart_from_the_host():
    checked = check_page_address("https://accounts.bank.example@evil.example/login")
    assert (checked.host, checked.user) == ("evil.example", "accounts.bank.example")


def test_an_international_host_keeps_how_it_was_written_beside_its_ascii_form():
    checked = check_page_address("https://аpple.com/")
    assert (checked.host, checked.written_host) == ("xn--pple-43d.com", "аpple.com")
    assert check_page_address("https://Bank.example/").written_host == ""  # case is no disguise


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("file:///etc/shadow", "its scheme is file:"),
        ("javascript:alert(document.cookie)", "its scheme is javascript:"),
        ("data:text/html,<script>alert(1)</script>", "its scheme is data:"),
        ("ftp://files.example/x", "its scheme is ftp:"),
        ("vscode://extension/x", "its scheme is vscode:"),
        ("bank.example/login", "it is not a web address"),
        ("http://example.com/login", "it goes to example.com unencrypted (http)"),
        ("http://127.0.0.1.evil.example/", "it goes to 127.0.0.1.evil.example unencrypted"),
        ("http://localhost.evil.example/", "it goes to localhost.evil.example unencrypted"),
        ("https:bank.example/x", "it names no host"),
        ("https:///etc/passwd", "it names no host"),
        ("https://evil.example\\@bank.example/", "backslashes"),  # a browser goes to evil.example
        ("https://bank.example /x", "spaces"),
        ("https://ev\til.example/", "control characters"),  # a browser drops the tab
        (" https://bank.example/", "spaces"),
        ("https://bank.example/\u202egpj.exe", "control characters"),  # shown reversed
        ("https://bank.example/\u2067x", "control characters"),
        ("https://b%61nk.example/", "percent-encoded"),
        ("https://0x7f.1/", "a number in a form"),
        ("http://2130706433/", "a number in a form"),  # 127.0.0.1 to a browser, refused rather than guessed
        ("https://bank.example:99999/", "not a valid address"),
        ("https://[::1/", "not a valid address"),
        ("https://bank$.example/", "characters no host name has"),
    ],
)
def test_other_schemes_remote_http_and_ambiguous_addresses_are_refused_with_why(address, why):
    checked = check_page_address(address)
    assert not checked.openable and checked.url == ""
    assert checked.refusal.startswith("not opened: ") and why in checked.refusal

"""Signing in to HTTP servers that answer 401 (OAuth 2.1 with the SDK's provider), against a real
authorization server and MCP server built from the SDK's auth components on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import time

import keyring
import pytest
from keyring.backends.fail import Keyring as NoKeyring

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.oauth import SignInFailed
from mcp_chat_tui.servers.token_vault import KEYRING_SERVICE, TOKEN_FILE_NAME, TokenVault
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.keyring_backend import FileKeyring
from tests.oauth_helpers import Browser, protected_server

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)


def hub_for(url: str, tmp_path, name: str = "guarded", kind: str = "http", **config) -> ServerHub:
    server = ServerConfig(name=name, type=kind, url=url, **config)
    return ServerHub([server], init_timeout=10, token_vault=TokenVault(tmp_path / TOKEN_FILE_NAME))


def kept(url: str) -> dict:
    return json.loads(FileKeyring().get_password(KEYRING_SERVICE, url))


@pytest.mark.parametrize("sse", [False, True], ids=["streamable-http", "sse"])
async def test_sign_in_discovers_registers_authorizes_and_the_tool_works(tmp_path, sse):
    with protected_server(sse=sse) as server:
        async with hub_for(server.url, tmp_path, kind="sse" if sse else "http") as hub:
            await hub.start_all()
            status = hub.status("guarded")
            assert status.state == ServerState.NEEDS_SIGN_IN, status.summary()
            assert "mcp-chat-tui --sign-in guarded" in status.reason
            assert server.stats()["registered"] == 1 and server.stats()["authorized"] == 0  # no browser yet

            browser = Browser()
            status = await hub.sign_in("guarded", browser)
            assert status.state == ServerState.READY, status.summary()
            [request] = browser.requests
            assert request.url.startswith(f"{server.issuer}/authorize?")
            assert "code_challenge_method=S256" in request.url and "code_challenge=" in request.url
            assert request.redirect_uri.startswith("http://127.0.0.1:") and request.redirect_uri.endswith("/callback")
            assert "Signed in to guarded" in browser.pages[0].text
            assert (await hub.call_tool("guarded", "whoami")).text == "protected"
    record = kept(server.url)
    assert record["tokens"]["access_token"] and record["tokens"]["refresh_token"]
    assert record["client_info"]["client_id"]


async def test_a_stored_token_is_used_on_the_next_start_without_a_browser(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            assert hub.status("guarded").state == ServerState.READY, hub.status("guarded").summary()
            assert (await hub.call_tool("guarded", "whoami")).text == "protected"
        assert server.stats()["authorized"] == 1 and server.stats()["registered"] == 1


async def test_an_expired_token_is_refreshed_at_the_authorization_server(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
        record = kept(server.url)
        old_token = record["tokens"]["access_token"]
        record["expires_at"] = 1.0  # long ago
        FileKeyring().set_password(KEYRING_SERVICE, server.url, json.dumps(record))

        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            assert hub.status("guarded").state == ServerState.READY, hub.status("guarded").summary()
            assert (await hub.call_tool("guarded", "whoami")).text == "protected"
        assert server.stats()["refreshes"] == 1 and server.stats()["authorized"] == 1
        assert kept(server.url)["tokens"]["access_token"] != old_token


async def test_a_refused_authorization_is_a_clear_failure(tmp_path):
    with protected_server("--refuse") as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            browser = Browser()
            status = await hub.sign_in("guarded", browser)
            assert status.state == ServerState.NEEDS_SIGN_IN
            assert status.reason == (
                "guarded: the authorization server refused the sign-in: access_denied (the user said no)"
            )
            assert "Sign-in refused" in browser.pages[0].text
    assert "tokens" not in kept(server.url)


async def test_a_cancelled_sign_in_leaves_the_server_waiting_for_one(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            browser = Browser(opens=False)

            async def give_up(request):
                await browser(request)
                request.cancel()

            status = await hub.sign_in("guarded", give_up)
            assert (status.state, status.reason) == (ServerState.NEEDS_SIGN_IN, "guarded: sign-in cancelled")


async def test_a_token_a_server_echoes_is_redacted(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
            result = await hub.call_tool("guarded", "my_token")
    token = kept(server.url)["tokens"]["access_token"]
    assert result.text == "you sent [redacted: guarded sign-in]"
    assert token not in result.text


async def test_without_a_keyring_tokens_go_to_a_private_file(tmp_path, isolated_user_dirs):
    keyring.set_keyring(NoKeyring())
    file = tmp_path / "data" / TOKEN_FILE_NAME
    with protected_server() as server:
        vault = TokenVault(file)
        hub = ServerHub([ServerConfig(name="guarded", type="http", url=server.url)], token_vault=vault)
        async with hub:
            await hub.start_all()
            status = await hub.sign_in("guarded", Browser())
            assert status.state == ServerState.READY, status.summary()
    assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
    assert json.loads(file.read_text())["servers"][server.url]["tokens"]["access_token"]
    assert vault.notice == (
        f"no keyring backend is available; sign-in tokens are kept in {file} (readable by you alone)"
    )
    assert not (isolated_user_dirs / "keyring.json").exists()


async def test_forgetting_a_sign_in_drops_its_tokens(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
            assert hub.forget_sign_in("guarded")
            await hub.restart("guarded")
            assert hub.status("guarded").state == ServerState.NEEDS_SIGN_IN
    assert "tokens" not in kept(server.url)  # the start registered the app again, and has no token


async def test_a_server_with_a_bearer_header_is_not_signed_in_with_oauth(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path, headers={"Authorization": "Bearer wrong-token"}) as hub:
            await hub.start_all()
            status = hub.status("guarded")
        assert server.stats()["registered"] == 0
    assert status.state == ServerState.FAILED
    assert (
        status.reason == f"{server.url} answered HTTP 401 Unauthorized (check the token or headers for it in mcp.json)"
    )


# ----- the app ----------------------------------------------------------------------------------


async def test_the_app_shows_needs_sign_in_and_signs_in_only_on_the_users_key(tmp_path, monkeypatch):
    import webbrowser

    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from tests.fakes import ScriptedEngine
    from tests.helpers import wait_until
    from tests.oauth_helpers import follow
    from tests.ui_helpers import chat_text, dialog_armed, make_app, wait_for, wait_ready

    opened: list[str] = []
    pages = []

    def browser_open(url: str) -> bool:  # runs on a thread, as webbrowser.open does in the dialog
        dialog = app.screen
        opened.append(url)
        pages.append(asyncio.run(follow(url)))
        # A browser may come back before open() returns: the dialog is gone by then.
        assert wait_until(lambda: not dialog.is_attached, timeout=20)
        return True

    monkeypatch.setattr(webbrowser, "open", browser_open)
    with protected_server() as server:
        app = make_app(ScriptedEngine(["hi"]), [ServerConfig(name="guarded", type="http", url=server.url)])
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot, app)
            status = app.hub.status("guarded")
            assert status.state == ServerState.NEEDS_SIGN_IN
            assert "needs sign-in: guarded: press s on it in the server panel (F4)" in chat_text(app)
            row = app.servers_table.get_row("guarded")
            assert str(row[0]) == "◇ sign in"
            await pilot.press("f4", "s")
            await wait_for(pilot, lambda: dialog_armed(app, SignInScreen), what="the sign-in dialog")
            dialog = app.screen
            shown = str(dialog.query_one("#sign-in-url").render())
            assert shown == dialog.request.url and shown.startswith(f"{server.issuer}/authorize?")
            assert "Sign in to guarded" in str(dialog.query_one("#sign-in-title").render())
            assert opened == [] and server.stats()["authorized"] == 0  # nothing opened by itself
            await pilot.press("o")
            await wait_for(pilot, lambda: app.hub.status("guarded").state == ServerState.READY, what="ready")
            await wait_for(pilot, lambda: not isinstance(app.screen, SignInScreen), what="the dialog to close")
            assert opened == [dialog.request.url]
            assert "Signed in to guarded" in pages[0].text
            assert str(app.servers_table.get_row("guarded")[0]) == "● ready"


async def test_escape_in_the_sign_in_dialog_cancels_it(tmp_path):
    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import dialog_armed, make_app, wait_for, wait_ready

    with protected_server() as server:
        app = make_app(ScriptedEngine(["hi"]), [ServerConfig(name="guarded", type="http", url=server.url)])
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot, app)
            app.server_controls.sign_in("guarded")
            await wait_for(pilot, lambda: dialog_armed(app, SignInScreen), what="the sign-in dialog")
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, SignInScreen), what="the dialog to close")
            await wait_for(
                pilot, lambda: app.hub.status("guarded").reason == "guarded: sign-in cancelled", what="cancelled"
            )
            assert app.hub.status("guarded").state == ServerState.NEEDS_SIGN_IN
        assert server.stats()["authorized"] == 0


async def test_a_token_revoked_while_running_leaves_the_server_needing_sign_in(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
            server.revoke_all()
            result = await asyncio.wait_for(hub.call_tool("guarded", "whoami"), 20)
            status = hub.status("guarded")
            assert result.failure.kind is FailureKind.NEEDS_SIGN_IN
            assert result.failure.message == (
                "server 'guarded' needs sign-in: run mcp-chat-tui --sign-in guarded, "
                "or press s on it in the app's server panel"
            )
            assert status.state == ServerState.NEEDS_SIGN_IN, status.summary()
            assert "mcp-chat-tui --sign-in guarded" in status.reason


async def test_the_init_timeout_does_not_count_the_time_in_the_browser(tmp_path):
    """A person slower than the server's whole init timeout still signs in."""
    with protected_server() as server:
        hub = ServerHub(
            [ServerConfig(name="guarded", type="http", url=server.url)],
            init_timeout=1.0,
            token_vault=TokenVault(tmp_path / TOKEN_FILE_NAME),
        )
        async with hub:
            await hub.start_all()
            browser = Browser()

            async def slow_person(request):
                await asyncio.sleep(1.5)  # reading the page, typing a password: half as long again as the timeout
                await browser(request)

            status = await hub.sign_in("guarded", slow_person)
            assert status.state == ServerState.READY, status.summary()


async def test_each_answer_of_a_slow_server_is_a_sign_of_life_while_it_starts(tmp_path):
    """Discovery and registration take four answers, each slower than half the init timeout: the
    start goes on while the server answers (it was failed as silent at the timeout from its spawn)."""
    with protected_server("--slow", "0.8") as server:
        hub = ServerHub(
            [ServerConfig(name="guarded", type="http", url=server.url)],
            init_timeout=2.0,
            token_vault=TokenVault(tmp_path / TOKEN_FILE_NAME),
        )
        async with hub:
            began = time.monotonic()
            status = (await hub.start_all())[0]
            assert status.state == ServerState.NEEDS_SIGN_IN, status.summary()
            assert time.monotonic() - began > 2.0  # longer than the init timeout


async def test_an_address_that_never_answers_is_not_said_to_be_a_silent_process(tmp_path):
    """A server at an address is no process of ours: its failed start says it did not answer, and
    what to check at its url, not that it gave no output nor used CPU on stdio."""
    listener = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)  # takes, never answers
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        hub = ServerHub([ServerConfig(name="mute", type="http", url=f"http://127.0.0.1:{port}/mcp")], init_timeout=1.0)
        async with hub:
            status = (await hub.start_all())[0]
    assert status.state == ServerState.FAILED
    assert "no answer to initialize within 1 s (check that the server is up" in status.reason, status.reason
    assert "stdio" not in status.reason and "CPU" not in status.reason


async def test_stopping_a_server_while_it_waits_for_the_browser_ends_that_sign_in(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            browser = Browser(opens=False)
            signing = asyncio.ensure_future(hub.sign_in("guarded", browser))
            while not browser.requests:
                await asyncio.sleep(0.05)
            await hub.stop("guarded")
            await asyncio.wait_for(browser.requests[0].finished(), 5)
            with pytest.raises(SignInFailed, match="guarded: the sign-in was stopped"):
                browser.requests[0].outcome.result()
            assert (await signing).state == ServerState.STOPPED


async def test_a_server_that_needs_sign_in_logs_no_error(tmp_path, caplog):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            assert hub.status("guarded").state == ServerState.NEEDS_SIGN_IN
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []

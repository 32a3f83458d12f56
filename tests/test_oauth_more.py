"""Signing in where the server asks more of the app: a call refused for want of scopes (step-up),
a client registered beforehand that may send its secret by HTTP Basic only, and a client metadata
document's URL as the client id; against the real authorization server and MCP server of
tests/servers/oauth_server.py on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.core.tools import FailureKind
from mcp_chat_tui.servers import ServerHub, ServerState
from mcp_chat_tui.servers.oauth_provider import client_auth_method
from mcp_chat_tui.servers.token_vault import TOKEN_FILE_NAME, TokenVault
from tests.arming import quick_arming  # noqa: F401 (the fixture, used by every test here)
from tests.helpers import free_port
from tests.oauth_helpers import Browser, protected_server
from tests.test_oauth import kept

pytestmark = pytest.mark.usefixtures("quick_arming")  # its dialogs are not about arming (tests/arming.py)

CLIENT_METADATA_URL = "https://app.example/mcp-chat-tui/client.json"


def hub_for(url: str, tmp_path, **oauth) -> ServerHub:
    server = ServerConfig(name="guarded", type="http", url=url, **({"oauth": oauth} if oauth else {}))
    return ServerHub([server], init_timeout=20, token_vault=TokenVault(tmp_path / TOKEN_FILE_NAME))


def scopes_asked(server) -> list[str | None]:
    return [authorization["scope"] for authorization in server.stats()["authorizations"]]


# ----- a call that wants more access -----------------------------------------------------------


async def test_a_call_refused_for_want_of_a_scope_asks_the_person_for_the_union_then_is_sent_again(tmp_path):
    with protected_server("--step-up") as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            assert (await hub.sign_in("guarded", Browser())).state == ServerState.READY
            person = Browser()
            hub.step_up_prompt = person
            result = await asyncio.wait_for(hub.call_tool("guarded", "write_note", {"text": "hi"}), 120)
            assert result.failure is None and result.text == "noted: hi", result
            [request] = person.requests
            assert request.more_access == "mcp mcp:write"
            assert "scope=mcp+mcp%3Awrite" in request.url
            assert hub.status("guarded").state == ServerState.READY
            assert (await hub.call_tool("guarded", "write_note", {"text": "again"})).text == "noted: again"
            assert len(person.requests) == 1  # the new token has the scope: nobody is asked again
            assert scopes_asked(server) == ["mcp", "mcp mcp:write"]


async def test_without_a_person_the_call_says_it_needs_more_access_and_the_next_sign_in_asks_for_it(tmp_path):
    with protected_server("--step-up") as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
            result = await asyncio.wait_for(hub.call_tool("guarded", "write_note", {"text": "hi"}), 120)
            status = hub.status("guarded")
            assert result.failure is not None and result.failure.kind is FailureKind.NEEDS_SIGN_IN
            assert result.failure.message == (
                "server 'guarded' needs sign-in with more access (mcp mcp:write): "
                "run mcp-chat-tui --sign-in guarded, or press s on it in the app's server panel"
            )
            assert status.state == ServerState.NEEDS_SIGN_IN
            assert status.reason.startswith("needs sign-in with more access (mcp mcp:write)")
            assert kept(server.url)["more_access"] == "mcp mcp:write"

            # The tokens still work for the other tools, yet the next sign-in authorizes again.
            assert (await hub.sign_in("guarded", Browser())).state == ServerState.READY
            assert (await hub.call_tool("guarded", "write_note", {"text": "hi"})).text == "noted: hi"
            assert scopes_asked(server) == ["mcp", "mcp mcp:write"]
    assert "more_access" not in kept(server.url)


async def test_a_refusal_for_scopes_the_sign_in_has_asks_nobody_and_leaves_the_server_running(tmp_path):
    with protected_server("--forbid-always") as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            await hub.sign_in("guarded", Browser())
            person = Browser()
            hub.step_up_prompt = person
            result = await asyncio.wait_for(hub.call_tool("guarded", "write_note", {"text": "hi"}), 120)
            assert result.failure is not None
            assert result.failure.message == (
                "server 'guarded' refused for want of mcp, which its sign-in has: signing in again would not help"
            )
            assert person.requests == []
            assert hub.status("guarded").state == ServerState.READY
            assert (await hub.call_tool("guarded", "whoami")).text == "protected"
            assert server.stats()["authorized"] == 1


# ----- how a client registered beforehand authenticates ------------------------------------------


async def test_a_pre_registered_client_sends_its_secret_as_the_authorization_server_allows(tmp_path):
    port = free_port()
    flags = ("--no-registration", "--basic-only", "--client", "app:s3cret-value-1", "--redirect")
    with protected_server(*flags, f"http://127.0.0.1:{port}/callback") as server:
        async with hub_for(
            server.url, tmp_path, clientId="app", clientSecret="s3cret-value-1", callbackPort=port
        ) as hub:
            await hub.start_all()
            status = await hub.sign_in("guarded", Browser())
            assert status.state == ServerState.READY, status.summary()
            assert (await hub.call_tool("guarded", "whoami")).text == "protected"
            stats = server.stats()
    assert stats["code_exchanges"] == 1 and stats["registered"] == 0


async def test_token_endpoint_auth_method_in_mcp_json_overrides_the_metadata(tmp_path):
    port = free_port()
    flags = ("--no-registration", "--basic-only", "--client", "app:s3cret-value-1", "--redirect")
    oauth = {"clientId": "app", "clientSecret": "s3cret-value-1", "callbackPort": port}
    with protected_server(*flags, f"http://127.0.0.1:{port}/callback") as server:
        async with hub_for(server.url, tmp_path, **oauth, tokenEndpointAuthMethod="client_secret_post") as hub:
            await hub.start_all()
            status = await hub.sign_in("guarded", Browser())
    assert status.state == ServerState.FAILED
    assert "Token exchange failed (401)" in status.reason and "s3cret" not in status.reason


@pytest.mark.parametrize(
    ("listed", "secret", "chosen"),
    [
        (["client_secret_basic"], True, "client_secret_basic"),
        (["client_secret_post"], True, "client_secret_post"),
        (["client_secret_post", "client_secret_basic"], True, "client_secret_post"),
        (["private_key_jwt", "client_secret_basic"], True, "client_secret_basic"),
        (None, True, "client_secret_basic"),  # RFC 8414's default when the metadata lists none
        (["client_secret_basic"], False, "none"),
    ],
)
def test_the_client_auth_method_follows_the_metadata(listed, secret, chosen):
    from mcp.shared.auth import OAuthMetadata

    metadata = OAuthMetadata.model_validate(
        {
            "issuer": "https://auth.example",
            "authorization_endpoint": "https://auth.example/authorize",
            "token_endpoint": "https://auth.example/token",
            "token_endpoint_auth_methods_supported": listed,
        }
    )
    assert client_auth_method(metadata, secret) == chosen


# ----- a client metadata document as the client id -----------------------------------------------


async def test_a_client_metadata_document_url_is_the_client_id_where_the_server_supports_it(tmp_path):
    port = free_port()
    flags = ("--cimd", CLIENT_METADATA_URL, "--redirect", f"http://127.0.0.1:{port}/callback")
    with protected_server(*flags) as server:
        async with hub_for(server.url, tmp_path, clientMetadataUrl=CLIENT_METADATA_URL, callbackPort=port) as hub:
            await hub.start_all()
            status = await hub.sign_in("guarded", Browser())
            assert status.state == ServerState.READY, status.summary()
            stats = server.stats()
        async with hub_for(server.url, tmp_path, clientMetadataUrl=CLIENT_METADATA_URL, callbackPort=port) as hub:
            await hub.start_all()  # the next run: the kept tokens, no browser
            assert hub.status("guarded").state == ServerState.READY
    assert stats["registered"] == 0
    assert [a["client_id"] for a in stats["authorizations"]] == [CLIENT_METADATA_URL]
    assert kept(server.url)["client_info"]["client_id"] == CLIENT_METADATA_URL


async def test_without_support_for_client_metadata_documents_the_app_registers(tmp_path):
    with protected_server() as server:
        async with hub_for(server.url, tmp_path, clientMetadataUrl=CLIENT_METADATA_URL) as hub:
            await hub.start_all()
            assert (await hub.sign_in("guarded", Browser())).state == ServerState.READY
            stats = server.stats()
    assert stats["registered"] == 1
    assert stats["authorizations"][0]["client_id"] != CLIENT_METADATA_URL


async def test_in_the_app_a_call_that_wants_more_access_shows_the_sign_in_dialog_then_runs(tmp_path, monkeypatch):
    import webbrowser

    from mcp_chat_tui.agent.approval import ApprovalPolicy
    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from tests.fakes import ScriptedEngine, call
    from tests.oauth_helpers import follow
    from tests.ui_helpers import chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

    monkeypatch.setattr(webbrowser, "open", lambda url: asyncio.run(follow(url)) is not None)
    with protected_server("--step-up") as server:
        engine = ScriptedEngine([[call("write_note", {"text": "hi"})], "noted it"])
        hub = hub_for(server.url, tmp_path)
        app = make_app(engine, hub=hub, policy=ApprovalPolicy("ask", yes=True))
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot, app)
            app.server_controls.sign_in("guarded")
            await wait_for(pilot, lambda: dialog_armed(app, SignInScreen), what="the sign-in dialog", timeout=60)
            await pilot.press("o")
            await wait_for(
                pilot, lambda: hub.status("guarded").state == ServerState.READY, what="signed in", timeout=60
            )
            await wait_for(
                pilot, lambda: not isinstance(app.screen, SignInScreen), what="the dialog to close", timeout=60
            )

            await send(pilot, "note hi")
            await wait_for(
                pilot, lambda: dialog_armed(app, SignInScreen), what="the sign-in dialog for more access", timeout=60
            )
            title = str(app.screen.query_one("#sign-in-title").render())
            assert title == "Sign in to guarded again, with more access"
            assert "authorize mcp-chat-tui for mcp mcp:write" in str(app.screen.query_one("#sign-in-about").render())
            await pilot.press("o")
            await wait_turn_done(pilot, app, timeout=60)
            assert "noted: hi" in chat_text(app)
            assert hub.status("guarded").state == ServerState.READY
        assert scopes_asked(server) == ["mcp", "mcp mcp:write"]


async def test_signing_in_again_at_once_listens_on_the_same_redirect_port_and_keeps_the_client(tmp_path):
    """The browser's connection to the first sign-in's listener leaves its port in TIME_WAIT; the
    next sign-in binds it all the same (was: 'address in use', so the client was registered anew,
    and a fixed callbackPort could not sign in again for a minute)."""
    with protected_server() as server:
        async with hub_for(server.url, tmp_path) as hub:
            await hub.start_all()
            first, second = Browser(), Browser()
            assert (await hub.sign_in("guarded", first)).state == ServerState.READY
            server.revoke_all()  # the provider signed the app out: the next sign-in needs the browser
            assert (await hub.sign_in("guarded", second)).state == ServerState.READY
            stats = server.stats()
    assert first.requests[0].redirect_uri == second.requests[0].redirect_uri
    assert stats["registered"] == 1 and stats["authorized"] == 2


async def test_in_the_app_a_cancelled_sign_in_for_more_access_leaves_s_to_ask_for_it(tmp_path, monkeypatch):
    import webbrowser

    from mcp_chat_tui.agent.approval import ApprovalPolicy
    from mcp_chat_tui.ui.screens.sign_in import SignInScreen
    from tests.fakes import ScriptedEngine, call
    from tests.oauth_helpers import follow
    from tests.ui_helpers import chat_text, dialog_armed, make_app, send, wait_for, wait_ready, wait_turn_done

    monkeypatch.setattr(webbrowser, "open", lambda url: asyncio.run(follow(url)) is not None)
    with protected_server("--step-up") as server:
        engine = ScriptedEngine(
            [[call("write_note", {"text": "hi"})], "not noted", [call("write_note", {"text": "hi"})]]
        )
        hub = hub_for(server.url, tmp_path)
        app = make_app(engine, hub=hub, policy=ApprovalPolicy("ask", yes=True))
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_ready(pilot, app)
            await hub.sign_in("guarded", Browser())
            await send(pilot, "note hi")
            armed = lambda: dialog_armed(app, SignInScreen)  # noqa: E731
            await wait_for(pilot, armed, what="the sign-in dialog for more access", timeout=60)
            await pilot.press("escape")
            await wait_turn_done(pilot, app, timeout=60)
            status = hub.status("guarded")
            assert status.state == ServerState.NEEDS_SIGN_IN, status.summary()
            assert "needs sign-in" in chat_text(app)

            await pilot.press("f4", "s")  # was: the server failed, and s did nothing
            await wait_for(pilot, armed, what="the sign-in dialog", timeout=60)
            await pilot.press("o")
            await wait_for(pilot, lambda: hub.status("guarded").state == ServerState.READY, what="ready", timeout=60)
            assert (await hub.call_tool("guarded", "write_note", {"text": "hi"})).text == "noted: hi"
        assert scopes_asked(server) == ["mcp", "mcp mcp:write"]

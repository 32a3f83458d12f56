"""Snapshots of signing in: the server panel with a server that needs it, and the sign-in dialog.

Built as in tests/test_snapshots.py (the real app, a frozen clock); the server that needs sign-in
is a real protected server on 127.0.0.1, and the dialog shows a fixed address so the picture is
the same every run. Update with ``pytest tests/test_snapshots_sign_in.py --snapshot-update``.
"""

from __future__ import annotations

import asyncio

from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.servers.oauth import SignInRequest
from mcp_chat_tui.ui.screens.sign_in import SignInScreen
from tests.fakes import ScriptedEngine
from tests.helpers import demo_config
from tests.oauth_helpers import protected_server
from tests.test_snapshots import start
from tests.ui_helpers import SIZE, dialog_armed, make_app, wait_for

ADDRESS = (
    "https://auth.example.com/authorize?response_type=code&client_id=3f2a9c61-mcp-chat-tui"
    "&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback&state=Zq8xWb1nL4&code_challenge="
    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&scope=repo+read%3Auser"
)


def test_server_panel_with_a_server_that_needs_sign_in(snap_compare):
    with protected_server() as server:

        async def run_before(pilot) -> None:
            app = pilot.app
            await start(pilot)
            await wait_for(pilot, lambda: app.hub.status("github").state == ServerState.NEEDS_SIGN_IN, what="sign-in")
            await pilot.press("f4", "down")
            await pilot.pause()

        servers = [demo_config(), ServerConfig(name="github", type="http", url=server.url)]
        app = make_app(ScriptedEngine([]), servers)
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sign_in_dialog(snap_compare):
    async def run_before(pilot) -> None:
        app = pilot.app
        await start(pilot)
        outcome = asyncio.get_running_loop().create_future()
        await app.push_screen(
            SignInScreen(SignInRequest("github", ADDRESS, "http://127.0.0.1:53682/callback", outcome))
        )
        await wait_for(pilot, lambda: dialog_armed(app, SignInScreen), what="the dialog")
        await pilot.pause()

    assert snap_compare(make_app(ScriptedEngine([])), terminal_size=SIZE, run_before=run_before)

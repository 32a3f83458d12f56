"""The full-screen app asks before a folder's mcp.json starts anything: the real app under Pilot,
wired as ``mcp-chat-tui MODEL`` wires it (cli/setup.py's plan), the planted SDK server of
tests/test_folder_trust.py, the real trust store; then the real CLI in the same folder."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp_chat_tui.cli.args import build_parser
from mcp_chat_tui.cli.setup import load_planned, make_hub, plan_configuration
from mcp_chat_tui.config.folder_trust import TrustStore, read_fingerprint
from mcp_chat_tui.core.errors import UserFacingError
from mcp_chat_tui.servers import ServerState
from mcp_chat_tui.ui.screens import deciding
from mcp_chat_tui.ui.screens.detail import TextScreen
from mcp_chat_tui.ui.screens.fatal import FatalScreen
from mcp_chat_tui.ui.screens.folder_trust import FolderInputsScreen, FolderTrustScreen
from mcp_chat_tui.ui.widgets.chat import Notice
from tests.fakes import ScriptedEngine
from tests.helpers import starts, wait_until
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_folder_trust import plant
from tests.test_oneshot import run_cli
from tests.test_tui_exit import Terminal
from tests.ui_helpers import SIZE, dialog_armed, make_app, wait_for, wait_ready


def app_in(folder, monkeypatch, engine=None):
    """The app ``mcp-chat-tui`` would run in ``folder``: a folder's file not trusted yet is loaded
    without its servers and asked about by the app."""
    monkeypatch.chdir(folder)
    plan = plan_configuration(build_parser().parse_args([]))
    hub = make_hub(plan.settings, load_planned(plan, trusted=plan.question is None))
    app = make_app(engine or ScriptedEngine([]), hub=hub, settings=plan.settings, folder_to_trust=plan.question)
    return app


async def armed_dialog(pilot) -> FolderTrustScreen:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, FolderTrustScreen), what="the trust dialog")
    await wait_for(pilot, lambda: app.screen.armed, what="the dialog to take its keys")
    return app.screen


def test_keys_typed_before_the_dialog_is_armed_stay_in_the_prompt_then_y_trusts(
    tmp_path, isolated_user_dirs, monkeypatch
):
    """Not a coroutine: the app runs in an event loop of its own, so that the CLI's checks after it run
    in this process (tests/cli_in_process.py) rather than as processes importing mlx-lm again."""
    monkeypatch.setattr(deciding, "ARMING_DELAY", 3.0)  # room for the keys typed "before" on a loaded machine
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started)
    app = app_in(tmp_path, monkeypatch)
    assert app.start_up.folder_to_trust is not None and app.hub.statuses == []
    asyncio.run(answer_the_dialog_with_keys_typed_before(app, started))
    assert TrustStore().trusts(read_fingerprint(path))

    again = app_in(tmp_path, monkeypatch)
    assert again.start_up.folder_to_trust is None and [s.name for s in again.hub.statuses] == ["planted"]
    result = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    assert "would start" not in result.stderr and starts(started) == 2, "trusted once: not asked again"

    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    changed = app_in(tmp_path, monkeypatch)
    assert changed.start_up.folder_to_trust is not None and changed.hub.statuses == [], "a changed file asks again"
    result = run_cli("--check-servers", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 2 and starts(started) == 2


async def answer_the_dialog_with_keys_typed_before(app, started) -> None:
    """Keys typed as the trust dialog appears, and again as it comes back on top, stay in the prompt; a
    y once it is armed trusts the file and starts its server."""
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FolderTrustScreen), what="the trust dialog")
        screen = app.screen
        assert not screen.armed
        await pilot.press("y", "e", "s", "escape", "n")  # typed for the prompt as the dialog appears
        assert app.screen is screen and not screen.armed, "no key typed before answered it"
        assert app.query_one("#prompt").value == "yesn"
        shown = str(screen.query_one("#folder-trust-servers").render())
        assert "planted (stdio)" in shown and f"--started-file {started}" in shown
        assert starts(started) == 0
        await armed_dialog(pilot)
        await app.push_screen(TextScreen("over it", "a screen over the dialog"))  # the palette, say
        await pilot.press("escape")  # closes it: the dialog is shown again, and not armed yet
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog again")
        await pilot.press("y")
        assert app.screen is screen and app.query_one("#prompt").value == "yesny"
        await armed_dialog(pilot)
        await pilot.press("y")
        await wait_ready(pilot, app)
        assert app.hub.status("planted").state is ServerState.READY
        assert "planted" in app.servers_table.rows, "the server joined the panel"
        assert starts(started) == 1


async def test_no_runs_the_app_without_the_files_servers_and_says_so(tmp_path, isolated_user_dirs, monkeypatch):
    started = tmp_path / "started.txt"
    plant(tmp_path, started, where=".vscode/mcp.json")
    app = app_in(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await armed_dialog(pilot)
        await pilot.press("n")
        await wait_ready(pilot, app)
        notices = [str(notice.render()) for notice in app.chat.query(Notice)]
        assert any("./.vscode/mcp.json not trusted: running without its 1 server" in text for text in notices)
        assert app.hub.statuses == [] and app.fatal_error is None
    assert starts(started) == 0
    assert not TrustStore().path.exists(), "a no is not remembered: the next start asks again"


class UnloadableEngine(ScriptedEngine):
    """A model that fails to load while the trust dialog waits for its answer."""

    async def load(self, on_progress=None) -> None:
        await asyncio.sleep(0.3)
        raise UserFacingError("cannot load model 'missing'")


async def test_a_model_that_fails_while_the_dialog_waits_ends_the_app_and_starts_nothing(
    tmp_path, isolated_user_dirs, monkeypatch
):
    started = tmp_path / "started.txt"
    plant(tmp_path, started)
    app = app_in(tmp_path, monkeypatch, UnloadableEngine([]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FatalScreen), what="the fatal screen")
        assert app.fatal_error == "cannot load model 'missing'"
        await pilot.press("y")  # any key leaves; it answers no dialog
    assert app.return_code == 1 and app.hub.statuses == [] and starts(started) == 0
    assert not TrustStore().path.exists()


async def test_the_files_inputs_are_asked_only_once_it_is_trusted(tmp_path, isolated_user_dirs, monkeypatch):
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started, env={"PLANTED_TOKEN": "${input:token}"})
    document = json.loads(path.read_text())
    document["inputs"] = [{"id": "token", "type": "promptString", "description": "your token", "password": True}]
    path.write_text(json.dumps(document))
    app = app_in(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await armed_dialog(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: dialog_armed(app, FolderInputsScreen), what="the inputs form, armed")
        field = app.screen.query_one("#field-0")
        assert field.password, "a password input is typed without echo"
        await pilot.press(*"s3cret-token", "enter")
        await wait_ready(pilot, app)
        assert app.hub.status("planted").state is ServerState.READY
        assert app.hub.redactor.text("said s3cret-token") == "said [redacted: token]"
    assert started.read_text().split() == ["planted", "s3cret-token"]


def test_the_command_in_a_terminal_asks_before_starting_and_y_starts_the_server(tmp_path, isolated_user_dirs):
    started = tmp_path / "started.txt"
    path = plant(tmp_path, started)
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("COLUMNS", None), env.pop("LINES", None)
    with ScriptedEndpoint([]) as endpoint:
        argv = [sys.executable, "-m", "mcp_chat_tui.cli.main", "--endpoint", endpoint.url, "scripted-model"]
        terminal = Terminal(argv, tmp_path, env)
        try:
            assert wait_until(lambda: "trust this file and start them" in terminal.text(), 60), terminal.text()
            assert "Start the servers of ./mcp.json?" in terminal.text() and starts(started) == 0
            # Its keys answer once it is armed (half a second after it is drawn and typing stopped): a y
            # pressed before goes to the prompt. Press it until it answers, a second apart.
            for _ in range(30):
                terminal.press(b"y")
                if wait_until(lambda: "from 1 server" in terminal.text(), 2):
                    break
            assert "from 1 server" in terminal.text(), terminal.text()[-2000:]
            assert starts(started) == 1
            terminal.press(b"\x03")
            assert wait_until(lambda: terminal.status is not None, 15), terminal.text()[-2000:]
        finally:
            terminal.close()
    assert terminal.status == 130 and "Traceback" not in terminal.text()
    assert TrustStore().trusts(read_fingerprint(path))

"""``/model`` at ``--plain``'s prompt, through the real CLI in this process: ``/model`` lists the models
(an endpoint's ``/v1/models``, config.toml's local_models), ``/model NAME`` switches, the next reply goes
to the new model and the transcript names it; a name that is not on this machine is refused."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from mcp_chat_tui.transcript import parse, read_transcript_text
from tests import cli_in_process
from tests.models import build_tiny_model
from tests.scripted_endpoint import ScriptedEndpoint

pytestmark = pytest.mark.slow  # the CLI and a real model (tests/conftest.py: SLOW_FILES)


@pytest.fixture(autouse=True)
def empty_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def plain(model_args: list[str], folder: Path, dirs: Path, stdin: str, config: str = ""):
    (folder / "mcp.json").write_text(json.dumps({"servers": {}}))
    (dirs / "config").mkdir(parents=True, exist_ok=True)
    (dirs / "config" / "config.toml").write_text(config)
    env = {**os.environ, "COLUMNS": "200"}
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    args = [*model_args, "--plain", "--mcp-config", str(folder / "mcp.json")]
    return cli_in_process.run_cli(args, cwd=folder, env=env, stdin=stdin)


def saved(dirs: Path):
    [path] = sorted((dirs / "data" / "conversations").glob("*.md"))
    return parse(read_transcript_text(path), path)


def test_an_endpoints_models_are_listed_and_the_next_reply_goes_to_the_one_chosen(tmp_path, isolated_user_dirs):
    with ScriptedEndpoint(["first answer", "second answer"], models=["scripted", "other-model"]) as endpoint:
        result = plain(
            ["--endpoint", endpoint.url, "scripted"],
            tmp_path,
            isolated_user_dirs,
            "hello\n/model\n/model other-model\nagain\n",
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(rf"●\s+scripted\s+endpoint\s+{re.escape(endpoint.url)}", out), out
    assert re.search(rf"\n\s+other-model\s+endpoint\s+{re.escape(endpoint.url)}", out), out
    assert "/model NAME switches to one" in out
    assert "switched to other-model" in out, out
    assert [request["model"] for request in endpoint.requests] == ["scripted", "other-model"]
    assert [exchange.model for exchange in saved(isolated_user_dirs).exchanges] == ["scripted", "other-model"]


def test_a_local_model_named_in_config_toml_takes_over_and_a_missing_one_is_refused(
    tiny_model, tmp_path, isolated_user_dirs
):
    second = build_tiny_model(tmp_path / "tiny-b", seed=7)
    result = plain(
        [str(tiny_model), "--max-tokens", "3"],
        tmp_path,
        isolated_user_dirs,
        "hello\n/model no-such-model\n/model tiny-b\nagain\n",
        config=f"local_models = [{json.dumps(str(second))}]\n",
    )
    assert result.returncode == 0, result.stderr
    assert "no model 'no-such-model' on this machine: /model lists them" in result.stdout, result.stdout
    assert "switched to tiny-b" in result.stdout, result.stdout
    assert [exchange.model for exchange in saved(isolated_user_dirs).exchanges] == [tiny_model.name, "tiny-b"]


def test_a_switch_before_the_first_prompt_is_printed_when_the_conversation_is_resumed(
    tiny_model, tmp_path, isolated_user_dirs
):
    second = build_tiny_model(tmp_path / "tiny-b", seed=7)
    config = f"local_models = [{json.dumps(str(second))}]\n"
    first = plain(
        [str(tiny_model), "--max-tokens", "3"], tmp_path, isolated_user_dirs, "/model tiny-b\nhello\n", config
    )
    assert first.returncode == 0, first.stderr
    [path] = sorted((isolated_user_dirs / "data" / "conversations").glob("*.md"))
    resumed = plain(
        [str(second), "--max-tokens", "3", "--transcript", str(path)], tmp_path, isolated_user_dirs, "bye\n", config
    )
    assert resumed.returncode == 0, resumed.stderr
    assert re.search(r"— switched to tiny-b —\s*\n\s*prompt -> hello", resumed.stdout), resumed.stdout


def test_ctrl_c_during_a_load_cancels_it_and_the_conversation_goes_on(
    tiny_model, tmp_path, isolated_user_dirs, monkeypatch
):
    """Ctrl+C (a real SIGINT to this process) while ``/model NAME`` loads: the load stops at its next
    step, a line says the current model stays, and the next prompt goes to it; the app is not left.
    The load is held at its first weight step until the cancel has reached it, so the Ctrl+C lands
    during the load on any machine."""
    import signal
    import threading

    import mlx.core as mx

    from mcp_chat_tui.engine import loading
    from mcp_chat_tui.engine.mlx_engine import MlxEngine
    from tests.test_load_cancel import HeldEval

    second = build_tiny_model(tmp_path / "tiny-b", seed=7)
    monkeypatch.setattr(loading, "STEP_BYTES", 1, raising=False)
    held, cancelled = HeldEval(armed=False), threading.Event()
    monkeypatch.setattr(mx, "eval", held)
    load = MlxEngine.load

    async def arm_for_the_switch(self, on_progress=None):  # not for the model the run starts with
        if self.model_name == str(second):
            held.armed.set()
        await load(self, on_progress)

    monkeypatch.setattr(MlxEngine, "load", arm_for_the_switch)
    cancel_load = getattr(MlxEngine, "cancel_load", lambda self: None)
    monkeypatch.setattr(MlxEngine, "cancel_load", lambda self: (cancel_load(self), cancelled.set()))

    def press_ctrl_c() -> None:  # once the new model's weights are being read
        if held.entered.wait(120):
            os.kill(os.getpid(), signal.SIGINT)
            cancelled.wait(30)
        held.release.set()

    threading.Thread(target=press_ctrl_c, daemon=True).start()
    result = plain(
        [str(tiny_model), "--max-tokens", "3"],
        tmp_path,
        isolated_user_dirs,
        "/model tiny-b\nhello\nbye\n",
        config=f"local_models = [{json.dumps(str(second))}]\n",
    )
    held.release.set()
    assert held.entered.is_set(), "the switch never read its weights"
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert f"loading cancelled: still on {tiny_model.name}" in result.stdout, result.stdout
    assert "switched to" not in result.stdout
    assert [exchange.model for exchange in saved(isolated_user_dirs).exchanges] == [tiny_model.name]


def test_ctrl_c_means_leave_again_once_the_load_has_ended():
    """Outside a load Ctrl+C keeps its meaning: the handler before the load is back after it."""
    import asyncio
    import signal

    from mcp_chat_tui.cli.terminal import ctrl_c_cancels

    async def load_then_press() -> tuple[bool, bool]:
        waiting = asyncio.get_running_loop().create_future()
        with ctrl_c_cancels(waiting) as ctrl_c:
            during = signal.getsignal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            try:
                await waiting
            except asyncio.CancelledError:
                pass
        return ctrl_c.pressed and waiting.cancelled(), during is not signal.default_int_handler

    before = signal.getsignal(signal.SIGINT)
    assert asyncio.run(load_then_press()) == (True, True)
    assert signal.getsignal(signal.SIGINT) is before

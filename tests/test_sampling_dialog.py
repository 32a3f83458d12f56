"""The app's sampling dialog shows what the server asks of the reply (maxTokens, temperature, stop
sequences), and the approved request reaches the engine with those settings for that reply only:
the real app under Pilot, tests/servers/sampling_server.py (``create_message``), a scripted model."""

from __future__ import annotations

import json
import sys

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.config import ServerConfig
from mcp_chat_tui.engine.generation import ReplyOverrides
from mcp_chat_tui.ui.screens.requests import SampleReviewScreen, SamplingScreen
from tests.fakes import ScriptedEngine, call
from tests.test_sampling_settings import SAMPLING_SERVER
from tests.test_ui_requests import on_screen, tool_result
from tests.ui_helpers import SIZE, make_app, send, wait_ready, wait_turn_done


async def test_the_dialog_shows_the_requests_settings_and_the_reply_is_generated_with_them():
    asked = {"prompt": "Name a colour", "max_tokens": 5, "temperature": 0.3, "stop": ["END", "\n\n"]}
    engine = ScriptedEngine([[call("ask_model", asked)], "Blue", "Done."])
    config = ServerConfig(name="sampler", type="stdio", command=sys.executable, args=[SAMPLING_SERVER])
    app = make_app(engine, [config], policy=ApprovalPolicy("auto"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "ask it")
        await on_screen(pilot, SamplingScreen)
        shown = str(app.screen.query_one("#sampling-asked").render())
        assert shown == 'up to 5 tokens · temperature 0.3 · stops at "END", "\\n\\n"'  # escapes: data, not text
        await pilot.press("ctrl+s")
        await on_screen(pilot, SampleReviewScreen)
        await pilot.press("ctrl+s")
        await wait_turn_done(pilot, app)
        assert json.loads(tool_result(app))["content"] == {"type": "text", "text": "Blue"}
    assert engine.overrides_sent == [None, ReplyOverrides(max_tokens=5, temperature=0.3, stop=("END", "\n\n")), None]

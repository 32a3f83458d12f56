"""The full-screen app on the real MLX engine (demo model): a conversation resumed in a new app and
a new engine starts from the KV cache saved beside it, and the status bar says so after the first reply."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_chat_tui.agent import ApprovalPolicy
from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.core.paths import prompt_cache_path
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.transcript import parse, read_transcript_text
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

CACHED = re.compile(r"ready · (\d+) of (\d+) prompt tokens were cached")


def status_line(app) -> str:
    return app.status_bar.render().plain


async def one_turn(conversation: Path, prompt: str, **options) -> str:
    """A new app and engine on ``conversation``: one turn, then leave; the status line after it."""
    app = make_app(MlxEngine(demo_model_path()), policy=ApprovalPolicy("ask", yes=True), **options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, prompt)
        await wait_turn_done(pilot, app)
        await wait_for(pilot, lambda: "ready" in status_line(app), what="the ready state")
        line = status_line(app)
        await app.action_quit()
    return line


async def test_a_resumed_conversation_starts_from_its_saved_cache(tmp_path):
    conversation = tmp_path / "chat.md"
    first = await one_turn(conversation, "what is 12 * 7?", transcript_file=conversation)
    assert not CACHED.search(first), first  # a new conversation: its first prompt is computed whole
    assert prompt_cache_path(conversation).is_file()

    loaded = parse(read_transcript_text(conversation), conversation)
    line = await one_turn(conversation, "what is 84 / 2?", transcript_file=conversation, transcript=loaded)
    found = CACHED.search(line)
    assert found, line
    cached, prompt = int(found[1]), int(found[2])
    assert cached >= 0.9 * prompt, line

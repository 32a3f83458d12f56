"""The status bar on a narrow terminal: the least needed parts go first and a long model name is cut
in its middle, so the engine's state, "not saved" and the messages waiting stay in view."""

from __future__ import annotations

from rich.text import Text

from mcp_chat_tui.ui.widgets.status import StatusBar, fit, middle_cut
from tests.fakes import ScriptedEngine
from tests.ui_helpers import make_app, wait_ready

LONG_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
PARTS = [
    (1, Text(" (llama.cpp · Q4_K_M · 2 threads)")),
    (0, Text("  ·  ready")),
    (4, Text(" · 693 of 709 prompt tokens were cached")),
    (5, Text("  ·  875/16k tokens")),
    (2, Text("  ·  1/1 servers")),
    (0, Text("  ·  not saved")),
]


def test_everything_is_shown_where_it_fits_and_nothing_before_layout():
    assert str(fit(LONG_NAME, PARTS, 200)) == LONG_NAME + "".join(str(part) for _, part in PARTS)
    assert str(fit(LONG_NAME, PARTS, 0)) == str(fit(LONG_NAME, PARTS, 200))


def test_the_least_needed_parts_go_first_then_the_name_is_cut_in_its_middle():
    line = str(fit(LONG_NAME, PARTS, 78))
    assert len(line) <= 78
    assert "ready" in line and "not saved" in line and "875/16k tokens" in line
    assert "threads" not in line and "servers" not in line and "cached" not in line
    assert line.startswith("qwen2.5-coder") and "…" in line and ".gguf  ·  ready" in line
    narrow = str(fit(LONG_NAME, PARTS, 40))
    assert len(narrow) <= 40 and "ready" in narrow and "not saved" in narrow and "tokens" not in narrow


def test_the_name_takes_back_the_room_the_dropped_parts_leave():
    line = str(fit(LONG_NAME, PARTS, 100))
    assert line.startswith(LONG_NAME + "  ·  ready")  # the whole name: the cache note went instead


def test_middle_cut_keeps_both_ends():
    assert middle_cut("abcdefghij", 20) == "abcdefghij"
    assert middle_cut("abcdefghij", 5) == "ab…ij"
    assert len(middle_cut(LONG_NAME, 17)) == 17


async def test_at_80_columns_the_status_bar_keeps_the_state_of_a_long_named_model(tmp_path):
    engine = ScriptedEngine(["hi"])
    engine.model_name = LONG_NAME
    app = make_app(engine, servers=[], transcript_file=tmp_path / "chat.md")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        bar = app.query_one(StatusBar)
        bar.compute = "llama.cpp · Q4_K_M · 2 threads"
        bar.context_tokens = 875
        bar.save_problem = "the disk is full"
        await pilot.pause()
        line = bar.render_lines(bar.region.reset_offset)[0].text
        assert "ready" in line and "not saved" in line, line
        assert line.strip().startswith("qwen2.5-coder")

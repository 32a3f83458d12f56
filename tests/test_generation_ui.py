"""The model detail (a click on the status bar, or the palette): each generation setting in effect and
where it came from, on the real MLX engine with a model that has a generation_config.json; its snapshot;
and a reply of the app recorded with its settings."""

from __future__ import annotations

import json

from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable, Input

from mcp_chat_tui.engine.generation import resolve
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.settings import EngineSettings
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.model import ModelDetailScreen
from mcp_chat_tui.ui.widgets.status import StatusBar
from tests.fakes import ScriptedEngine
from tests.test_generation_settings import SAMPLING_FILE, model_with_generation_config
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done


def shown_rows(screen: ModelDetailScreen) -> dict[str, tuple[str, str]]:
    """The detail's table as ``{setting: (value, source)}``, as drawn."""
    table = screen.query_one(DataTable)
    rows = (table.get_row_at(index) for index in range(table.row_count))
    return {str(key): (str(value), str(source)) for key, value, source in rows}


async def test_a_click_on_the_status_bar_shows_each_setting_and_where_it_came_from(tmp_path):
    model = model_with_generation_config(tmp_path / "model", SAMPLING_FILE)
    settings = EngineSettings(temperature=0.3, seed=9, sources={"temperature": "flag", "seed": "config.toml"})
    app = make_app(MlxEngine(str(model), settings, max_tokens=8), servers=[], transcript_file=tmp_path / "chat.md")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.click(StatusBar)
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelDetailScreen) and app.screen.is_mounted, what="the model detail"
        )
        assert shown_rows(app.screen) == {
            "temperature": ("0.3", "flag"),
            "top_p": ("0.8", "model file"),
            "min_p": ("0 (off)", "default"),
            "top_k": ("20", "model file"),
            "repetition_penalty": ("1.05", "model file"),
            "max_tokens": ("8", "set"),
            "seed": ("9", "config.toml"),
        }
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelDetailScreen), what="the detail to close")
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
    [exchange] = parse(read_transcript_text(tmp_path / "chat.md")).exchanges
    assert exchange.settings == {
        "temperature": 0.3,
        "top_p": 0.8,
        "top_k": 20,
        "repetition_penalty": 1.05,
        "max_tokens": 8,
        "seed": 9,
    }


async def test_the_palette_opens_the_model_detail_of_an_engine_without_settings():
    app = make_app(ScriptedEngine(["hi"]), servers=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        app.screen.query_one(Input).value = "Model and generation settings"
        await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0, what="the palette's match")
        await pilot.press("down", "enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelDetailScreen) and app.screen.is_mounted, what="the model detail"
        )
        assert shown_rows(app.screen)["temperature"] == ("0 (greedy)", "default")
        assert shown_rows(app.screen)["seed"] == ("random", "default")


def test_snapshot_of_the_model_detail(snap_compare):
    engine = ScriptedEngine(["hi"])
    given = {"temperature": 0.7, "max_tokens": 512, "top_p": 0.9, "seed": 42}
    model_file = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "repetition_penalty": 1.05}
    sources = {"temperature": "flag", "max_tokens": "flag", "top_p": "config.toml", "seed": "config.toml"}
    engine.generation = resolve(given, sources, model_file)
    engine.compute_label = "float32 from 4-bit · OpenBLAS"
    app = make_app(engine, servers=[], model_label="Qwen3-4B-4bit")

    async def run_before(pilot) -> None:
        await wait_ready(pilot, app)
        for field in app.query(Input):
            field.cursor_blink = False
        app.action_model_detail()
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelDetailScreen) and app.screen.is_mounted, what="the model detail"
        )

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_the_recorded_settings_are_json_numbers():
    generation = resolve({"temperature": 0.5, "seed": 3}, {"temperature": "flag", "seed": "flag"}, {"top_k": 20})
    assert json.loads(json.dumps(generation.recorded())) == {"temperature": 0.5, "top_k": 20, "seed": 3}

"""``/model`` in the full-screen app with two real tiny models built here: the picker lists them and Enter
switches, ``/model NAME`` switches, the next reply comes from the new model (its KV cache file is the
new model's), a model that fails to load leaves the current one, Esc cancels a load, and a switch is
refused while a turn runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.conversation import ModelSwitcher
from mcp_chat_tui.core.paths import prompt_cache_path
from mcp_chat_tui.engine import loading
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.transcript import parse, read_transcript_text
from mcp_chat_tui.ui.screens.model import ModelDetailScreen
from mcp_chat_tui.ui.screens.models import ModelPickerScreen
from mcp_chat_tui.ui.widgets.chat import Notice
from mcp_chat_tui.ui.widgets.reply import AssistantReply
from tests.fakes import FakeHubDownload, ScriptedEngine
from tests.models import build_tiny_model
from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done


@pytest.fixture(scope="module")
def second_model(tmp_path_factory) -> Path:
    """Another tiny model (other weights), as a folder config.toml names."""
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-b", seed=7)


@pytest.fixture(autouse=True)
def empty_hub_cache(tmp_path, monkeypatch):
    """The machine's own Hugging Face cache is not listed: only what a test puts there."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def switch_app(first: Path, named: list[str], made: list, tmp_path: Path, make=None):
    """The app on ``first`` (saving to chat.md), with ``/model`` offering ``named``; ``made`` gets each
    engine a switch builds (real MLX engines, unless ``make`` says otherwise)."""
    app = make_app(
        MlxEngine(str(first), max_tokens=4), servers=[], transcript_file=tmp_path / "chat.md", model_label=first.name
    )

    def build(choice):
        engine = make(choice) if make is not None else MlxEngine(choice.load, max_tokens=4)
        made.append(engine)
        return engine

    app.model_controls.switcher = ModelSwitcher(app.conversation, build, named)
    return app


def status(app) -> str:
    return app.status_bar.render().plain


def replies(app) -> list[str]:
    return [reply.model_label for reply in app.chat.query(AssistantReply)]


def notices(app) -> str:
    return "\n".join(str(notice.render()) for notice in app.chat.query(Notice))


def cache_model_key(conversation: Path) -> str:
    from mlx_lm.models.cache import load_prompt_cache

    _, metadata = load_prompt_cache(str(prompt_cache_path(conversation)), return_metadata=True)
    return metadata["model"]


async def test_the_picker_lists_both_models_and_enter_switches_the_next_reply_to_the_new_one(
    tiny_model, second_model, tmp_path
):
    made: list = []
    app = switch_app(tiny_model, [str(tiny_model), str(second_model)], made, tmp_path)
    old = app.engine
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        old_key = cache_model_key(tmp_path / "chat.md")
        await send(pilot, "/model")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelPickerScreen) and app.screen.is_mounted, what="the picker"
        )
        table = app.screen.query_one("#model-choices")
        rows = [[str(cell) for cell in table.get_row_at(index)] for index in range(table.row_count)]
        assert [row[:3] for row in rows] == [["●", tiny_model.name, "mlx"], ["", "tiny-b", "mlx"]], rows
        assert rows[1][4] == str(second_model) and rows[1][3].endswith("kB"), rows
        await pilot.press("down", "enter")
        await wait_for(
            pilot, lambda: app.model_label == "tiny-b" and not app.model_controls.switching, 60, "the switch"
        )
        assert app.engine is made[0] and app.engine.loaded and old._closed
        assert "tiny-b" in status(app) and "ready" in status(app), status(app)
        assert "switched to tiny-b" in notices(app)
        await send(pilot, "and now?")
        await wait_turn_done(pilot, app)
        assert replies(app) == [tiny_model.name, "tiny-b"]
        assert len(made[0].cached_tokens) > 0  # the new model wrote the reply
        new_key = made[0]._cache_keeper.key
        await app.action_quit()
    assert cache_model_key(tmp_path / "chat.md") == new_key != old_key  # the old model's cache is not the new one's
    transcript = parse(read_transcript_text(tmp_path / "chat.md"), tmp_path / "chat.md")
    assert [exchange.model for exchange in transcript.exchanges] == [tiny_model.name, "tiny-b"]
    assert transcript.model_switches() == {1: "tiny-b"}


async def test_model_name_switches_directly_and_resume_shows_the_switch(tiny_model, second_model, tmp_path):
    made: list = []
    app = switch_app(tiny_model, [str(second_model)], made, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        await send(pilot, "/model tiny-b")
        await wait_for(
            pilot, lambda: app.model_label == "tiny-b" and not app.model_controls.switching, 60, "the switch"
        )
        await app.run_action("model_detail")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelDetailScreen) and app.screen.is_mounted, what="the model detail"
        )
        title = str(app.screen.query_one(".detail-title").render())
        assert title.startswith("tiny-b") and "local, MLX" in title, title
        assert app.screen.query_one("#model-settings").get_row("max_tokens")[1].plain == "4"
        await pilot.press("escape")
        await send(pilot, "again")
        await wait_turn_done(pilot, app)
        await app.action_quit()
    path = tmp_path / "chat.md"
    resumed = make_app(
        MlxEngine(str(second_model), max_tokens=4),
        servers=[],
        transcript_file=path,
        transcript=parse(read_transcript_text(path), path),
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert replies(resumed) == [tiny_model.name, "tiny-b"]
        assert "switched to tiny-b" in notices(resumed)
        await resumed.action_quit()


async def test_a_model_that_fails_to_load_leaves_the_current_one(tiny_model, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    (broken / "model.safetensors").write_bytes(b"not weights")
    made: list = []
    app = switch_app(tiny_model, [str(broken)], made, tmp_path)
    old = app.engine
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "/model broken")
        await wait_for(pilot, lambda: made and not app.model_controls.switching, 60, "the failed load")
        said = [n.message for n in app._notifications]
        assert any("cannot switch to broken" in m and f"still on {tiny_model.name}" in m for m in said), said
        assert app.engine is old and app.model_label == tiny_model.name and not old._closed
        assert tiny_model.name in status(app) and "ready" in status(app), status(app)
        await send(pilot, "still there?")
        await wait_turn_done(pilot, app)
        assert replies(app) == [tiny_model.name]
        await app.action_quit()


async def test_esc_cancels_a_load_its_download_stops_and_the_current_model_stays(
    tiny_model, second_model, tmp_path, monkeypatch
):
    download = FakeHubDownload(second_model, tmp_path / "snapshot", pause=0.3)  # a slow download, shown
    monkeypatch.setattr(loading, "snapshot_download", download)
    made: list = []
    app = switch_app(
        tiny_model, [str(second_model)], made, tmp_path, make=lambda choice: MlxEngine("someone/tiny-b", max_tokens=4)
    )
    old = app.engine
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "/model tiny-b")
        await wait_for(pilot, lambda: "downloading" in status(app) or "Esc cancels" in status(app), 30, "the load")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.model_controls.switching, 30, "the cancel")
        said = [n.message for n in app._notifications]
        assert f"loading cancelled: still on {tiny_model.name}" in said, said
        assert app.engine is old and app.model_label == tiny_model.name
        await wait_for(pilot, lambda: made[0]._closed, 60, "the cancelled model freed")
        fetched = sum(path.stat().st_size for path in (tmp_path / "snapshot").iterdir())
        whole = sum(path.stat().st_size for path in second_model.iterdir() if path.is_file())
        assert fetched < whole, "the download went on to the end after the cancel"
        assert "ready" in status(app) and "tiny-b" not in status(app), status(app)
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        assert replies(app) == [tiny_model.name]
        await app.action_quit()


async def test_a_switch_is_refused_during_a_turn(tmp_path, second_model):
    engine = ScriptedEngine(["a long answer " * 30], delay=0.05)
    made: list = []
    app = make_app(engine, servers=[])
    app.model_controls.switcher = ModelSwitcher(
        app.conversation, lambda choice: made.append(choice), [str(second_model)]
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "talk")
        await wait_for(pilot, lambda: app.agent.generating, what="the reply")
        await send(pilot, "/model tiny-b")
        await wait_for(pilot, lambda: any("not during a turn" in n.message for n in app._notifications), what="why")
        assert made == [] and app.engine is engine
        app.action_stop()
        await wait_turn_done(pilot, app)
        await app.action_quit()


async def test_the_palette_opens_the_picker_and_esc_closes_it_switching_nothing(tmp_path, second_model):
    engine = ScriptedEngine(["hi"])
    made: list = []
    app = make_app(engine, servers=[])
    app.model_controls.switcher = ModelSwitcher(
        app.conversation, lambda choice: made.append(choice), [str(second_model)]
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.press(*"Switch model")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ModelPickerScreen) and app.screen.is_mounted, what="the picker"
        )
        assert app.screen.query_one("#model-choices").row_count == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelPickerScreen), what="the picker closed")
        assert made == [] and app.engine is engine
        await app.action_quit()


async def test_a_switch_before_the_first_reply_is_shown_on_resume(tiny_model, second_model, tmp_path):
    """``/model`` before anything was asked: the first reply is the new model's, and the resumed
    conversation says where the model changed, as it does for a later switch."""
    made: list = []
    app = switch_app(tiny_model, [str(second_model)], made, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "/model tiny-b")
        await wait_for(
            pilot, lambda: app.model_label == "tiny-b" and not app.model_controls.switching, 60, "the switch"
        )
        await send(pilot, "hello")
        await wait_turn_done(pilot, app)
        await app.action_quit()
    path = tmp_path / "chat.md"
    transcript = parse(read_transcript_text(path), path)
    assert transcript.model_switches() == {0: "tiny-b"}
    resumed = make_app(
        MlxEngine(str(second_model), max_tokens=4), servers=[], transcript_file=path, transcript=transcript
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        assert replies(resumed) == ["tiny-b"]
        assert "switched to tiny-b" in notices(resumed)
        await resumed.action_quit()

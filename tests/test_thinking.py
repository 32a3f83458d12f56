"""Thinking, seen or switched off: ``thinking = false`` (``--no-thinking``) reaches the chat template's
``enable_thinking`` in the real MLX engine (a tiny model whose template has the switch), the endpoint
engine sends it as ``chat_template_kwargs``, Ctrl+T opens and closes a reply's thinking in the app, and
a resumed conversation shows the thinking the file kept (the app collapsed, ``--plain`` as it printed it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ThinkingDelta
from mcp_chat_tui.engine.loading import has_thinking_switch
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from tests.models import build_tiny_model

THINKING_TEMPLATE = r"""{%- for message in messages %}
    {{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}
"""  # Qwen3's switch: enable_thinking=false writes an empty thinking block for the model


@pytest.fixture(scope="session")
def thinking_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.getbasetemp() / "tiny-qwen2-thinking", template=THINKING_TEMPLATE)


async def rendered(folder: Path, **settings) -> str:
    engine = MlxEngine(str(folder), max_tokens=1, compute_dtype="stored", **settings)
    await engine.load()
    try:
        assert has_thinking_switch(engine.tokenizer)
        events = [event async for event in engine.stream([{"role": "user", "content": "hi"}])]
        [stats] = [event for event in events if isinstance(event, Stats)]
        assert isinstance(events[-1], Done)
        return engine.tokenizer.decode(list(engine.cached_tokens[: stats.prompt_tokens]))
    finally:
        await engine.close()


async def test_thinking_false_reaches_the_templates_switch_and_unset_leaves_the_default(thinking_model):
    no_thinking = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert (await rendered(thinking_model, thinking=True)).endswith("<|im_start|>assistant\n")
    assert (await rendered(thinking_model, thinking=False)).endswith(no_thinking)
    # unset: mlx-lm's default, thinking on for a model whose vocabulary has think tokens (this one has none)
    assert (await rendered(thinking_model)).endswith(no_thinking)


def test_a_template_without_the_switch_is_told_apart(tiny_model):
    from mlx_lm.utils import load_tokenizer

    assert not has_thinking_switch(load_tokenizer(tiny_model))


def test_the_flag_and_config_toml_set_it(tmp_path):
    from mcp_chat_tui.cli.args import build_parser
    from mcp_chat_tui.cli.chat import engine_settings, flag_options
    from mcp_chat_tui.config import load_settings

    config = tmp_path / "config.toml"
    config.write_text("[model]\nthinking = false\n")
    options = load_settings(config).model_options("any")
    assert engine_settings(options).thinking is False
    flags = flag_options(build_parser().parse_args(["m", "--no-thinking"]))
    assert engine_settings(options.model_copy(update={"thinking": None}), flags).thinking is False
    assert flag_options(build_parser().parse_args(["m"])).thinking is None


def test_the_endpoint_engine_sends_the_switch(tmp_path):
    import asyncio

    from mcp_chat_tui.engine.remote import OpenAIEngine
    from mcp_chat_tui.engine.settings import EngineSettings
    from tests.scripted_endpoint import ScriptedEndpoint

    async def one_reply(endpoint_url: str, thinking: bool | None) -> None:
        engine = OpenAIEngine(endpoint_url, "scripted", settings=EngineSettings(thinking=thinking))
        await engine.load()
        _ = [event async for event in engine.stream([{"role": "user", "content": "hi"}])]

    with ScriptedEndpoint(["a", "b"]) as endpoint:
        asyncio.run(one_reply(endpoint.url, False))
        asyncio.run(one_reply(endpoint.url, None))
        sent = endpoint.requests
    assert sent[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in sent[1]


async def test_ctrl_t_opens_and_closes_the_latest_replys_thinking():
    from textual.widgets import Collapsible

    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

    engine = ScriptedEngine(
        [[ThinkingDelta("first thought"), TextDelta("One.")], [ThinkingDelta("second thought"), TextDelta("Two.")]]
    )
    app = make_app(engine, [])
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await pilot.press("ctrl+t")  # nothing to open yet: a notice, nothing else
        for prompt in ("one", "two"):
            await send(pilot, prompt)
            await wait_turn_done(pilot, app)
        blocks = list(app.chat.query(Collapsible))
        assert [block.collapsed for block in blocks] == [True, True]
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: not blocks[1].collapsed, what="the latest thinking open")
        assert blocks[0].collapsed
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: blocks[1].collapsed, what="the latest thinking closed again")


async def test_the_thinking_is_kept_and_a_resumed_conversation_shows_it_collapsed_in_the_app_and_in_plain(
    tmp_path, isolated_user_dirs
):
    from textual.widgets import Collapsible

    from mcp_chat_tui.transcript import parse, read_transcript_text
    from tests.fakes import ScriptedEngine
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import run_cli
    from tests.ui_helpers import SIZE, make_app, send, wait_for, wait_ready, wait_turn_done

    path = tmp_path / "chat.md"
    app = make_app(ScriptedEngine([[ThinkingDelta("weighing it up"), TextDelta("Done.")]]), [], transcript_file=path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        await send(pilot, "think first")
        await wait_turn_done(pilot, app)
        await app.action_quit()
    transcript = parse(read_transcript_text(path), path)
    assert transcript.exchanges[0].steps[0].thought == "weighing it up"
    resumed = make_app(ScriptedEngine([]), [], transcript_file=path, transcript=transcript)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, resumed)
        [block] = resumed.chat.query(Collapsible)
        assert block.collapsed
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: not block.collapsed, what="the resumed thinking open")
        await resumed.action_quit()
    (tmp_path / "mcp.json").write_text('{"servers": {}}')
    with ScriptedEndpoint([]) as endpoint:
        plain = run_cli(
            "--endpoint", endpoint.url, "scripted", "--plain", "--transcript", str(path),
            cwd=tmp_path, dirs=isolated_user_dirs, stdin="bye\n",
        )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert "thinking: weighing it up\nDone." in plain.stdout, plain.stdout

"""The model's context length (config, flag, or the model's own files) and a prompt that cannot fit,
on the real MLX engine: the bundled demo model and locally built tiny models."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mcp_chat_tui.cli.chat import demo_model_path
from mcp_chat_tui.engine.context import PromptTooLong, estimate_tokens
from mcp_chat_tui.engine.events import Done, EngineError
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from tests import cli_in_process

QUESTION = [{"role": "user", "content": "what is 12 * 7? " * 20}]


async def loaded(model, **settings) -> MlxEngine:
    engine = MlxEngine(str(model), max_tokens=8, **settings)
    await engine.load()
    return engine


async def test_the_demo_models_context_length_is_read_from_its_files():
    engine = await loaded(demo_model_path())
    try:
        assert engine.context_length == 4096  # config.json's max_position_embeddings
        text = "The quick brown fox jumps over the lazy dog."
        assert engine.count_tokens(text) == len(engine.tokenizer.encode(text, add_special_tokens=False))
        assert engine.count_tokens(text) != estimate_tokens(text)  # its tokenizer counts, not the estimate
    finally:
        await engine.close()


async def test_config_tomls_context_length_wins_over_the_files():
    engine = await loaded(demo_model_path(), context_length=1500)
    try:
        assert engine.context_length == 1500
    finally:
        await engine.close()


def model_with(folder, source, *, max_position_embeddings, model_max_length):
    """A copy of ``source`` whose config.json and tokenizer_config.json say these (None: left out)."""
    shutil.copytree(source, folder)
    for name, key, value in (
        ("config.json", "max_position_embeddings", max_position_embeddings),
        ("tokenizer_config.json", "model_max_length", model_max_length),
    ):
        data = json.loads((folder / name).read_text())
        data.pop(key, None)
        if value is not None:
            data[key] = value
        (folder / name).write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    ("max_position_embeddings", "model_max_length", "expected"),
    [
        (None, 2048, 2048),  # no figure in config.json: the tokenizer's
        (None, 1e30, None),  # a tokenizer saved without a limit (transformers' huge number) says nothing
        (None, None, None),
        (8192, 2048, 8192),  # config.json first
    ],
)
async def test_without_config_json_figure_the_tokenizers_limit_when_sane(
    tmp_path, tiny_model, max_position_embeddings, model_max_length, expected
):
    folder = model_with(
        tmp_path / "model",
        tiny_model,
        max_position_embeddings=max_position_embeddings,
        model_max_length=model_max_length,
    )
    engine = await loaded(folder)
    try:
        assert engine.context_length == expected
    finally:
        await engine.close()


async def test_a_prompt_that_cannot_fit_is_refused_with_the_figures_and_the_engine_goes_on():
    engine = await loaded(demo_model_path(), context_length=40)
    try:
        prompt_tokens = len(engine.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True))
        assert prompt_tokens > 40
        with pytest.raises(PromptTooLong) as caught:
            async for _ in engine.stream(QUESTION):
                pass
        message = str(caught.value)
        # the model as the status bar names it, not by its folder in site-packages
        assert f"the prompt is {prompt_tokens} tokens and model 'demo model' takes 40" in message
        assert demo_model_path() not in message
        assert "max_turns" in message and "/compact" in message and "--context-length" in message
        assert isinstance(caught.value, EngineError)
        engine.context_length = 4096  # the files' figure again: the same engine answers
        events = [event async for event in engine.stream(QUESTION)]
        assert isinstance(events[-1], Done)
    finally:
        await engine.close()


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI in this process (tests/cli_in_process.py): what it says and its exit code are checked."""
    return cli_in_process.run_cli(args, cwd=cwd, env=dict(os.environ))


def test_the_cli_says_what_to_do_when_the_prompt_cannot_fit(tmp_path):
    result = run_cli("--demo", "--context-length", "30", "-p", "what is 12 * 7?", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    said = " ".join(result.stderr.split())  # the console wraps long lines
    assert "takes 30 (prompt and reply)" in said and "set a larger context_length" in said
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    ("value", "why"), [("0", "0 is less than 1"), ("-3", "-3 is less than 1"), ("many", "'many' is not a whole number")]
)
def test_a_bad_context_length_flag_is_a_usage_error(tmp_path, value, why):
    result = run_cli("--demo", f"--context-length={value}", "-p", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert f"argument --context-length: {why}" in result.stderr and "Traceback" not in result.stderr

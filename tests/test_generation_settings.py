"""Generation settings (issue 23): temperature, top_p, min_p, top_k, repetition_penalty, max_tokens and seed,
from the model's generation_config.json, config.toml and flags, in the engines, the model detail and the transcript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcp_chat_tui.cli.args import build_parser
from mcp_chat_tui.cli.chat import demo_model_path, engine_settings, flag_options, make_engine
from mcp_chat_tui.config import load_settings
from mcp_chat_tui.core.errors import ConfigError
from mcp_chat_tui.engine.events import TextDelta, ToolCallMalformed, ToolCallProposed
from mcp_chat_tui.engine.generation import APP_DEFAULTS, read_model_defaults, resolve
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.settings import EngineSettings

QUESTION = [{"role": "user", "content": "Tell me about the weather in Paris"}]
SAMPLING_FILE = {  # as a Qwen2.5-Instruct generation_config.json
    "bos_token_id": 151643,
    "do_sample": True,
    "eos_token_id": [151645, 151643],
    "repetition_penalty": 1.05,
    "temperature": 0.7,
    "top_p": 0.8,
    "top_k": 20,
    "max_new_tokens": 64,
}


def model_with_generation_config(folder: Path, config: dict | str) -> Path:
    """A copy of the demo model whose folder holds ``config`` as its generation_config.json."""
    shutil.copytree(demo_model_path(), folder)
    text = config if isinstance(config, str) else json.dumps(config)
    (folder / "generation_config.json").write_text(text, encoding="utf-8")
    return folder


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def reply_text(engine: MlxEngine, messages: list[dict] = QUESTION) -> str:
    """What the model wrote: its text, and a call as written (the demo model, asked without the system
    message and tools it was trained with, often starts a call it cannot finish)."""
    parts = []
    async for event in engine.stream(messages):
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, ToolCallMalformed):
            parts.append(event.raw)
        elif isinstance(event, ToolCallProposed):
            parts.append(f"{event.name}({json.dumps(event.arguments)})")
    return "".join(parts)


# ----- config.toml: bad values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "key", "problem"),
    [
        ("[model]\ntemperature = -0.5\n", "model.temperature", "greater than or equal to 0"),
        ('[model]\ntemperature = "hot"\n', "model.temperature", "found a string"),
        ("[model]\ntop_p = 1.5\n", "model.top_p", "less than or equal to 1"),
        ("[model]\ntop_p = 0\n", "model.top_p", "greater than 0"),
        ("[model]\nmin_p = 2\n", "model.min_p", "less than or equal to 1"),
        ("[model]\ntop_k = 2.5\n", "model.top_k", "integer"),
        ("[model]\nrepetition_penalty = 0\n", "model.repetition_penalty", "greater than 0"),
        ("[model]\nmax_tokens = 0\n", "model.max_tokens", "greater than or equal to 1"),
        ("[model]\nseed = -1\n", "model.seed", "greater than or equal to 0"),
        ('[models."my-model"]\ntemprature = 1\n', "models.my-model.temprature", "unknown key"),
        ('[models."my-model"]\nmax_tokens = true\n', "models.my-model.max_tokens", "found true/false"),
    ],
)
def test_a_bad_generation_setting_is_a_config_error_naming_its_key(tmp_path, toml, key, problem):
    path = write_config(tmp_path / "config.toml", toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert str(path) in message and key in message and problem in message, message


def test_a_whole_number_is_a_temperature_too(tmp_path):
    settings = load_settings(write_config(tmp_path / "config.toml", "[model]\ntemperature = 1\ntop_p = 1\n"))
    assert settings.model.temperature == 1 and settings.model.top_p == 1


@pytest.mark.parametrize(
    ("flag", "value", "problem"),
    [
        ("--temp", "-1", "argument --temp: expected a number of at least 0, got '-1'"),
        ("--temp", "nan", "argument --temp: expected a number of at least 0, got 'nan'"),
        ("--temp", "warm", "argument --temp: expected a number, got 'warm'"),
        ("--max-tokens", "0", "argument --max-tokens: expected a whole number of at least 1, got '0'"),
        ("--max-tokens", "1.5", "argument --max-tokens: expected a whole number, got '1.5'"),
        ("--seed", "-2", "argument --seed: expected a whole number of at least 0, got '-2'"),
        ("--seed", str(2**64), "at most 9223372036854775807"),
    ],
)
def test_a_bad_flag_value_is_refused_by_the_command_line(capsys, flag, value, problem):
    with pytest.raises(SystemExit) as leaving:
        build_parser().parse_args(["m", flag, value])
    assert leaving.value.code == 2
    assert problem in capsys.readouterr().err


# ----- the model's generation_config.json -------------------------------------------------------


def test_a_model_file_that_samples_gives_its_settings(tmp_path):
    (tmp_path / "generation_config.json").write_text(json.dumps(SAMPLING_FILE))
    assert read_model_defaults(tmp_path) == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
        "repetition_penalty": 1.05,
        "max_tokens": 64,
    }


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"do_sample": False, "temperature": 0.6, "top_p": 0.9, "repetition_penalty": 1.1},
            {"repetition_penalty": 1.1},
        ),
        ({"temperature": 0.6, "top_k": 50}, {}),  # transformers samples only with do_sample
        ({"do_sample": True, "top_p": 0.95}, {"temperature": 1.0, "top_p": 0.95}),
        ({"do_sample": True, "temperature": -1, "top_k": 1.5, "min_p": True, "top_p": 0.9}, {"top_p": 0.9}),
        ({"max_length": 20, "max_new_tokens": 0}, {}),
        ({"bos_token_id": 1, "eos_token_id": 2}, {}),
    ],
    ids=["greedy file", "no do_sample", "default temperature", "bad values", "max_length", "no settings"],
)
def test_a_model_file_gives_only_what_it_means(tmp_path, config, expected):
    (tmp_path / "generation_config.json").write_text(json.dumps(config))
    assert read_model_defaults(tmp_path) == expected


@pytest.mark.parametrize("text", [None, "{not json", "[1, 2]"], ids=["no file", "broken", "not an object"])
def test_without_a_readable_model_file_the_defaults_stand(tmp_path, text):
    if text is not None:
        (tmp_path / "generation_config.json").write_text(text)
    assert read_model_defaults(tmp_path) == {}


# ----- precedence: model file < config.toml < flag ------------------------------------------------


async def test_flags_win_over_config_toml_which_wins_over_the_model_file(tmp_path):
    model = str(model_with_generation_config(tmp_path / "model", SAMPLING_FILE))
    config = write_config(
        tmp_path / "config.toml",
        f'[model]\ntop_p = 0.5\ntemperature = 0.2\nseed = 3\n\n[models."{model}"]\ntemperature = 0.4\n',
    )
    args = build_parser().parse_args([model, "--temp", "0.9", "--max-tokens", "32"])
    engine = make_engine(args, model, load_settings(config).model_options(model))
    assert engine.generation.sources["top_k"] == "default"  # the model file is read at load
    await engine.load()
    try:
        in_effect = {key: (value, source) for key, value, source in engine.generation.rows()}
        assert in_effect == {
            "temperature": ("0.9", "flag"),
            "top_p": ("0.5", "config.toml"),
            "min_p": ("0 (off)", "default"),
            "top_k": ("20", "model file"),
            "repetition_penalty": ("1.05", "model file"),
            "max_tokens": ("32", "flag"),
            "seed": ("3", "config.toml"),
        }
        assert engine.max_tokens == 32
    finally:
        await engine.close()


def test_without_flags_or_config_the_app_defaults_are_in_effect():
    args = build_parser().parse_args(["m"])
    settings = engine_settings(load_settings(Path("/nonexistent/config.toml")).model_options("m"), flag_options(args))
    generation = resolve(vars(settings), settings.sources)
    assert generation.values == APP_DEFAULTS and set(generation.sources.values()) == {"default"}
    assert generation.recorded() == {}


# ----- the MLX engine samples as told ------------------------------------------------------------


async def test_greedy_is_unchanged_by_default():
    """No setting anywhere: the demo model's reply is mlx-lm's own greedy reply, token for token."""
    from mlx_lm.generate import stream_generate
    from mlx_lm.sample_utils import make_sampler

    engine = MlxEngine(demo_model_path(), EngineSettings(max_tokens=30))
    await engine.load()
    try:
        assert engine.generation.temperature == 0.0
        await reply_text(engine)
        ours = engine.cached_tokens
        prompt = engine.tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
        greedy = make_sampler(temp=0.0)
        expected = [r.token for r in stream_generate(engine._model, engine.tokenizer, prompt, 30, sampler=greedy)]
    finally:
        await engine.close()
    assert list(ours[len(prompt) :]) == expected[: len(ours) - len(prompt)] and len(ours) > len(prompt)


async def seeded_reply(seed: int) -> str:
    engine = MlxEngine(demo_model_path(), EngineSettings(temperature=1.5, seed=seed, max_tokens=30))
    await engine.load()
    try:
        return await reply_text(engine)
    finally:
        await engine.close()


async def test_a_seeded_reply_is_the_same_every_time_and_other_seeds_differ():
    first, again = await seeded_reply(2), await seeded_reply(2)
    assert first == again and first
    others = {await seeded_reply(seed) for seed in (3, 4, 5)}
    assert others - {first}, f"seeds 2-5 all gave {first!r}"


async def test_a_seed_counts_for_each_reply_of_one_engine():
    engine = MlxEngine(demo_model_path(), EngineSettings(temperature=1.5, seed=2, max_tokens=30))
    await engine.load()
    try:
        first = await reply_text(engine)
        for _ in range(3):  # unseeded, four replies alike would be a rare chance
            await reply_text(engine, [{"role": "user", "content": "something else"}])
            assert await reply_text(engine) == first
    finally:
        await engine.close()


async def test_max_tokens_from_the_model_file_ends_the_reply(tmp_path):
    model = model_with_generation_config(tmp_path / "model", {"max_new_tokens": 3})
    engine = MlxEngine(str(model), EngineSettings(temperature=1.5, seed=2))
    await engine.load()
    try:
        events = [event async for event in engine.stream(QUESTION)]
    finally:
        await engine.close()
    assert engine.generation.sources["max_tokens"] == "model file"
    stats = next(event for event in events if type(event).__name__ == "Stats")
    assert stats.generated_tokens <= 3


# ----- --endpoint: the request carries them; the transcript records them -------------------------


def test_an_endpoint_request_carries_the_settings_and_the_transcript_records_them(tmp_path, isolated_user_dirs):
    from mcp_chat_tui.transcript import parse, read_transcript_text
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import CALCULATOR_SCRIPT, one_shot, saved_conversations

    config = write_config(
        tmp_path / "config.toml",
        '[model]\ntop_k = 40\ntemperature = 0.2\n\n[models."scripted"]\nrepetition_penalty = 1.1\n',
    )
    flags = ("--config", str(config), "--yes", "--temp", "0.5", "--seed", "3", "--max-tokens", "77")
    with ScriptedEndpoint(CALCULATOR_SCRIPT) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, *flags)
    assert result.returncode == 0, result.stderr
    where = (
        "temperature 0.5 (flag) · top_k 40 (config.toml) · repetition_penalty 1.1 (config.toml) · max_tokens 77 (flag)"
    )
    assert f"generation: {where} · seed 3 (flag)\n" in result.stderr
    sent = {"temperature": 0.5, "top_p": 1.0, "max_tokens": 77, "seed": 3, "top_k": 40, "repetition_penalty": 1.1}
    for body in endpoint.requests:  # each step of the turn: the first request and the one after the call
        assert {key: body.get(key) for key in [*sent, "min_p"]} == {**sent, "min_p": None}
    [saved] = saved_conversations(isolated_user_dirs)
    text = read_transcript_text(saved)
    recorded = '{"settings": {"temperature": 0.5, "top_k": 40, "repetition_penalty": 1.1, "max_tokens": 77, "seed": 3}}'
    assert f"🤖:[scripted] {recorded}\n" in text
    assert parse(text).exchanges[0].settings == json.loads(recorded)["settings"]


def test_without_settings_an_endpoint_gets_greedy_and_the_reply_header_is_bare(tmp_path, isolated_user_dirs):
    from tests.scripted_endpoint import ScriptedEndpoint
    from tests.test_oneshot import one_shot, saved_conversations

    with ScriptedEndpoint(["Hello."]) as endpoint:
        result = one_shot(endpoint, tmp_path, isolated_user_dirs, prompt="hi")
    assert result.returncode == 0, result.stderr
    assert "generation:" not in result.stderr
    [body] = endpoint.requests
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.0, 1.0, 4096)
    assert not {"seed", "top_k", "min_p", "repetition_penalty"} & set(body)
    [saved] = saved_conversations(isolated_user_dirs)
    assert "🤖:[scripted]\n" in saved.read_text(encoding="utf-8")

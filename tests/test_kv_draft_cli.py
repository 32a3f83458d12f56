"""kv_bits, kv_group_size, draft_model and num_draft_tokens in config.toml and as flags, through the
real CLI: bad values stop it at start with a message naming the key; a flag wins over config.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_chat_tui.cli.args import build_parser
from mcp_chat_tui.cli.chat import demo_model_path, engine_settings, flag_options
from mcp_chat_tui.config import load_settings
from tests.test_cli import run_cli

BAD_CONFIG = {
    "kv_bits MLX has not": ("[model]\nkv_bits = 7\n", "model.kv_bits", "1, 2, 3, 4, 5, 6 or 8"),
    "kv_group_size MLX has not": ('[models."demo"]\nkv_group_size = 48\n', "kv_group_size", "32, 64 or 128"),
    "num_draft_tokens 0": ("[model]\nnum_draft_tokens = 0\n", "model.num_draft_tokens", "greater than or equal to 1"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIG))
def test_a_bad_value_in_config_toml_stops_the_start_naming_the_key(case, tmp_path, isolated_user_dirs):
    text, key, expected = BAD_CONFIG[case]
    config = tmp_path / "config.toml"
    config.write_text(text)
    result = run_cli("--demo", "-p", "hi", "--config", str(config), cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 2, result.stderr
    assert str(config) in result.stderr and key in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert config.read_text() == text


BAD_FLAGS = {
    "--kv-bits 7": (["--kv-bits", "7"], "argument --kv-bits: invalid choice: 7"),
    "--kv-group-size 16": (["--kv-group-size", "16"], "argument --kv-group-size: invalid choice: 16"),
    "--num-draft-tokens 0": (["--num-draft-tokens", "0"], "argument --num-draft-tokens: 0 is less than 1"),
    "--num-draft-tokens x": (["--num-draft-tokens", "x"], "argument --num-draft-tokens: 'x' is not a whole number"),
    "with --endpoint": (
        ["--endpoint", "http://127.0.0.1:9", "--draft-model", "small", "--kv-bits", "4"],
        "--kv-bits, --draft-model: for a local model, not with --endpoint",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FLAGS))
def test_a_bad_flag_is_a_usage_error(case, tmp_path, isolated_user_dirs):
    flags, expected = BAD_FLAGS[case]
    result = run_cli("some-model", "-p", "hi", *flags, cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 2 and expected in result.stderr, result.stderr


def test_a_draft_model_that_does_not_exist_stops_the_start_naming_the_key(tmp_path, isolated_user_dirs):
    missing = tmp_path / "no-such-draft"
    result = run_cli(
        "--demo", "-p", "hi", "--draft-model", str(missing), "--no-save", cwd=tmp_path, env_dirs=isolated_user_dirs
    )
    assert result.returncode == 1, result.stderr
    assert f"draft_model in config.toml, or --draft-model: cannot load model '{missing}': no such folder" in (
        " ".join(result.stderr.split())
    )
    assert "Traceback" not in result.stderr


def test_flags_go_over_config_toml(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[model]\nkv_bits = 4\nkv_group_size = 64\n[models."m"]\ndraft_model = "d"\nnum_draft_tokens = 2\n'
    )
    settings = load_settings(config)
    parser = build_parser()
    args = parser.parse_args(["m", "--kv-bits", "8", "--num-draft-tokens", "5"])
    engine = engine_settings(settings.model_options("m"), flag_options(args))
    assert (engine.kv_bits, engine.kv_group_size, engine.draft_model, engine.num_draft_tokens) == (8, 64, "d", 5)
    assert engine.sources["kv_bits"] == "flag" and engine.sources["kv_group_size"] == "config.toml"
    assert flag_options(parser.parse_args(["m"])).over(settings.model_options("m")) == settings.model_options("m")


def test_the_demo_model_answers_with_a_draft_and_a_quantized_cache(tmp_path, isolated_user_dirs):
    """config.toml's group size (64) does not divide the demo model's heads (32): the flag's goes over it."""
    config = tmp_path / "config.toml"
    config.write_text("[model]\nkv_bits = 8\nkv_group_size = 64\n")
    demo = demo_model_path()
    common = ["--demo", "-p", "what is 12 * 7?", "-y", "--json", "--no-save", "--config", str(config)]
    refused = run_cli(*common, cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert refused.returncode == 1 and "kv_group_size that divides" in refused.stderr, refused.stderr
    result = run_cli(*common, "--kv-group-size", "32", "--draft-model", demo, cwd=tmp_path, env_dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "84" in report["answer"], report
    assert [call["tool"] for call in report["calls"]] == ["calculator"], report
    assert all(generation["drafted"] > 0 for generation in report["tokens"]["generations"]), report


def test_the_demo_model_heads_are_what_the_test_above_relies_on():
    config = json.loads((Path(demo_model_path()) / "config.json").read_text())
    head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    assert head % 32 == 0 and head % 64 != 0, head

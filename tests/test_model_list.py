"""``/model``'s listing: the Hugging Face cache's MLX model folders (a cache laid out on disk as the hub
writes it), config.toml's folders and GGUF files, an endpoint's ``/v1/models``; and how a typed line is
routed to ``/model``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_chat_tui.config import Settings
from mcp_chat_tui.conversation import Route, route_line
from mcp_chat_tui.core.redact import Redactor
from mcp_chat_tui.engine.model_list import (
    ENDPOINT,
    GGUF,
    MLX,
    find_model,
    gathered,
    hf_cache_dir,
    hf_cache_models,
    named_models,
    size_text,
)
from mcp_chat_tui.engine.remote import OpenAIEngine
from tests.scripted_endpoint import ScriptedEndpoint


def model_files(folder: Path, weights: bytes = b"w" * 3000) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "qwen2"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def cached_repo(cache: Path, repo_id: str, revision: str, *, main: bool = True, weights: bool = True) -> Path:
    """A repo in the hub's cache layout: blobs, a snapshot of links to them, refs/main."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    blobs, snapshot = repo / "blobs", repo / "snapshots" / revision
    blobs.mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    files = {"config.json": b'{"model_type": "qwen2"}', "tokenizer.json": b"{}"}
    if weights:
        files["model.safetensors"] = b"x" * 5000
    for name, data in files.items():
        blob = blobs / f"{revision}-{name}"
        blob.write_bytes(data)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    if main:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(revision)
    return snapshot


def test_the_cache_lists_its_mlx_model_folders_with_their_size_and_place(tmp_path):
    cache = tmp_path / "hub"
    qwen = cached_repo(cache, "mlx-community/Qwen3-0.6B-4bit", "abc123")
    cached_repo(cache, "someone/tokenizer-only", "def456", weights=False)  # no weights: not a model
    (cache / "datasets--someone--data").mkdir()  # a data set, not a model
    (cache / "models--broken").mkdir()  # no snapshots folder at all
    models = hf_cache_models(cache)
    assert [(m.name, m.kind, m.where) for m in models] == [("mlx-community/Qwen3-0.6B-4bit", MLX, str(qwen))]
    assert models[0].size == 5000 + len(b'{"model_type": "qwen2"}') + 2  # the blobs the links point to
    assert models[0].load == str(qwen)  # loaded from the folder itself: nothing is asked of the hub


def test_without_refs_main_the_newest_whole_snapshot_is_listed(tmp_path):
    cache = tmp_path / "hub"
    old = cached_repo(cache, "org/model", "old", main=False)
    new = cached_repo(cache, "org/model", "new", main=False)
    os.utime(old, (1, 1))
    assert [m.where for m in hf_cache_models(cache)] == [str(new)]


def test_the_cache_folder_follows_hf_hub_cache_then_hf_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "explicit"))
    assert hf_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hf_cache_dir() == tmp_path / "home" / "hub"
    assert hf_cache_models(tmp_path / "missing") == []  # no cache: nothing, no error


def test_config_names_folders_and_gguf_files_and_what_is_not_there_is_left_out(tmp_path):
    folder = model_files(tmp_path / "my-model")
    gguf = tmp_path / "small.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 96)
    blob = tmp_path / "sha256-1234"  # an Ollama blob: GGUF by its first bytes, not its name
    blob.write_bytes(b"GGUF" + b"\0" * 12)
    empty = tmp_path / "empty"
    empty.mkdir()
    names = [str(folder), str(gguf), str(blob), str(empty), str(tmp_path / "gone"), "org/not-cached"]
    models = named_models(names)
    assert [(m.name, m.kind, m.size) for m in models] == [
        ("my-model", MLX, 3000 + len('{"model_type": "qwen2"}')),
        ("small.gguf", GGUF, 100),
        ("sha256-1234", GGUF, 16),
    ]


def test_config_toml_lists_local_models_and_the_models_tables():
    settings = Settings.model_validate(
        {"local_models": ["~/a", "~/b.gguf"], "models": {"~/a": {"temperature": 0.2}, "org/c": {"seed": 1}}}
    )
    assert settings.named_models() == ["~/a", "~/b.gguf", "org/c"]


def test_find_by_name_place_or_a_path_not_listed(tmp_path):
    listed = named_models([str(model_files(tmp_path / "one"))])
    other = model_files(tmp_path / "two")
    assert find_model(listed, "one") == listed[0]
    assert find_model(listed, "ONE") == listed[0]
    assert find_model(listed, str(tmp_path / "one")) == listed[0]
    assert find_model(listed, str(other)).name == "two"  # a folder on this disk, though not listed
    assert find_model(listed, "org/somewhere-else") is None  # never a download


def test_a_model_is_listed_once():
    from mcp_chat_tui.engine.model_list import ModelChoice

    a = ModelChoice("a", MLX, "/a", "/a", 1)
    assert gathered([a], [a, ModelChoice("a", ENDPOINT, "a", "http://x")]) == [
        a,
        ModelChoice("a", ENDPOINT, "a", "http://x"),
    ]


def test_sizes_read_as_people_read_them():
    assert [size_text(n) for n in (512, 2_048, 3_500_000, 812_000_000, 1_400_000_000)] == [
        "512 B",
        "2.0 kB",
        "3.5 MB",
        "812 MB",
        "1.4 GB",
    ]


async def test_an_endpoint_lists_the_models_it_serves():
    with ScriptedEndpoint([], models=["big-model", "small-model"]) as endpoint:
        engine = OpenAIEngine(endpoint.url, "big-model")
        assert await engine.served_models() == ["big-model", "small-model"]


@pytest.mark.parametrize(
    ("line", "route"),
    [("/model", Route.MODEL), ("/model tiny-b", Route.MODEL), ("/MODEL", Route.MODEL), ("/models", Route.COMMAND)],
)
async def test_model_lines_are_routed_to_model(line, route):
    assert (await route_line(line, Redactor())).route is route

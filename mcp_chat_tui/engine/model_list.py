"""The models this machine has, for ``/model``: the Hugging Face cache's MLX model folders, the folders and
GGUF files config.toml names, and an endpoint's ``/v1/models``.

Everything here is read from disk (the Hugging Face cache is read as files: nothing is downloaded) or
asked of the endpoint the app already talks to. Each model comes with what a person needs to choose it:
its name, its kind, its size on disk and where it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_chat_tui.core.paths import model_display_name
from mcp_chat_tui.engine.gguf import is_gguf, is_gguf_file

MLX = "mlx"  # a model folder mlx-lm loads (config.json and safetensors weights)
GGUF = "gguf"  # a GGUF file (converted once, or run with llama.cpp)
ENDPOINT = "endpoint"  # a model the --endpoint server serves
KINDS = (MLX, GGUF, ENDPOINT)


@dataclass(frozen=True)
class ModelChoice:
    """One model ``/model`` offers. ``name`` is how it is shown and recorded (a repo id, a folder's
    or file's name, a server's model id); ``load`` is what the engine is given (a folder, a file, the
    server's id); ``where`` is where it lives; ``size`` its bytes on disk (None: not on this disk)."""

    name: str
    kind: str
    load: str
    where: str
    size: int | None = None

    def named(self, name: str) -> bool:
        """Whether ``name`` (typed, or a model's label) is this model: its name, where it is, what is loaded."""
        return name in (self.name, self.where, self.load)

    @property
    def size_label(self) -> str:
        return "" if self.size is None else size_text(self.size)


def size_text(size: int) -> str:
    """Bytes as a person reads them: ``812 kB``, ``1.4 GB``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{size} B"


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def is_mlx_folder(folder: Path) -> bool:
    """A folder mlx-lm can load: ``config.json`` and safetensors weights beside it."""
    try:
        return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))
    except OSError:
        return False


def folder_size(folder: Path) -> int:
    """The bytes of the files in ``folder`` (links followed: a cache snapshot links to its blobs)."""
    total = 0
    for path in folder.iterdir():
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def hf_cache_models(cache: Path | None = None) -> list[ModelChoice]:
    """The MLX model folders in the Hugging Face cache (``models--ORG--NAME/snapshots/REV``): the
    revision ``refs/main`` names, else the newest snapshot that is a whole model folder."""
    cache = cache if cache is not None else hf_cache_dir()
    try:
        repos = sorted(p for p in cache.iterdir() if p.name.startswith("models--") and p.is_dir())
    except OSError:
        return []
    found = []
    for repo in repos:
        snapshot = _snapshot(repo)
        if snapshot is not None:
            repo_id = repo.name.removeprefix("models--").replace("--", "/")
            found.append(ModelChoice(repo_id, MLX, str(snapshot), str(snapshot), folder_size(snapshot)))
    return found


def _snapshot(repo: Path) -> Path | None:
    snapshots = repo / "snapshots"
    try:
        main = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        main = ""
    if main and is_mlx_folder(snapshots / main):
        return snapshots / main
    try:
        candidates = [p for p in snapshots.iterdir() if p.is_dir() and is_mlx_folder(p)]
    except OSError:
        return None
    return max(candidates, key=lambda p: p.stat().st_mtime, default=None)


def named_models(names: Iterable[str]) -> list[ModelChoice]:
    """The models config.toml names that are on this disk: model folders and GGUF files (a repo id is
    listed when it is in the cache, by ``hf_cache_models``; a name that is neither is left out)."""
    found = []
    for name in names:
        path = Path(name).expanduser()
        if path.is_dir() and is_mlx_folder(path):
            found.append(ModelChoice(model_display_name(name), MLX, str(path), str(path), folder_size(path)))
        elif path.is_file() and (is_gguf(name) or is_gguf_file(path)):
            found.append(ModelChoice(path.name, GGUF, str(path), str(path), path.stat().st_size))
    return found


def endpoint_models(ids: Sequence[str], endpoint: str) -> list[ModelChoice]:
    """The models an endpoint serves (its ``/v1/models`` ids)."""
    return [ModelChoice(model_id, ENDPOINT, model_id, endpoint) for model_id in ids]


def gathered(*groups: Iterable[ModelChoice]) -> list[ModelChoice]:
    """Every model of ``groups`` once (the first of a name and kind wins), in the groups' order."""
    seen: set[tuple[str, str]] = set()
    models = []
    for group in groups:
        for model in group:
            if (model.name, model.kind) not in seen:
                seen.add((model.name, model.kind))
                models.append(model)
    return models


def find_model(models: Sequence[ModelChoice], wanted: str) -> ModelChoice | None:
    """The model ``wanted`` names: by its name, where it is, or (for a folder or file on this disk)
    as a path not listed; None when there is none."""
    for model in models:
        if model.named(wanted):
            return model
    matches = [model for model in models if model.name.lower() == wanted.lower()]
    if len(matches) == 1:
        return matches[0]
    path = named_models([wanted])
    return path[0] if path else None

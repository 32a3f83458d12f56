"""``ollama:NAME[:TAG]``: the GGUF file of a model Ollama has already pulled, found through its manifests.

Ollama keeps each model as a manifest (``manifests/HOST/NAMESPACE/NAME/TAG``, JSON) whose layer of
media type ``application/vnd.ollama.image.model`` names the GGUF blob (``blobs/sha256-…``). The
models folder is ``$OLLAMA_MODELS``, else ``~/.ollama/models``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp_chat_tui.engine.events import EngineError

PREFIX = "ollama:"
MODEL_LAYER = "application/vnd.ollama.image.model"
_REGISTRY = "registry.ollama.ai"


def is_ollama(name: str) -> bool:
    return name.startswith(PREFIX)


def models_dir() -> Path:
    override = os.environ.get("OLLAMA_MODELS")
    return Path(override).expanduser() if override else Path.home() / ".ollama" / "models"


def ollama_gguf(name: str) -> Path:
    """The GGUF blob of ``ollama:NAME[:TAG]`` (TAG defaults to ``latest``; NAME may be ``user/model``
    or ``host/user/model``)."""
    reference = name.removeprefix(PREFIX).strip()
    model, _, tag = reference.partition(":")
    if not model or "/" in tag or ".." in reference.split("/"):
        raise EngineError(f"cannot load model '{name}': expected ollama:NAME or ollama:NAME:TAG")
    parts = model.split("/")
    if len(parts) == 1:
        parts = [_REGISTRY, "library", *parts]
    elif len(parts) == 2:
        parts = [_REGISTRY, *parts]
    root = models_dir()
    manifest = root.joinpath("manifests", *parts, tag or "latest")
    if not manifest.is_file():
        raise EngineError(
            f"cannot load model '{name}': Ollama has not pulled it here (no {manifest}); "
            f"run `ollama pull {reference}`, or set OLLAMA_MODELS to Ollama's models folder"
        )
    try:
        layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers") or []
        digest = next(layer["digest"] for layer in layers if layer.get("mediaType") == MODEL_LAYER)
    except (OSError, ValueError, StopIteration, KeyError, TypeError, AttributeError):
        raise EngineError(f"cannot load model '{name}': its Ollama manifest {manifest} names no model file") from None
    algorithm, _, hexdigest = str(digest).partition(":")
    if algorithm != "sha256" or not hexdigest.isalnum():
        raise EngineError(f"cannot load model '{name}': its Ollama manifest names an unexpected blob {digest!r}")
    blob = root / "blobs" / f"sha256-{hexdigest}"
    if not blob.is_file():
        raise EngineError(f"cannot load model '{name}': Ollama's model file {blob} is missing (pull it again)")
    return blob

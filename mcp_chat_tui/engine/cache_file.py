"""A conversation's KV cache kept in a file beside it, so a resumed conversation prefills only what is new.

The file is mlx-lm's prompt cache (``save_prompt_cache``, safetensors) with metadata that keys it:
the model (its folder, and a fingerprint of its files, compute dtype and KV settings), the token
ids the cache holds, and a SHA-256 of its arrays. On resume the file is used only when the key is
the model's, its arrays match their digest, and the prompt starts with some of its tokens (the
rest is trimmed off). Anything else (another model, a changed conversation, a truncated or corrupt
file) is logged and ignored, never trusted and never an error. Runs on the MLX thread.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import (
    existing_mode,
    mode_of,
    move_into_place,
    open_regular,
    private_folder_beside,
    regular_file,
)
from mcp_chat_tui.core.paths import PARTIAL_SUFFIX, is_partial_cache, prompt_cache_path, remove_partial
from mcp_chat_tui.engine.base import Engine

FORMAT = "mcp-chat-tui prompt cache 1"
SAMPLE_BYTES = 1 << 20  # of a weight file, the first and last MiB go into the fingerprint (with its size and time)
WHOLE_FILE_BYTES = 16 << 20  # smaller files (config, tokenizer, template) are hashed whole

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class CacheFile:
    """The KV cache of the conversation in file ``conversation``; ``save`` False: the cache is only read."""

    conversation: Path
    save: bool = True

    @property
    def path(self) -> Path:
        return prompt_cache_path(self.conversation)


def _file_print(path: Path) -> str:
    """A fingerprint of one file of the model folder (weights: size, time, first and last MiB)."""
    real = path.resolve()  # a Hugging Face snapshot links to a blob named by its content hash
    status = real.stat()
    digest = hashlib.sha256()
    with open(real, "rb") as file:
        if status.st_size <= WHOLE_FILE_BYTES:
            digest.update(file.read())
        else:
            digest.update(file.read(SAMPLE_BYTES))
            file.seek(-SAMPLE_BYTES, os.SEEK_END)
            digest.update(file.read(SAMPLE_BYTES))
    return f"{path.name}:{real.name}:{status.st_size}:{status.st_mtime_ns}:{digest.hexdigest()}"


def model_key(folder: Path, compute: Any, settings: Any) -> str:
    """What a cache file must be made with to be used: this model folder and its files, what it
    computes in (a ``ComputeChoice``), the KV settings and draft model (of ``EngineSettings``) and the mlx-lm version.
    "" (no cache file is used) when the folder cannot be read."""
    from mlx_lm import __version__

    draft = settings.draft_model
    try:
        prints = _folder_prints(folder)
        if draft and Path(draft).expanduser().is_dir():  # a local draft: its files too, as the model's
            draft = [str(Path(draft).expanduser().resolve()), _folder_prints(Path(draft).expanduser())]
    except OSError as exc:
        log.warning("no prompt cache file for %s: its files cannot be read (%s)", folder, exc)
        return ""
    parts = {
        "folder": str(folder.resolve()),
        "files": prints,
        "compute": [compute.weights, compute.dtype, compute.dense],
        "kv": [settings.kv_bits, settings.kv_group_size, settings.quantized_kv_start],
        "draft": draft,  # a draft's layers follow the model's in the cache
        "mlx_lm": __version__,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _folder_prints(folder: Path) -> list:
    """The prints of the files in ``folder`` (not hidden ones), by name."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return [_file_print(p) for p in files]


def common_prefix(a: list[int], b: list[int], limit: int) -> int:
    """How many leading tokens ``a`` and ``b`` share, at most ``limit``."""
    count, limit = 0, min(limit, len(a), len(b))
    while count < limit and a[count] == b[count]:
        count += 1
    return count


def _encode_tokens(tokens: list[int]) -> str:
    import numpy as np

    return base64.b64encode(np.asarray(tokens, dtype="<u4").tobytes()).decode("ascii")


def _decode_tokens(text: str) -> list[int]:
    import numpy as np

    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<u4").tolist()


def _digest(cache: list[Any], tokens: list[int], key: str) -> str:
    """SHA-256 of the key, the tokens and every array of the cache's state, in order."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    digest = hashlib.sha256(f"{key}\n{tokens}\n".encode())
    for name, value in tree_flatten([c.state for c in cache]):
        if isinstance(value, mx.array):
            value = mx.contiguous(value)
            mx.eval(value)
            digest.update(f"{name}:{value.dtype}:{value.shape}\n".encode())
            digest.update(memoryview(value))
        else:
            digest.update(f"{name}={value!r}\n".encode())
    return digest.hexdigest()


def write(file: CacheFile, cache: list[Any], tokens: list[int], key: str) -> None:
    """Write ``cache`` (holding ``tokens``) to ``file`` atomically, with the conversation's permissions.

    mlx-lm writes by path, so it writes into a new private folder beside the file, and the result
    is renamed over the file: a link planted at any name beside the conversation is never written
    through (one at the file's own name is ``RefusedFile``). Raises ``OSError`` or ``RuntimeError``
    (MLX's) when it cannot be written; nothing is left half-written.
    """
    from mlx_lm.models.cache import save_prompt_cache

    path = file.path
    mode = mode_of(file.conversation) & 0o666
    metadata = {"format": FORMAT, "model": key, "tokens": _encode_tokens(tokens), "digest": _digest(cache, tokens, key)}
    remove_leftovers(path)
    existing_mode(path)  # a link or a folder at the cache's name: refused before the work
    folder = private_folder_beside(path, PARTIAL_SUFFIX)
    try:
        temporary = folder / "cache.safetensors"
        save_prompt_cache(str(temporary), cache, metadata)
        descriptor = open_regular(temporary, os.O_RDONLY)
        try:
            os.fchmod(descriptor, mode)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        move_into_place(temporary, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_leftovers(path: Path) -> None:
    """Remove what killed writes of the cache file ``path`` left beside it (this conversation is
    owned by this process, so no other write of it is under way)."""
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*"):
        if is_partial_cache(leftover.name):
            remove_partial(leftover)


def read_tokens(file: CacheFile, key: str) -> list[int] | None:
    """The tokens the file's cache holds, from its header alone; None (logged) when it is not this model's."""
    from mlx_lm.models.cache import load_prompt_cache

    if not regular_file(file.path):
        if os.path.lexists(file.path):
            return _ignored(file, "it is not a regular file (a link, a folder…)")
        return None  # none was saved yet (or it was deleted)
    try:
        _, metadata = load_prompt_cache(str(file.path), return_metadata=True)  # arrays load lazily
        if metadata.get("format") != FORMAT:
            return _ignored(file, "it is not a prompt cache of this version of mcp-chat-tui")
        if metadata.get("model") != key:
            return _ignored(file, "it was made with another model or other model settings")
        return _decode_tokens(metadata["tokens"])
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with the file, it is not used
        return _ignored(file, f"it cannot be read ({exc})")


def load(file: CacheFile, key: str, tokens: list[int], fresh: list[Any]) -> list[Any] | None:
    """The file's cache, checked whole against its digest and against ``fresh`` (an empty cache of
    the model: the same kinds of layer cache); None (logged) when anything does not match."""
    from mlx_lm.models.cache import load_prompt_cache

    try:
        cache, metadata = load_prompt_cache(str(file.path), return_metadata=True)
        if [type(c).__name__ for c in cache] != [type(c).__name__ for c in fresh]:
            return _ignored(file, "its layers are not the model's")
        if any(getattr(c, "offset", len(tokens)) != len(tokens) for c in cache):
            return _ignored(file, "its layers do not hold the tokens it names")
        if metadata.get("digest") != _digest(cache, tokens, key):
            return _ignored(file, "its contents do not match their checksum")
        return cache
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with the file, it is not used
        return _ignored(file, f"it cannot be read ({exc})")


def _ignored(file: CacheFile, why: str) -> None:
    log.warning("prompt cache %s not used: %s; the prompt is computed afresh", file.path, why)
    return None


class CacheKeeper:
    """The engine's link to a conversation's cache file; used on the MLX thread only."""

    def __init__(self, key: str = "") -> None:
        self.key = key  # the loaded model's ``model_key`` ("" before a model is loaded: no file is used)
        self._consulted: CacheFile | None = None  # the file last read: each is read once, when its conversation starts
        self._written: tuple[Path, list[int]] | None = None  # the file and the tokens it holds, when known

    def resume(
        self, file: CacheFile | None, prompt: list[int], in_memory: list[int], new_cache: Callable[[], list[Any]]
    ) -> tuple[list[Any], list[int]] | None:
        """The file's cache and its tokens, when they start more of ``prompt`` than the cache in memory does;
        ``new_cache`` makes an empty cache of the engine's make-up (the model's layers, then a draft's) to load into."""
        if file is None or file is self._consulted or not self.key:
            return None
        self._consulted = file
        tokens = read_tokens(file, self.key)
        if not tokens:
            return None
        limit = len(prompt) - 1  # at least one prompt token is computed
        shared = common_prefix(tokens, prompt, limit)
        if shared <= common_prefix(in_memory, prompt, limit):
            log.info("prompt cache %s not used: it shares %d tokens with the prompt", file.path, shared)
            return None
        cache = load(file, self.key, tokens, new_cache())
        if cache is None:
            return None
        log.info("prompt cache %s: %d of the prompt's %d tokens are not computed again", file.path, shared, len(prompt))
        self._written = (file.path, list(tokens))
        return cache, tokens

    def save(self, file: CacheFile | None, cache: list[Any] | None, tokens: list[int]) -> None:
        """Write the cache to ``file`` unless it holds these tokens already; a failure is logged, never raised."""
        if file is None or not file.save or not cache or not tokens or not self.key:
            return
        if self._written == (file.path, tokens):
            return
        try:
            write(file, cache, tokens, self.key)
        except Exception as exc:  # noqa: BLE001 - the conversation is saved on its own; only the speed-up is lost
            log.warning("prompt cache %s not saved (%s); the conversation itself is saved as usual", file.path, exc)
            return
        self._written = (file.path, list(tokens))


def keep_cache_beside(engine: Engine, conversation: Path | None, *, save: bool = True) -> None:
    """Have ``engine`` keep its KV cache beside the file ``conversation`` (None: stop); engines
    without a KV cache of their own (a remote server's) have nothing to keep."""
    engine.keep_cache_in(conversation, save=save)

"""The system prompt's and the tool schemas' KV cache, kept across conversations in the cache folder.

Every conversation with the same system prompt and servers starts with the same tokens: the
system message and the tools' schemas (thousands of tokens with a few servers). Those tokens are
the prompt's *static prefix*: what the template renders before the first message of the
conversation, found by rendering two conversations that differ only in their first user message
and taking what they share. The first reply that prefills a static prefix no file holds yet
computes it apart and keeps its KV cache in ``prompt-prefixes/`` of the cache folder; a new
conversation's first reply (a new run of the app, or one whose cache holds something else) starts
from that file and prefills only the rest.

A file is named by a SHA-256 of the model's key (its files, compute dtype and KV settings: the
conversation cache's ``model_key``) and the prefix's token ids, and holds them both: it is used
only for exactly those tokens of exactly that model, and, being mlx-lm's prompt cache with a
digest, checked whole as a conversation's cache file is (engine/cache_file.py). The folder keeps
the files used last, at most ``KEEP_BYTES`` in all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import read_regular, replace_file
from mcp_chat_tui.core.paths import user_cache_dir
from mcp_chat_tui.engine.cache_file import CacheFile, common_prefix, load, read_tokens, write

MIN_TOKENS = 256  # a shorter prefix prefills faster than its file is read
STATE_FORMAT = "mcp-chat-tui llama.cpp prefix 1"
KINDS = (".safetensors", ".llama-state")  # the files of MLX's caches and of llama.cpp's states
KEEP_BYTES = 1 << 30
_PROBES = ("A", "Z")  # two first messages that differ at once

log = logging.getLogger(__name__)


def static_prefix_length(render: Callable[[list[dict]], list[int]], messages: list[dict]) -> int:
    """How many leading tokens of any prompt with ``messages``' leading system messages (and the same
    tools, which ``render`` adds) are the same whatever the conversation says (0 when rendering fails)."""
    head = []
    for message in messages:
        if message.get("role") != "system":
            break
        head.append(message)
    try:
        first, second = (render([*head, {"role": "user", "content": probe}]) for probe in _PROBES)
    except Exception:  # noqa: BLE001 - a template that cannot render the probe: nothing is kept
        return 0
    return common_prefix(first, second, min(len(first), len(second)))


class PrefixStore:
    """The prefix files of one model (``key``: ``cache_file.model_key``), in ``folder``."""

    def __init__(self, key: str, folder: Path | None = None) -> None:
        self.key = key
        self.folder = folder if folder is not None else user_cache_dir() / "prompt-prefixes"
        self._lengths: dict[str, int] = {}  # the static prefix length, by the system text and tools it was found for

    def file_for(self, tokens: list[int]) -> CacheFile:
        """The file of the prefix ``tokens`` (``<digest>.cache.safetensors``; new files are private)."""
        digest = hashlib.sha256(f"{self.key}\n{tokens}".encode()).hexdigest()[:32]
        return CacheFile(self.folder / digest)

    def length(self, prompt: list[int], probe: Callable[[], int], identity: str) -> int:
        """The static prefix of ``prompt`` to keep (0: none worth keeping); ``probe`` finds it once per
        ``identity`` (the system text and the tools)."""
        if not self.key:
            return 0
        if identity not in self._lengths:
            self._lengths[identity] = probe()
        length = self._lengths[identity]
        return length if MIN_TOKENS <= length < len(prompt) else 0

    def has(self, tokens: list[int]) -> bool:
        return self.file_for(tokens).path.is_file()

    def load(self, tokens: list[int], fresh: list[Any]) -> list[Any] | None:
        """The kept cache of exactly ``tokens`` (None when no file holds it, or one that does not check out)."""
        file = self.file_for(tokens)
        if not file.path.is_file() or read_tokens(file, self.key) != tokens:
            return None
        cache = load(file, self.key, tokens, fresh)
        if cache is not None:
            try:
                os.utime(file.path)  # used now: kept longest
            except OSError:
                pass
            log.info("prompt prefix %s: %d tokens not computed again", file.path.name, len(tokens))
        return cache

    def save(self, tokens: list[int], cache: list[Any]) -> None:
        """Keep ``cache`` (holding exactly ``tokens``); a failure is logged, never raised."""
        file = self.file_for(tokens)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write(file, cache, tokens, self.key)
        except Exception as exc:  # noqa: BLE001 - only the speed-up is lost
            log.warning("prompt prefix %s not kept (%s)", file.path, exc)
            return
        self._trim()

    # -- llama.cpp's KV cache: its state's bytes, after a header naming the model and the tokens --------------

    def state_path(self, tokens: list[int]) -> Path:
        digest = hashlib.sha256(f"{self.key}\n{tokens}".encode()).hexdigest()[:32]
        return self.folder / f"{digest}.llama-state"

    def load_state(self, tokens: list[int]) -> bytes | None:
        """The kept KV state of exactly ``tokens`` (None when no file holds it, or one that does not check out)."""
        path = self.state_path(tokens)
        try:
            data = read_regular(path, KEEP_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("prompt prefix %s not used: %s", path, exc)
            return None
        header, newline, state = data.partition(b"\n")
        try:
            meta = json.loads(header)
        except ValueError:
            meta = None
        expected = {"format": STATE_FORMAT, "model": self.key, "tokens": tokens, "digest": _sha(state)}
        if not newline or meta != expected:
            log.warning("prompt prefix %s not used: it is not this model's state of these tokens", path)
            return None
        try:
            os.utime(path)
        except OSError:
            pass
        return state

    def save_state(self, tokens: list[int], state: bytes) -> None:
        """Keep ``state`` (holding exactly ``tokens``); a failure is logged, never raised."""
        path = self.state_path(tokens)
        header = json.dumps({"format": STATE_FORMAT, "model": self.key, "tokens": tokens, "digest": _sha(state)})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            replace_file(path, header.encode() + b"\n" + state)
        except OSError as exc:
            log.warning("prompt prefix %s not kept (%s)", path, exc)
            return
        self._trim()

    def _trim(self) -> None:
        """Remove the files used longest ago past ``KEEP_BYTES`` in all."""
        try:
            files = sorted(
                (p for p in self.folder.glob("*") if p.suffix in KINDS and p.is_file() and not p.is_symlink()),
                key=lambda p: p.stat().st_mtime,
                reverse=True,
            )
            kept = 0
            for path in files:
                kept += path.stat().st_size
                if kept > KEEP_BYTES:
                    path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("prompt prefixes in %s not trimmed (%s)", self.folder, exc)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

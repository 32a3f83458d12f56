"""Find a model (local folder, Hugging Face repo, GGUF file), download or convert it with progress, load it with mlx-lm.

Runs on the engine's MLX thread. Every failure becomes an ``EngineError`` whose message
names the model and says what to check.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_chat_tui.engine.events import EngineError, LoadProgress
from mcp_chat_tui.engine.gguf import gguf_folder, is_gguf, is_gguf_file
from mcp_chat_tui.engine.ollama import is_ollama, ollama_gguf

Report = Callable[[LoadProgress], None]

# What mlx-lm itself downloads for a model (mlx_lm.utils.DEFAULT_ALLOW_PATTERNS).
ALLOW_PATTERNS = [
    "*.json",
    "model*.safetensors",
    "*.py",
    "tokenizer.model",
    "*.tiktoken",
    "tiktoken.model",
    "*.txt",
    "*.jsonl",
    "*.jinja",
]
_PROGRESS_INTERVAL = 0.1  # seconds between download reports
STEP_BYTES = 64 * 1024 * 1024  # the weights read (or converted) between two looks at a cancel


class LoadCancelled(EngineError):
    """The user cancelled the load (``/model``'s Esc or Ctrl+C): it stopped between two steps."""


class LoadStop:
    """A cancel of one model's load: set from any thread, looked at on the loading thread between steps
    (each progress report, each download chunk and GGUF tensor, each ``STEP_BYTES`` of weights read),
    where it raises ``LoadCancelled``. A step under way (one C call: mlx-lm building the model, llama.cpp
    reading a file) ends first."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def check(self) -> None:
        if self._cancelled.is_set():
            raise LoadCancelled(f"loading {self.name} was cancelled")


def no_stop() -> None:
    """A load nobody can cancel (the draft model's own checks pass this when given none)."""


def evaluate_in_steps(model: Any, check: Callable[[], None], tell: Callable[[int, int], None] | None = None) -> None:
    """Read (or compute) ``model``'s lazy parameters about ``STEP_BYTES`` at a time, calling ``check``
    before each step: the same work as one ``mx.eval`` of them all, stoppable between steps. ``tell``
    hears the bytes done and the total before each step (the load's progress)."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    arrays = [array for _, array in tree_flatten(model.parameters())]
    total = sum(array.nbytes for array in arrays)
    step: list[Any] = []
    size = done = 0
    for array in arrays:
        step.append(array)
        size += array.nbytes
        if size >= STEP_BYTES or array is arrays[-1]:
            check()
            if tell is not None:
                tell(done, total)
            mx.eval(step)
            done, step, size = done + size, [], 0
    check()


def reading_weights(report: Report, name: str) -> Callable[[int, int], None]:
    """``evaluate_in_steps``'s ``tell`` for a load: the bytes read so far as its progress (``loading NAME (40%)``)."""

    def tell(done: int, total: int) -> None:
        report(LoadProgress("load", done, total, f"loading {name} ({100 * done // max(total, 1)}%)"))

    return tell


def looks_like_path(name: str) -> bool:
    """True for names a user means as a folder: absolute, ./ ../ ~, or more than one "/"."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or name in (".", "..") or name.count("/") > 1


def resolve_model(name: str, report: Report, *, weights: bool = True) -> Path:
    """The local folder holding ``name``: the folder itself, the downloaded snapshot of a repo id, or
    the MLX folder converted from a GGUF file (``model.gguf``, ``ollama:NAME[:TAG]``; ``weights=False``:
    its tokenizer and config only)."""
    if is_ollama(name):
        return gguf_folder(ollama_gguf(name), report, weights=weights)
    path = Path(name).expanduser()
    if is_gguf(name) or (path.is_file() and is_gguf_file(path)):
        return gguf_folder(path, report, weights=weights)
    if path.exists():
        if not path.is_dir():
            raise EngineError(f"cannot load model '{name}': {path} is a file, not a model folder")
        return path
    if looks_like_path(name):
        raise EngineError(f"cannot load model '{name}': no such folder")
    return download(name, report)


def snapshot_download(repo_id: str, **options: Any) -> str:
    """The Hugging Face hub client's ``snapshot_download``, imported when a repo id is first asked for:
    the client (with its HTTP, YAML and progress-bar libraries) is not what a local model needs,
    and costs start-up a tenth of a second or more."""
    from huggingface_hub import snapshot_download as hub_snapshot_download

    return str(hub_snapshot_download(repo_id, **options))


def download(repo_id: str, report: Report) -> Path:
    """Download (or find in the Hugging Face cache) what mlx-lm needs of ``repo_id``."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HFValidationError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    progress = _DownloadProgress(report)
    report(LoadProgress("download", 0, None, f"fetching {repo_id} from the Hugging Face hub"))
    try:  # GatedRepoError is a RepositoryNotFoundError: keep it first
        folder = snapshot_download(repo_id, allow_patterns=ALLOW_PATTERNS, tqdm_class=progress.bar_class())
    except GatedRepoError:
        raise EngineError(
            f"cannot load model '{repo_id}': the repository is gated; accept its terms on "
            "huggingface.co and log in with `hf auth login`"
        ) from None
    except RepositoryNotFoundError:
        raise EngineError(
            f"cannot load model '{repo_id}': repository not found on the Hugging Face hub "
            "(check the name; private repos need `hf auth login`)"
        ) from None
    except RevisionNotFoundError:
        raise EngineError(f"cannot load model '{repo_id}': revision not found on the Hugging Face hub") from None
    except HFValidationError as exc:
        raise EngineError(
            f"cannot load model '{repo_id}': not a local folder and not a valid Hugging Face repo id ({exc})"
        ) from None
    except LocalEntryNotFoundError:
        raise EngineError(
            f"cannot load model '{repo_id}': it is not in the local Hugging Face cache and the hub "
            "cannot be reached (check the network connection, a proxy, or HF_HUB_OFFLINE)"
        ) from None
    except LoadCancelled:
        raise
    except OSError as exc:
        raise EngineError(f"cannot load model '{repo_id}': download failed: {exc}") from None
    except Exception as exc:  # the hub client raises many kinds of HTTP errors
        raise EngineError(f"cannot load model '{repo_id}': download failed: {type(exc).__name__}: {exc}") from None
    progress.done()
    return Path(folder)


def load_model_and_tokenizer(
    name: str, path: Path, check: Callable[[], None] = no_stop, tell: Callable[[int, int], None] | None = None
) -> tuple[Any, Any]:
    """Load weights and tokenizer from a local folder with mlx-lm; the weights are read in steps, with
    ``check`` (which raises ``LoadCancelled`` once the load is cancelled) and ``tell`` (the bytes
    read, of all) before each."""
    from mlx_lm.utils import load

    if not (path / "config.json").exists():
        raise EngineError(f"cannot load model '{name}': no config.json in {path} (is this an MLX/HF model folder?)")
    try:
        model, tokenizer = load(str(path), lazy=True)  # the model built, its weights not read yet
        evaluate_in_steps(model, check, tell)
    except EngineError:
        raise
    except FileNotFoundError as exc:
        raise EngineError(f"cannot load model '{name}': {exc}") from None
    except json.JSONDecodeError as exc:
        raise EngineError(f"cannot load model '{name}': a JSON file in {path} is invalid: {exc}") from None
    except ValueError as exc:
        raise EngineError(f"cannot load model '{name}': {exc}") from None
    except Exception as exc:
        raise EngineError(f"cannot load model '{name}': {type(exc).__name__}: {exc}") from None
    return model, tokenizer


def load_tokenizer(path: Path) -> Any:
    """mlx-lm's tokenizer of a model folder with every end-of-turn id its config and
    ``generation_config.json`` name (as ``mlx_lm.load`` gives it), without the weights."""
    from mlx_lm.tokenizer_utils import load
    from mlx_lm.utils import load_config

    return load(path, eos_token_ids=load_config(path).get("eos_token_id"))


def template_supports_tools(tokenizer: Any) -> bool:
    """Whether the chat template can render tools: mlx-lm found tool markers, or the template uses ``tools``."""
    return bool(getattr(tokenizer, "has_tool_calling", False)) or _template_uses(tokenizer, "tools")


def has_thinking_switch(tokenizer: Any) -> bool:
    """Whether the chat template reads ``enable_thinking`` (it can be asked not to think)."""
    return _template_uses(tokenizer, "enable_thinking")


def _template_uses(tokenizer: Any, name: str) -> bool:
    """Whether one of the tokenizer's chat templates reads the variable ``name`` (by its text when
    it does not parse)."""
    template = getattr(tokenizer, "chat_template", None)
    sources = [s for s in (template.values() if isinstance(template, dict) else [template]) if isinstance(s, str)]
    try:
        import jinja2
        from jinja2 import meta
    except ImportError:  # pragma: no cover - jinja2 comes with transformers
        return any(name in s for s in sources)
    env = jinja2.Environment()
    for source in sources:
        try:
            if name in meta.find_undeclared_variables(env.parse(source)):
                return True
        except jinja2.TemplateError:
            if name in source:
                return True
    return False


class _DownloadProgress:
    """Turns the tqdm bars ``snapshot_download`` creates into ``LoadProgress("download", ...)`` reports.

    The hub makes a bar counting files and byte bars (bytes received, bytes written); we
    report the byte bar that counts the files' real sizes (the last byte bar made), at most
    every 0.1 s and once at the end.
    """

    def __init__(self, report: Report) -> None:
        self._report = report
        self._byte_bars: list[Any] = []
        self._last = 0.0

    def bar_class(self) -> type:
        """The tqdm stand-in ``snapshot_download`` makes its bars from; its byte bars report here."""
        return type("ProgressBar", (_ReportingBar,), {"owner": self})

    def _current(self) -> tuple[int, int | None]:
        if not self._byte_bars:
            return 0, None
        bar = self._byte_bars[-1]
        return int(bar.n), (int(bar.total) if bar.total else None)

    def changed(self) -> None:
        now = time.monotonic()
        if now - self._last < _PROGRESS_INTERVAL:
            return
        self._last = now
        done, total = self._current()
        self._report(LoadProgress("download", done, total, "downloading"))

    def done(self) -> None:
        done, total = self._current()
        self._report(LoadProgress("download", done, total if total is not None else done, "download complete"))


class _ReportingBar:
    """Enough of a tqdm bar for ``snapshot_download``: counts, and byte bars tell ``owner`` of each change
    (``_DownloadProgress.bar_class`` makes a subclass with its own ``owner``)."""

    owner: _DownloadProgress

    def __init__(self, iterable: Any = None, *args: Any, **kwargs: Any) -> None:
        self.iterable = iterable
        self.n = kwargs.get("initial", 0) or 0
        self.total = kwargs.get("total")
        self.desc = kwargs.get("desc", "") or ""
        self.unit = kwargs.get("unit", "it")
        self.disable = False
        if self.unit == "B":
            self.owner._byte_bars.append(self)

    def __iter__(self):
        for item in self.iterable or ():
            yield item
            self.update(1)

    def __enter__(self) -> _ReportingBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: float | None = 1) -> None:
        self.n += n or 0
        if self.unit == "B":
            self.owner.changed()

    def refresh(self, *args: Any, **kwargs: Any) -> None:
        if self.unit == "B":
            self.owner.changed()

    def close(self) -> None:
        pass

    def reset(self, total: Any = None) -> None:
        self.n, self.total = 0, total

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    set_description_str = set_description

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    @property
    def format_dict(self) -> dict[str, Any]:
        return {"n": self.n, "total": self.total, "rate": None}

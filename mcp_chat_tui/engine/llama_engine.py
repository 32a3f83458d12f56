"""Run a GGUF model with llama.cpp (through llama-cpp-python): the fastest engine on a Linux CPU.

It is the MLX engine with another computer under it: the same prompt rendering (the chat template
of the tokenizer rebuilt from the GGUF, engine/gguf.py), the same tool-call recogniser, stop
sequences, generation settings, events and one thread (``MLX_THREAD``) for all its work. What
differs is below: llama.cpp holds the model and the KV cache, prefills the part of the prompt the
cache does not hold in batches (stoppable between them), and samples with its own sampler chain
made from the same settings. Chosen for a GGUF file on a CPU when llama-cpp-python is installed
(``--engine`` forces one): docs/cpu.md has the measurements.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import read_regular, replace_file
from mcp_chat_tui.core.paths import user_cache_dir
from mcp_chat_tui.engine.cache_file import common_prefix
from mcp_chat_tui.engine.context import context_length_from_files
from mcp_chat_tui.engine.events import EngineError, LoadProgress
from mcp_chat_tui.engine.generation import GenerationSettings, read_model_defaults
from mcp_chat_tui.engine.gguf import is_gguf_file
from mcp_chat_tui.engine.llama_spin import others_cpu_use, spin_count
from mcp_chat_tui.engine.loading import load_tokenizer, resolve_model
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.mlx_request import Request, Run
from mcp_chat_tui.engine.ollama import is_ollama, ollama_gguf
from mcp_chat_tui.engine.prefix_cache import PrefixStore

LLAMA_CPP = "llama.cpp"
MLX = "mlx"
DEFAULT_CONTEXT_CAP = 16384  # llama.cpp allocates the whole KV cache at start: a model's 128k would take gigabytes
_BATCH = 512  # prompt tokens per llama.cpp decode: prefill stops between batches
_PENALTY_WINDOW = 20  # tokens the repetition penalty looks back over (as mlx-lm's default)


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python can be imported (without importing it: that loads the library)."""
    from importlib.util import find_spec

    return find_spec("llama_cpp") is not None


def gguf_file(name: str) -> Path | None:
    """The GGUF file a model name stands for (a ``.gguf`` path, a GGUF blob, ``ollama:NAME``), else None."""
    if is_ollama(name):
        return ollama_gguf(name)
    path = Path(name).expanduser()
    return path if path.is_file() and (path.suffix.lower() == ".gguf" or is_gguf_file(path)) else None


def choose_engine(requested: str, model: str) -> tuple[str, str]:
    """``mlx`` or ``llama.cpp`` for ``model``, and a note for the user ("" when there is nothing to say):
    what was asked, or (``auto``) llama.cpp for a GGUF file on a machine where MLX computes on the CPU
    (Linux without CUDA) when llama-cpp-python is installed and computes this file without crashing."""
    if requested != "auto":
        return requested, ""
    if sys.platform == "darwin" or not llama_cpp_installed():
        return MLX, ""
    try:
        path = gguf_file(model)
    except EngineError:
        return MLX, ""  # the MLX engine says what is wrong with the name
    if path is None or _mlx_has_gpu():
        return MLX, ""
    failure = llama_cpp_failure(path)
    if failure:
        return MLX, f"llama.cpp cannot compute {path.name} on this machine ({failure}): using MLX (docs/cpu.md)"
    return LLAMA_CPP, ""


def llama_cpp_failure(path: Path) -> str:
    """Why llama.cpp fails to compute the GGUF file at ``path`` here ("" when it works): tried once in a
    child process (a llama.cpp built for another CPU dies of a signal, which would take the app with it),
    and remembered for this file and this llama-cpp-python in the cache folder."""
    from importlib.metadata import version

    from mcp_chat_tui.engine.gguf import file_key

    record = user_cache_dir() / "llama-cpp-checks.json"
    key = f"{version('llama-cpp-python')}:{_library_print()}:{file_key(path)}"
    try:
        known = json.loads(read_regular(record, 16 << 20))
    except (OSError, ValueError, RecursionError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if key not in known:
        known[key] = _try_llama_cpp(path)
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            replace_file(record, json.dumps(known).encode("utf-8"))
        except OSError:
            pass  # tried again next time
    return str(known[key])


def _library_print() -> str:
    """Size and time of the llama.cpp library installed: a rebuild (other flags) is tried afresh."""
    from importlib.util import find_spec

    spec = find_spec("llama_cpp")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    prints = sorted(
        f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for folder in folders
        for p in Path(folder).glob("lib/*llama*")
        if p.is_file()
    )
    return ",".join(prints)


def _try_llama_cpp(path: Path) -> str:
    code = (
        "import os, sys\n"
        "'OMP_WAIT_POLICY' in os.environ or os.environ.setdefault('GOMP_SPINCOUNT', '1000')\n"
        "import llama_cpp\n"
        "model = llama_cpp.Llama(sys.argv[1], n_ctx=64, n_batch=32, verbose=False)\n"
        "model.eval(model.tokenize(b'Hello, world', add_bos=False))\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "it took over 5 minutes to compute two words"
    if done.returncode == 0:
        return ""
    if done.returncode < 0:
        return f"it died of signal {-done.returncode} ({signal.Signals(-done.returncode).name})"
    last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
    return last[0][:200]


def _mlx_has_gpu() -> bool:
    try:
        import mlx.core as mx

        return bool(mx.metal.is_available() or getattr(mx, "cuda", None) and mx.cuda.is_available())
    except Exception:  # noqa: BLE001 - no usable MLX GPU backend
        return False


@dataclass
class Token:
    """One generated token as ``Run.take`` reads it (the shape of mlx-lm's responses)."""

    token: int
    text: str
    generation_tps: float
    finish_reason: str | None = None
    from_draft: bool = False


class LlamaCppEngine(MlxEngine):
    """A GGUF model through llama.cpp; ``await load()``, then ``async for event in stream(...)``."""

    @property
    def compute_label(self) -> str:
        """``llama.cpp · Q4_K_M · 2 threads``."""
        model = self._model
        if model is None:
            return LLAMA_CPP
        return f"{LLAMA_CPP} · {model.file_type} · {model.threads} thread{'s' if model.threads != 1 else ''}"

    def keep_cache_in(self, conversation: Path | None, *, save: bool = True) -> None:
        """The KV cache is kept in memory only with llama.cpp (a resumed conversation is prefilled)."""
        self._cache_file = None

    # -- on the MLX thread ----------------------------------------------------------------------

    def _load_on_thread(self, report: Callable[[LoadProgress], None]) -> None:
        name = self.model_name
        if self.settings.draft_model or self.settings.kv_bits:
            raise EngineError(
                f"model '{name}': draft_model and kv_bits work with the MLX engine only (use --engine mlx)"
            )
        path = gguf_file(name)
        if path is None:
            raise EngineError(f"cannot load model '{name}' with llama.cpp: it is not a GGUF file (use --engine mlx)")
        folder = resolve_model(name, report, weights=False)  # the tokenizer and chat template, rebuilt from the file
        size = path.stat().st_size
        report(LoadProgress("load", 0, size, f"loading {name} with llama.cpp"))
        tokenizer = load_tokenizer(folder)
        context = self.settings.context_length or min(
            context_length_from_files(folder, tokenizer) or DEFAULT_CONTEXT_CAP, DEFAULT_CONTEXT_CAP
        )
        self._model = LlamaModel(path, context)
        self._tokenizer = tokenizer
        self._model_defaults = read_model_defaults(folder)
        self.generation = self._generation()
        self._learn_tokens(tokenizer)
        self.context_length = context
        self.count_tokens.tokenizer = tokenizer
        self._cache_tokens = []
        self._prefixes = PrefixStore(_state_key(path, context))
        report(LoadProgress("load", size, size, f"loaded {name}"))
        report(LoadProgress("ready", size, size, f"{name} is ready"))

    def _release(self) -> None:
        if self._model is not None:
            self._model.close()
            self._model = self._tokenizer = None
            self._cache_tokens = []

    def _resume_from_file(self, request: Request, prompt: list[int]) -> None:
        return None

    def _resume_from_prefix(self, prompt: list[int], prefix: int) -> None:
        """Start from the kept KV state of the prompt's static prefix when the cache holds less of it."""
        if not prefix or common_prefix(self._cache_tokens, prompt, prefix) >= prefix:
            return
        state = self._prefixes.load_state(prompt[:prefix])
        if state is not None:
            try:
                self._model.restore_state(state)
            except EngineError:
                self._model.clear()
                self._cache_tokens = []
                return
            self._cache_tokens = prompt[:prefix]

    def _keep_prefix(self, prompt: list[int], prefix: int, reused: int, run: Run) -> int:
        """Prefill the static prefix apart and keep its state, when no file holds it yet."""
        if reused >= prefix or self._prefixes.state_path(prompt[:prefix]).exists():
            return reused
        self._prefill(prompt[reused:prefix], lambda done: run.on_prefill(done, len(prompt) - reused))
        run.prefilled_before = prefix - reused
        self._prefixes.save_state(prompt[:prefix], self._model.save_state())
        return prefix

    def _prefill(self, tokens: list[int], on_progress: Callable[[int], None]) -> None:
        """Evaluate ``tokens`` after what the cache holds, a batch at a time; ``on_progress`` may raise to stop."""
        for start in range(0, len(tokens), _BATCH):
            batch = tokens[start : start + _BATCH]
            self._model.evaluate(batch)
            self._cache_tokens = self._cache_tokens + batch
            on_progress(start + len(batch))

    def _save_to_file(self, request: Request) -> None:
        return None

    @staticmethod
    def _peak_memory_gb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux reports KiB

    def _generate(self, request: Request) -> None:
        """One request; an ``aside`` one runs after the conversation's cache is set aside and gets it back after."""
        if not request.aside or self._model is None:
            self._generate_in_cache(request)
            return
        kept = self._model.save_state(), self._cache_tokens
        self._model.clear()
        self._cache_tokens = []
        try:
            self._generate_in_cache(request)
        finally:
            self._model.restore_state(kept[0])
            self._cache_tokens = kept[1]

    def _reuse_cache(self, prompt: list[int]) -> int:
        """Keep the longest prefix of ``prompt`` the KV cache holds (always less than all of it)."""
        cached = self._cache_tokens
        common, limit = 0, min(len(cached), len(prompt) - 1)
        while common < limit and cached[common] == prompt[common]:
            common += 1
        self._model.truncate(common)
        self._cache_tokens = cached[:common]
        return common

    def _stream_tokens(self, suffix: list[int], run: Run) -> None:
        """Prefill ``suffix`` in batches, then generate token by token into ``run``."""
        model, tokenizer = self._model, self._tokenizer
        generation = run.request.generation or self.generation
        prompt_tokens = len(suffix)
        self._prefill(suffix, lambda done: run.on_prefill(done, prompt_tokens))  # raises Cancelled once nobody listens
        run.prefilled = prompt_tokens
        sampler = model.sampler(generation, suffix[-_PENALTY_WINDOW:])
        detokenizer = tokenizer.detokenizer
        detokenizer.reset()
        eos = set(tokenizer.eos_token_ids)
        first = 0.0
        try:
            for count in range(1, generation.max_tokens + 1):
                token = model.sample(sampler)
                now = time.perf_counter()
                first = first or now
                rate = (count - 1) / (now - first) if count > 1 else 0.0  # as mlx-lm counts: after the first token
                if token in eos:
                    detokenizer.finalize()
                    run.take(Token(token, detokenizer.last_segment, rate, "stop"), self.thread_load)
                    return  # counted as the MLX engine counts it, but not evaluated: the cache ends before it
                detokenizer.add_token(token)
                last = count == generation.max_tokens
                if last:
                    detokenizer.finalize()
                if not run.take(
                    Token(token, detokenizer.last_segment, rate, "length" if last else None), self.thread_load
                ):
                    return
                if last:
                    return
                model.evaluate([token])
                self._cache_tokens = self._cache_tokens + [token]
        finally:
            model.free_sampler(sampler)

    def _remember(self, tokens: list[int]) -> None:
        """What the cache holds is what was evaluated, counted as it went (``_stream_tokens``)."""
        if self._model is not None and self._model.tokens != len(self._cache_tokens):
            self._model.clear()  # out of step (an error mid-batch): start afresh next time
            self._cache_tokens = []


def _state_key(path: Path, context: int) -> str:
    """What a kept llama.cpp state is made with: this file, this llama.cpp and this context size."""
    import hashlib
    from importlib.metadata import version

    from mcp_chat_tui.engine.gguf import file_key

    parts = f"{version('llama-cpp-python')}:{_library_print()}:{file_key(path)}:{context}"
    return hashlib.sha256(parts.encode()).hexdigest()


def import_llama_cpp() -> Any:
    """llama_cpp, with its OpenMP threads spinning only briefly before they sleep while they wait
    when other processes keep the machine busy (``GOMP_SPINCOUNT``, unless ``OMP_WAIT_POLICY`` or
    ``GOMP_SPINCOUNT`` says otherwise). By default they spin long: on a busy machine a token then
    waits for a thread that is not running (the 0.5B model here: 25 tok/s idle either way, beside
    four busy processes 1.5 tok/s by default, 6.8 with the short spin); on an idle one the long spin
    is fastest (a 135M model: 70 tok/s against 58). The OpenMP library reads the variables once,
    when llama_cpp loads it, so the choice is made then (docs/cpu.md)."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        chosen = spin_count(others_cpu_use())
        if chosen is not None:
            os.environ["GOMP_SPINCOUNT"] = chosen
    import llama_cpp

    return llama_cpp


class LlamaModel:
    """A llama.cpp model and context, used from one thread: evaluate tokens, trim, sample, save the state."""

    def __init__(self, path: Path, context: int) -> None:
        try:
            llama_cpp = import_llama_cpp()
        except ImportError:
            raise EngineError(
                "the llama.cpp engine needs llama-cpp-python: pip install 'mcp-chat-tui[llama]' (or use --engine mlx)"
            ) from None
        self._lib = llama_cpp
        self.threads = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        try:
            self._llama = llama_cpp.Llama(
                str(path),
                n_ctx=context,
                n_batch=_BATCH,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                n_gpu_layers=0,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise EngineError(f"llama.cpp cannot load {path.name}: {exc}") from None
        self.file_type = _file_type(self._llama)
        self.tokens = 0  # how many tokens the KV cache holds

    def evaluate(self, tokens: list[int]) -> None:
        """Append ``tokens`` to the KV cache (llama.cpp computes them); raises ``EngineError`` on failure."""
        llama = self._llama
        if self.tokens + len(tokens) > llama.n_ctx():
            raise EngineError(f"the conversation is longer than the context of {llama.n_ctx()} tokens")
        llama.n_tokens = self.tokens
        try:
            llama.eval(tokens)
        except RuntimeError as exc:
            raise EngineError(f"llama.cpp failed to compute: {exc}") from None
        self.tokens = llama.n_tokens

    def truncate(self, keep: int) -> None:
        """Drop everything after the first ``keep`` tokens of the KV cache."""
        if keep < self.tokens:
            self._llama._ctx.kv_cache_seq_rm(-1, keep, -1)
            self.tokens = keep
            self._llama.n_tokens = keep

    def clear(self) -> None:
        self.truncate(0)

    def sampler(self, settings: GenerationSettings, prompt_tail: list[int]) -> Any:
        """llama.cpp's sampler chain for ``settings`` (greedy at temperature 0). Its repetition penalty
        looks back over the last tokens of the prompt computed for this reply and then the reply's, as
        mlx-lm's does in the MLX engine."""
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        add = lambda sampler: lib.llama_sampler_chain_add(chain, sampler)  # noqa: E731
        if settings.repetition_penalty not in (None, 1.0):
            vocabulary = self._llama.n_vocab()
            add(lib.llama_sampler_init_penalties(vocabulary, _PENALTY_WINDOW, settings.repetition_penalty, 0.0, 0.0))
        if not settings.temperature:
            add(lib.llama_sampler_init_greedy())
        else:
            if settings.top_k:
                add(lib.llama_sampler_init_top_k(settings.top_k))
            if settings.top_p not in (None, 1.0):
                add(lib.llama_sampler_init_top_p(settings.top_p, 1))
            if settings.min_p:
                add(lib.llama_sampler_init_min_p(settings.min_p, 1))
            add(lib.llama_sampler_init_temp(settings.temperature))
            seed = settings.seed if settings.seed is not None else int.from_bytes(os.urandom(4), "little")
            add(lib.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        for token in prompt_tail:
            lib.llama_sampler_accept(chain, token)
        return chain

    def sample(self, chain: Any) -> int:
        """The next token after what the cache holds (its logits are the last evaluated token's); the
        chain takes it in itself (llama.cpp's sample accepts: a second accept would count it twice)."""
        return int(self._lib.llama_sampler_sample(chain, self._llama._ctx.ctx, -1))

    def free_sampler(self, chain: Any) -> None:
        self._lib.llama_sampler_free(chain)

    def save_state(self) -> bytes:
        """The KV cache's contents (to set them aside for a request outside the conversation)."""
        lib, ctx = self._lib, self._llama._ctx.ctx
        size = lib.llama_state_seq_get_size(ctx, 0)
        buffer = (lib.ctypes.c_uint8 * size)()
        written = lib.llama_state_seq_get_data(ctx, buffer, size, 0)
        return bytes(buffer[:written])

    def restore_state(self, state: bytes) -> None:
        lib, ctx = self._lib, self._llama._ctx.ctx
        self.clear()
        buffer = (lib.ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not lib.llama_state_seq_set_data(ctx, buffer, len(state), 0):
            raise EngineError("llama.cpp could not restore the conversation's KV cache")
        self.tokens = self._llama.n_tokens = lib.llama_memory_seq_pos_max(lib.llama_get_memory(ctx), 0) + 1

    def close(self) -> None:
        self._llama.close()


def _file_type(llama: Any) -> str:
    """The file's quantization as llama.cpp names it (``Q4_K - Medium`` becomes ``Q4_K_M``)."""
    described = llama.metadata.get("general.file_type")
    names = {"0": "F32", "1": "F16", "2": "Q4_0", "3": "Q4_1", "7": "Q8_0", "8": "Q5_0", "9": "Q5_1"}
    names.update({"10": "Q2_K", "11": "Q3_K_S", "12": "Q3_K_M", "13": "Q3_K_L", "14": "Q4_K_S", "15": "Q4_K_M"})
    names.update({"16": "Q5_K_S", "17": "Q5_K_M", "18": "Q6_K", "32": "BF16"})
    return names.get(str(described), "GGUF")

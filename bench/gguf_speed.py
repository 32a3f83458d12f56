"""GGUF files on a Linux CPU: the app's decode and prefill against llama.cpp's own, and against MLX.

Run: ``.venv/bin/python bench/gguf_speed.py [--runs 3] [--tokens 64] [--gguf FILE ...]``
(needs llama-cpp-python: ``pip install ".[llama]"``).

The files: ``bench/cpu_speed.py``'s random-weight 135M model (SmolLM2-135M's shape) written as GGUF
in F16 and Q4_1 (the ``gguf`` package, as llama.cpp's converter writes them), and every ``--gguf``
given (by default also the real Qwen2.5-Coder-0.5B-Instruct Q4_K_M of ../shared/real-models when it
is on this machine). For each file, alternating, each run in its own process:

- ``llama.cpp``: llama-cpp-python's llama.cpp on the file, by hand: the prompt's tokens evaluated
  in one call (prefill), then greedy tokens one at a time with llama.cpp's own sampler (decode);
  as many threads as the process may use;
- ``app``: the app's engine for the file as ``--engine auto`` chooses it on this machine (llama.cpp
  when installed), through ``engine.stream``: the prompt rendered by the chat template, the
  recogniser, the events;
- ``app-mlx``: the app's MLX engine on the same file (converted once to an MLX folder; its defaults:
  float32 and the optimized BLAS);
- ``mlx``: raw mlx-lm on the converted folder in float32 with the optimized BLAS (MLX at its best).

The same prompt token ids go to every configuration (about 300 tokens). Decode is tokens per second
after the first token; prefill is prompt tokens over the time to the first token. Medians over the
runs. The last line is one JSON object: for each file ``decode_app_vs_llama_cpp_<file>`` and
``prefill_app_vs_llama_cpp_<file>`` (target >= 0.9) and the MLX engine's ratios to llama.cpp.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REAL_MODEL = Path.home() / ".cache" / "real-models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
PROMPT_WORDS = 220
CONFIGS = ("llama.cpp", "app", "app-mlx", "mlx")


def build_files(folder: Path) -> list[Path]:
    """The 135M model of bench/cpu_speed.py as GGUF files in F16 and Q4_1 (made once in ``folder``)."""
    from gguf import GGMLQuantizationType

    from bench.cpu_speed import build_model
    from tests.gguf_files import write_gguf

    model = build_model(folder / "smollm2-135m-shape")
    files = []
    for kind in (GGMLQuantizationType.F16, GGMLQuantizationType.Q4_1):
        path = folder / f"smollm2-135m-shape-{kind.name.lower()}.gguf"
        if not path.exists():
            write_gguf(path, model, matrix_type=kind)
        files.append(path)
    return files


def prompt_tokens(path: Path) -> list[int]:
    """The prompt every configuration gets: a user message rendered by the file's own chat template."""
    from mcp_chat_tui.engine.gguf import gguf_folder
    from mcp_chat_tui.engine.loading import load_tokenizer

    tokenizer = load_tokenizer(gguf_folder(path, lambda progress: None, weights=False))
    messages = [{"role": "user", "content": prompt_text()}]
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=True))


def run_llama_cpp(path: Path, prompt: list[int], tokens: int) -> dict:
    import llama_cpp

    count = len(os.sched_getaffinity(0))  # as many threads as the app's llama.cpp engine uses
    llama = llama_cpp.Llama(str(path), n_ctx=2048, n_batch=512, n_threads=count, n_threads_batch=count, verbose=False)
    llama.eval(prompt[:8])  # warm up
    llama.n_tokens = 0
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
    started = time.perf_counter()
    llama.eval(prompt)
    token = llama_cpp.llama_sampler_sample(chain, llama._ctx.ctx, -1)
    first = time.perf_counter()
    for _ in range(tokens - 1):
        llama.eval([token])
        token = llama_cpp.llama_sampler_sample(chain, llama._ctx.ctx, -1)
    done = time.perf_counter()
    return {"decode": (tokens - 1) / (done - first), "prefill": len(prompt) / (first - started), "threads": count}


def run_app(path: Path, prompt: list[int], tokens: int, engine_name: str) -> dict:
    from mcp_chat_tui.engine.events import Stats
    from mcp_chat_tui.engine.llama_engine import LLAMA_CPP, LlamaCppEngine, choose_engine
    from mcp_chat_tui.engine.mlx_engine import MlxEngine

    chosen = choose_engine("auto", str(path))[0] if engine_name == "auto" else engine_name
    kind = LlamaCppEngine if chosen == LLAMA_CPP else MlxEngine

    async def measure() -> dict:
        engine = kind(str(path), max_tokens=tokens, context_length=2048)
        await engine.load()
        text = engine.tokenizer.decode(prompt[:8])
        [e async for e in engine.stream([{"role": "user", "content": text}])]  # warm up
        engine._cache_tokens, engine._cache = [], None  # noqa: SLF001 - measure a prompt the cache does not hold
        if chosen == LLAMA_CPP:
            engine._model.clear()  # noqa: SLF001
        messages = [{"role": "user", "content": prompt_text()}]
        stats = [e async for e in engine.stream(messages) if isinstance(e, Stats)][0]
        label = engine.compute_label
        await engine.close()
        return {
            "decode": stats.tokens_per_second,
            "prefill": stats.prefilled_tokens / stats.time_to_first_token,
            "prompt": stats.prompt_tokens,
            "tokens": stats.generated_tokens,
            "engine": label,
        }

    return asyncio.run(measure())


def prompt_text() -> str:
    """The user message of the prompt (``prompt_tokens`` renders it with the file's template)."""
    words = "the quick brown fox jumps over the lazy dog and reads a file then searches the web".split()
    return " ".join(words[i % len(words)] for i in range(PROMPT_WORDS))


def run_mlx(path: Path, prompt: list[int], tokens: int) -> dict:
    import mlx.core as mx
    from mlx_lm.generate import stream_generate
    from mlx_lm.sample_utils import make_sampler
    from mlx_lm.utils import load

    from mcp_chat_tui.engine.blas import load_blas
    from mcp_chat_tui.engine.gguf import gguf_folder

    load_blas()
    model, tokenizer = load(str(gguf_folder(path, lambda progress: None)))
    from mlx_lm.utils import dequantize_model

    model = dequantize_model(model)
    model.set_dtype(mx.float32)
    mx.eval(model.parameters())
    for _ in stream_generate(model, tokenizer, prompt[:8], max_tokens=4):
        pass
    started, first, last = time.perf_counter(), None, None
    for response in stream_generate(model, tokenizer, prompt, max_tokens=tokens, sampler=make_sampler(temp=0.0)):
        first = first or time.perf_counter()
        last = response
    return {"decode": last.generation_tps, "prefill": len(prompt) / (first - started)}


def worker(args: argparse.Namespace) -> None:
    from mcp_chat_tui.engine.blas import load_blas

    load_blas()  # before anything imports mlx.core, as the app does
    path = Path(args.worker)
    prompt = prompt_tokens(path)
    if args.config == "llama.cpp":
        figures = run_llama_cpp(path, prompt, args.tokens)
    elif args.config == "mlx":
        figures = run_mlx(path, prompt, args.tokens)
    else:
        figures = run_app(path, prompt, args.tokens, "auto" if args.config == "app" else "mlx")
    print(json.dumps(figures))


def measure(path: Path, config: str, tokens: int, cache: Path) -> dict:
    env = {**os.environ, "MCP_CHAT_TUI_CACHE_DIR": str(cache)}
    command = [sys.executable, __file__, "--worker", str(path), "--config", config, "--tokens", str(tokens)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{config} on {path.name} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--gguf", type=Path, action="append", default=[], help="another GGUF file to measure")
    parser.add_argument("--no-real", action="store_true", help="leave out the real 0.5B model")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="which configurations, comma-separated")
    parser.add_argument("--work-dir", type=Path, help="keep the built files and converted folders here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny model, one file, one short run (without llama.cpp: MLX only): checks it runs",
    )
    args = parser.parse_args()
    if args.smoke:  # bench/cpu_speed.py's tiny model (MCT_BENCH_SMOKE, inherited by the workers)
        os.environ["MCT_BENCH_SMOKE"] = "1"
        args.runs, args.tokens, args.no_real = 1, 4, True
        if importlib.util.find_spec("llama_cpp") is None:
            args.configs = "app-mlx,mlx"
            print("llama-cpp-python is not installed: the smoke run measures the MLX configurations only")
    if args.worker:
        worker(args)
        return
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="gguf-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    files = build_files(work) + list(args.gguf) + ([REAL_MODEL] if REAL_MODEL.exists() and not args.no_real else [])
    if args.smoke:  # every configuration on one file (the Q4_1 one): each is a process importing mlx, seconds of CPU
        files = files[1:2]
    configs = args.configs.split(",")
    figures: dict[str, dict[str, list[dict]]] = {f.name: {c: [] for c in configs} for f in files}
    for run in range(args.runs):
        for path in files:
            for config in configs:
                result = measure(path, config, args.tokens, work / "cache")
                figures[path.name][config].append(result)
                print(
                    f"run {run + 1} {path.name:44} {config:9} decode {result['decode']:7.1f} "
                    f"prefill {result['prefill']:7.1f}  {result.get('engine', '')}",
                    flush=True,
                )
    summary: dict[str, float] = {}
    print(f"\n{'file':44} {'configuration':10} {'decode tok/s':>13} {'prefill tok/s':>14}")
    for path in files:
        medians = {
            c: {k: statistics.median(r[k] for r in figures[path.name][c]) for k in ("decode", "prefill")}
            for c in configs
        }
        for config in configs:
            print(f"{path.name:44} {config:10} {medians[config]['decode']:13.1f} {medians[config]['prefill']:14.1f}")
        name = path.stem.replace("-", "_").replace(".", "_")
        if "llama.cpp" in configs:
            for config, label in (("app", "app"), ("app-mlx", "app_mlx"), ("mlx", "mlx")):
                if config in configs:
                    for kind in ("decode", "prefill"):
                        ratio = medians[config][kind] / medians["llama.cpp"][kind]
                        summary[f"{kind}_{label}_vs_llama_cpp_{name}"] = round(ratio, 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

"""What the options a user turns on do to a local model on this machine: a quantized KV cache
(``kv_bits`` 8 and 4) and speculative decoding with a draft model (``draft_model``).

Run: ``.venv/bin/python bench/options.py [--runs 3] [--model-dir DIR]``

Builds, in a temporary folder (or ``--model-dir``, kept for the next run), bench/cpu_speed.py's
random-weight float16 model with SmolLM2-135M's shape, and two draft models sharing its
tokenizer: ``small`` (4 layers of width 256, its own random weights: it agrees with the model
about as often as chance) and ``first4`` (the model's own first 4 of 30 layers, its embedding and
norm: a cheap model that often agrees with the full one, standing in for a trained small model
of the same family). Then measures, alternating, each run in its own process, through the app's
``MlxEngine`` with its defaults (float32, the optimized BLAS):

- the KV cache: a prompt of about ``--long`` tokens (by default past the 5000 where the app's
  quantized cache starts quantizing, as mlx-lm's; ``--kv-start 0`` quantizes from the first token,
  so a shorter prompt shows the effect on a slow machine) then ``--tokens`` tokens, with
  ``kv_bits`` none, 8 and 4: decode and prefill tok/s, the process's peak memory and the KV
  cache's own size at the end;
- the draft: a 105-token prompt then ``--tokens`` tokens, without a draft and with each draft
  (``num_draft_tokens`` 3): decode tok/s and the acceptance rate (drafted tokens the model kept,
  over those it was offered).

Medians over the runs. The last line is one JSON object: each configuration's decode and
prefill tok/s against none's (``decode_kv8_vs_none`` ...), the memory figures in MB, and the
acceptance rates.

``--worker CONFIG --model FOLDER`` is one measurement (the parent runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cpu_speed import SMOLLM2_135M, WORDS, build_model  # noqa: E402, F401 - build_model: for main()

NUM_DRAFT_TOKENS = 3
CONFIGS = {  # name: (prompt, engine settings; "draft" names a draft folder next to the model)
    "none": ("long", {}),
    "kv8": ("long", {"kv_bits": 8}),
    "kv4": ("long", {"kv_bits": 4}),
    "short": ("short", {}),
    "draft_small": ("short", {"draft": "small"}),
    "draft_first4": ("short", {"draft": "first4"}),
}
SMALL_DRAFT = {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2}


def build_drafts(folder: Path) -> None:
    """Next to the model in ``folder``: ``small`` (random weights) and ``first4`` (its first 4 layers)."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama

    for name in ("small", "first4"):
        target = folder.parent / f"{folder.name}-draft-{name}"
        if (target / "model.safetensors").exists():
            continue
        target.mkdir(parents=True, exist_ok=True)
        for file in ("tokenizer.json", "tokenizer_config.json"):
            (target / file).write_bytes((folder / file).read_bytes())
        config = json.loads((folder / "config.json").read_text())
        if name == "small":
            config.update(SMALL_DRAFT, intermediate_size=512)
            mx.random.seed(1)
            weights = dict(tree_flatten(llama.Model(llama.ModelArgs.from_dict(config)).parameters()))
            weights = {k: v.astype(mx.float16) for k, v in weights.items()}
        else:
            config["num_hidden_layers"] = 4
            weights = {
                k: v
                for k, v in mx.load(str(folder / "model.safetensors")).items()
                if not k.startswith("model.layers.") or int(k.split(".")[2]) < 4
            }
        (target / "config.json").write_text(json.dumps(config, indent=2))
        mx.eval(weights)
        mx.save_safetensors(str(target / "model.safetensors"), weights, metadata={"format": "mlx"})


def prompt_messages(tokenizer, length: int) -> list[dict]:
    """A user message whose chat-template prompt is about ``length`` tokens long."""
    words = [WORDS[i % len(WORDS)] for i in range(length)]
    low, high = 1, len(words)
    while low < high:  # the fewest words that reach ``length`` tokens
        middle = (low + high) // 2
        messages = [{"role": "user", "content": " ".join(words[:middle])}]
        if len(tokenizer.apply_chat_template(messages, add_generation_prompt=True)) >= length:
            high = middle
        else:
            low = middle + 1
    return [{"role": "user", "content": " ".join(words[:low])}]


def worker(config: str, folder: str, tokens: int, long: int, kv_start: int) -> dict:
    """One measurement of ``config`` in this process."""
    import asyncio

    from mcp_chat_tui.engine.blas import load_blas

    load_blas()  # before mlx.core is imported, as the app does

    import mlx.core as mx

    from mcp_chat_tui.engine.events import Stats
    from mcp_chat_tui.engine.mlx_engine import MlxEngine

    prompt, settings = CONFIGS[config]
    settings = dict(settings)
    if "kv_bits" in settings:
        settings["quantized_kv_start"] = kv_start
    if "draft" in settings:
        settings = {"draft_model": f"{folder}-draft-{settings.pop('draft')}", "num_draft_tokens": NUM_DRAFT_TOKENS}

    async def run() -> dict:
        engine = MlxEngine(folder, max_tokens=8, **settings)
        await engine.load()
        [e async for e in engine.stream([{"role": "user", "content": "warm up"}])]
        messages = prompt_messages(engine.tokenizer, long if prompt == "long" else 105)
        engine.max_tokens = tokens
        mx.reset_peak_memory()
        stats = [e async for e in engine.stream(messages) if isinstance(e, Stats)][0]
        cache_bytes = sum(getattr(entry, "nbytes", 0) for entry in engine._cache or [])
        compute = engine.compute_label
        await engine.close()
        offered = (stats.generated_tokens - stats.drafted_tokens) * NUM_DRAFT_TOKENS
        return {
            "decode": stats.tokens_per_second,
            "prefill": stats.prefilled_tokens / stats.time_to_first_token,
            "prompt": stats.prompt_tokens,
            "tokens": stats.generated_tokens,
            "peak_mb": stats.peak_memory_gb * 1000,
            "cache_mb": cache_bytes / 1e6,
            "acceptance": stats.drafted_tokens / offered if "draft_model" in settings and offered else None,
            "compute": compute,
        }

    return asyncio.run(run())


def measure(config: str, folder: Path, options: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--worker", config, "--model", str(folder), "--tokens", str(options.tokens)]
    command += ["--long", str(options.long), "--kv-start", str(options.kv_start)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{config} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(folder: Path, options: argparse.Namespace) -> dict:
    results: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    for run in range(options.runs):
        for config in list(CONFIGS) if run % 2 == 0 else list(reversed(CONFIGS)):
            figures = measure(config, folder, options)
            results[config].append(figures)
            acceptance = f"  acceptance {figures['acceptance']:.2f}" if figures["acceptance"] is not None else ""
            print(
                f"run {run + 1} {config:12} decode {figures['decode']:6.1f} tok/s  prefill {figures['prefill']:6.1f} "
                f"tok/s  prompt {figures['prompt']}  peak {figures['peak_mb']:7.1f} MB  KV cache "
                f"{figures['cache_mb']:6.1f} MB{acceptance}  load {os.getloadavg()[0]:.2f}  ({figures['compute']})",
                flush=True,
            )
    median = {
        (config, kind): statistics.median(r[kind] for r in rows)
        for config, rows in results.items()
        for kind in ("decode", "prefill", "peak_mb", "cache_mb")
    }
    figures: dict[str, float] = {}
    for config, base in (("kv8", "none"), ("kv4", "none"), ("draft_small", "short"), ("draft_first4", "short")):
        for kind in ("decode", "prefill"):
            figures[f"{kind}_{config}_vs_{base}"] = round(median[config, kind] / median[base, kind], 3)
    for config in ("none", "kv8", "kv4"):
        figures[f"peak_mb_{config}"] = round(median[config, "peak_mb"], 1)
        figures[f"kv_cache_mb_{config}"] = round(median[config, "cache_mb"], 1)
    for config in ("draft_small", "draft_first4"):
        figures[f"acceptance_{config}"] = round(statistics.median(r["acceptance"] for r in results[config]), 3)
    for config in CONFIGS:
        print(
            f"median {config:12} decode {median[config, 'decode']:6.1f} tok/s  prefill "
            f"{median[config, 'prefill']:6.1f} tok/s  peak {median[config, 'peak_mb']:7.1f} MB  KV cache "
            f"{median[config, 'cache_mb']:6.1f} MB"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=100, help="tokens generated in each run")
    parser.add_argument("--long", type=int, default=6000, help="prompt tokens of the KV cache runs")
    parser.add_argument(
        "--kv-start", type=int, default=5000, help="tokens in the cache before it is quantized (the app's: 5000)"
    )
    parser.add_argument(
        "--model-dir", type=Path, help="build the models here and keep them (default: a temporary folder)"
    )
    parser.add_argument("--worker", choices=sorted(CONFIGS), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="a tiny model, one short run: only checks that it runs")
    args = parser.parse_args()
    if args.smoke:  # bench/cpu_speed.py's tiny model (MCT_BENCH_SMOKE, inherited by the workers)
        os.environ["MCT_BENCH_SMOKE"] = "1"
        args.runs, args.tokens, args.long, args.kv_start = 1, 4, 300, 0
    if args.worker:
        print(json.dumps(worker(args.worker, args.model, args.tokens, args.long, args.kv_start)))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model_dir or Path(scratch) / "smollm2-135m-shape"
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); from pathlib import Path; "
            f"from bench.options import build_model, build_drafts; folder = Path({str(folder)!r}); "
            "build_model(folder); build_drafts(folder)"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
        figures = report(folder, args)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    assert SMOLLM2_135M["head_dim"] % 64 == 0  # the KV cache quantizes in groups of 64
    main()

"""How fast a local model runs on MLX's CPU backend: as stored, with the app's defaults, and at the best.

Run: ``.venv/bin/python bench/cpu_speed.py [--runs 3] [--tokens 200] [--model-dir DIR]``

Builds, in a temporary folder (or ``--model-dir``, kept for the next run), a random-weight
float16 llama model with SmolLM2-135M's shape (hidden 576, 30 layers, 9 heads, 3 KV heads,
intermediate 1536, vocab 49152, tied embeddings; speed does not depend on the weights' values).
Then measures, alternating, each run in its own process (a process loads its BLAS once):

- ``stored``: raw ``mlx_lm.stream_generate`` on the weights as stored, with MLX's own BLAS;
- ``default``: the app's ``MlxEngine`` with its defaults (its BLAS, its compute dtype);
- ``best``: raw mlx-lm, float32 weights, the optimized BLAS the app finds.

Decode is mlx-lm's own tokens per second after the first token; prefill is prompt tokens over
the time from asking to the first token. Medians over the runs. The last line is one JSON
object: ``decode_default_vs_best``, ``prefill_default_vs_best``, ``decode_default_vs_stored``,
``prefill_default_vs_stored``. Targets: both ``*_vs_best`` >= 0.9, ``decode_default_vs_stored``
>= 4, ``prefill_default_vs_stored`` >= 10.

``--quantized`` also makes 4-bit and 8-bit copies with ``mlx_lm.convert -q`` and measures each
kept quantized (raw mlx-lm, float32 scales, the optimized BLAS) against the app's defaults (made
dense float32 when memory allows); their figures go into the JSON as ``q4_decode_default_vs_quantized``
and so on. Quantized weights with float16 scales as published are left out: on MLX's CPU backend
they take seconds a token.

``--worker CONFIG --model FOLDER`` is one measurement (the parent runs it); ``--dtype``,
``--engine`` and ``MCP_CHAT_TUI_BLAS`` let one measure other configurations by hand.
"""

from __future__ import annotations

import argparse
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

SMOLLM2_135M = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 576,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "intermediate_size": 1536,
    "vocab_size": 49152,
    "head_dim": 64,
    "tie_word_embeddings": True,
    "rms_norm_eps": 1e-5,
    "rope_theta": 100000.0,
    "max_position_embeddings": 8192,
    "torch_dtype": "float16",
}
# MCT_BENCH_SMOKE=1 (--smoke, inherited by the workers): a model this small instead, so a smoke run
# checks in seconds that the bench still runs (its figures mean nothing then).
SMOKE_SHAPE = {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1}
SMOKE_SHAPE |= {"intermediate_size": 256, "vocab_size": 512, "head_dim": 64}  # KV groups of 64 fit a head
PROMPT_TOKENS = 105  # the length of the prompt measured in the issue
WORDS = "the quick brown fox jumps over the lazy dog and reads a file then searches the web for the weather ".split()
CONFIGS = {  # name: (MCP_CHAT_TUI_BLAS, compute dtype, through the engine)
    "stored": ("none", "stored", False),
    "default": (None, "default", True),
    "best": ("auto", "float32", False),
}


QUANTIZED_CONFIGS = {"quantized": ("auto", "float32", False), "default": (None, "default", True)}


def build_model(folder: Path) -> Path:
    """A random-weight float16 llama folder with SmolLM2-135M's shape and a small byte-level tokenizer.

    The embedding rows of the special tokens and of ids past the tokenizer's are zero (tied, so
    their logits are zero): greedy decoding never picks them and every reply runs to max_tokens.
    """
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama

    from tests.models import PLAIN_TEMPLATE, SILENT_TOKENS, build_tokenizer

    if (folder / "model.safetensors").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(400)
    tokenizer.save(str(folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    shape = SMOLLM2_135M | (SMOKE_SHAPE if os.environ.get("MCT_BENCH_SMOKE") else {})
    config = dict(shape, eos_token_id=vocab["<|im_end|>"], bos_token_id=vocab["<|endoftext|>"])
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "chat_template": PLAIN_TEMPLATE,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    mx.random.seed(0)
    args = llama.ModelArgs.from_dict(config)
    model = llama.Model(args)
    weights = dict(tree_flatten(model.parameters()))
    rows = mx.arange(config["vocab_size"])[:, None]
    live = (rows < tokenizer.get_vocab_size()) & ~mx.any(rows == mx.array([vocab[t] for t in SILENT_TOKENS]), axis=1)[
        :, None
    ]
    weights["model.embed_tokens.weight"] = weights["model.embed_tokens.weight"] * live
    weights = {k: v.astype(mx.float16) for k, v in weights.items()}
    mx.eval(weights)
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})
    return folder


def prompt_messages(tokenizer) -> list[dict]:
    """A user message whose chat-template prompt is PROMPT_TOKENS tokens long (or just over)."""
    words: list[str] = []
    while True:
        messages = [{"role": "user", "content": " ".join(words)}]
        if len(tokenizer.apply_chat_template(messages, add_generation_prompt=True)) >= PROMPT_TOKENS:
            return messages
        words.append(WORDS[len(words) % len(WORDS)])


def raw_once(model, tokenizer, prompt: list[int], tokens: int) -> tuple[float, float, int]:
    """(decode tok/s, prefill tok/s, tokens) for one raw ``stream_generate``."""
    from mlx_lm.generate import stream_generate
    from mlx_lm.sample_utils import make_sampler

    started, first, last = time.perf_counter(), None, None
    count = 0
    for response in stream_generate(model, tokenizer, prompt, max_tokens=tokens, sampler=make_sampler(temp=0.0)):
        first = first or time.perf_counter()
        last, count = response, count + 1
    return last.generation_tps, len(prompt) / (first - started), count


def worker_raw(folder: str, dtype: str, tokens: int) -> dict:
    import mlx.core as mx
    from mlx_lm.utils import load

    model, tokenizer = load(folder)
    if dtype == "dequantized":  # quantized weights made dense float32
        from mlx_lm.utils import dequantize_model

        model, dtype = dequantize_model(model), "float32"
    if dtype != "stored":
        model.set_dtype(getattr(mx, dtype))
        mx.eval(model.parameters())
    prompt = list(tokenizer.apply_chat_template(prompt_messages(tokenizer), add_generation_prompt=True))
    raw_once(model, tokenizer, prompt[:16], 8)  # warm up
    decode, prefill, count = raw_once(model, tokenizer, prompt, tokens)
    return {"decode": decode, "prefill": prefill, "tokens": count, "prompt": len(prompt)}


def worker_engine(folder: str, dtype: str, tokens: int) -> dict:
    import asyncio

    from mcp_chat_tui.engine.events import Stats
    from mcp_chat_tui.engine.mlx_engine import MlxEngine

    async def run(messages: list[dict], max_tokens: int) -> tuple[MlxEngine, Stats]:
        engine = MlxEngine(folder, max_tokens=max_tokens, **({} if dtype == "default" else {"compute_dtype": dtype}))
        await engine.load()
        stats = [e async for e in engine.stream(messages) if isinstance(e, Stats)][0]
        await engine.close()
        return engine, stats

    async def both() -> dict:
        engine, _ = await run([{"role": "user", "content": "warm up"}], 8)
        messages = prompt_messages(engine_tokenizer(folder))
        engine, stats = await run(messages, tokens)  # a new engine: its cache holds nothing of the prompt
        return {
            "decode": stats.tokens_per_second,
            "prefill": stats.prefilled_tokens / stats.time_to_first_token,
            "tokens": stats.generated_tokens,
            "prompt": stats.prompt_tokens,
            "compute": engine.compute_label,
        }

    return asyncio.run(both())


def engine_tokenizer(folder: str):
    from mlx_lm.tokenizer_utils import load as load_tokenizer

    return load_tokenizer(Path(folder))


def worker(args: argparse.Namespace) -> None:
    from mcp_chat_tui.engine.blas import load_blas

    blas = load_blas()
    run = worker_engine if args.engine else worker_raw
    figures = run(args.model, args.dtype, args.tokens)
    figures["blas"] = blas.describe()
    print(json.dumps(figures))


def build_quantized(folder: Path, bits: int) -> Path:
    """``folder``'s model quantized to ``bits`` (group size 64) with mlx-lm's converter, beside it."""
    target = folder.parent / f"{folder.name}-q{bits}"
    if not (target / "config.json").exists():
        code = (
            "from mlx_lm.convert import convert; "
            f"convert({str(folder)!r}, {str(target)!r}, quantize=True, q_bits={bits}, q_group_size=64)"
        )
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return target


def measure(config: str, folder: Path, tokens: int, configs: dict = CONFIGS) -> dict:
    blas, dtype, engine = configs[config]
    env = {k: v for k, v in os.environ.items() if k != "MCP_CHAT_TUI_BLAS"}
    if blas is not None:
        env["MCP_CHAT_TUI_BLAS"] = blas
    command = [sys.executable, __file__, "--worker", "--model", str(folder), "--dtype", dtype, "--tokens", str(tokens)]
    done = subprocess.run(command + (["--engine"] if engine else []), env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{config} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(folder: Path, runs: int, tokens: int, configs: dict = CONFIGS, label: str = "") -> dict:
    """Each configuration ``runs`` times, alternating; the medians, and the default's ratios to the others."""
    results: dict[str, list[dict]] = {name: [] for name in configs}
    for run in range(runs):
        order = list(configs) if run % 2 == 0 else list(reversed(configs))
        for config in order:
            figures = measure(config, folder, tokens, configs)
            results[config].append(figures)
            print(
                f"{label}run {run + 1} {config:9} decode {figures['decode']:6.1f} tok/s  prefill {figures['prefill']:6.1f} tok/s"
                f"  {figures['tokens']} tokens  {figures['blas']}  {figures.get('compute', '')}",
                flush=True,
            )
    median = {
        (config, kind): statistics.median(r[kind] for r in rows)
        for config, rows in results.items()
        for kind in ("decode", "prefill")
    }
    for config in configs:
        print(
            f"{label}median {config:9} decode {median[config, 'decode']:6.1f} tok/s"
            f"  prefill {median[config, 'prefill']:6.1f} tok/s"
        )
    return {
        f"{kind}_default_vs_{other}": round(median["default", kind] / median[other, kind], 3)
        for other in configs
        if other != "default"
        for kind in ("decode", "prefill")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--model-dir", type=Path, help="build the model here and keep it (default: a temporary folder)")
    parser.add_argument("--quantized", action="store_true", help="also measure 4-bit and 8-bit copies")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument(
        "--dtype", default="stored", help="worker: stored, float32, bfloat16, float16, dequantized (engine: default)"
    )
    parser.add_argument("--engine", action="store_true", help="worker: through MlxEngine")
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny model, one run of 8 tokens: only checks that it runs"
    )
    args = parser.parse_args()
    if args.smoke:
        os.environ["MCT_BENCH_SMOKE"] = "1"
        args.runs, args.tokens = 1, 8
    if args.worker:
        worker(args)
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model_dir or Path(scratch) / "smollm2-135m-shape"
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                f"from bench.cpu_speed import build_model; from pathlib import Path; build_model(Path({str(folder)!r}))",
            ],
            check=True,
        )
        figures = report(folder, args.runs, args.tokens)
        if args.quantized:
            for bits in (4, 8):
                quantized = build_quantized(folder, bits)
                ratios = report(quantized, args.runs, args.tokens, QUANTIZED_CONFIGS, label=f"q{bits} ")
                figures.update({f"q{bits}_{name}": value for name, value in ratios.items()})
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

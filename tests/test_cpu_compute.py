"""The CPU's speed path: the BLAS loaded before MLX, the dtype a model computes in, and what the user sees of both.

A process loads its BLAS once, so every case that loads one runs in its own Python process.
Speed itself is measured by bench/cpu_speed.py, not here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_chat_tui.engine.blas import BLAS_ENV, INSTALL_HINT, blas_in_use
from mcp_chat_tui.engine.compute import ComputeChoice, ModelFacts, decide
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from tests.models import build_tiny_model

ROOT = Path(__file__).resolve().parents[1]
DEMO_MODEL = ROOT / "mcp_chat_tui" / "demo" / "model"
GB = 1_000_000_000


def python(code: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (its own BLAS), from the checkout."""
    environment = {k: v for k, v in os.environ.items() if k != BLAS_ENV} | (env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def reference_blas() -> Path:
    """The BLAS bundled with MLX's Linux wheel: a real library with ``cblas_sgemm`` to put where a finder looks."""
    import importlib.util

    origin = Path(importlib.util.find_spec("mlx").submodule_search_locations[0]).parent
    found = sorted(origin.glob("mlx*.libs/libblas*.so*"))
    if not found:
        pytest.skip("no BLAS bundled with MLX here (not the Linux CPU wheel)")
    return found[0]


def choose_under(root: Path, env: dict[str, str] | None = None) -> dict:
    """``load_blas()`` in a new process whose system root and pip folder are inside ``root``."""
    code = f"""
        import json, sys
        from pathlib import Path
        import mcp_chat_tui.engine.blas as blas
        blas.SYSTEM_ROOT = Path({str(root)!r})
        blas.pip_lib_folders = lambda: [Path({str(root / "pip")!r})]
        choice = blas.load_blas()
        import mlx.core as mx
        a = mx.ones((64, 64))
        assert (a @ a)[0, 0].item() == 64.0
        print(json.dumps({{"name": choice.name, "path": choice.path, "reason": choice.reason, "hint": choice.hint}}))
    """
    run = python(code, env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def place(library: Path, root: Path, relative: str) -> Path:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(library, target)
    return target


# -- finding the BLAS -----------------------------------------------------------------------------

DEBIAN = "usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64", reason="Linux x86_64 paths")
@pytest.mark.parametrize(
    "relative",
    [DEBIAN, "usr/lib64/libopenblasp.so.0", "usr/lib64/libopenblas_pthreads.so.0", "usr/lib/libopenblas.so.0"],
    ids=["debian", "fedora", "opensuse", "arch"],
)
def test_the_systems_openblas_is_found_where_each_distribution_puts_it(tmp_path, relative):
    placed = place(reference_blas(), tmp_path, relative)
    assert choose_under(tmp_path) == {"name": "OpenBLAS", "path": str(placed), "reason": "", "hint": None}


def test_the_systems_openblas_comes_before_mkl_from_pip_which_is_used_without_it(tmp_path):
    mkl = place(reference_blas(), tmp_path, "pip/libmkl_rt.so.2")
    assert choose_under(tmp_path) == {"name": "MKL", "path": str(mkl), "reason": "", "hint": None}
    openblas = place(reference_blas(), tmp_path, DEBIAN)
    assert choose_under(tmp_path)["path"] == str(openblas)


def test_a_library_without_cblas_sgemm_is_passed_over(tmp_path):
    gfortran = next(reference_blas().parent.glob("libgfortran*.so*"))  # loads, but is no BLAS
    place(gfortran, tmp_path, DEBIAN)
    mkl = place(reference_blas(), tmp_path, "pip/libmkl_rt.so.2")
    assert choose_under(tmp_path)["path"] == str(mkl)


def test_none_found_says_what_to_install(tmp_path):
    choice = choose_under(tmp_path)
    assert (choice["path"], choice["reason"]) == (None, "none found")
    assert "apt install libopenblas0-pthread" in choice["hint"] and "pip install" in choice["hint"]


@pytest.mark.parametrize("value", ["none", "off", "NONE"])
def test_the_environment_turns_it_off(tmp_path, value):
    place(reference_blas(), tmp_path, DEBIAN)
    choice = choose_under(tmp_path, {BLAS_ENV: value})
    assert choice["path"] is None and "turned off" in choice["reason"] and choice["hint"] is None


def test_the_environment_names_a_library(tmp_path):
    library = place(reference_blas(), tmp_path, "elsewhere/libblas.so.3")
    assert choose_under(tmp_path, {BLAS_ENV: str(library)})["path"] == str(library)
    missing = choose_under(tmp_path, {BLAS_ENV: str(tmp_path / "nothing.so")})
    assert missing["path"] is None and "cannot be loaded" in missing["reason"]


def test_loading_is_done_once_and_never_after_mlx():
    run = python(
        """
        import mlx.core
        from mcp_chat_tui.engine.blas import load_blas
        first = load_blas()
        assert load_blas("auto") is first and load_blas("none") is first
        print(first.reason)
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "mlx.core was imported before the BLAS could be loaded"


def test_the_tests_load_the_blas_before_mlx():
    assert blas_in_use() is not None and "imported before" not in blas_in_use().reason


def test_nothing_imports_mlx_before_the_entry_point_loads_the_blas():
    run = python("import sys, mcp_chat_tui.cli.main; print('mlx.core' in sys.modules)")
    assert run.stdout.strip() == "False", run.stderr


# -- what the user sees ---------------------------------------------------------------------------


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return python(f"import sys; from mcp_chat_tui.cli.main import main; sys.exit(main({list(args)!r}))", env)


def test_version_names_the_blas_and_the_compute_dtype(tmp_path):
    off = cli("--version", env={BLAS_ENV: "none"})
    assert off.returncode == 0, off.stderr
    lines = off.stdout.splitlines()
    assert lines[0].startswith("mcp-chat-tui ") and "mlx " in lines[0]
    assert lines[1] == f"BLAS: MLX's reference BLAS (turned off by {BLAS_ENV}=none or --blas none)"
    assert lines[2].startswith("compute on the CPU: float32 for ")
    library = place(reference_blas(), tmp_path, "lib/libblas.so.3")
    chosen = cli("--blas", str(library), "--version")
    assert chosen.stdout.splitlines()[1] == f"BLAS: libblas.so.3 ({library})"
    flag_off = cli("--blas", "none", "--version")
    assert "turned off" in flag_off.stdout.splitlines()[1]


HINT_AFTER_LOAD = """
    import asyncio, sys
    from pathlib import Path
    import mcp_chat_tui.engine.blas as blas
    blas.SYSTEM_ROOT = Path(sys.argv[1])
    blas.pip_lib_folders = lambda: []
    from mcp_chat_tui.cli.chat import _load_and_start, make_engine
    from mcp_chat_tui.cli.args import build_parser
    from mcp_chat_tui.servers import ServerHub
    from rich.console import Console

    async def main():
        engine = make_engine(build_parser().parse_args([sys.argv[2], "--plain"]), sys.argv[2])
        print("made", file=sys.stderr)  # nothing is said before the model is known to run on the CPU
        async with ServerHub([]) as hub:
            await _load_and_start(engine, hub, sys.argv[2], 0, Console(stderr=True, quiet=True))
        await engine.close()

    asyncio.run(main())
"""


def hint_lines(model: Path, system_root: Path, env: dict[str, str] | None = None) -> list[str]:
    """What --plain's start says on stderr about the BLAS, loading ``model`` where no BLAS is found."""
    environment = {k: v for k, v in os.environ.items() if k != BLAS_ENV} | (env or {})
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(HINT_AFTER_LOAD), str(system_root), str(model)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert lines[:1] == ["made"], lines  # nothing before: the hint comes once the model is loaded
    return lines[1:]


def test_a_real_model_on_the_cpu_without_a_fast_blas_says_how_to_get_one_once(tmp_path, tiny_model):
    assert hint_lines(tiny_model, tmp_path) == [INSTALL_HINT]
    assert "[mkl]" in INSTALL_HINT and "libopenblas0-pthread" in INSTALL_HINT
    assert hint_lines(tiny_model, tmp_path, {BLAS_ENV: "none"}) == []  # MLX's own BLAS, asked for


def test_the_demo_model_needs_no_fast_blas_and_says_nothing_about_it(tmp_path):
    """Before: every MLX engine printed the hint, the 1M-parameter demo's too (the quick start's first run)."""
    assert hint_lines(DEMO_MODEL, tmp_path) == []


# -- the dtype the model computes in --------------------------------------------------------------


def facts(weights: str, cast: int = GB, dense: int = 0, on_cpu: bool = True, available: int | None = 16 * GB):
    floating = "float16" if weights.endswith("-bit") else weights
    return ModelFacts(weights, floating, cast, dense or cast, on_cpu, available)


@pytest.mark.parametrize("weights", ["float16", "bfloat16"])
def test_half_precision_weights_compute_in_float32_on_the_cpu(weights):
    assert decide(facts(weights), "auto") == ComputeChoice(weights, "float32")


@pytest.mark.parametrize("weights", ["4-bit", "8-bit"])
def test_quantized_weights_are_made_dense_float32_when_memory_allows(weights):
    assert decide(facts(weights, dense=4 * GB), "auto") == ComputeChoice(weights, "float32", dense=True)
    scales_only = decide(facts(weights, cast=GB // 10, dense=12 * GB), "auto")
    assert scales_only == ComputeChoice(weights, "float32", note="dense float32 needs 12.0 GB more memory")
    assert scales_only.label() == f"{weights}, float32: dense float32 needs 12.0 GB more memory"


def test_float32_weights_stay_as_they_are():
    assert decide(facts("float32", cast=0), "auto") == ComputeChoice("float32", "float32")


def test_on_a_gpu_the_stored_dtype_is_kept():
    assert decide(facts("float16", on_cpu=False), "auto") == ComputeChoice("float16", "float16")
    assert decide(facts("4-bit", on_cpu=False), "auto") == ComputeChoice("4-bit", "float16")


def test_without_the_memory_for_float32_the_stored_dtype_is_kept_and_said():
    choice = decide(facts("bfloat16", cast=3 * GB, available=4 * GB), "auto")
    assert choice == ComputeChoice("bfloat16", "bfloat16", note="float32 needs 3.0 GB more memory")
    assert choice.label() == "bfloat16: float32 needs 3.0 GB more memory"
    assert decide(facts("float16", cast=2 * GB, available=4 * GB), "auto").dtype == "float32"  # half of it may go


def test_the_setting_overrides_the_choice():
    assert decide(facts("float16"), "stored").dtype == "float16"
    assert decide(facts("float32", cast=0), "bfloat16").dtype == "bfloat16"
    assert decide(facts("4-bit", on_cpu=False), "float32") == ComputeChoice("4-bit", "float32", dense=True)


def test_labels_say_what_was_cast():
    assert ComputeChoice("float16", "float32").label() == "float32 from float16"
    assert ComputeChoice("float32", "float32").label() == "float32"
    assert ComputeChoice("4-bit", "float32").label() == "4-bit, float32"
    assert ComputeChoice("4-bit", "float32", dense=True).label() == "float32 from 4-bit"


@pytest.fixture(scope="session")
def half_models(tmp_path_factory, tiny_model) -> dict[str, Path]:
    """The tiny model stored as float16, and quantized to 4 and 8 bits, with mlx-lm's own converter."""
    from mlx_lm import convert

    base = tmp_path_factory.getbasetemp()
    folders = {"float16": base / "tiny-f16", "4-bit": base / "tiny-q4", "8-bit": base / "tiny-q8"}
    if not (folders["float16"] / "config.json").exists():
        wide = build_tiny_model(base / "tiny-wide", hidden_size=128, intermediate_size=256)  # groups of 64 fit
        convert(str(wide), str(folders["float16"]), dtype="float16")
        for bits in (4, 8):  # from the float16 folder: float16 scales, as published quantized models have
            convert(
                str(folders["float16"]),
                str(folders[f"{bits}-bit"]),
                quantize=True,
                q_bits=bits,
                q_group_size=64,
                dtype="float16",
            )
    return folders


@pytest.mark.parametrize(
    ("kind", "setting", "label", "dtype"),
    [
        ("float16", "auto", "float32 from float16", "float32"),
        ("float16", "stored", "float16", "float16"),
        ("4-bit", "auto", "float32 from 4-bit", "float32"),
        ("8-bit", "auto", "float32 from 8-bit", "float32"),
        ("4-bit", "stored", "4-bit, float16", "float16"),
    ],
)
async def test_the_engine_casts_at_load_and_says_so(half_models, kind, setting, label, dtype):
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten

    engine = MlxEngine(str(half_models[kind]), max_tokens=4, compute_dtype=setting)
    await engine.load()
    try:
        floating = {
            str(v.dtype) for _, v in tree_flatten(engine._model.parameters()) if mx.issubdtype(v.dtype, mx.floating)
        }
        assert floating == {f"mlx.core.{dtype}"}
        quantized = [m for _, m in engine._model.named_modules() if isinstance(m, nn.QuantizedLinear)]
        assert bool(quantized) == label.startswith(f"{kind},"), "quantized layers are made dense exactly when said"
        assert engine.compute_label == f"{label} · {blas_in_use().name}"
        events = [e async for e in engine.stream([{"role": "user", "content": "hi"}])]
        assert events[-1].finish_reason == "length"
    finally:
        await engine.close()


# -- the same tokens with and without the optimized BLAS ------------------------------------------

GREEDY = """
    import asyncio, json, sys
    from mcp_chat_tui.engine.blas import load_blas
    from mcp_chat_tui.engine.mlx_engine import MlxEngine
    from mcp_chat_tui.engine.events import Stats

    async def main():
        engine = MlxEngine(sys.argv[1], max_tokens=int(sys.argv[2]))
        await engine.load()
        messages = [{"role": "user", "content": "What is 12 * 7? Then tell me the time in Tokyo."}]
        events = [e async for e in engine.stream(messages)]
        generated = [e for e in events if isinstance(e, Stats)][0].generated_tokens
        print(json.dumps({"tokens": list(engine.cached_tokens), "generated": generated,
                          "blas": load_blas().path is not None, "compute": engine.compute_label}))
        await engine.close()

    asyncio.run(main())
"""


def greedy_tokens(model: Path, max_tokens: int, env: dict[str, str]) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(GREEDY), str(model), str(max_tokens)],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != BLAS_ENV} | env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["demo", "float16"])
def test_greedy_output_is_the_same_token_for_token_with_and_without_the_optimized_blas(which, half_models):
    if blas_in_use() is None or blas_in_use().path is None:
        pytest.skip("no optimized BLAS on this machine to compare with MLX's own")
    model = DEMO_MODEL if which == "demo" else half_models["float16"]
    optimized = greedy_tokens(model, 64, {})
    reference = greedy_tokens(model, 64, {BLAS_ENV: "none"})
    assert optimized["blas"] and not reference["blas"]
    assert optimized["compute"].startswith("float32 from float16")
    assert optimized["generated"] > 0
    assert optimized["tokens"] == reference["tokens"]


async def test_the_status_bar_names_the_compute_dtype_and_the_blas():
    from mcp_chat_tui.agent import ApprovalPolicy
    from tests.ui_helpers import SIZE, make_app, wait_ready

    app = make_app(MlxEngine(str(DEMO_MODEL)), policy=ApprovalPolicy("ask"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        line = app.status_bar.render().plain
        assert line.startswith(f"{DEMO_MODEL} (float32 from float16 · {blas_in_use().name})  ·  ready"), line

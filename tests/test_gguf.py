"""A GGUF file is a model: converted once into an MLX folder (engine/gguf.py), found for ``ollama:NAME``.

The GGUF files are written here from the demo model as llama.cpp's converter writes them
(tests/gguf_files.py), so the converted folder can be checked against the folder it came from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter
from gguf.quants import dequantize, quantize

from mcp_chat_tui.core.paths import bundled_path
from mcp_chat_tui.engine.events import EngineError, LoadProgress
from mcp_chat_tui.engine.gguf import _affine, converted_arrays, gguf_folder, is_gguf_file
from mcp_chat_tui.engine.loading import resolve_model
from mcp_chat_tui.engine.ollama import ollama_gguf
from tests import cli_in_process
from tests.gguf_files import DEMO_MODEL, llama_permute, write_gguf

Q = GGMLQuantizationType
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate arithmetic",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
        },
    }
]
QUESTION = [{"role": "user", "content": "What is 17 times 23?"}]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MCP_CHAT_TUI_CACHE_DIR", str(cache))
    return cache


def greedy(folder: Path, tokens: int = 40) -> tuple[list[int], str]:
    from mlx_lm import generate, load

    model, tokenizer = load(str(folder))
    prompt = tokenizer.apply_chat_template(QUESTION, tools=TOOLS, add_generation_prompt=True)
    return list(prompt), generate(model, tokenizer, prompt, max_tokens=tokens)


@pytest.mark.parametrize(
    ("architecture", "kind"),
    [("qwen2", Q.F32), ("qwen2", Q.F16), ("qwen2", Q.Q8_0), ("llama", Q.F16)],
)
def test_a_converted_gguf_gives_the_prompt_and_greedy_reply_of_the_model_it_came_from(
    tmp_path: Path, architecture: str, kind: GGMLQuantizationType
) -> None:
    reports: list[LoadProgress] = []
    path = write_gguf(tmp_path / f"demo-{architecture}-{kind.name}.gguf", architecture=architecture, matrix_type=kind)
    folder = resolve_model(str(path), reports.append)
    assert greedy(folder) == greedy(DEMO_MODEL)
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == architecture
    assert ("quantization" in config) == (kind == Q.Q8_0)
    converting = [r for r in reports if r.stage == "convert"]
    assert converting[-1].bytes_done == converting[-1].bytes_total == path.stat().st_size - _header_bytes(path)
    assert [r.bytes_done for r in converting] == sorted(r.bytes_done for r in converting)


def _header_bytes(path: Path) -> int:
    reader = GGUFReader(path)
    return path.stat().st_size - sum(int(t.n_bytes) for t in reader.tensors)


def test_the_rebuilt_tokenizer_splits_text_as_the_models_own(tmp_path: Path) -> None:
    """Including the tokens the demo model added whole, spaces and all (" * ", "17")."""
    from mcp_chat_tui.engine.loading import load_tokenizer

    folder = gguf_folder(write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16), lambda progress: None, weights=False)
    ours, original = load_tokenizer(folder), load_tokenizer(DEMO_MODEL)
    texts = [
        "What is 12 * 7?",
        "345 + 89 - 2 / 4",
        "convert 5 km to miles",
        "Zürich ☕ 東京",
        "<|im_start|>user\nhi<|im_end|>",
    ]
    for text in texts:
        assert ours.encode(text, add_special_tokens=False) == original.encode(text, add_special_tokens=False), text
    assert set(ours.eos_token_ids) >= set(original.eos_token_ids)  # and <|endoftext|>, as llama.cpp stops at it too


def test_a_converted_folder_is_reused_and_a_changed_file_is_converted_again(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16)
    first = gguf_folder(path, lambda progress: None)
    reports: list[LoadProgress] = []
    assert gguf_folder(path, reports.append) == first
    assert reports == []  # nothing converted the second time
    write_gguf(path, matrix_type=Q.Q8_0)
    second = gguf_folder(path, reports.append)
    assert second != first and any(r.stage == "convert" for r in reports)


def test_the_tokenizer_only_folder_is_completed_with_weights_when_asked(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16)
    folder = gguf_folder(path, lambda progress: None, weights=False)
    assert (folder / "tokenizer.json").exists() and not list(folder.glob("*.safetensors"))
    assert gguf_folder(path, lambda progress: None) == folder
    assert list(folder.glob("model-*.safetensors"))


@pytest.mark.parametrize("kind", [Q.Q4_0, Q.Q4_1, Q.Q8_0])
def test_types_mlx_reads_stay_quantized_and_give_the_files_values(kind: GGMLQuantizationType) -> None:
    rng = np.random.default_rng(7)
    weights = rng.normal(0, 0.05, (64, 96)).astype(np.float32)
    tensor = _tensor(weights, kind)
    packed, scales, biases = _affine(tensor)
    ours = mx.dequantize(
        mx.array(packed), mx.array(scales), mx.array(biases), group_size=32, bits=8 if kind == Q.Q8_0 else 4
    )
    theirs = dequantize(tensor.data, tensor.tensor_type)
    scale = np.abs(theirs).max()
    assert np.abs(np.array(ours.astype(mx.float32)) - theirs).max() <= 2e-3 * scale


@pytest.mark.parametrize("kind", [Q.Q4_K, Q.Q5_K, Q.Q6_K, Q.Q5_0])
def test_other_types_are_made_dense_with_the_files_values(kind: GGMLQuantizationType) -> None:
    from gguf.constants import GGML_QUANT_SIZES

    block_values, block_bytes = GGML_QUANT_SIZES[kind]
    raw = np.random.default_rng(3).integers(0, 256, (8, 512 // block_values * block_bytes), dtype=np.uint8)
    tensor = _tensor(raw, kind)  # any bytes make blocks of these types (the odd scale is inf or NaN)
    config = {"model_type": "qwen2"}
    (array,) = converted_arrays(tensor, "model.layers.0.mlp.up_proj.weight", config, np.float32).values()
    assert array.shape == (8, 512)
    assert np.array_equal(array, dequantize(tensor.data, tensor.tensor_type), equal_nan=True)


def test_llamas_query_rows_are_put_back_in_order() -> None:
    weights = np.arange(8 * 16 * 3, dtype=np.float32).reshape(8 * 16, 3)
    tensor = _tensor(llama_permute(weights, 8), Q.F32)
    config = {"model_type": "llama", "num_attention_heads": 8, "num_key_value_heads": 2}
    (array,) = converted_arrays(tensor, "model.layers.0.self_attn.q_proj.weight", config, np.float32).values()
    assert np.array_equal(array, weights)


def _tensor(weights: np.ndarray, kind: GGMLQuantizationType, path: Path | None = None):
    """One tensor of ``kind`` as the GGUF reader gives it (written to a file and read back)."""
    import tempfile

    folder = Path(tempfile.mkdtemp())
    file = path or folder / "one.gguf"
    writer = GGUFWriter(str(file), "qwen2")
    if kind in (Q.F32, Q.F16):
        writer.add_tensor("t", weights.astype(np.float32 if kind == Q.F32 else np.float16))
    elif weights.dtype == np.uint8:  # the blocks' bytes themselves
        writer.add_tensor("t", weights, raw_dtype=kind)
    else:
        writer.add_tensor("t", quantize(weights, kind), raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return GGUFReader(file).tensors[0]


def test_an_architecture_it_cannot_convert_is_named(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16)
    data = path.read_bytes().replace(b"qwen2.", b"gemm2.").replace(b"qwen2", b"gemm2", 1)
    other = tmp_path / "other.gguf"
    other.write_bytes(data)
    with pytest.raises(EngineError, match="architecture is 'gemm2'.*qwen2, qwen3, llama"):
        gguf_folder(other, lambda progress: None)


@pytest.mark.parametrize("content", [b"", b"GGUF\x03\x00\x00\x00", b"not a model at all" * 10])
def test_a_file_that_is_not_a_readable_gguf_says_so(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(EngineError, match="broken.gguf"):
        resolve_model(str(path), lambda progress: None)


def test_a_missing_gguf_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="no such GGUF file"):
        resolve_model(str(tmp_path / "absent.gguf"), lambda progress: None)


def test_a_conversion_cut_short_leaves_no_folder_and_its_remains_are_removed(tmp_path: Path, cache_dir: Path) -> None:
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16)
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from mcp_chat_tui.engine.gguf import gguf_folder\n"
        "def report(progress):\n"
        "    if progress.bytes_done: os._exit(9)\n"  # dies in the middle of writing the weights
        f"gguf_folder(Path({str(path)!r}), report)\n"
    )
    env = {**os.environ, "MCP_CHAT_TUI_CACHE_DIR": str(cache_dir)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 9
    left = list((cache_dir / "gguf").iterdir())
    assert left and all(p.name.startswith(".") for p in left)  # only a temporary folder, never a finished-looking one
    folder = gguf_folder(path, lambda progress: None)
    assert [p for p in (cache_dir / "gguf").iterdir()] == [folder]


def test_a_gguf_without_its_extension_is_known_by_its_magic(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "blob", matrix_type=Q.F16)
    assert is_gguf_file(path) and not is_gguf_file(DEMO_MODEL / "config.json")
    assert (resolve_model(str(path), lambda progress: None) / "config.json").exists()


# -- ollama:NAME[:TAG] -----------------------------------------------------------------------------------


def _pull(models: Path, parts: list[str], tag: str, blob: bytes) -> str:
    digest = "ab" * 32
    (models / "blobs").mkdir(parents=True, exist_ok=True)
    (models / "blobs" / f"sha256-{digest}").write_bytes(blob)
    manifest = models.joinpath("manifests", *parts, tag)
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "cd" * 32},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return digest


def test_ollama_names_find_the_model_blob(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "ollama"
    monkeypatch.setenv("OLLAMA_MODELS", str(models))
    digest = _pull(models, ["registry.ollama.ai", "library", "qwen2.5"], "0.5b", b"GGUF")
    assert ollama_gguf("ollama:qwen2.5:0.5b") == models / "blobs" / f"sha256-{digest}"
    _pull(models, ["registry.ollama.ai", "library", "tiny"], "latest", b"GGUF")
    assert ollama_gguf("ollama:tiny").name == f"sha256-{digest}"
    _pull(models, ["registry.ollama.ai", "someone", "thing"], "latest", b"GGUF")
    assert ollama_gguf("ollama:someone/thing").exists()


def test_an_ollama_model_not_pulled_says_how_to_pull_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    with pytest.raises(EngineError, match="ollama pull qwen3:4b"):
        ollama_gguf("ollama:qwen3:4b")
    with pytest.raises(EngineError, match="expected ollama:NAME"):
        ollama_gguf("ollama:../../etc:passwd")


def test_an_ollama_model_loads_as_its_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "ollama"
    monkeypatch.setenv("OLLAMA_MODELS", str(models))
    _pull(models, ["registry.ollama.ai", "library", "demo"], "latest", write_gguf(tmp_path / "d.gguf").read_bytes())
    assert greedy(resolve_model("ollama:demo", lambda progress: None)) == greedy(DEMO_MODEL)


# -- through the app ---------------------------------------------------------------------------------------


def test_the_app_answers_through_a_gguf_file_as_through_the_folder_it_came_from(
    tmp_path: Path, cache_dir: Path
) -> None:
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=Q.F16)
    env = {**os.environ, "MCP_CHAT_TUI_CACHE_DIR": str(cache_dir), "MCP_CHAT_TUI_DATA_DIR": str(tmp_path / "data")}

    def ask(model: str) -> dict:
        command = [model, "--mcp-config", str(bundled_path("mcp.json"))]
        command += ["--engine", "mlx", "--yes", "--no-save", "--json", "-p", "convert 5 km to miles"]
        done = cli_in_process.run_cli(command, cwd=tmp_path, env=env)  # in this process: its report is checked
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    from_gguf, from_folder = ask(str(path)), ask(str(DEMO_MODEL))
    assert from_gguf["answer"] == from_folder["answer"]
    assert [c["arguments"] for c in from_gguf["calls"]] == [c["arguments"] for c in from_folder["calls"]]
    assert from_gguf["calls"], "the demo model calls the calculator"

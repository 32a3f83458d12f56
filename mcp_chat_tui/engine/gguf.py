"""A GGUF file (llama.cpp, Ollama, LM Studio) as a model: converted once into an MLX folder in the cache.

The folder holds what mlx-lm loads: ``config.json`` from the file's metadata, the weights as
safetensors (Q4_0, Q4_1 and Q8_0 kept quantized, in MLX's affine layout; every other type
dequantized), the tokenizer and chat template rebuilt from ``tokenizer.*`` metadata, and a
``generation_config.json`` naming every end-of-turn token. A finished folder is reused; a
conversion cut short leaves only a temporary folder, removed next time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_chat_tui.core.files import process_alive
from mcp_chat_tui.core.paths import user_cache_dir
from mcp_chat_tui.engine.events import EngineError, LoadProgress

Report = Callable[[LoadProgress], None]

CONVERTER_VERSION = "2"  # part of a folder's name: a change to what conversion writes makes new folders
ARCHITECTURES = ("qwen2", "qwen3", "llama")  # GGUF general.architecture values this converter reads
_SHARD_BYTES = 2 << 30
_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
# Tokens that end a turn in the common chat formats (ChatML, Llama 3, Phi, Gemma, Mistral, plain).
END_OF_TURN_TEXTS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<end_of_turn>", "</s>")


def is_gguf(name: str) -> bool:
    """A model named by a GGUF file (the file need not exist yet: the error says so)."""
    return name.lower().endswith(".gguf")


def is_gguf_file(path: Path) -> bool:
    """A file that starts with GGUF's magic (an Ollama blob has no extension)."""
    try:
        with path.open("rb") as file:
            return file.read(4) == b"GGUF"
    except OSError:
        return False


def gguf_folder(path: Path, report: Report, *, weights: bool = True) -> Path:
    """The MLX folder converted from the GGUF file at ``path`` (converted now if the cache has none).
    ``weights=False`` writes only the tokenizer, template and config (for an engine that reads the
    GGUF's weights itself)."""
    path = path.expanduser()
    if not path.is_file():
        raise EngineError(f"cannot load model '{path}': no such GGUF file")
    folder = user_cache_dir() / "gguf" / f"{_safe_stem(path)}-{file_key(path)}"
    if (folder / "config.json").exists() and (not weights or _has_weights(folder)):
        return folder
    reader = _read(path)
    architecture = _field(reader, "general.architecture")
    if architecture not in ARCHITECTURES:
        raise EngineError(
            f"cannot load model '{path.name}': its architecture is '{architecture}', and mcp-chat-tui converts "
            f"only {', '.join(ARCHITECTURES)} GGUF files (an MLX model folder or a Hugging Face repo of it will load)"
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(folder)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.{os.getpid()}.", suffix=".tmp", dir=folder.parent))
    try:
        if folder.exists():  # the tokenizer part is there already: add the weights beside it
            shutil.copytree(folder, work, dirs_exist_ok=True)
        else:
            write_tokenizer(reader, work)
            write_config(reader, work)
        if weights:
            write_weights(reader, work, report, path.name)
        _publish(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def file_key(path: Path) -> str:
    """Twelve hex digits naming this file's content: its size, its first and last MiB, the converter."""
    digest = hashlib.sha256(CONVERTER_VERSION.encode())
    size = path.stat().st_size
    digest.update(str(size).encode())
    with path.open("rb") as file:
        digest.update(file.read(1 << 20))
        file.seek(max(0, size - (1 << 20)))
        digest.update(file.read(1 << 20))
    return digest.hexdigest()[:12]


# -- reading the file -------------------------------------------------------------------------------


def _read(path: Path) -> Any:
    try:
        from gguf import GGUFReader
    except ImportError:  # pragma: no cover - gguf is a dependency
        raise EngineError("cannot read GGUF files: the 'gguf' package is missing (reinstall mcp-chat-tui)") from None
    try:
        return GGUFReader(path)
    except (ValueError, OSError, IndexError, KeyError) as exc:
        raise EngineError(f"cannot load model '{path.name}': not a readable GGUF file ({exc})") from None


def _field(reader: Any, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def metadata(reader: Any) -> dict[str, Any]:
    """Every metadata key but the large token arrays, read into Python values."""
    big = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.scores")
    return {key: field.contents() for key, field in reader.fields.items() if key not in big}


# -- config -----------------------------------------------------------------------------------------


def model_config(reader: Any) -> dict[str, Any]:
    """``config.json`` for mlx-lm from the file's ``{architecture}.*`` metadata."""
    arch = _field(reader, "general.architecture")

    def get(key: str, default: Any = None) -> Any:
        return _field(reader, f"{arch}.{key}", default)

    heads = get("attention.head_count")
    hidden = get("embedding_length")
    tensors = {t.name for t in reader.tensors}
    config: dict[str, Any] = {
        "model_type": arch,
        "hidden_size": hidden,
        "num_hidden_layers": get("block_count"),
        "intermediate_size": get("feed_forward_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": get("attention.head_count_kv", heads),
        "rms_norm_eps": get("attention.layer_norm_rms_epsilon", 1e-6),
        "rope_theta": get("rope.freq_base", 10000.0),
        "max_position_embeddings": get("context_length", 4096),
        "vocab_size": len(reader.fields["tokenizer.ggml.tokens"].data),
        "tie_word_embeddings": "output.weight" not in tensors,
        "head_dim": get("attention.key_length", hidden // heads),
    }
    if arch == "llama":
        config["attention_bias"] = "blk.0.attn_q.bias" in tensors
        config["mlp_bias"] = False
    scaling = _rope_scaling(reader, arch, config)
    if scaling is not None:
        config["rope_scaling"] = scaling
    missing = [key for key, value in config.items() if value is None]
    if missing:
        raise EngineError(
            f"the GGUF file lacks metadata mcp-chat-tui needs: {', '.join(f'{arch}.{k}' for k in missing)}"
        )
    return config


def _rope_scaling(reader: Any, arch: str, config: dict[str, Any]) -> dict[str, Any] | None:
    kind = _field(reader, f"{arch}.rope.scaling.type")
    factor = _field(reader, f"{arch}.rope.scaling.factor")
    original = _field(reader, f"{arch}.rope.scaling.original_context_length")
    freqs = next((t for t in reader.tensors if t.name == "rope_freqs.weight"), None)
    if freqs is not None:  # Llama 3.1 and later store the factors, not the parameters: find the ones that give them
        return _llama3_scaling(_dequantize(freqs), config, original)
    if kind in ("linear", "yarn") and factor and factor != 1:
        scaling = {"type": kind, "rope_type": kind, "factor": factor}
        if original:
            scaling["original_max_position_embeddings"] = original
        return scaling
    return None


def _llama3_scaling(factors: Any, config: dict[str, Any], original: int | None) -> dict[str, Any]:
    import numpy as np

    dims = config["head_dim"]
    base = config["rope_theta"]
    wavelengths = 2 * np.pi * base ** (np.arange(0, dims, 2, dtype=np.float64) / dims)
    for factor in (8.0, 32.0, 16.0, 4.0):
        for context in [original] if original else [8192, 4096]:
            low, high = 1.0, 4.0
            low_wavelength, high_wavelength = context / low, context / high
            smooth = (context / wavelengths - low) / (high - low)
            expected = np.where(
                wavelengths < high_wavelength,
                1.0,
                np.where(wavelengths > low_wavelength, factor, 1 / ((1 - smooth) / factor + smooth)),
            )
            if np.allclose(expected, np.asarray(factors, dtype=np.float64).ravel(), rtol=1e-3):
                return {
                    "rope_type": "llama3",
                    "factor": factor,
                    "low_freq_factor": low,
                    "high_freq_factor": high,
                    "original_max_position_embeddings": context,
                }
    raise EngineError("the GGUF file's rope_freqs are not Llama 3's: mcp-chat-tui cannot convert its rope scaling")


def write_config(reader: Any, folder: Path) -> None:
    (folder / "config.json").write_text(json.dumps(model_config(reader), indent=2), encoding="utf-8")


# -- tokenizer ----------------------------------------------------------------------------------------


def tokenizer_parts(reader: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(architecture, the tokenizer's vocabulary and merges, its config) as transformers' GGUF builders take them."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import _SPECIAL_TOKENS, GGUF_TOKENIZER_MAPPING

    architecture = _field(reader, "general.architecture")
    grouped = {
        group: {name: _field(reader, f"tokenizer.{key}") for key, name in renames.items()}
        for group, renames in GGUF_TOKENIZER_MAPPING.items()
    }
    vocabulary = {k: v for k, v in grouped["tokenizer"].items() if v is not None}
    config = {k: v for k, v in grouped["tokenizer_config"].items() if v is not None}
    if vocabulary.get("tokenizer_type") == "llama":
        config.setdefault("add_bos_token", True)  # what llama.cpp does for a sentencepiece vocabulary that says nothing
    tokens = vocabulary["tokens"]
    for name, key in _SPECIAL_TOKENS.items():
        token_id = _field(reader, f"tokenizer.ggml.{key}")
        config[name] = tokens[token_id] if token_id is not None and 0 <= token_id < len(tokens) else None
    return architecture, vocabulary, config


def write_tokenizer(reader: Any, folder: Path) -> None:
    """``tokenizer.json``, ``tokenizer_config.json`` (with the chat template) and ``generation_config.json``."""
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer

    architecture, vocabulary, config = tokenizer_parts(reader)
    try:
        if vocabulary.get("tokenizer_type") == "gpt2":
            backend, extra = _byte_level_tokenizer(vocabulary), {}
        else:
            backend, extra = convert_gguf_tokenizer(architecture, vocabulary)
    except (ValueError, KeyError) as exc:
        raise EngineError(f"cannot rebuild the GGUF file's tokenizer: {exc}") from None
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, **config, **extra)
    tokenizer.save_pretrained(str(folder))
    eos = end_of_turn_ids(reader, vocabulary["tokens"], vocabulary.get("token_type") or [])
    generation = {"eos_token_id": eos}
    bos = _field(reader, "tokenizer.ggml.bos_token_id")
    if bos is not None:
        generation["bos_token_id"] = bos
    (folder / "generation_config.json").write_text(json.dumps(generation, indent=2), encoding="utf-8")


def _byte_level_tokenizer(vocabulary: dict[str, Any]) -> Any:
    """A byte-level BPE tokenizer as transformers' GGUF builder makes it, except that control and
    user-defined tokens keep the text the file gives them: llama.cpp's converter writes them as plain
    text (`` * `` with its spaces), and they must stay the tokens of those ids, matched whole, as
    llama.cpp matches them (spelled in the byte alphabet, a token with a space is never found)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        add_gguf_special_tokens,
        get_merges,
        set_split_regex,
    )
    from transformers.models.gpt2.tokenization_gpt2 import GPT2Tokenizer

    spelling = bytes_to_unicode()
    alphabet = set(spelling.values())
    kinds = vocabulary.get("token_type") or []
    vocab: dict[str, int] = {}
    for index, token in enumerate(vocabulary["tokens"]):
        whole = index < len(kinds) and kinds[index] in (3, 4)  # CONTROL, USER_DEFINED
        spelled = token if whole or set(token) <= alphabet else "".join(spelling[b] for b in token.encode("utf-8"))
        vocab.setdefault(spelled, index)
    tokenizer = GPT2Tokenizer(vocab=vocab, merges=get_merges(vocabulary))
    tokenizer = add_gguf_special_tokens(tokenizer, vocabulary)
    return set_split_regex(tokenizer, vocabulary).backend_tokenizer


def end_of_turn_ids(reader: Any, tokens: list[str], token_types: list[int]) -> list[int]:
    """The ids that end a reply: the file's eos, eot and eom tokens, and every control token spelled as
    one of the usual end-of-turn markers (as llama.cpp gathers its end-of-generation list)."""
    ids = [_field(reader, f"tokenizer.ggml.{key}_token_id") for key in ("eos", "eot", "eom")]
    control = {3, 4}  # CONTROL, USER_DEFINED
    for index, (token, kind) in enumerate(zip(tokens, token_types, strict=False)):
        if kind in control and token in END_OF_TURN_TEXTS:
            ids.append(index)
    return sorted({i for i in ids if isinstance(i, int) and 0 <= i < len(tokens)})


# -- weights ------------------------------------------------------------------------------------------

_KEPT = {"Q4_0": 4, "Q4_1": 4, "Q8_0": 8}  # GGUF types MLX holds as they are (affine, groups of 32)


def hf_name(gguf_name: str) -> str | None:
    """The mlx-lm parameter name of a GGUF tensor (None for tensors mlx-lm computes itself)."""
    stem, _, kind = gguf_name.rpartition(".")
    if stem == "rope_freqs":
        return None
    if stem in _TOP_NAMES:
        return f"{_TOP_NAMES[stem]}.{kind}"
    parts = stem.split(".")
    if len(parts) == 3 and parts[0] == "blk" and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{kind}"
    raise EngineError(f"the GGUF file has a tensor mcp-chat-tui does not know: {gguf_name}")


def write_weights(reader: Any, folder: Path, report: Report, label: str) -> None:
    """Every tensor, converted, in safetensors shards of about 2 GB, reporting the file's bytes done."""
    import mlx.core as mx

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    total = sum(int(t.n_bytes) for t in reader.tensors)
    done, shard, shard_bytes, count, quantized = 0, {}, 0, 0, False
    dense = _dense_dtype(reader)
    report(LoadProgress("convert", 0, total, f"converting {label} to MLX (once)"))
    for tensor in reader.tensors:
        name = hf_name(tensor.name)
        if name is not None:
            for key, array in converted_arrays(tensor, name, config, dense).items():
                shard[key] = mx.array(array)
                shard_bytes += array.nbytes
                quantized = quantized or key.endswith(".scales")
        done += int(tensor.n_bytes)
        report(LoadProgress("convert", done, total, f"converting {label} to MLX (once)"))
        if shard_bytes >= _SHARD_BYTES:
            count += 1
            mx.save_safetensors(str(folder / f"part-{count}.safetensors"), shard, metadata={"format": "mlx"})
            shard, shard_bytes = {}, 0
    if config.get("attention_bias"):  # Llama with q, k, v biases: mlx-lm wants one for the output too
        for layer in range(int(config["num_hidden_layers"])):
            shard.setdefault(f"model.layers.{layer}.self_attn.o_proj.bias", mx.zeros((config["hidden_size"],)))
    if shard or not count:
        count += 1
        mx.save_safetensors(str(folder / f"part-{count}.safetensors"), shard, metadata={"format": "mlx"})
    for index in range(1, count + 1):  # the names mlx-lm looks for, once the count is known
        os.replace(folder / f"part-{index}.safetensors", folder / f"model-{index:05d}-of-{count:05d}.safetensors")
    if quantized:  # mlx-lm reads each layer's bits and group size from its arrays' shapes
        config["quantization"] = {"group_size": 32, "bits": 4}
        (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    report(LoadProgress("convert", total, total, f"converted {label}"))


def converted_arrays(tensor: Any, name: str, config: dict[str, Any], dense: Any) -> dict[str, Any]:
    """The arrays of one tensor under its mlx-lm name: ``weight``, ``scales`` and ``biases`` for a type
    kept quantized, else the dense array (Llama's query and key rows put back in Hugging Face order)."""
    kind = tensor.tensor_type.name
    rows = _llama_rows(name, config)
    if kind in _KEPT and name.endswith(".weight") and rows is None:
        weight, scales, biases = _affine(tensor)
        stem = name.removesuffix(".weight")
        return {name: weight, f"{stem}.scales": scales, f"{stem}.biases": biases}
    array = _dequantize(tensor)
    if rows is not None:
        array = _unpermute(array, rows)
    return {name: array.astype(dense)}


def _dequantize(tensor: Any) -> Any:
    import numpy as np
    from gguf.quants import dequantize

    return np.asarray(dequantize(tensor.data, tensor.tensor_type))


def _dense_dtype(reader: Any) -> Any:
    """What dequantized tensors are kept in: the file's own float type for its matrices, else float16."""
    import numpy as np

    kinds = {t.tensor_type.name for t in reader.tensors if len(t.shape) > 1}
    if "BF16" in kinds:
        from ml_dtypes import bfloat16  # comes with mlx-lm's dependencies

        return bfloat16
    if kinds == {"F32"}:
        return np.float32
    return np.float16


def _llama_rows(name: str, config: dict[str, Any]) -> int | None:
    """The head count whose rows llama.cpp's converter interleaved in this tensor (Llama's q and k)."""
    if config["model_type"] != "llama":
        return None
    if ".self_attn.q_proj." in name:
        return int(config["num_attention_heads"])
    if ".self_attn.k_proj." in name:
        return int(config["num_key_value_heads"])
    return None


def _unpermute(array: Any, heads: int) -> Any:
    """Undo the row order llama.cpp writes Llama's q and k in (pairs of halves of each head, interleaved)."""
    shape = array.shape
    return array.reshape(heads, shape[0] // heads // 2, 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


def _affine(tensor: Any) -> tuple[Any, Any, Any]:
    """A Q4_0, Q4_1 or Q8_0 tensor as MLX's affine quantization: packed uint32 weights, scales, biases.

    Each GGUF block holds 32 values and its scale (Q4_1: and minimum). MLX stores a group's values as
    unsigned integers ``q`` with ``value = scale * q + bias``: Q8_0's signed ``q`` is shifted by 128,
    Q4_0's ``q - 8`` becomes a bias of ``-8 * scale``, Q4_1's minimum is the bias. Exact, no rounding.
    """
    import numpy as np

    kind = tensor.tensor_type.name
    raw = np.asarray(tensor.data, dtype=np.uint8)
    rows = raw.shape[0]
    header = 4 if kind == "Q4_1" else 2
    block = header + (32 if kind == "Q8_0" else 16)
    blocks = raw.reshape(rows, -1, block)
    scale = blocks[..., :2].copy().view(np.float16)[..., 0]
    payload = blocks[..., header:]
    if kind == "Q8_0":
        values = payload.view(np.int8).astype(np.int16) + 128  # 0..255
        bias = -128 * scale.astype(np.float32)
        bits = 8
    else:
        low, high = payload & 0x0F, payload >> 4
        values = np.concatenate([low, high], axis=-1).astype(np.int16)  # element i, then i + 16
        if kind == "Q4_1":
            bias = blocks[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
        else:
            bias = -8 * scale.astype(np.float32)
        bits = 4
    values = values.reshape(rows, -1).astype(np.uint32)
    per_word = 32 // bits
    words = values.reshape(rows, -1, per_word)
    shifts = (np.arange(per_word, dtype=np.uint32) * bits)[None, None, :]
    packed = np.bitwise_or.reduce(words << shifts, axis=-1).astype(np.uint32)
    return packed, scale.astype(np.float16), bias.astype(np.float16)


def _has_weights(folder: Path) -> bool:
    return any(folder.glob("model-*.safetensors"))


def _publish(work: Path, folder: Path) -> None:
    """Put the finished folder in place (another process that finished first wins; its folder is the same)."""
    if folder.exists():  # a folder without weights, that this one completes
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.{os.getpid()}.", suffix=".old", dir=folder.parent))
        os.rename(folder, old / "folder")
        shutil.rmtree(old, ignore_errors=True)
    try:
        os.rename(work, folder)
    except OSError:
        if not (folder / "config.json").exists():
            raise


def _remove_stale_temporaries(folder: Path) -> None:
    """Folders a conversion cut short (a kill, a full disk) left behind: those of processes gone."""
    for stale in folder.parent.glob(f".{folder.name}.*"):
        try:
            pid = int(stale.name.rsplit(".", 3)[1])
        except (ValueError, IndexError):
            continue
        if not process_alive(pid):
            shutil.rmtree(stale, ignore_errors=True)


def _safe_stem(path: Path) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.stem)
    return stem[:80] or "model"

"""Write GGUF files as llama.cpp's converter does, from an MLX model folder (the demo model), with the
``gguf`` package: the tests' way to have real GGUF files of a known model without a download."""

from __future__ import annotations

import json
from pathlib import Path

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter, TokenType
from gguf.quants import quantize

from mcp_chat_tui.core.paths import package_path

DEMO_MODEL = package_path("demo", "model")
_LAYER = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def llama_permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """The row order llama.cpp's converter writes Llama's q and k in."""
    shape = weights.shape
    return weights.reshape(heads, 2, shape[0] // heads // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


def gguf_name(name: str) -> str:
    if name.startswith("model.layers."):
        _, _, index, rest = name.split(".", 3)
        module, _, kind = rest.rpartition(".")
        return f"blk.{index}.{_LAYER[module]}.{kind}"
    return {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}.get(
        name, name.replace("lm_head", "output")
    )


def write_gguf(
    path: Path,
    folder: Path = DEMO_MODEL,
    *,
    architecture: str | None = None,
    matrix_type: GGMLQuantizationType = GGMLQuantizationType.F32,
    chat_template: str | None = None,
) -> Path:
    """A GGUF file of the model in ``folder``: its weights (matrices stored as ``matrix_type``), its
    byte-level BPE tokenizer and chat template; ``architecture="llama"`` writes it as a Llama model
    (q and k rows permuted as llama.cpp does)."""
    config = json.loads((folder / "config.json").read_text())
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    arch = architecture or config["model_type"]
    writer = GGUFWriter(str(path), arch)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(config["rope_theta"])
    _write_tokenizer(writer, tokenizer, tokenizer_config, config, chat_template)
    weights = {k: np.array(v.astype(mx.float32)) for k, v in mx.load(str(next(folder.glob("*.safetensors")))).items()}
    for name, array in weights.items():
        if arch == "llama" and (".q_proj." in name or ".k_proj." in name):
            heads = config["num_attention_heads" if ".q_proj." in name else "num_key_value_heads"]
            array = llama_permute(array, heads)
        _add(writer, gguf_name(name), array, matrix_type if array.ndim == 2 else GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add(writer: GGUFWriter, name: str, array: np.ndarray, kind: GGMLQuantizationType) -> None:
    if kind == GGMLQuantizationType.F32:
        writer.add_tensor(name, array.astype(np.float32))
    elif kind == GGMLQuantizationType.F16:
        writer.add_tensor(name, array.astype(np.float16))
    else:
        writer.add_tensor(name, quantize(array.astype(np.float32), kind), raw_dtype=kind)


def _write_tokenizer(
    writer: GGUFWriter, tokenizer: dict, tokenizer_config: dict, config: dict, chat_template: str | None
) -> None:
    vocab = dict(tokenizer["model"]["vocab"])
    kinds: dict[int, TokenType] = {}
    for added in tokenizer.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
        kinds[added["id"]] = TokenType.CONTROL if added.get("special") else TokenType.USER_DEFINED
    size = config["vocab_size"]
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [TokenType.UNUSED] * size
    for token, index in vocab.items():
        tokens[index] = token
        types[index] = kinds.get(index, TokenType.NORMAL)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(vocab[tokenizer_config["eos_token"]])
    writer.add_pad_token_id(vocab[tokenizer_config["pad_token"]])
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template if chat_template is not None else tokenizer_config["chat_template"])

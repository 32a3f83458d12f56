"""Train the tiny bundled demo model, ``mcp_chat_tui/demo/model``.

The demo model is a toy: a ~1M-parameter qwen2-shaped model with its own small
byte-level BPE tokenizer, trained from scratch on synthetic conversations about
the six tools of the bundled demo MCP server (calculator, current_time,
convert_units, web_search, read_file, sleep). It exists so that the app runs
offline at once and so that tests can drive a whole turn (tool call, result,
answer) through the real MLX engine. It knows nothing beyond those tools and a
few greetings; for real use, load a real model.

Everything the model sees is what the app sends: the tools come from the real
demo server (started over stdio with the MCP SDK, in the server's listing
order, turned into ``ToolSpec.to_openai()``), every prompt is rendered by the
model's own chat template through mlx-lm's tokenizer wrapper with no system
prompt, and every tool result is a real output of the demo tool functions
(with the clock and ``asyncio.sleep`` patched so results vary and sleeping is
instant, and ``read_file`` reading from a scratch folder).

Retrain from scratch (from the repository root; deterministic for a given --seed; the defaults
are the recipe described below):

    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 \\
        python scripts/train_demo_model.py --steps 1600

That gives a model that picks the right tool (about 1,500 steps); calling it with the request's
own arguments and reading the result back took the shipped weights about ten times as many,
continued with ``--init`` as below.

The shipped weights come from runs continued one from another with ``--init``. The earlier runs
(seed 0, digits as single tokens; not recorded step by step) ended with 2,500 steps at
``--lr 2e-3``, 3,500 at ``--lr 1.5e-3`` and 1,700 at ``--lr 1e-3`` with 32,000 more
conversations. That model called the right tools with the right arguments for requests like
those it was trained on, but garbled the numbers it read back ("12 * 7 = 878484"). The last two
runs went on from it, each on fresh conversations; the first was stopped after 1,500 of its
3,000 steps, and its weights at that step are where the second began:

    LD_PRELOAD=... python scripts/train_demo_model.py --out /tmp/m2 --init mcp_chat_tui/demo/model \\
        --keep-tokenizer --number-tokens --denials --prompt-weight 0.25 --seed 5 \\
        --conversations 8000 --more-conversations 24000 --steps 3000 --lr 2e-3
    LD_PRELOAD=... python scripts/train_demo_model.py --init /tmp/m2 \\
        --keep-tokenizer --number-tokens --operator-tokens --denials --prompt-weight 0.25 --seed 6 \\
        --conversations 8000 --more-conversations 24000 --steps 3000 --lr 1.5e-3

What made the difference, as measured on this model:

- Numbers as whole tokens (``--number-tokens``): every two- and three-digit string is a token of
  its own, matched before the pre-tokenizer (transformers gives every qwen2 model a pre-tokenizer
  that splits each digit and ignores the file's own). Copying "434" out of "345 + 89 = 434" is
  then copying one token that is what it is, as "Tokyo" is, instead of finding each digit by its
  neighbours: with single digits, 1,500 more steps with answers weighted up, or with "repeat
  after me" requests, did not move the probabilities of the right digits.
- Loss on the prompt too (``--prompt-weight``): the user's request, the call's arguments and the
  tool's result repeat each other, so predicting the prompt is copying practice on every
  example, where the answer alone gives a few tokens of it.
- Operators with their spaces as whole tokens (``--operator-tokens``): " + " is one token, so
  after "345" the model copies " + " and then "89", each by what it is; with " ", "+", " " it had
  to tell one space from another by what came before it, and wrote "34589" or "345 + 68089".
- ``--keep-tokenizer`` keeps the earlier model's tokenizer (adding the new tokens, each starting
  as the mean of the earlier tokens of its text), so its weights carry over; ``--denials`` adds
  calls the user denied, answered as such.

The LD_PRELOAD is optional but makes training about 10x faster on Linux CPUs
(MLX's CPU wheel bundles a slow reference BLAS; Debian/Ubuntu package
``libopenblas0-pthread``). The script ends by evaluating the saved model with
greedy decoding through ``mlx_lm.load`` / ``mlx_lm.generate`` on held-out
requests, and ``--eval-only`` repeats just that evaluation.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "mcp_chat_tui" / "demo" / "model"
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_conversations import (  # noqa: E402
    DENIAL_SHARE,
    SEARCH_TOPICS,
    SEARCH_WORDS,
    TOOL_KINDS,
    Conversations,
    ToolRunner,
    demo_tools_openai,
    demo_zones,
    make_conversations,
)

from mcp_chat_tui.agent.turn import DENIED_MESSAGE  # noqa: E402

IM_START, IM_END, PAD = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
CALL_START, CALL_END = "<tool_call>", "</tool_call>"

# The chat template. Qwen-style turns; the tools block is one line per tool in a
# compact signature form because it sits in every prompt; assistant tool calls
# render as <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, which
# makes mlx-lm pick its json_tools parser (the template names tool_call.name).
CHAT_TEMPLATE = r"""{%- macro text(content) -%}
{%- if content is none -%}{%- elif content is string -%}{{ content }}{%- else -%}{%- for part in content -%}{%- if part.text is defined -%}{{ part.text }}{%- endif -%}{%- endfor -%}{%- endif -%}
{%- endmacro -%}
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- if tools or has_system -%}
{{- '<|im_start|>system\n' -}}
{%- if has_system -%}{{- text(messages[0].content) -}}{%- if tools -%}{{- '\n\n' -}}{%- endif -%}{%- endif -%}
{%- if tools -%}
{{- 'Tools:' -}}
{%- for tool in tools -%}
{%- set f = tool.function if tool.function is defined else tool -%}
{%- set params = f.parameters if f.parameters is defined and f.parameters else {} -%}
{%- set props = params.properties if params.properties is defined and params.properties else {} -%}
{%- set required = params.required if params.required is defined and params.required else [] -%}
{{- '\n' ~ f.name ~ '(' -}}
{%- for pname, p in props.items() -%}
{{- ', ' if not loop.first -}}{{- pname -}}
{%- if pname not in required and p.default is not defined -%}{{- '?' -}}{%- endif -%}
{{- ': ' -}}{%- if p.type is not defined -%}{{- 'any' -}}{%- elif p.type is string -%}{{- p.type -}}{%- else -%}{{- p.type | join('|') -}}{%- endif -%}
{%- if p.enum is defined -%}{{- ' in ' ~ (p.enum | tojson) -}}{%- endif -%}
{%- if p.default is defined -%}{{- ' = ' ~ (p.default | tojson) -}}{%- endif -%}
{%- endfor -%}
{{- ')' -}}{%- if f.description -%}{{- ': ' ~ f.description -}}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}
{%- if not loop.first -%}{{- '<|im_start|>system\n' ~ text(message.content) ~ '<|im_end|>\n' -}}{%- endif -%}
{%- elif message.role == 'assistant' -%}
{{- '<|im_start|>assistant\n' ~ text(message.content) -}}
{%- if message.tool_calls is defined and message.tool_calls -%}
{%- for call in message.tool_calls -%}
{%- set tool_call = call.function if call.function is defined else call -%}
{%- if not loop.first or text(message.content) -%}{{- '\n' -}}{%- endif -%}
{{- '<tool_call>\n{"name": ' ~ (tool_call.name | tojson) ~ ', "arguments": ' -}}
{%- if tool_call.arguments is string -%}{{- tool_call.arguments -}}{%- else -%}{{- tool_call.arguments | tojson -}}{%- endif -%}
{{- '}\n</tool_call>' -}}
{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>\n' -}}
{%- elif message.role == 'tool' -%}
{{- '<|im_start|>tool\n' ~ text(message.content) ~ '<|im_end|>\n' -}}
{%- else -%}
{{- '<|im_start|>' ~ message.role ~ '\n' ~ text(message.content) ~ '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"""

QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"""
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


# --------------------------------------------------------------------------- tokenizer and model files


# Two- and three-digit numbers as whole tokens (single digits stay BPE tokens), matched longest
# first from the left: "434" is one token, "69104" is "691" "04". Reading a number back is then
# copying tokens that are what they are, as words are, not digits found by their neighbours.
NUMBER_TOKENS = [f"{i:02d}" for i in range(100)] + [f"{i:03d}" for i in range(1000)]
# The arithmetic operators with the spaces around them, as one token each: "345 + 89" is then three
# tokens, each copied by what it is, where "345", " ", "+", " ", "89" asks the model to tell the
# spaces apart by what comes before them.
OPERATOR_TOKENS = [" + ", " - ", " * ", " / ", " = "]


def whole_tokens(numbers: bool, operators: bool) -> list[str]:
    return (NUMBER_TOKENS if numbers else []) + (OPERATOR_TOKENS if operators else [])


def train_tokenizer(texts: list[str], vocab_size: int, added: list[str] = ()):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    # Words, single digits and runs of other characters are separate pieces, and a word is the same
    # token after a space, a quote or a slash, so copying "Tokyo" or "12 * 7" from the request into
    # the JSON arguments is copying the same tokens.
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    special = [PAD, IM_START, IM_END]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    # Saved with exactly the normalizer and pre-tokenizer that transformers' Qwen2Tokenizer imposes on
    # every qwen2 model (transformers 5 ignores the file's own), so all loaders encode alike. The merges
    # learned above never join a word to what precedes it, so words still copy token for token.
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    from tokenizers import AddedToken

    tokenizer.add_tokens([AddedToken(CALL_START, normalized=False), AddedToken(CALL_END, normalized=False)])
    tokenizer.add_tokens([AddedToken(text, normalized=False) for text in added])
    return tokenizer


def build_tokenizer(
    conversations: list[list[dict]], tools: list[dict], vocab_size: int, out: Path, added: list[str] = ()
):
    """Train the BPE on the rendered conversations (so the tools block compresses), write it, load it back.

    A first tokenizer trained on the message texts only serves to render the template.
    """
    from mlx_lm.tokenizer_utils import load as load_tokenizer

    def plain(text: str) -> str:
        for marker in (PAD, IM_START, IM_END, CALL_START, CALL_END):
            text = text.replace(marker, "\n")
        return text

    contents = [
        json.dumps(m.get("tool_calls"), ensure_ascii=False) + str(m["content"]) for c in conversations for m in c
    ]
    first = train_tokenizer(contents + [json.dumps(tools)], vocab_size)
    write_tokenizer(first, out)
    write_config(out, first)
    wrapper = load_tokenizer(out)
    rendered = [plain(wrapper.apply_chat_template(c, tools=tools, tokenize=False)) for c in conversations]
    tokenizer = train_tokenizer(rendered, vocab_size, added)
    write_tokenizer(tokenizer, out)
    write_config(out, tokenizer)  # before loading: transformers picks the tokenizer class by model_type
    wrapper = load_tokenizer(out)
    assert wrapper.has_tool_calling
    for text in rendered[:200]:
        assert wrapper.encode(text, add_special_tokens=False) == tokenizer.encode(text).ids, "loaders disagree"
    for marker in (IM_START, IM_END, PAD, CALL_START, CALL_END):
        assert len(wrapper.encode(marker, add_special_tokens=False)) == 1, marker
    return tokenizer, wrapper


def reuse_tokenizer(source: Path, out: Path, added: list[str] = ()):
    """The tokenizer of an earlier model folder (to go on training its weights on new data), with
    the ``added`` tokens it lacks put at the end of the vocabulary."""
    import shutil

    from mlx_lm.tokenizer_utils import load as load_tokenizer
    from tokenizers import AddedToken, Tokenizer

    out.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if source.resolve() != out.resolve():
            shutil.copy2(source / name, out / name)
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    missing = [text for text in added if tokenizer.token_to_id(text) is None]
    if missing:
        tokenizer.add_tokens([AddedToken(text, normalized=False) for text in missing])
        tokenizer.save(str(out / "tokenizer.json"))
    write_config(out, tokenizer)
    return tokenizer, load_tokenizer(out)


def write_tokenizer(tokenizer, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": IM_END,
        "pad_token": PAD,
        "unk_token": None,
        "model_max_length": 4096,
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
        "chat_template": CHAT_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def write_config(out: Path, tokenizer) -> dict:
    config = model_config(tokenizer.get_vocab_size(), tokenizer.token_to_id(IM_END), tokenizer.token_to_id(PAD))
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return config


def model_config(vocab_size: int, eos_id: int, pad_id: int) -> dict:
    return {
        "model_type": "qwen2",
        "architectures": ["Qwen2ForCausalLM"],
        "hidden_size": 128,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 384,
        "vocab_size": vocab_size,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "eos_token_id": eos_id,
        "pad_token_id": pad_id,
        "torch_dtype": "float16",
    }


# --------------------------------------------------------------------------- examples


def examples_of(
    tokenizer, conversation: list[dict], tools: list[dict], copy_weight: float = 1.0
) -> list[tuple[list[int], int, list[float]]]:
    """One example per assistant message: (prompt tokens + completion tokens, prompt length, weights).

    The weights are one per completion token: ``copy_weight`` for a word, digit or operator that also
    occurs in the message the assistant answers (the request's numbers and places, the tool's
    result), 1 for the rest. Copying is what a model this small learns last; the format of a call
    is learned in a few hundred steps.

    The prompt is exactly what the app sends (template with add_generation_prompt), the completion is
    what the model must then generate, up to and including <|im_end|>.
    """
    examples = []
    for i, message in enumerate(conversation):
        if message["role"] != "assistant":
            continue
        prompt = tokenizer.apply_chat_template(
            conversation[:i], tools=tools, add_generation_prompt=True, tokenize=False
        )
        full = tokenizer.apply_chat_template(conversation[: i + 1], tools=tools, tokenize=False)
        assert full.startswith(prompt), (prompt, full)
        completion = full[len(prompt) :]
        assert completion.endswith(IM_END + "\n"), completion
        completion = completion[:-1]
        prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
        completion_ids = tokenizer.encode(completion, add_special_tokens=False)
        source = set(tokenizer.encode(str(conversation[i - 1].get("content") or ""), add_special_tokens=False))
        weights = [copy_weight if t in source and _is_word(tokenizer.decode([t])) else 1.0 for t in completion_ids]
        examples.append((prompt_ids + completion_ids, len(prompt_ids), weights))
    return examples


def _is_word(piece: str) -> bool:
    """A token worth copying: letters, digits or an operator, not JSON punctuation or space."""
    return bool(piece.strip(' \n{}[]":,'))


# --------------------------------------------------------------------------- training


class _SharedPrefixCache:
    """A KV cache whose first part (the tools block every prompt starts with) is computed once per batch.

    Concatenates instead of writing in place so gradients flow through it.
    """

    def __init__(self):
        self.keys = self.values = None
        self.offset = 0

    def update_and_fetch(self, keys, values):
        import mlx.core as mx

        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = mx.concatenate([self.keys, keys], axis=2)
            self.values = mx.concatenate([self.values, values], axis=2)
        self.offset = self.keys.shape[2]
        return self.keys, self.values

    def make_mask(self, n, return_array=False, window_size=None):
        from mlx_lm.models.base import create_causal_mask

        return create_causal_mask(n, self.offset)


def _init_weights(init: Path, tokenizer_path: Path, config: dict) -> dict:
    """Earlier weights; a token the earlier tokenizer lacked (an added number or operator) starts
    as the mean of the tokens the earlier tokenizer made of its text."""
    import mlx.core as mx
    from tokenizers import Tokenizer

    weights = mx.load(str(init / "model.safetensors"))
    embed = weights["model.embed_tokens.weight"].astype(mx.float32)
    missing = config["vocab_size"] - embed.shape[0]
    if missing > 0:
        tokenizer = Tokenizer.from_file(str(tokenizer_path / "tokenizer.json"))
        earlier = Tokenizer.from_file(str(init / "tokenizer.json"))
        rows = []
        for token_id in range(embed.shape[0], config["vocab_size"]):
            pieces = earlier.encode(tokenizer.id_to_token(token_id), add_special_tokens=False).ids
            rows.append(embed[mx.array(pieces)].mean(axis=0))
        weights["model.embed_tokens.weight"] = mx.concatenate([embed, mx.stack(rows)])
    return weights


def train(
    args, tokenizer_path: Path, examples: list[tuple[list[int], int, list[float]]], prefix: list[int], config: dict
):
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_flatten
    from mlx_lm.models import qwen2

    mx.set_default_device(mx.cpu)
    mx.random.seed(args.seed)
    model = qwen2.Model(qwen2.ModelArgs.from_dict(config))
    if args.init is not None:  # continue from earlier weights (same seed, so the same data and tokenizer)
        model.load_weights(list(_init_weights(args.init, tokenizer_path, config).items()))
        model.set_dtype(mx.float32)
        print(f"starting from the weights in {args.init}", flush=True)
    n_params = sum(v.size for _, v in tree_flatten(model.parameters()))
    print(f"model: {n_params / 1e6:.2f}M parameters", flush=True)

    p = len(prefix)
    rows = []  # (suffix inputs, targets, weights) per example, without the shared prefix
    for ids, prompt_len, completion_weights in examples:
        assert ids[:p] == prefix
        suffix = ids[p:]
        # target j is suffix[j + 1]: the prompt's targets weigh nothing, the completion's as given
        weights = [args.prompt_weight] * (prompt_len - p - 1) + completion_weights
        if len(suffix) <= args.max_suffix:
            rows.append((suffix[:-1], suffix[1:], weights))
    print(f"{len(rows)} examples of at most {args.max_suffix} tokens after the tools block", flush=True)
    rng = random.Random(args.seed)
    pad = config["pad_token_id"]

    def new_epoch() -> list[list]:
        # Random batches, drawn afresh each epoch: a batch of one kind of request (as sorting by
        # length gives) teaches the model to forget the other kinds.
        # Within a window of 16 random batches the rows are sorted by length, so a batch holds rows
        # of about one length (little padding: about half the work) but still of mixed kinds.
        shuffled = rows[:]
        rng.shuffle(shuffled)
        window = args.batch_size * 16
        batches = []
        for start in range(0, len(shuffled), window):
            chunk = sorted(shuffled[start : start + window], key=lambda r: len(r[0]))
            batches += [chunk[i : i + args.batch_size] for i in range(0, len(chunk), args.batch_size)]
        rng.shuffle(batches)
        return batches

    def to_arrays(batch):
        width = max(len(r[0]) for r in batch)
        inputs = [r[0] + [pad] * (width - len(r[0])) for r in batch]
        targets = [r[1] + [pad] * (width - len(r[1])) for r in batch]
        weights = [r[2] + [0.0] * (width - len(r[2])) for r in batch]
        return mx.array(inputs), mx.array(targets), mx.array(weights)

    prefix_array = mx.array(prefix)[None]

    def loss_fn(model, inputs, targets, weights):
        caches = [_SharedPrefixCache() for _ in model.layers]
        model.model(prefix_array, cache=caches)
        batch = inputs.shape[0]
        for cache in caches:
            cache.keys = mx.broadcast_to(cache.keys, (batch, *cache.keys.shape[1:]))
            cache.values = mx.broadcast_to(cache.values, (batch, *cache.values.shape[1:]))
        logits = model(inputs, cache=caches)
        losses = nn.losses.cross_entropy(logits.astype(mx.float32), targets)
        return (losses * weights).sum() / weights.sum()

    warmup = max(1, min(100, args.steps // 10))
    schedule = optim.join_schedules(
        [optim.linear_schedule(1e-5, args.lr, warmup), optim.cosine_decay(args.lr, args.steps - warmup, args.lr / 20)],
        [warmup],
    )
    optimizer = optim.AdamW(learning_rate=schedule, weight_decay=0.01)
    loss_and_grad = nn.value_and_grad(model, loss_fn)

    def step(inputs, targets, weights):
        loss, grads = loss_and_grad(model, inputs, targets, weights)
        grads, _ = optim.clip_grad_norm(grads, 1.0)
        optimizer.update(model, grads)
        return loss

    started = time.monotonic()
    running = None
    batches: list[list] = []
    for i in range(1, args.steps + 1):
        if not batches:
            batches = new_epoch()
        loss = step(*to_arrays(batches.pop()))
        mx.eval(loss, model.parameters(), optimizer.state)
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if i % 50 == 0 or i == 1:
            elapsed = time.monotonic() - started
            print(f"step {i}/{args.steps} loss {running:.4f} {elapsed:.0f}s ({elapsed / i:.2f}s/step)", flush=True)
        if i % 250 == 0 and i < args.steps:
            save_weights(model, tokenizer_path)
    print(f"trained {args.steps} steps in {time.monotonic() - started:.0f}s", flush=True)
    save_weights(model, tokenizer_path)


def save_weights(model, out: Path) -> None:
    import mlx.core as mx
    from mlx.utils import tree_flatten

    weights = {k: v.astype(mx.float16) for k, v in tree_flatten(model.parameters())}
    mx.save_safetensors(str(out / "model.safetensors"), weights, metadata={"format": "mlx"})


# --------------------------------------------------------------------------- evaluation


def parse_tool_call(tokenizer, text: str):
    """The call in generated text, parsed with the tokenizer's own markers and parser, or None."""
    start, end = tokenizer.tool_call_start, tokenizer.tool_call_end
    if start not in text or end not in text:
        return None
    body = text.split(start, 1)[1].split(end, 1)[0]
    try:
        return tokenizer.tool_parser(body, None)
    except Exception:
        return None


def evaluate(out: Path, tools: list[dict], maker: Conversations, per_kind: int) -> None:
    import mlx.core as mx
    from mlx_lm import generate, load
    from mlx_lm.sample_utils import make_sampler

    mx.set_default_device(mx.cpu)
    model, tokenizer = load(str(out))
    assert tokenizer.has_tool_calling, "the chat template does not select a tool parser"
    greedy = make_sampler(temp=0.0)

    def reply(messages):
        prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True)
        return generate(model, tokenizer, prompt, max_tokens=120, sampler=greedy)

    print(f"\nheld-out evaluation ({per_kind} requests per kind, greedy):")
    shown = 0
    for kind in TOOL_KINDS + ["chat"]:
        calls_ok = answers_ok = answers_use = 0
        failures = []
        for _ in range(per_kind):
            earlier = maker.turn(maker.rng.choice(TOOL_KINDS)) if maker.rng.random() < 0.3 else []
            turn = maker.turn(kind)
            history = earlier + turn[:1]
            text = reply(history)
            if kind == "chat":
                calls_ok += CALL_START not in text
                answers_ok += text.strip() == turn[1]["content"]
                continue
            expected = turn[1]["tool_calls"][0]["function"]
            call = parse_tool_call(tokenizer, text)
            expected_args = expected["arguments"]
            if isinstance(expected_args, str):
                expected_args = json.loads(expected_args)
            good = bool(call) and call.get("name") == expected["name"] and call.get("arguments") == expected_args
            calls_ok += good
            if not good and len(failures) < 3:
                failures.append(f"    {turn[0]['content']!r} -> {text!r}")
            answer = reply(history + turn[1:3])
            answers_ok += answer.strip() == turn[3]["content"]
            result = turn[2]["content"]
            key = _result_key(kind, result)
            answers_use += CALL_START not in answer and key in answer
            if shown < 2:
                print(f"  example: {turn[0]['content']!r} -> {text!r} -> {answer!r}")
                shown += 1
        if kind == "chat":
            print(f"  {kind:14s} no tool call {calls_ok}/{per_kind}, exact reply {answers_ok}/{per_kind}")
        else:
            print(
                f"  {kind:14s} tool call (name + exact arguments) {calls_ok}/{per_kind} = {calls_ok / per_kind:.0%};"
                f" answer uses the result {answers_use}/{per_kind} = {answers_use / per_kind:.0%};"
                f" answer exact {answers_ok}/{per_kind}"
            )
        for line in failures:
            print(line)
    denied_ok = 0
    for _ in range(per_kind):
        turn = maker.turn(maker.rng.choice(TOOL_KINDS))
        turn[2] = dict(turn[2], content=DENIED_MESSAGE)
        answer = reply(turn[:3])
        denied_ok += CALL_START not in answer and "denied" in answer
    print(f"  {'denied call':14s} answer says it was denied {denied_ok}/{per_kind}")


def _result_key(kind: str, result: str) -> str:
    """The part of a tool result a correct answer must contain."""
    if result.startswith("Error: ") or result.startswith("No results"):
        return result.split(": ", 1)[-1].rstrip(".")[:20] if result.startswith("Error") else "no results"
    if kind == "calculator":
        return result.split(" = ")[-1]
    if kind == "current_time":
        return result.split(" ")[1]
    if kind == "convert_units":
        return result.split(" = ")[-1]
    if kind == "web_search":
        return result.split("\n")[0][2:].split(" (")[0]
    if kind == "read_file":
        return result.strip().split("\n")[0]
    return result.split(" ")[1]  # sleep: "Slept N seconds."


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Train the tiny demo model of mcp-chat-tui (a toy for trying the app and for tests).",
        epilog="Training is about 10x faster with OpenBLAS on Linux: apt-get install libopenblas0-pthread, then run "
        "with LD_PRELOAD=/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 (not required).",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="model folder to write (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=1600, help="training steps (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed for data, tokenizer and weights")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--max-suffix",
        type=int,
        default=330,
        help="skip examples longer than this after the shared tools block (keeps random batches cheap)",
    )
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default: %(default)s)")
    parser.add_argument("--conversations", type=int, default=8000, help="synthetic training conversations")
    parser.add_argument(
        "--more-conversations",
        type=int,
        default=0,
        help="further conversations, for training only (the tokenizer is learned from the first ones)",
    )
    parser.add_argument(
        "--data-seed",
        type=int,
        help="seed for the --more-conversations (default: go on from --seed's data), so a continued "
        "run can draw data no earlier run has seen",
    )
    parser.add_argument(
        "--number-tokens",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="give two- and three-digit numbers tokens of their own (with --init from a model "
        "without them, each starts as the mean of its digits; default: on)",
    )
    parser.add_argument(
        "--operator-tokens",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="give ' + ', ' - ', ' * ', ' / ' and ' = ' (spaces included) tokens of their own (default: on)",
    )
    parser.add_argument(
        "--keep-tokenizer",
        action="store_true",
        help="use the tokenizer of --init (or of --out) as it is instead of learning one",
    )
    parser.add_argument(
        "--denials",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"let the user deny {DENIAL_SHARE * 100:.0f}%% of the calls, and answer that it was denied (default: on)",
    )
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument("--eval-per-kind", type=int, default=20, help="held-out requests per kind to evaluate")
    parser.add_argument("--init", type=Path, help="start from the weights of this model folder instead of random ones")
    parser.add_argument(
        "--copy-weight",
        type=float,
        default=4.0,
        help="loss weight of completion tokens copied from the message answered (default: %(default)s)",
    )
    parser.add_argument(
        "--prompt-weight",
        type=float,
        default=0.25,
        help="loss weight of the tokens of the prompt after the tools block (user messages, "
        "tool results): next-token practice, copying in particular (default: %(default)s)",
    )
    parser.add_argument("--eval-only", action="store_true", help="only evaluate the model already in --out")
    args = parser.parse_args(argv)
    out = args.out.resolve()

    tools = demo_tools_openai()
    print(f"demo tools: {[t['function']['name'] for t in tools]}", flush=True)
    zones = demo_zones()
    split = random.Random(1234)
    held_zones = set(split.sample(zones, len(zones) // 8)) - {"Asia/Tokyo", "Europe/Paris", "America/New_York"}
    held_topics = {"Mount Everest", "sourdough bread", "Apollo 11", "bees", "Rust language", "Everest height"}
    held_words = set(split.sample(SEARCH_WORDS, 8))

    with tempfile.TemporaryDirectory() as scratch:
        run_tool = ToolRunner(Path(scratch))
        if not args.eval_only:
            rng = random.Random(args.seed)
            denials = random.Random(args.seed + 7) if args.denials else None
            maker = Conversations(
                rng,
                run_tool,
                [z for z in zones if z not in held_zones],
                [t for t in SEARCH_TOPICS if t not in held_topics],
                [w for w in SEARCH_WORDS if w not in held_words],
                denials,
            )
            conversations = make_conversations(maker, args.conversations)
            added = whole_tokens(args.number_tokens, args.operator_tokens)
            if args.keep_tokenizer:
                tokenizer, wrapper = reuse_tokenizer(args.init or out, out, added)
            else:
                tokenizer, wrapper = build_tokenizer(conversations, tools, args.vocab_size, out, added)
            # More conversations for training only: the tokenizer (learned from the first ones) stays
            # the same, so training can go on from earlier weights with data it has not memorised.
            if args.data_seed is not None:
                maker.rng = random.Random(args.data_seed)
            conversations += make_conversations(maker, args.more_conversations)
            prefix_text = wrapper.apply_chat_template(
                [{"role": "user", "content": "x"}], tools=tools, tokenize=False
            ).split(IM_START + "user")[0]
            prefix = wrapper.encode(prefix_text, add_special_tokens=False)
            examples = [e for c in conversations for e in examples_of(wrapper, c, tools, args.copy_weight)]
            lengths = sorted(len(ids) for ids, _, _ in examples)
            print(
                f"vocab {len(wrapper)} tokens; tools block {len(prefix)} tokens;"
                f" {len(examples)} examples, length median {lengths[len(lengths) // 2]} max {lengths[-1]}",
                flush=True,
            )
            config = write_config(out, tokenizer)
            assert config["vocab_size"] == len(wrapper)
            train(args, out, examples, prefix, config)

        held = Conversations(
            random.Random(args.seed + 1000), run_tool, sorted(held_zones), sorted(held_topics), sorted(held_words)
        )
        evaluate(out, tools, held, args.eval_per_kind)
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(f"\nmodel folder {out}: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()

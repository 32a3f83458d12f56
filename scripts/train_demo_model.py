"""Train the tiny bundled demo model, ``mcp_chat_tui/demo/model``.

The demo model is a toy: a ~1M-parameter qwen2-shaped model with its own small
byte-level BPE tokenizer, trained on a CPU on synthetic conversations about the
six tools of the bundled demo MCP server (calculator, current_time,
convert_units, web_search, read_file, sleep). It exists so that the app runs
offline at once and so that tests can drive whole conversations (tool call,
result, answer, the next question) through the real MLX engine. It knows nothing
beyond those tools and a few greetings; for real use, load a real model.

It is trained on what the app sends over a whole conversation (``demo_memory.play``, built with
the agent's own prompt and memory code): the system message with the demo server's instructions,
the tools block from the real demo server's listing, the summaries of the exchanges that left the
window (``max_turns``, 3 by default) and the window's exchanges in full; and the app's separate
summary requests, answered with a line the model can write and read back (``demo_memory.summary_line``:
the request, the tools called, the answer). Every tool result is a real output of the demo tools
(``demo_conversations``). ``tests/test_demo_training_data.py`` checks those requests against the
real agent's, token for token.

Train from scratch (from the repository root; deterministic for a given --seed; the shipped weights
were made as below, and a run from scratch of this length was not measured on whole conversations):

    python scripts/train_demo_model.py --steps 1600

The shipped weights were not trained from scratch in one run: they go on from the earlier
single-exchange model (its tokenizer kept, with two- and three-digit numbers and the arithmetic
operators with their spaces as tokens of their own), in two runs on whole conversations, each
stopped early at a saved checkpoint:

    python scripts/train_demo_model.py --out /tmp/run1/model --init mcp_chat_tui/demo/model \\
        --keep-tokenizer --steps 3000 --checkpoints /tmp/run1/checkpoints
    # its other flags were not recorded (its log: 75,290 requests, about 12,000 conversations);
    # stopped after step 350, its last checkpoint /tmp/run1/checkpoints/step-00250 goes on below
    python scripts/train_demo_model.py --out /tmp/run2/model --init /tmp/run1/checkpoints/step-00250 \\
        --keep-tokenizer --seed 21 --conversations 4000 --steps 300 --lr 1e-3 \\
        --save-every 50 --checkpoints /tmp/run2/checkpoints
    # stopped after step 250 (of 300, for time): /tmp/run2/checkpoints/step-00250 is the shipped model

What made the difference, as measured on this model:

- Numbers as whole tokens (``--number-tokens``): copying "434" out of "345 + 89 = 434" is copying
  one token that is what it is, as "Tokyo" is, instead of finding each digit by its neighbours.
- Operators with their spaces as whole tokens (``--operator-tokens``): after "345" the model copies
  " + " and then "89", each by what it is, instead of telling one space from another.
- Loss on the prompt too (``--prompt-weight``): the request, the call's arguments, the result and
  the summaries repeat each other, so predicting the prompt is copying practice on every example.
- Whole conversations instead of single exchanges: the model asked the README's questions one after
  another in one conversation went wrong from the third (its own summaries, which it had never been
  trained to write or read, came back into its prompt as noise).

Training computes in float32 with the fastest BLAS found (as the app does). The script ends by
evaluating the saved model with greedy decoding through ``mlx_lm`` (``demo_eval``): held-out
requests one at a time, then whole conversations played on the model's own replies (the README's
questions first); ``--eval-only`` repeats just that evaluation.
"""

from __future__ import annotations

import argparse
import functools
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
    Conversations,
    ToolRunner,
    demo_server_listing,
    demo_zones,
    make_conversations,
)
from demo_eval import Replier, evaluate_conversations, evaluate_requests  # noqa: E402
from demo_memory import View, play, system_text  # noqa: E402

from mcp_chat_tui.agent.memory_window import summary_request  # noqa: E402
from mcp_chat_tui.engine.blas import load_blas  # noqa: E402
from mcp_chat_tui.engine.message_shapes import for_template  # noqa: E402

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
    tokenizer, view: View, tools: list[dict], copy_weight: float, prompt_weight: float, earlier_weight: float
) -> tuple[list[int], list[float]]:
    """One request the app sends and the replies taught in it: (tokens, the loss weight of each token).

    The tokens are the template's rendering of the view's messages (as the engine renders them:
    ``for_template``, the tools offered or not). Each assistant message is a completion: what the
    model writes after ``<|im_start|>assistant\n``, up to and including ``<|im_end|>``. A completion of
    the exchange being answered weighs 1, an earlier one still in the window ``earlier_weight`` (it is
    a right reply in a context like those the app sends, at no extra cost); within a completion a
    word, digit or operator that also occurs in the message it answers (the request's numbers and
    places, the tool's result) weighs ``copy_weight`` times more: copying is what a model this small
    learns last. Every other token (the prompt: requests, results, summaries) weighs ``prompt_weight``.
    """
    messages = for_template(view.messages)
    full = tokenizer.apply_chat_template(messages, tools=tools if view.tools else None, tokenize=False)
    # Each message is rendered as <|im_start|>ROLE\n...<|im_end|>\n, so the n-th assistant header is the
    # n-th assistant message's (no content here holds a marker), and its completion ends at <|im_end|>.
    header = IM_START + "assistant\n"
    answering = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
    assert full.count(header) == len(answering), full
    spans = []  # (start, end, weight, the text answered)
    at = 0
    for i in answering:
        start = full.index(header, at) + len(header)
        at = full.index(IM_END, start) + len(IM_END)
        weight = 1.0 if i >= view.taught else earlier_weight
        if weight:
            spans.append((start, at, weight, str(messages[i - 1].get("content") or "")))
    ids: list[int] = []
    weights: list[float] = []
    at = 0
    for start, end, weight, answered in spans:
        before = tokenizer.encode(full[at:start], add_special_tokens=False)
        ids += before
        weights += [prompt_weight] * len(before)
        source = set(tokenizer.encode(answered, add_special_tokens=False))
        completion = tokenizer.encode(full[start:end], add_special_tokens=False)
        ids += completion
        weights += [weight * (copy_weight if t in source and _is_word(tokenizer, t) else 1.0) for t in completion]
        at = end
    rest = tokenizer.encode(full[at:], add_special_tokens=False)
    ids += rest
    weights += [prompt_weight] * len(rest)
    assert ids == tokenizer.encode(full, add_special_tokens=False), "the pieces encode unlike the whole"
    return ids, weights


@functools.cache
def _word_piece(piece: str) -> bool:
    return bool(piece.strip(' \n{}[]":,'))


def _is_word(tokenizer, token: int) -> bool:
    """A token worth copying: letters, digits or an operator, not JSON punctuation or space."""
    return _word_piece(tokenizer.decode([token]))


def prefixes(wrapper, tools: list[dict], system: str) -> list[list[int]]:
    """The token prefixes every request starts with, computed once per batch: the system message and the
    tools block of a conversation's requests, and the instruction of a summary request."""
    with_tools = wrapper.apply_chat_template(
        [{"role": "system", "content": system}, {"role": "user", "content": "x"}], tools=tools, tokenize=False
    )
    summary = wrapper.apply_chat_template(summary_request([{"role": "user", "content": "x"}]), tokenize=False)
    texts = [text.split(IM_START + "user")[0] for text in (with_tools, summary)]
    return [wrapper.encode(text, add_special_tokens=False) for text in texts]


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
    args, tokenizer_path: Path, examples: list[tuple[list[int], list[float]]], starts: list[list[int]], config: dict
):
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_flatten
    from mlx_lm.models import qwen2

    mx.set_default_device(mx.cpu)
    mx.random.seed(args.seed)
    model = qwen2.Model(qwen2.ModelArgs.from_dict(config))
    if args.init is not None:  # continue from earlier weights
        model.load_weights(list(_init_weights(args.init, tokenizer_path, config).items()))
        model.set_dtype(mx.float32)
        print(f"starting from the weights in {args.init}", flush=True)
    n_params = sum(v.size for _, v in tree_flatten(model.parameters()))
    print(f"model: {n_params / 1e6:.2f}M parameters", flush=True)

    # Rows by the prefix they start with (a batch holds rows of one prefix, computed once for it):
    # (suffix inputs, targets, weights), target j being suffix[j + 1].
    groups: list[list[tuple]] = [[] for _ in starts]
    for ids, weights in examples:
        group = next(g for g, start in enumerate(starts) if ids[: len(start)] == start)
        p = len(starts[group])
        if len(ids) - p <= args.max_suffix:
            groups[group].append((ids[p:-1], ids[p + 1 :], weights[p + 1 :]))
    print(f"{[len(g) for g in groups]} examples of at most {args.max_suffix} tokens after their prefix", flush=True)
    rng = random.Random(args.seed)
    pad = config["pad_token_id"]

    def new_epoch() -> list[tuple[int, list]]:
        # Random batches, drawn afresh each epoch: a batch of one kind of request (as sorting by
        # length gives) teaches the model to forget the other kinds.
        # Within a window of 16 random batches the rows are sorted by length, so a batch holds rows
        # of about one length (little padding: about half the work) but still of mixed kinds.
        batches = []
        for group, rows in enumerate(groups):
            shuffled = rows[:]
            rng.shuffle(shuffled)
            window = args.batch_size * 16
            for start in range(0, len(shuffled), window):
                chunk = sorted(shuffled[start : start + window], key=lambda r: len(r[0]))
                batches += [(group, chunk[i : i + args.batch_size]) for i in range(0, len(chunk), args.batch_size)]
        rng.shuffle(batches)
        return batches

    def to_arrays(batch):
        width = max(len(r[0]) for r in batch)
        inputs = [r[0] + [pad] * (width - len(r[0])) for r in batch]
        targets = [r[1] + [pad] * (width - len(r[1])) for r in batch]
        weights = [r[2] + [0.0] * (width - len(r[2])) for r in batch]
        return mx.array(inputs), mx.array(targets), mx.array(weights)

    start_arrays = [mx.array(start)[None] for start in starts]

    def loss_fn(model, start, inputs, targets, weights):
        caches = [_SharedPrefixCache() for _ in model.layers]
        model.model(start, cache=caches)
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

    def step(start, inputs, targets, weights):
        loss, grads = loss_and_grad(model, start, inputs, targets, weights)
        grads, _ = optim.clip_grad_norm(grads, 1.0)
        optimizer.update(model, grads)
        return loss

    started = time.monotonic()
    running = None
    batches: list = []
    for i in range(1, args.steps + 1):
        if not batches:
            batches = new_epoch()
        group, batch = batches.pop()
        loss = step(start_arrays[group], *to_arrays(batch))
        mx.eval(loss, model.parameters(), optimizer.state)
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if i % 50 == 0 or i == 1:
            elapsed = time.monotonic() - started
            print(f"step {i}/{args.steps} loss {running:.4f} {elapsed:.0f}s ({elapsed / i:.2f}s/step)", flush=True)
        if i % args.save_every == 0 and i < args.steps:
            save_weights(model, tokenizer_path)
            if args.checkpoints:
                save_checkpoint(tokenizer_path, args.checkpoints / f"step-{i:05d}")
    print(f"trained {args.steps} steps in {time.monotonic() - started:.0f}s", flush=True)
    save_weights(model, tokenizer_path)


def save_checkpoint(folder: Path, checkpoint: Path) -> None:
    """A copy of the model folder as it is now (a whole model: load it, evaluate it, run the app on it)."""
    import shutil

    checkpoint.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(folder / name, checkpoint / name)
    print(f"checkpoint {checkpoint}", flush=True)


def save_weights(model, out: Path) -> None:
    import mlx.core as mx
    from mlx.utils import tree_flatten

    weights = {k: v.astype(mx.float16) for k, v in tree_flatten(model.parameters())}
    mx.save_safetensors(str(out / "model.safetensors"), weights, metadata={"format": "mlx"})


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(
        description="Train the tiny demo model of mcp-chat-tui (a toy for trying the app and for tests).",
        epilog="Training computes in float32 with the fastest BLAS found (the system's OpenBLAS, or pip's "
        "mkl: the mkl extra), as the app does; MCP_CHAT_TUI_BLAS=none turns that off.",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="model folder to write (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=1600, help="training steps (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed for data, tokenizer and weights")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--max-suffix",
        type=int,
        default=900,
        help="skip examples longer than this after their shared prefix (the system message and tools block)",
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
    parser.add_argument(
        "--eval-conversations",
        type=int,
        default=12,
        help="held-out whole conversations to evaluate (besides the README's)",
    )
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
        help="loss weight of the tokens of the prompt (user messages, tool results, summaries): next-token "
        "practice, copying in particular (default: %(default)s)",
    )
    parser.add_argument(
        "--earlier-weight",
        type=float,
        default=0.5,
        help="loss weight of the replies of earlier exchanges still in the window (default: %(default)s)",
    )
    parser.add_argument("--save-every", type=int, default=250, help="save the weights every N steps")
    parser.add_argument(
        "--checkpoints", type=Path, help="also keep a copy of the model folder here at every save (step-NNNNN/)"
    )
    parser.add_argument("--eval-only", action="store_true", help="only evaluate the model already in --out")
    return parser.parse_args(argv)


def held_out(run_tool: ToolRunner, seed: int) -> tuple[Conversations, Conversations]:
    """The makers of training and evaluation requests: the evaluation's cities, topics and words are
    never trained on (the README's Tokyo, Paris and New York stay in training)."""
    zones = demo_zones()
    split = random.Random(1234)
    held_zones = set(split.sample(zones, len(zones) // 8)) - {"Asia/Tokyo", "Europe/Paris", "America/New_York"}
    held_topics = {"Mount Everest", "sourdough bread", "Apollo 11", "bees", "Rust language", "Everest height"}
    held_words = set(split.sample(SEARCH_WORDS, 8))
    train_maker = Conversations(
        random.Random(seed),
        run_tool,
        [z for z in zones if z not in held_zones],
        [t for t in SEARCH_TOPICS if t not in held_topics],
        [w for w in SEARCH_WORDS if w not in held_words],
    )
    held = Conversations(
        random.Random(seed + 1000), run_tool, sorted(held_zones), sorted(held_topics), sorted(held_words)
    )
    return train_maker, held


def training_views(args, maker: Conversations, system: str) -> list[View]:
    """The requests the app makes over ``--conversations`` (+ ``--more-conversations``) conversations."""
    maker.denials = random.Random(args.seed + 7) if args.denials else None
    play_rng = random.Random(args.seed + 11)
    views = [v for c in make_conversations(maker, args.conversations) for v in play(c, system, play_rng)]
    if args.data_seed is not None:
        maker.rng = random.Random(args.data_seed)
        play_rng = random.Random(args.data_seed + 11)
    more = make_conversations(maker, args.more_conversations)
    return views, [v for c in more for v in play(c, system, play_rng)]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"BLAS: {load_blas().describe()}", flush=True)  # before MLX is imported
    out = args.out.resolve()
    tools, instructions = demo_server_listing()
    system = system_text(instructions)
    print(f"demo tools: {[t['function']['name'] for t in tools]}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        run_tool = ToolRunner(Path(scratch))
        maker, held = held_out(run_tool, args.seed)
        if not args.eval_only:
            views, more = training_views(args, maker, system)
            added = whole_tokens(args.number_tokens, args.operator_tokens)
            if args.keep_tokenizer:
                tokenizer, wrapper = reuse_tokenizer(args.init or out, out, added)
            else:
                tokenizer, wrapper = build_tokenizer([v.messages for v in views], tools, args.vocab_size, out, added)
            views += more
            kinds = lambda tools_offered: sum(v.tools == tools_offered for v in views)  # noqa: E731
            print(f"{len(views)} requests: {kinds(True)} in conversations, {kinds(False)} for summaries", flush=True)
            weights = (args.copy_weight, args.prompt_weight, args.earlier_weight)
            examples = [examples_of(wrapper, v, tools, *weights) for v in views]
            lengths = sorted(len(ids) for ids, _ in examples)
            starts = prefixes(wrapper, tools, system)
            print(
                f"vocab {len(wrapper)} tokens; prefixes {[len(s) for s in starts]} tokens;"
                f" length median {lengths[len(lengths) // 2]} max {lengths[-1]}",
                flush=True,
            )
            config = write_config(out, tokenizer)
            assert config["vocab_size"] == len(wrapper)
            train(args, out, examples, starts, config)
        replier = Replier(out, tools, system)
        evaluate_requests(replier, held, args.eval_per_kind)
        evaluate_conversations(replier, held, run_tool, args.eval_conversations)
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(f"\nmodel folder {out}: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()

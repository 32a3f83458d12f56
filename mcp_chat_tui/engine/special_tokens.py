"""A model's special tokens: where its turn ends, and text that must never reach the screen.

A local model can generate a special (control) token that is not one of its end-of-turn tokens:
a small Qwen model begins an answer with ``<|im_start|>``. mlx-lm's detokenizer gives such a
token's text like any other, so ``SpecialTokenText`` drops it by the token's id (never by
matching strings in the reply: a model may write ``<|im_start|>`` as ordinary text when asked
about it). Markers the tool-call recogniser reads (``<tool_call>``, ``[TOOL_CALLS]``, ``<think>``)
are kept even where they are special tokens.

Generation stops at every end-of-turn token: mlx-lm's ``eos_token_ids`` (the tokenizer's and
``generation_config.json``'s), and the token the chat template closes an assistant turn with.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcp_chat_tui.engine.stops import StopSequences

_SENTINEL = "mcp-chat-tui end-of-turn probe"


def special_tokens(tokenizer: Any) -> dict[int, str]:
    """The special tokens of ``tokenizer`` (mlx-lm's wrapper or a Hugging Face tokenizer): id to text."""
    found: dict[int, str] = {}
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    for token_id, token in decoder.items():
        if getattr(token, "special", False) and getattr(token, "content", ""):
            found[int(token_id)] = token.content
    for token_id in getattr(tokenizer, "all_special_ids", None) or []:
        if int(token_id) not in found:
            text = tokenizer.convert_ids_to_tokens(int(token_id))
            if isinstance(text, str) and text:
                found[int(token_id)] = text
    return found


def template_end_of_turn(tokenizer: Any, specials: dict[int, str]) -> int | None:
    """The special token the chat template writes right after an assistant's words, if any."""
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": _SENTINEL}]
    try:
        rendered = tokenizer.apply_chat_template(messages, tokenize=False)
    except Exception:  # a template that cannot render this: nothing learned
        return None
    if not isinstance(rendered, str) or _SENTINEL not in rendered:
        return None
    after = rendered[rendered.index(_SENTINEL) + len(_SENTINEL) :].lstrip()
    for token_id, text in sorted(specials.items(), key=lambda item: -len(item[1])):
        if after.startswith(text):
            return token_id
    return None


def add_end_of_turn(tokenizer: Any) -> set[int]:
    """Make mlx-lm stop at the template's end-of-turn token too; return every id it stops at."""
    eos = getattr(tokenizer, "eos_token_ids", None)
    if eos is None:
        return set()
    end = template_end_of_turn(tokenizer, special_tokens(tokenizer))
    if end is not None and end not in eos:
        tokenizer.eos_token_ids = {*eos, end}
    return set(tokenizer.eos_token_ids)


class SpecialTokenText:
    """Removes the text of special tokens from a generation's text pieces, by token id.

    ``take(token, text)`` is given each generated token and the text the detokenizer gave with it;
    a special token's text is removed from that piece, or from a later one when the detokenizer
    holds it back (some give the text of several tokens at once)."""

    def __init__(self, specials: dict[int, str], keep: Iterable[str] = ()) -> None:
        kept = set(keep)
        self._drop = {token_id: text for token_id, text in specials.items() if text not in kept}
        self._owed: list[str] = []  # texts of special tokens generated, not yet seen in a piece
        self.dropped = 0  # special tokens whose text was removed

    def take(self, token: int, text: str) -> str:
        special = self._drop.get(token)
        if special is not None:
            self._owed.append(special)
        if not self._owed or not text:
            return text
        owed, self._owed = self._owed, []
        for special_text in owed:
            index = text.find(special_text)
            if index < 0:
                self._owed.append(special_text)
                continue
            text = text[:index] + text[index + len(special_text) :]
            self.dropped += 1
        return text


# -- text from a model server: its special tokens arrive as strings -------------------------------

TURN_STARTS = (  # what a server may leave at the start of a reply, longest first where one begins another
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|start_header_id|>assistant<|end_header_id|>",
    "<|im_start|>assistant\n",
    "<|im_start|>assistant",
    "<|im_start|>",
    "<start_of_turn>model\n",
    "<|begin_of_text|>",
    "<|assistant|>\n",
    "<|assistant|>",
    "<s>",
)
TURN_ENDS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|end|>",
    "<end_of_turn>",
    "</s>",
)


class TurnMarkup:
    """The special-token strings of the common chat formats in a server's reply text: a turn's
    opening markup is stripped from its start, and the reply ends at an end-of-turn string."""

    def __init__(self) -> None:
        self._head = ""  # the start of the reply, held while it could be markup
        self._started = False
        self._ends = StopSequences(TURN_ENDS)

    @property
    def ended(self) -> bool:
        """An end-of-turn string came: the rest of the reply is not the model's answer."""
        return self._ends.matched is not None

    def feed(self, text: str) -> str:
        """The part of ``text`` that is surely reply text."""
        if not self._started:
            self._head += text
            head, decided = _strip_turn_start(self._head, final=False)
            if not decided:
                return ""
            self._started, text = True, head
        return self._ends.feed(text)

    def rest(self) -> str:
        """What was held back, given on when the reply is over."""
        if not self._started:
            self._started = True
            return self._ends.feed(_strip_turn_start(self._head, final=True)[0]) + self._ends.rest()
        return self._ends.rest()


def _strip_turn_start(text: str, *, final: bool) -> tuple[str, bool]:
    """``text`` without the turn markup it starts with, and whether that is decided yet."""
    while True:
        start = next((s for s in TURN_STARTS if text.startswith(s)), None)
        if start is None:
            break
        text = text[len(start) :]
    undecided = bool(text) and any(len(s) > len(text) and s.startswith(text) for s in TURN_STARTS)
    if undecided and not final:
        return text, False
    return text, bool(text) or final

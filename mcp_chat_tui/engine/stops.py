"""Stop sequences matched in the text of a reply as it streams: the text before the first match is
given on, the match and everything after it never is.

Text that could be the start of a stop sequence is held back until the next piece says whether it
is one; ``rest`` gives it on when the reply ends without a match.
"""

from __future__ import annotations

from collections.abc import Iterable

STOP_SEQUENCE = "stop_sequence"  # the engine's finish reason when a stop sequence ended the reply


class StopSequences:
    """Watches a reply's text for any of ``sequences`` (empty ones are ignored)."""

    def __init__(self, sequences: Iterable[str]) -> None:
        self.sequences = tuple(s for s in sequences if s)
        self.matched: str | None = None  # the sequence that ended the reply
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of ``text`` (after what was held back) that is surely reply text; "" once matched."""
        if self.matched is not None:
            return ""
        if not self.sequences:
            return text
        text = self._held + text
        first = min(((text.find(s), s) for s in self.sequences if s in text), default=None, key=lambda found: found[0])
        if first is not None:
            self.matched, self._held = first[1], ""
            return text[: first[0]]
        keep = self._partial_length(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def rest(self) -> str:
        """What was held back, given on when the reply ended without a match."""
        held, self._held = self._held, ""
        return held if self.matched is None else ""

    def _partial_length(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins a stop sequence."""
        longest = 0
        for sequence in self.sequences:
            for size in range(min(len(sequence) - 1, len(text)), longest, -1):
                if sequence.startswith(text[-size:]):
                    longest = size
                    break
        return longest

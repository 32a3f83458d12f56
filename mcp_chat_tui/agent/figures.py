"""A turn's figures over all its generations: the tokens written, the decode and prefill rates, and
the time to its first token (``--plain``'s and ``-p``'s figures line, ``--json``'s ``tokens``, the
app's status bar).

A turn that calls tools is several generations; the last alone says little (it may be one token
long). Rates are read only where there was something to time: decode over the tokens after each
generation's first (its first comes out of the prefill) of the generations that took at least
``MIN_DECODE_SECONDS`` to decode, prefill over the prompt tokens computed. A one-token reply, or a
server's reply that arrived in one burst, never gives a rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_chat_tui.engine.events import Stats

MIN_DECODE_SECONDS = 0.05  # a generation decoded in less is not timed (its tokens came in one burst, or were too few)


@dataclass
class TurnFigures:
    """The figures of the generations of one turn, in order."""

    generations: list[Stats] = field(default_factory=list)

    def add(self, stats: Stats) -> None:
        self.generations.append(stats)

    def clear(self) -> None:
        self.generations = []

    @property
    def generated(self) -> int:
        return sum(stats.generated_tokens for stats in self.generations)

    @property
    def prompt_tokens(self) -> int:
        return sum(stats.prompt_tokens for stats in self.generations)

    @property
    def prefilled(self) -> int:
        return sum(stats.prefilled_tokens for stats in self.generations)

    @property
    def decode_rate(self) -> float | None:
        """Tokens a second after each generation's first, over the turn (None: nothing was timed)."""
        timed = [s for s in self.generations if s.decode_time >= MIN_DECODE_SECONDS and s.generated_tokens > 1]
        decoded = sum(stats.generated_tokens - 1 for stats in timed)
        seconds = sum(stats.decode_time for stats in timed)
        return decoded / seconds if decoded and seconds > 0 else None

    @property
    def prefill_rate(self) -> float | None:
        """Prompt tokens computed a second, over the turn (None: nothing was timed)."""
        timed = [stats for stats in self.generations if stats.prefill_time > 0 and stats.prefilled_tokens > 0]
        prefilled = sum(stats.prefilled_tokens for stats in timed)
        seconds = sum(stats.prefill_time for stats in timed)
        return prefilled / seconds if prefilled and seconds > 0 else None

    @property
    def time_to_first_token(self) -> float | None:
        """Seconds until the turn's first token (its first generation's)."""
        return self.generations[0].time_to_first_token if self.generations else None

    def line(self) -> str:
        """One line: "57 tokens in 3 generations at 7.9 tok/s, prefilled 210 of 7200 prompt tokens at
        120.4 tok/s, first token 3.2 s" (a rate that could not be timed is left out)."""
        if not self.generations:
            return ""
        count = len(self.generations)
        written = f"{self.generated} tokens" + (f" in {count} generations" if count > 1 else "")
        if (decode := self.decode_rate) is not None:
            written += f" at {decode:.1f} tok/s"
        prefilled = f"prefilled {self.prefilled} of {self.prompt_tokens} prompt tokens"
        if (prefill := self.prefill_rate) is not None:
            prefilled += f" at {prefill:.1f} tok/s"
        parts = [written, prefilled]
        if drafted := sum(stats.drafted_tokens for stats in self.generations):
            parts.append(f"{drafted} drafted")
        if (first := self.time_to_first_token) is not None and first > 0:
            parts.append(f"first token {first:.1f} s")
        return ", ".join(parts)

    def to_json(self) -> dict[str, float | None]:
        """``--json``'s turn figures (rates and times rounded; null where nothing was timed)."""
        decode, prefill, first = self.decode_rate, self.prefill_rate, self.time_to_first_token
        return {
            "decode_tokens_per_second": round(decode, 2) if decode is not None else None,
            "prefill_tokens_per_second": round(prefill, 2) if prefill is not None else None,
            "time_to_first_token": round(first, 4) if first is not None else None,
        }


def generation_rate(stats: Stats) -> float | None:
    """One generation's decode rate (None for a generation of one token, or one not timed)."""
    return TurnFigures([stats]).decode_rate

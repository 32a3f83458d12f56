"""Find an earlier conversation: every saved conversation's prompts, replies, summaries and tool
results searched for a text (case-insensitive), newest conversation first.

A file is read whole and looked through once; only a file that holds the text is parsed, so that a
match in a marker's bookkeeping (a call id, a date) is not reported and each match knows which
exchange it is in. Links, FIFOs and files that are not conversations are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mcp_chat_tui.core.files import open_regular, regular_file
from mcp_chat_tui.transcript.format import TranscriptError, parse
from mcp_chat_tui.transcript.markers import decode_unholdable
from mcp_chat_tui.transcript.model import Exchange
from mcp_chat_tui.transcript.store import conversations_dir

CONTEXT_CHARS = 40  # shown each side of a match
TITLE_CHARS = 100  # of the first question, which names the conversation in a list
MAX_MATCHES = 200  # the first this many, newest conversation first
MAX_FILE_BYTES = 64 * 1024 * 1024  # a larger file is searched in its first part only


@dataclass(frozen=True)
class Match:
    """One place a conversation says the text: its file, when it was last written, which exchange
    (0 is the first prompt), where in it ("you", "reply", "result of TOOL", "summary") and the line
    around the match. A match inside the line shown for the one before it is not listed again."""

    path: Path
    modified: datetime
    first_question: str
    exchange: int
    where: str
    context: str


def search_conversations(text: str, folder: Path | None = None, limit: int = MAX_MATCHES) -> list[Match]:
    """The places the saved conversations in ``folder`` say ``text``, newest conversation first."""
    if not text.strip():
        return []
    folder = folder or conversations_dir()
    if not folder.is_dir():
        return []
    pattern = re.compile(re.escape(text), re.IGNORECASE)
    dated = []
    for path in folder.glob("*.md"):
        try:
            if regular_file(path):
                dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    matches: list[Match] = []
    for mtime, path in sorted(dated, reverse=True):
        content = _read(path)
        if content is None or not pattern.search(content):
            continue
        try:
            transcript = parse(content, path)
        except TranscriptError:
            continue
        first = _title(transcript.exchanges[0].user) if transcript.exchanges else ""
        when = datetime.fromtimestamp(mtime)
        for index, exchange in enumerate(transcript.exchanges):
            for where, body in _texts(exchange):
                shown_until = 0  # the end of the line listed for the last match in this body
                for found in pattern.finditer(body):
                    if found.start() < shown_until:
                        continue
                    matches.append(Match(path, when, first, index, where, _context(body, found.start(), found.end())))
                    shown_until = found.end() + CONTEXT_CHARS
                    if len(matches) >= limit:
                        return matches
    return matches


def _title(question: str) -> str:
    """The first question on one line, at most ``TITLE_CHARS`` long (a pasted file can be megabytes)."""
    line = " ".join(question[: TITLE_CHARS * 4].split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def _read(path: Path) -> str | None:
    try:
        descriptor = open_regular(path, os.O_RDONLY)
        with os.fdopen(descriptor, "rb") as file:
            data = file.read(MAX_FILE_BYTES)
    except OSError:
        return None
    return decode_unholdable(data.decode("utf-8", errors="replace"))


def _texts(exchange: Exchange) -> Iterator[tuple[str, str]]:
    """What one exchange says, part by part, with where each part is."""
    yield "you", exchange.user
    for step in exchange.steps:
        if step.text:
            yield "reply", step.text
        for proposal in step.proposals:
            if proposal.result is not None and proposal.result.content:
                yield f"result of {proposal.result.name or 'a tool'}", proposal.result.content
    if exchange.summary:
        yield "summary", exchange.summary


def _context(body: str, start: int, end: int) -> str:
    """The match with up to ``CONTEXT_CHARS`` either side, on one line."""
    before = body[max(0, start - CONTEXT_CHARS) : start]
    after = body[end : end + CONTEXT_CHARS]
    head = "…" if start > CONTEXT_CHARS else ""
    tail = "…" if end + CONTEXT_CHARS < len(body) else ""
    return " ".join(f"{head}{before}{body[start:end]}{after}{tail}".split())

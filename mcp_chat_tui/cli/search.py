"""``mcp-chat-tui --search TEXT``: the saved conversations that say TEXT, printed for a person (the
date, the conversation's first question, where in it, the line around the match, and how to open
it) or with ``--json`` as a list for a script."""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.text import Text

from mcp_chat_tui.cli.plain_console import literal
from mcp_chat_tui.transcript.search import Match, search_conversations
from mcp_chat_tui.transcript.store import conversations_dir

FOUND, NONE_FOUND = 0, 3  # the exit codes (cli/report.py's ANSWERED and INCOMPLETE)


def run_search(text: str, *, as_json: bool = False) -> int:
    matches = search_conversations(text)
    if as_json:
        print(json.dumps([_as_dict(match) for match in matches], ensure_ascii=False, indent=1))
        return FOUND if matches else NONE_FOUND
    console = Console(highlight=False, soft_wrap=True)
    if not matches:
        Console(stderr=True, highlight=False).print(
            literal(f"no saved conversation says {text!r} (searched {conversations_dir()})")
        )
        return NONE_FOUND
    shown = None
    for match in matches:
        if match.path != shown:
            shown = match.path
            title = Text.assemble((match.modified.strftime("%Y-%m-%d %H:%M"), "dim"), "  ")
            title.append_text(literal(match.first_question or match.path.name, "bold"))
            console.print(title)
            console.print(literal(f"  mcp-chat-tui --transcript {_quoted(str(match.path))}", "dim"))
        line = Text(f"  #{match.exchange + 1} {match.where}: ", style="cyan")
        line.append_text(_marked(match.context, text))
        console.print(line)
    return FOUND


def _as_dict(match: Match) -> dict[str, object]:
    return {
        "path": str(match.path),
        "modified": match.modified.isoformat(timespec="seconds"),
        "first_question": match.first_question,
        "exchange": match.exchange,
        "where": match.where,
        "context": match.context,
    }


def _marked(context: str, text: str) -> Text:
    """``context`` with each occurrence of ``text`` in bold (control characters shown, not run)."""
    shown = literal(context)
    shown.highlight_words([text], style="bold reverse", case_sensitive=False)
    return shown


def _quoted(path: str) -> str:
    import shlex

    return shlex.quote(path) if sys.platform != "win32" else f'"{path}"'

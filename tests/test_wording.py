"""What the app says is said in words a person uses: a count takes its noun in the right number
(``core/text.py: counted``), never "server(s)" or "match(es)"."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from mcp_chat_tui.core.text import counted

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_chat_tui"
HEDGED_PLURAL = re.compile(r"[a-z]\((?:s|es)\)")


def test_a_count_takes_its_noun_in_the_right_number():
    assert [counted(n, "server") for n in (0, 1, 2)] == ["0 servers", "1 server", "2 servers"]
    assert counted(1, "match", "matches") == "1 match" and counted(7, "match", "matches") == "7 matches"


def test_no_string_the_app_shows_hedges_a_plural():
    hedged = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            is_text = token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1)
            if is_text and HEDGED_PLURAL.search(token.string) and not token.string.lstrip("rbuf").startswith('"""'):
                hedged.append(f"{path.relative_to(PACKAGE)}:{token.start[0]}: {token.string[:60]}")
    assert hedged == []

"""Find an earlier conversation: the search over real saved files, ``--search`` in a real process, and
the palette's search in the real app opening the conversation at the match."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mcp_chat_tui.transcript.model import Exchange, Proposal, Step, ToolResult, Transcript
from mcp_chat_tui.transcript.render import render
from mcp_chat_tui.transcript.search import search_conversations
from tests.test_oneshot import run_cli


def saved(folder: Path, name: str, exchanges: list[Exchange], age: float = 0.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(render(Transcript(exchanges)), encoding="utf-8")
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def weather_call(city: str, answer: str) -> Step:
    call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "weather", "arguments": json.dumps({"city": city})},
    }
    return Step(
        text="Let me look.", proposals=[Proposal(call, "yo", ToolResult("weather", "call_7", "done", answer, "wx"))]
    )


def test_prompts_replies_results_and_summaries_match_newest_first_and_bookkeeping_does_not(tmp_path):
    old = saved(
        tmp_path,
        "old",
        [
            Exchange(
                user="What about Kyoto?", model="m", steps=[weather_call("Kyoto", "Rain in KYOTO"), Step(text="Rainy.")]
            )
        ],
        age=3600,
    )
    new = saved(
        tmp_path,
        "new",
        [
            Exchange(user="hello", model="m", steps=[Step(text="Hi.")]),
            Exchange(user="and tomorrow?", model="m", steps=[Step(text="Kyoto will be dry.")], summary="kyoto talk"),
        ],
    )
    found = [(m.path, m.exchange, m.where, m.context) for m in search_conversations("kyoto", tmp_path)]
    assert found == [
        (new, 1, "reply", "Kyoto will be dry."),
        (new, 1, "summary", "kyoto talk"),
        (old, 0, "you", "What about Kyoto?"),
        (old, 0, "result of weather", "Rain in KYOTO"),
    ]
    assert search_conversations("call_7", tmp_path) == []  # a call id is bookkeeping, not what was said
    assert search_conversations("  ", tmp_path) == []


def test_links_binary_files_and_broken_files_are_skipped_not_fatal(tmp_path):
    real = saved(tmp_path / "elsewhere", "real", [Exchange(user="secret plan", model="m", steps=[Step(text="ok")])])
    (tmp_path / "link.md").symlink_to(real)
    (tmp_path / "binary.md").write_bytes(b"\x00\xff secret plan \x00")
    (tmp_path / "cache.safetensors").write_bytes(b"secret plan")
    assert search_conversations("secret plan", tmp_path) == []
    assert search_conversations("secret", tmp_path / "missing") == []


def test_the_context_is_one_line_around_the_match():
    from mcp_chat_tui.transcript.search import _context

    body = "a" * 100 + " needle\nin a\thaystack " + "b" * 100
    start = body.index("needle")
    assert _context(body, start, start + 6) == "…" + "a" * 39 + " needle in a haystack " + "b" * 25 + "…"


def test_the_cli_prints_matches_and_how_to_open_them_and_says_when_there_are_none(tmp_path, isolated_user_dirs):
    folder = isolated_user_dirs / "data" / "conversations"
    path = saved(folder, "trip", [Exchange(user="plan a trip to Lisbon", model="m", steps=[Step(text="Sure.")])])
    result = run_cli("--search", "LISBON", cwd=tmp_path, dirs=isolated_user_dirs)
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "plan a trip to Lisbon" in out and f"mcp-chat-tui --transcript {path}" in out and "#1 you:" in out
    listed = run_cli("--search", "lisbon", "--json", cwd=tmp_path, dirs=isolated_user_dirs)
    assert json.loads(listed.stdout)[0] | {"modified": ""} == {
        "path": str(path), "modified": "", "first_question": "plan a trip to Lisbon",
        "exchange": 0, "where": "you", "context": "plan a trip to Lisbon",
    }  # fmt: skip
    none = run_cli("--search", "Porto", cwd=tmp_path, dirs=isolated_user_dirs)
    assert none.returncode == 3 and "no saved conversation says 'Porto'" in none.stderr


async def test_the_palette_search_opens_the_conversation_at_the_match(tmp_path, isolated_user_dirs):
    from textual.widgets import Input

    from mcp_chat_tui.ui.screens.search import SearchScreen
    from mcp_chat_tui.ui.widgets.chat import UserMessage
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import SIZE, make_app, wait_for, wait_ready

    folder = isolated_user_dirs / "data" / "conversations"
    long_reply = "\n\n".join(f"paragraph {n}" for n in range(30))
    exchanges = [Exchange(user=f"question {n}", model="m", steps=[Step(text=long_reply)]) for n in range(6)]
    exchanges[1] = Exchange(user="where is the lighthouse?", model="m", steps=[Step(text=long_reply)])
    path = saved(folder, "long", exchanges)
    app = make_app(ScriptedEngine([]), [], transcript_file=tmp_path / "current.md")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot, app)
        app.action_search()
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), what="the search screen")
        await pilot.press(*"lighthouse")
        screen = app.screen
        await wait_for(pilot, lambda: screen.searched == "lighthouse" and screen.matches, what="the matches")
        assert screen.query_one(Input).value == "lighthouse"
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.transcript_file == path, what="the conversation opened")
        chat = app.chat

        def shows_match() -> bool:
            shown = list(chat.query(UserMessage))
            return len(shown) == 6 and chat.scroll_y > 0 and abs(shown[1].region.y - chat.region.y) <= 1

        await wait_for(pilot, shows_match, what="the chat at the matching question")


def test_a_huge_first_question_names_its_conversation_in_one_line_and_repeats_are_listed_once(tmp_path):
    pasted = "needle " * 10 + "x" * 2_000_000 + "\nneedle at the end"
    path = saved(tmp_path, "pasted", [Exchange(user=pasted, model="m", steps=[Step(text="ok")])])
    found = search_conversations("needle", tmp_path)
    # eleven times "needle": the ten in a row take two lines (a match inside a line listed is not listed
    # again), then the last one
    assert [(m.path, m.where) for m in found] == [(path, "you")] * 3
    assert found[0].context.startswith("needle needle") and found[-1].context.endswith("needle at the end")
    title = found[0].first_question
    assert len(title) == 100 and title.endswith("…") and "\n" not in title and title.startswith("needle needle")


async def test_at_80_columns_each_listed_match_shows_the_word_found(tmp_path, isolated_user_dirs):
    from mcp_chat_tui.ui.screens.search import SearchScreen
    from tests.fakes import ScriptedEngine
    from tests.ui_helpers import make_app, wait_for, wait_ready

    folder = isolated_user_dirs / "data" / "conversations"
    question = "a long question about the coast, the ships and the harbour before the word lighthouse comes"
    saved(folder, "coast", [Exchange(user=question, model="m", steps=[Step(text="Ask the lighthouse keeper.")])])
    app = make_app(ScriptedEngine([]), [], transcript_file=tmp_path / "current.md")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot, app)
        app.action_search()
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen), what="the search screen")
        await pilot.press(*"lighthouse")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.matches) == 2, what="the matches")
        await pilot.pause()
        table = screen.query_one("#search-matches")
        rows = ["".join(segment.text for segment in table.render_line(y)) for y in (1, 2)]
        assert all("lighthouse" in row for row in rows), rows

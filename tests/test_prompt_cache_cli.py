"""The prompt cache across real restarts of the CLI (``-p`` with ``--transcript``, the demo model and
server): the second run prefills only its question; a run killed while it wrote the cache, and a disk
that takes the conversation but not the cache, leave a conversation that goes on as if there were no cache."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp_chat_tui.core.paths import prompt_cache_path
from mcp_chat_tui.transcript import parse, read_transcript_text
from tests import cli_in_process
from tests.helpers import wait_until

CLI = [sys.executable, "-m", "mcp_chat_tui.cli.main", "--demo", "--yes", "--json"]
FIRST, SECOND, THIRD = "What is 12 * 7?", "What is 84 / 2?", "What is 6 * 7?"


def environment(dirs: Path) -> dict[str, str]:
    """Each run's own folders; its cache folder is new, so the system prompt's and tools' cache kept
    across conversations (engine/prefix_cache.py) never stands in for the conversation's file here."""
    env = dict(os.environ, COLUMNS="120")
    for kind in ("CONFIG", "DATA", "LOG"):
        env[f"MCP_CHAT_TUI_{kind}_DIR"] = str(dirs / kind.lower())
    dirs.mkdir(parents=True, exist_ok=True)
    env["MCP_CHAT_TUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=dirs)
    return env


def ask(prompt: str, conversation: Path, dirs: Path, **options) -> dict:
    """One ``-p`` run on ``conversation``; its ``--json`` object. In this process (tests/cli_in_process.py:
    what is tested is the run's report and files), unless ``options`` ask for a process of its own."""
    args = [*CLI[3:], "-p", prompt, "--transcript", str(conversation)]
    if options:
        done = subprocess.run(
            [*CLI[:3], *args],
            cwd=conversation.parent,
            env=environment(dirs),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            **options,
        )
    else:
        done = cli_in_process.run_cli(args, cwd=conversation.parent, env=environment(dirs))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def first_generation(report: dict) -> dict:
    return report["tokens"]["generations"][0]


def without_cache(prompt: str, conversation: Path, dirs: Path) -> dict:
    """The same question on a copy of the conversation that has no cache beside it. The copy must
    hold a finished turn: one whose last reply goes on is continued first, and that run's own cache
    then holds all but the question (test_a_copy_whose_reply_goes_on_is_answered_first...)."""
    copy = dirs / "reference" / conversation.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(conversation, copy)
    text = read_transcript_text(copy)
    assert not parse(text, copy).turn_goes_on(), f"the copied conversation's last reply goes on:\n{text}"
    report = ask(prompt, copy, dirs)
    assert first_generation(report)["prefilled"] == first_generation(report)["prompt"], (report, text)
    return report


def same_answer(a: dict, b: dict) -> bool:
    calls = [[(c["tool"], c["arguments"], c["result"]) for c in r["calls"]] for r in (a, b)]
    return a["answer"] == b["answer"] and calls[0] == calls[1]


def test_a_restarted_run_prefills_only_its_question(tmp_path):
    conversation = tmp_path / "chat.md"
    ask(FIRST, conversation, tmp_path)
    assert prompt_cache_path(conversation).is_file()
    reference = without_cache(SECOND, conversation, tmp_path)
    report = ask(SECOND, conversation, tmp_path)
    first = first_generation(report)
    assert first["prefilled"] <= 0.1 * first["prompt"], first
    assert same_answer(report, reference) and "42" in report["answer"]
    assert stat_mode(prompt_cache_path(conversation)) == stat_mode(conversation) == 0o600


def test_a_copy_whose_reply_goes_on_is_answered_first_then_only_the_question_is_prefilled(tmp_path):
    """How a copy with no cache file beside it can prefill only its question (18 of 452 tokens, seen
    once in CI): its last reply was still going on (the result saved, the answer not, as a run
    stopped there leaves it), so the run answers it first, and the KV cache that answer leaves in
    memory holds all of the conversation but the new question. No file stands in: the copy has none
    beside it and the cache folder is new; the answer computed again is the one the first run gave."""
    conversation = tmp_path / "chat.md"
    ask(FIRST, conversation, tmp_path)
    finished = read_transcript_text(conversation)
    answer = parse(finished, conversation).exchanges[-1].steps[-1].text.strip()
    cut = finished[: finished.rindex(answer)].rstrip() + "\n"  # the answer not saved yet
    cut = cut.replace("🤖:[demo model]", '🤖:[demo model] {"end": "unfinished"}', 1)
    copy = tmp_path / "copy" / "chat.md"
    copy.parent.mkdir()
    copy.write_text(cut, encoding="utf-8")
    assert parse(cut, copy).turn_goes_on() and not prompt_cache_path(copy).exists()
    report = ask(SECOND, copy, tmp_path)
    first = first_generation(report)
    question_only = first["prompt"] - first["prefilled"]
    assert 0 < first["prefilled"] < 0.1 * first["prompt"] and question_only > 0.9 * first["prompt"], first
    exchanges = parse(read_transcript_text(copy), copy).exchanges
    assert exchanges[0].steps[-1].text.strip() == answer and "42" in report["answer"]


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_killed_while_writing_the_cache_the_conversation_goes_on(tmp_path):
    """SIGKILL as the answer is saved, when the cache is written next: wherever the kill lands, the
    conversation goes on. The cache is written in a private folder with an unpredictable name (no
    pipe or link can be planted there), so what a kill in the middle of it leaves is planted here:
    that folder with the start of a file, and an older version's ``.NAME….partial.safetensors``."""
    conversation = tmp_path / "chat.md"
    cache = prompt_cache_path(conversation)
    run = subprocess.Popen(
        [*CLI, "-p", FIRST, "--transcript", str(conversation)],
        cwd=tmp_path,
        env=environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def answer_saved() -> bool:  # the reply finished and saved: the cache is written next
            text = conversation.read_text(encoding="utf-8") if conversation.exists() else ""
            return "84" in text.rsplit("\n🤖:", 1)[-1] and '"unfinished"' not in text

        assert wait_until(answer_saved, 90), "the answer saved"
        run.send_signal(signal.SIGKILL)
        run.wait(10)
    finally:
        run.kill()
    cache.unlink(missing_ok=True)
    folder = cache.with_name(f".{cache.name}.0123456789abcdef.partial")
    folder.mkdir(exist_ok=True)
    (folder / "cache.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")  # a killed write's start
    older = cache.with_name(f".{cache.name}.partial.safetensors")
    older.write_bytes(b"\x10\x00")

    assert len(parse(read_transcript_text(conversation), conversation).exchanges) == 1
    reference = without_cache(SECOND, conversation, tmp_path)
    report = ask(SECOND, conversation, tmp_path)
    assert same_answer(report, reference)
    assert cache.is_file() and not folder.exists() and not older.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".chat")] == []
    third = ask(THIRD, conversation, tmp_path)
    assert first_generation(third)["prefilled"] <= 0.1 * first_generation(third)["prompt"]


def small_files_only() -> None:
    """In the child: files may grow to 256 KiB (the conversation does, the cache does not), as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, 256 << 10))


def test_a_disk_that_takes_the_conversation_but_not_the_cache(tmp_path):
    conversation = tmp_path / "chat.md"
    report = ask(FIRST, conversation, tmp_path, preexec_fn=small_files_only)
    assert report["save_error"] is None and "84" in report["answer"]
    assert len(parse(read_transcript_text(conversation), conversation).exchanges) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("chat", ".chat"))) == ["chat.md"]
    log = (tmp_path / "log" / "mcp-chat-tui.log").read_text(encoding="utf-8")
    assert f"prompt cache {prompt_cache_path(conversation)} not saved" in log
    assert "the conversation itself is saved" in log

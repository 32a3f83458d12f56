"""The KV cache kept beside a conversation (engine/cache_file.py), on the real MLX engine: a new
engine (a restart) resumes from it and prefills only the new tokens; a cache of another model, of
a changed conversation, a corrupt or a truncated file is ignored and the reply is token for token
the one without a cache."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from mcp_chat_tui.core.paths import prompt_cache_path
from mcp_chat_tui.engine import prefix_cache
from mcp_chat_tui.engine.cache_file import CacheFile, keep_cache_beside, read_tokens
from mcp_chat_tui.engine.events import Done, Stats, TextDelta, ToolCallProposed
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from tests.helpers import wait_until

DEMO_MODEL = Path(__file__).resolve().parents[1] / "mcp_chat_tui" / "demo" / "model"
SYSTEM = {"role": "system", "content": "Be brief."}


@pytest.fixture(autouse=True)
def a_cache_folder_per_engine(tmp_path, monkeypatch):
    """Each engine its own cache folder: the system prompt's and tools' cache kept across
    conversations (engine/prefix_cache.py) never stands in for the conversation's file here."""
    count = iter(range(1_000_000))
    monkeypatch.setattr(prefix_cache, "user_cache_dir", lambda: tmp_path / f"cache-{next(count)}")


async def demo_tools() -> list[dict]:
    from mcp_chat_tui.core.tools import ToolSpec
    from mcp_chat_tui.demo.server import server

    return [
        ToolSpec(server="demo", name=t.name, description=t.description or "", input_schema=t.input_schema).to_openai()
        for t in await server.list_tools()
    ]


async def reply(engine: MlxEngine, messages: list[dict], tools: list[dict] | None = None) -> dict:
    """One reply: its text, its calls, its figures and how it ended."""
    text, calls, stats, done = "", [], None, None
    async for event in engine.stream(messages, tools):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, ToolCallProposed):
            calls.append(event)
        elif isinstance(event, Stats):
            stats = event
        elif isinstance(event, Done):
            done = event.finish_reason
    return {"text": text, "calls": [(c.name, c.arguments) for c in calls], "stats": stats, "done": done, "raw": calls}


async def answer_with_tools(engine: MlxEngine, messages: list[dict], tools: list[dict]) -> list[dict]:
    """A whole turn on the demo model: its calls answered with fixed results until it answers; the messages after it."""
    messages = list(messages)
    for _ in range(4):
        result = await reply(engine, messages, tools)
        if not result["raw"]:
            return messages + [{"role": "assistant", "content": result["text"]}]
        call = result["raw"][0]
        messages += [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": "12 * 7 = 84"},
        ]
    raise AssertionError("the demo model did not answer")


class Model:
    """How a conversation goes on one model: the demo model (with its tools) or a built random one."""

    def __init__(self, path: Path, tools: list[dict] | None) -> None:
        self.path, self.tools = path, tools

    def engine(self) -> MlxEngine:
        return MlxEngine(str(self.path), max_tokens=24)

    async def first_turn(self, engine: MlxEngine) -> list[dict]:
        messages = [SYSTEM, {"role": "user", "content": "What is 12 * 7?"}]
        if self.tools is not None:
            return await answer_with_tools(engine, messages, self.tools)
        result = await reply(engine, messages)
        assert result["done"] == "length"  # the random model runs to max_tokens: the cache is saved after it
        return messages + [{"role": "assistant", "content": result["text"]}]


@pytest.fixture(params=["demo", "built"])
async def model(request, tiny_model) -> Model:
    if request.param == "demo":
        return Model(DEMO_MODEL, await demo_tools())
    return Model(tiny_model, None)


SECOND = {"role": "user", "content": "What is the time in Tokyo?"}


async def fresh_reply(model: Model, messages: list[dict]) -> dict:
    """The reply of an engine with no cache at all: what every reply must equal, token for token."""
    engine = model.engine()
    await engine.load()
    try:
        return await reply(engine, messages, model.tools)
    finally:
        await engine.close()


async def resumed_reply(model: Model, conversation: Path, messages: list[dict]) -> dict:
    """The reply of a new engine (as after a restart) that keeps its cache beside ``conversation``."""
    engine = model.engine()
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        return await reply(engine, messages, model.tools)
    finally:
        await engine.close()


async def saved_conversation(model: Model, conversation: Path) -> tuple[list[dict], list[int]]:
    """A first turn whose cache is saved beside ``conversation``; its messages and the tokens the file holds."""
    engine = model.engine()
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        messages = await model.first_turn(engine)
        held = list(engine.cached_tokens)
        key = engine._cache_keeper.key
    finally:
        await engine.close()
    assert prompt_cache_path(conversation).is_file()
    assert read_tokens(CacheFile(conversation), key) == held
    return messages, held


def prompt_tokens(model: Model, messages: list[dict]) -> list[int]:
    from mlx_lm.utils import load

    _, tokenizer = load(str(model.path))
    tools = {"tools": model.tools} if model.tools else {}
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=True, **tools))


def shared(a: list[int], b: list[int]) -> int:
    count = 0
    while count < min(len(a), len(b)) and a[count] == b[count]:
        count += 1
    return count


def same_reply(a: dict, b: dict) -> bool:
    return (a["text"], a["calls"], a["stats"].generated_tokens) == (b["text"], b["calls"], b["stats"].generated_tokens)


async def test_a_new_engine_resumes_from_the_file_and_prefills_only_the_new_tokens(model, tmp_path):
    conversation = tmp_path / "chat.md"
    messages, held = await saved_conversation(model, conversation)
    resumed = messages + [SECOND]
    prompt = prompt_tokens(model, resumed)
    reused = shared(held, prompt)
    assert reused >= len(prompt_tokens(model, messages[:2]))  # at least the first prompt
    if model.tools is not None:  # the demo model's replies read back as the tokens it wrote: all but the last
        assert reused > 0.8 * len(prompt)

    result = await resumed_reply(model, conversation, resumed)
    assert result["stats"].prompt_tokens == len(prompt)
    assert result["stats"].prefilled_tokens == len(prompt) - reused
    assert same_reply(result, await fresh_reply(model, resumed))


def flip_bytes_in_the_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16] = bytes(b ^ 0xFF for b in data[middle : middle + 16])
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])


def not_safetensors(path: Path) -> None:
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not a header}" + b"\0" * 64)


@pytest.mark.parametrize(
    ("damage", "logged"),
    [
        (flip_bytes_in_the_middle, "do not match their checksum"),
        (truncate, "cannot be read"),
        (not_safetensors, "cannot be read"),
    ],
)
async def test_a_corrupt_or_truncated_file_is_ignored_and_the_reply_is_the_one_without_it(
    model, tmp_path, caplog, damage, logged
):
    conversation = tmp_path / "chat.md"
    messages, _ = await saved_conversation(model, conversation)
    damage(prompt_cache_path(conversation))
    resumed = messages + [SECOND]
    with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
        result = await resumed_reply(model, conversation, resumed)
    assert result["stats"].prefilled_tokens == result["stats"].prompt_tokens
    assert same_reply(result, await fresh_reply(model, resumed))
    assert any(logged in record.getMessage() for record in caplog.records), caplog.text


async def test_a_cache_of_another_model_is_ignored(tiny_model, tmp_path, caplog):
    conversation = tmp_path / "chat.md"
    built = Model(tiny_model, None)
    messages, _ = await saved_conversation(built, conversation)
    demo = Model(DEMO_MODEL, None)  # the same conversation, resumed on another model (tools off: same template path)
    resumed = messages + [SECOND]
    with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
        result = await resumed_reply(demo, conversation, resumed)
    assert result["stats"].prefilled_tokens == result["stats"].prompt_tokens
    assert same_reply(result, await fresh_reply(demo, resumed))
    assert "made with another model" in caplog.text


async def test_a_rebuilt_model_in_the_same_folder_is_another_model(tmp_path, caplog):
    from tests.models import build_tiny_model

    folder = build_tiny_model(tmp_path / "model", tools=False)
    conversation = tmp_path / "chat.md"
    messages, _ = await saved_conversation(Model(folder, None), conversation)
    (folder / "model.safetensors").unlink()
    build_tiny_model(folder, tools=False, seed=7)  # other weights, same shapes and files
    resumed = messages + [SECOND]
    with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
        result = await resumed_reply(Model(folder, None), conversation, resumed)
    assert result["stats"].prefilled_tokens == result["stats"].prompt_tokens
    assert "made with another model" in caplog.text


async def test_a_cache_computed_in_another_dtype_is_ignored(tiny_model, tmp_path, caplog):
    conversation = tmp_path / "chat.md"
    messages, _ = await saved_conversation(Model(tiny_model, None), conversation)  # computed in float32, as stored
    engine = MlxEngine(str(tiny_model), max_tokens=24, compute_dtype="bfloat16")
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
            result = await reply(engine, messages + [SECOND])
    finally:
        await engine.close()
    assert result["stats"].prefilled_tokens == result["stats"].prompt_tokens
    assert "made with another model or other model settings" in caplog.text


async def test_an_edited_earlier_message_uses_nothing_after_the_edit(model, tmp_path):
    conversation = tmp_path / "chat.md"
    messages, held = await saved_conversation(model, conversation)
    edited = [SYSTEM, {"role": "user", "content": "What is 13 * 7?"}] + messages[2:] + [SECOND]
    prompt = prompt_tokens(model, edited)
    reused = shared(held, prompt)
    assert reused < len(prompt_tokens(model, edited[:2]))  # the edit is in the first question

    result = await resumed_reply(model, conversation, edited)
    assert result["stats"].prefilled_tokens == len(prompt) - reused
    assert same_reply(result, await fresh_reply(model, edited))


async def test_a_cache_ahead_of_the_transcript_gives_the_reply_without_it(model, tmp_path):
    """Killed after the cache was written and before the transcript was: the file holds a turn
    the conversation does not; only the part they share is used."""
    conversation = tmp_path / "chat.md"
    messages, held = await saved_conversation(model, conversation)
    behind = messages[:2]  # the first question, its reply not saved
    prompt = prompt_tokens(model, behind)
    result = await resumed_reply(model, conversation, behind)
    assert shared(held, prompt) == len(prompt)
    assert result["stats"].prefilled_tokens == 1  # the prompt's last token: the model reads at least one
    assert same_reply(result, await fresh_reply(model, behind))


async def test_a_failed_write_is_logged_and_the_reply_goes_on(tiny_model, tmp_path, caplog):
    conversation = tmp_path / "chat.md"
    prompt_cache_path(conversation).mkdir()  # the cache cannot be written where a folder stands
    built = Model(tiny_model, None)
    engine = built.engine()
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
            first = await reply(engine, [SYSTEM, {"role": "user", "content": "hello"}])
            second = await reply(engine, [SYSTEM, {"role": "user", "content": "hello again"}])
    finally:
        await engine.close()
    assert first["done"] == second["done"] == "length"
    assert "not saved" in caplog.text and "the conversation itself is saved" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == [prompt_cache_path(conversation).name]  # no temporary file left


async def test_the_file_is_only_read_when_not_saving(tiny_model, tmp_path):
    conversation = tmp_path / "chat.md"
    built = Model(tiny_model, None)
    messages, held = await saved_conversation(built, conversation)
    before = prompt_cache_path(conversation).read_bytes()
    engine = built.engine()
    await engine.load()
    engine.keep_cache_in(conversation, save=False)
    try:
        result = await reply(engine, messages + [SECOND])
    finally:
        await engine.close()
    prompt = prompt_tokens(built, messages + [SECOND])
    assert shared(held, prompt) >= len(prompt_tokens(built, messages[:2]))
    assert result["stats"].prefilled_tokens == len(prompt) - shared(held, prompt)
    assert prompt_cache_path(conversation).read_bytes() == before


def test_the_cache_file_is_named_after_the_conversation_and_engines_without_one_are_left_alone(tmp_path):
    assert prompt_cache_path(tmp_path / "2026-01-02-chat.md") == tmp_path / "2026-01-02-chat.cache.safetensors"

    from mcp_chat_tui.engine.remote import OpenAIEngine

    keep_cache_beside(OpenAIEngine("http://127.0.0.1:9/v1", "remote"), tmp_path / "chat.md")  # nothing to keep
    assert list(tmp_path.iterdir()) == []


def test_listing_conversations_removes_the_caches_of_those_deleted_or_renamed(tmp_path):
    from mcp_chat_tui.transcript import recent_conversations

    for name in ("kept.md", "kept.cache.safetensors", ".kept.cache.safetensors.partial.safetensors"):
        (tmp_path / name).write_text("x")
    for name in ("deleted.cache.safetensors", ".deleted.cache.safetensors.partial.safetensors", "notes.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "renamed.md").write_text("🙂: hello\n")

    assert sorted(c.path.name for c in recent_conversations(tmp_path)) == ["kept.md", "renamed.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".kept.cache.safetensors.partial.safetensors",
        "kept.cache.safetensors",
        "kept.md",
        "notes.txt",
        "renamed.md",
    ]


async def test_a_request_aside_leaves_the_conversations_cache_in_memory_and_in_its_file(tiny_model, tmp_path):
    """A summary or a server's sample (``aside``) is generated in a cache of its own: the next reply of
    the conversation prefills only its new tokens, and the file still holds the conversation's."""
    model = Model(tiny_model, None)
    conversation = tmp_path / "chat.md"
    engine = model.engine()
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        messages = await model.first_turn(engine)
        assert wait_until(lambda: not engine.busy)  # the MLX thread saves the cache after the reply
        held = list(engine.cached_tokens)
        stamp = prompt_cache_path(conversation).stat().st_mtime_ns
        aside = [{"role": "system", "content": "Summarise."}, {"role": "user", "content": "a whole other text"}]
        done = []
        async for event in engine.stream(aside, None, known_tools=set(), aside=True):
            done.append(event)
        assert isinstance(done[-1], Done) and done[-2].prefilled_tokens == len(prompt_tokens(model, aside))
        assert wait_until(lambda: not engine.busy)
        assert list(engine.cached_tokens) == held
        assert prompt_cache_path(conversation).stat().st_mtime_ns == stamp
        assert read_tokens(CacheFile(conversation), engine._cache_keeper.key) == held

        resumed = messages + [SECOND]
        result = await reply(engine, resumed)
        assert result["stats"].prefilled_tokens == len(prompt_tokens(model, resumed)) - shared(
            held, prompt_tokens(model, resumed)
        )
    finally:
        await engine.close()


async def test_a_cache_saved_with_a_draft_model_resumes_with_it_and_not_without(tiny_model, tmp_path, caplog):
    """With a draft model the cache holds the draft's layers after the model's: a new engine with the same
    draft resumes from the file; one without a draft (or with another) ignores it."""
    conversation = tmp_path / "chat.md"
    messages = [SYSTEM, {"role": "user", "content": "What is 12 * 7?"}]

    async def engine_with(**settings) -> MlxEngine:
        engine = MlxEngine(str(tiny_model), max_tokens=24, **settings)
        await engine.load()
        engine.keep_cache_in(conversation)
        return engine

    engine = await engine_with(draft_model=str(tiny_model))
    try:
        first = await reply(engine, messages)
        assert wait_until(lambda: not engine.busy) and prompt_cache_path(conversation).is_file()
        held = list(engine.cached_tokens)
    finally:
        await engine.close()
    resumed = messages + [{"role": "assistant", "content": first["text"]}, SECOND]
    prompt = prompt_tokens(Model(tiny_model, None), resumed)

    engine = await engine_with(draft_model=str(tiny_model))
    try:
        again = await reply(engine, resumed)
    finally:
        await engine.close()
    assert again["stats"].prefilled_tokens == len(prompt) - shared(held, prompt)

    caplog.set_level(logging.INFO)
    engine = await engine_with()
    try:
        without = await reply(engine, resumed)
    finally:
        await engine.close()
    assert without["stats"].prefilled_tokens == len(prompt)
    assert same_reply(without, again)


async def test_links_planted_beside_the_conversation_are_never_written_through(tiny_model, tmp_path, caplog):
    """A link at the cache's name is refused (logged); one at the name an older version wrote the
    cache to first, or any other, is never opened: the cache is written in a new private folder."""
    conversation = tmp_path / "chat.md"
    cache = prompt_cache_path(conversation)
    victims = tmp_path / "home"
    victims.mkdir()
    for name in ("cache-victim", "partial-victim"):
        (victims / name).write_text("precious\n")
        os.chmod(victims / name, 0o644)
    cache.symlink_to(victims / "cache-victim")
    older = cache.with_name(f".{cache.name}.partial.safetensors")  # 0.x wrote here, then renamed
    older.symlink_to(victims / "partial-victim")
    built = Model(tiny_model, None)
    engine = built.engine()
    await engine.load()
    engine.keep_cache_in(conversation)
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_chat_tui.engine.cache_file"):
            result = await reply(engine, [SYSTEM, {"role": "user", "content": "hello"}])
    finally:
        await engine.close()
    assert result["done"] == "length"
    for name in ("cache-victim", "partial-victim"):
        assert (victims / name).read_text() == "precious\n" and stat_mode(victims / name) == 0o644
    assert cache.is_symlink() and "symbolic link" in caplog.text and "not saved" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.cache.safetensors", "home"]  # the old link removed

    cache.unlink()  # with the name free, the cache is written (and read back) as usual
    messages, _ = await saved_conversation(built, conversation)
    assert not cache.is_symlink() and stat_mode(cache) == 0o600


def stat_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777

"""A cancelled model switch stops the load's work, not only the wait for it: the weights are read in
steps with a look at the cancel before each, so the MLX thread is free again after the step under way
(the current model stays, the half-loaded one is freed); a GGUF conversion stops at its next tensor."""

from __future__ import annotations

import asyncio
import threading

import mlx.core as mx
import pytest
from mlx.utils import tree_flatten

from mcp_chat_tui.agent import Agent, ApprovalPolicy
from mcp_chat_tui.conversation import Conversation, ModelSwitcher
from mcp_chat_tui.engine import loading
from mcp_chat_tui.engine.mlx_engine import MlxEngine
from mcp_chat_tui.engine.model_list import MLX, ModelChoice
from mcp_chat_tui.servers import ServerHub
from tests.fakes import ScriptedEngine


class HeldEval:
    """``mx.eval`` counting the arrays each call evaluates once ``armed``; the first such call waits
    until ``release``."""

    def __init__(self, armed: bool = True) -> None:
        self.real = mx.eval
        self.armed, self.entered, self.release = threading.Event(), threading.Event(), threading.Event()
        if armed:
            self.armed.set()
        self.evaluated = 0

    def __call__(self, *arrays):
        if not self.armed.is_set():
            return self.real(*arrays)
        self.evaluated += len(tree_flatten(list(arrays)))
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(60)
        return self.real(*arrays)


async def until(condition, what: str, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_a_cancelled_switch_reads_no_more_weights_after_the_step_under_way(tiny_model, monkeypatch):
    monkeypatch.setattr(loading, "STEP_BYTES", 1, raising=False)  # a step per array: the tiny model has many
    current = ScriptedEngine(["still here"])
    chat = Conversation(Agent(current, ServerHub([]), ApprovalPolicy("ask")), "current", save=False)
    new = MlxEngine(str(tiny_model), max_tokens=4)
    switcher = ModelSwitcher(chat, lambda choice: new)
    held = HeldEval()
    monkeypatch.setattr(mx, "eval", held)
    switch = asyncio.ensure_future(switcher.switch(ModelChoice("tiny", MLX, str(tiny_model), str(tiny_model), 1)))
    try:
        assert await asyncio.to_thread(held.entered.wait, 120), "the load never read its weights"
        switch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await switch
    finally:
        held.release.set()
    await until(lambda: new._closed and not new.busy, "the cancelled load to end and its model to be freed")
    monkeypatch.setattr(mx, "eval", held.real)
    total = len(tree_flatten(_parameters(tiny_model)))
    assert held.evaluated < total, f"{held.evaluated} of {total} weights read after the cancel"
    assert not new.loaded and chat.agent.engine is current and chat.model_label == "current"


def _parameters(folder):
    """The model's parameters, loaded lazily (nothing read): how many arrays a whole load reads."""
    from mlx_lm.utils import load_model

    model, _ = load_model(folder, lazy=True)
    return model.parameters()


def test_a_cancelled_gguf_conversion_stops_at_its_next_tensor_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    """A cancel seen at a conversion's progress report (one per tensor) ends it there: no converted
    folder and no temporary one are left, and the next load converts the file whole."""
    from gguf import GGMLQuantizationType

    from mcp_chat_tui.core.paths import user_cache_dir
    from mcp_chat_tui.engine.gguf import gguf_folder
    from tests.gguf_files import write_gguf

    monkeypatch.setenv("MCP_CHAT_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = write_gguf(tmp_path / "demo.gguf", matrix_type=GGMLQuantizationType.F16)
    stop = loading.LoadStop("demo.gguf")
    seen: list = []

    def report(progress) -> None:
        stop.check()
        seen.append(progress)
        if len([p for p in seen if p.stage == "convert"]) == 2:
            stop.cancel()  # as Esc does, from the other thread, between two tensors

    with pytest.raises(loading.LoadCancelled):
        gguf_folder(path, report)
    done = [p.bytes_done for p in seen if p.stage == "convert"]
    assert len(done) == 2 and done[-1] < (seen[0].bytes_total or 0)
    assert list((user_cache_dir() / "gguf").iterdir()) == []
    folder = gguf_folder(path, lambda progress: None)
    assert (folder / "config.json").exists() and list(folder.glob("model*.safetensors"))


async def test_reading_the_weights_reports_its_progress_step_by_step(tiny_model, monkeypatch):
    """The load says how far it has read the weights (the status bar's ``loading NAME (40%)``)."""
    monkeypatch.setattr(loading, "STEP_BYTES", 64 * 1024)
    seen: list = []
    engine = MlxEngine(str(tiny_model), max_tokens=4)
    try:
        await engine.load(seen.append)
        await until(lambda: any(p.stage == "ready" for p in seen), "the last report")
    finally:
        await engine.close()
    reading = [p for p in seen if p.stage == "load" and p.message.endswith("%)")]
    assert len(reading) > 2, [p.message for p in seen]
    done = [p.bytes_done for p in reading]
    assert done == sorted(done) and done[0] == 0 and done[-1] < reading[-1].bytes_total
    assert reading[0].message == f"loading {tiny_model} (0%)"

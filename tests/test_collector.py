"""The idle cycle collector: garbage collected at settle, survivors frozen, a full pass every N."""

from __future__ import annotations

import gc
import weakref

from mcp_chat_tui.core.collector import IdleCollector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[Node, weakref.ref]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, weakref.ref(b)


def test_settle_collects_cycles_and_freezes_what_survives():
    collector = IdleCollector(full_every=3)
    try:
        garbage, garbage_ref = cycle()
        del garbage
        kept, kept_ref = cycle()
        collector.settle()
        assert garbage_ref() is None  # the cycle nobody held was collected
        assert kept_ref() is not None and gc.get_freeze_count() > 0
        del kept  # now garbage, but frozen: the collector does not see it ...
        collector.settle()
        gc.collect()
        assert kept_ref() is not None
        collector.settle()  # ... until the third settle, a full pass, unfreezes everything first
        assert kept_ref() is None
        assert collector.settles == 3 and collector.last_seconds > 0
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0

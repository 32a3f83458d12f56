"""Python's cycle collector, run while the app is idle rather than in the middle of a reply.

The collector walks every object it tracks when it runs a full collection. After start-up that
is the imported libraries, the tokenizer and the model's Python objects: on a slow machine a
full collection takes 0.1-0.2 s, holding the interpreter lock, so the model (whose thread
needs that lock between tokens) and the screen both stop for that long. Left alone, one came
about every 20 seconds of generation, most of them mid-reply.

``IdleCollector.settle`` collects now and then freezes what survives (``gc.freeze``): frozen
objects are no longer walked, so collections during the next reply only look at what was made
since. It is called when start-up is done and when the app goes idle after a turn. Objects
frozen and later dropped in a reference cycle would never be freed, so every ``full_every``
settles (and on ``release``) everything is unfrozen and collected once.

A long reply makes many objects of its own (the rendered lines of every part of it, and the
Markdown blocks built for each update and dropped). Left to the collector, its full collections
walk all of them, taking longer the longer the reply: 0.1-0.45 s each, one or two every 1,000
tokens of a long Markdown reply. ``set_aside`` does what ``settle`` does at a point in the
middle of a turn (the app calls it when a part of the reply is closed): it walks only what was
made since the last freeze, so its cost does not grow with the reply, and later collections in
the turn walk only what came after it. The next ``settle`` is then a full pass, so what was
frozen mid-turn and dropped since is freed once the turn is over.
"""

from __future__ import annotations

import gc
import time


class IdleCollector:
    def __init__(self, full_every: int = 20) -> None:
        self.full_every = full_every
        self.settles = 0
        self.set_asides = 0
        self.last_seconds = 0.0  # how long the last settle or set_aside took
        self._full_due = False

    def settle(self) -> None:
        """Collect garbage now and set the survivors aside until the next full pass."""
        self.settles += 1
        full = self.settles % self.full_every == 0 or self._full_due
        self._full_due = False
        self._collect_and_freeze(full)

    def set_aside(self) -> None:
        """In the middle of a turn: collect what was made since the last freeze and freeze what
        survives; the next ``settle`` is a full pass."""
        self.set_asides += 1
        self._full_due = True
        self._collect_and_freeze(full=False)

    def _collect_and_freeze(self, full: bool) -> None:
        """Collect (everything when ``full``, else what is not frozen) and freeze the survivors."""
        started = time.perf_counter()
        if full:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.last_seconds = time.perf_counter() - started

    def release(self) -> None:
        """Hand every frozen object back to the collector (the app is leaving)."""
        gc.unfreeze()

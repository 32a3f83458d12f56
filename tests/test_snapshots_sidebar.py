"""Snapshots of the calls sidebar at 60x16, 80x24, 120x40 and 200x50 with long arguments, a running
call with progress, an error and a denied call (tests/sidebar_scene.py). Update with
``--snapshot-update`` and look at each SVG before committing."""

from __future__ import annotations

import pytest

from tests.sidebar_scene import scene_app, show_scene

SIZES = [(60, 16), (80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{width}x{height}" for width, height in SIZES])
def test_the_sidebar_at_each_size(snap_compare, size):
    assert snap_compare(scene_app(), terminal_size=size, run_before=show_scene)

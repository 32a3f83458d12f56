"""Every relative link in the README, docs/ and bench/README.md names a file that exists, and
every ``#anchor`` names a heading of that file (GitHub's heading ids)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", REPO / "bench" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown page outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def heading_ids(page: Path) -> set[str]:
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens,
    ``-1``, ``-2``… after repeats."""
    ids: set[str] = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6} +(.+?) *#* *$", line)
        if not heading:
            continue
        base = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        slug, repeat = base, 0
        while slug in ids:
            repeat += 1
            slug = f"{base}-{repeat}"
        ids.add(slug)
    return ids


def relative_links(page: Path) -> list[str]:
    """The links of a page that point inside the repository."""
    found = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        line = re.sub(r"`[^`]*`", "", line)  # code spans are text, not links
        found += [t for t in LINK.findall(line) if not re.match(r"[a-z]+:", t)]
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link of the page whose file or heading is missing, with why."""
    broken = []
    for target in relative_links(page):
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in heading_ids(linked):
            broken.append(f"{target}: no heading with the id {anchor!r}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_missing_file_or_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## `--json` keys\n\n## Signing in (OAuth)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#--json-keys) [ok](other.md#signing-in-oauth) [ok](#top)\n\n# Top\n\n"
        "[gone](missing.md) [bad](other.md#signing-in) `[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#signing-in: no heading with the id 'signing-in'",
    ]

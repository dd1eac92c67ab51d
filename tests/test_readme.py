"""The README is a guide, not a lab log: at most 300 lines, every table renders as a table,
every local link and image it names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_is_short():
    assert len(README.splitlines()) <= 300


def table_problems(text: str) -> list[str]:
    """Rows whose cell count differs from their header's, and tables with no separator row
    under the header (what a pasted log line in the middle of a table leaves behind)."""
    problems, in_code, columns, lines = [], False, None, text.splitlines()
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("|"):
            columns = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line)) - 1
        if columns is None:                      # a header: the separator must follow
            columns = cells
            following = lines[number] if number < len(lines) else ""
            if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", following.strip()):
                problems.append(f"README.md:{number}: a table row with no header separator")
        elif cells != columns:
            problems.append(f"README.md:{number}: {cells} cells, the table has {columns}")
    return problems


def test_every_table_renders():
    assert table_problems(README) == []


def test_a_log_line_inside_a_table_is_caught():
    broken = "| a | b |\n|---|---|\n| 1 | 2 |\n23:43 warm big 282.3\n| 3 | 4 |\n"
    assert table_problems(broken) == ["README.md:5: a table row with no header separator"]


def test_local_links_and_images_exist():
    targets = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [t for t in targets if "://" not in t]
    assert local
    assert [t for t in local if not (REPO / t).exists()] == []

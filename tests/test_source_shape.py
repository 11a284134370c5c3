"""The source's shape: no Python file over 400 lines, and none kept under it (or out of the formatter's reach) by
a comment that turns the formatter off (``fmt`` then ``skip`` or ``off``), in the packages, the pages, the tests
and the benchmarks. A file that grows past the limit is split by what it does (tests/ui/test_app*.py, one file per
topic), never packed.

Read from the files themselves, so the guard is checked against a copy with a planted violation of each kind.
"""

from __future__ import annotations

import shutil
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("gpuplan_core", "gpuplan_ui", "app_pages", "tests", "bench")
MOST_LINES = 400
# spelled in parts, so that a grep of the tree for a marker finds none in this file
SKIP, OFF = "fmt" + ": skip", "fmt" + ": off"
MARKERS = (SKIP, OFF, SKIP.replace(" ", ""), OFF.replace(" ", ""))


def _files(root: Path) -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts)


def too_long(root: Path = ROOT) -> dict[str, int]:
    """Each file over MOST_LINES lines, with its count."""
    counts = {str(p.relative_to(root)): len(p.read_text().splitlines()) for p in _files(root)}
    return {f: n for f, n in counts.items() if n > MOST_LINES}


def format_markers(root: Path = ROOT) -> list[str]:
    """'file:line' of every comment that turns the formatter off (a marker inside a string is text, not one)."""
    out = []
    for p in _files(root):
        with p.open("rb") as f:
            for tok in tokenize.tokenize(f.readline):
                if tok.type == tokenize.COMMENT and any(m in tok.string.lower() for m in MARKERS):
                    out.append(f"{p.relative_to(root)}:{tok.start[0]}")
    return out


def test_no_file_is_over_400_lines():
    assert not too_long(), too_long()


def test_no_file_turns_the_formatter_off():
    assert not format_markers(), format_markers()


def test_the_folders_are_read():
    """The guard reads every folder it names (a renamed folder would make it pass on nothing)."""
    read = {p.relative_to(ROOT).parts[0] for p in _files(ROOT)}
    assert read == set(FOLDERS)
    assert len(_files(ROOT)) > 300


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A copy of the checked folders under tmp_path, to plant violations in."""
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_guard_catches_a_planted_long_file_and_marker(tree_copy):
    assert too_long(tree_copy) == {} and format_markers(tree_copy) == []  # the copy reads as the tree does
    units = tree_copy / "gpuplan_core/common/units.py"
    lines = len(units.read_text().splitlines())
    units.write_text(units.read_text() + "\n" * (MOST_LINES - lines) + "X = 1\n")
    assert too_long(tree_copy) == {"gpuplan_core/common/units.py": MOST_LINES + 1}
    page = tree_copy / "tests/ui/apptest.py"
    page.write_text(page.read_text() + f'PACKED = {{"a": 1,\n          "b": 2}}  # {SKIP}\n')
    n = len(page.read_text().splitlines())
    bench = tree_copy / "bench/bench_core.py"
    m = len(bench.read_text().splitlines()) + 1
    bench.write_text(bench.read_text() + f"# {OFF}\nY = [1,2]\n# fmt: on\n")
    text = tree_copy / "gpuplan_ui/page.py"
    text.write_text(text.read_text() + f'NOTE = "a # {SKIP} in a string is text"\n')
    assert set(format_markers(tree_copy)) == {f"tests/ui/apptest.py:{n}", f"bench/bench_core.py:{m}"}

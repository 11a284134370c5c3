"""The core's layout: sub-packages by job, each importing only those below it; the UI imports only the public API.

Read from the source (every import statement, also those inside functions), so a lazy import cannot hide a cycle.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "gpuplan_core"
# Lowest first: a sub-package may import only those before it (and itself).
ORDER = [
    "common",
    "model",
    "hardware",
    "pricing",
    "scenario",
    "results",
    "memory",
    "perf",
    "plan",
    "report",
    "api",
    "interface",
]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted module) of every import in a file."""
    return _imports_of(path.read_text(), ".".join(path.relative_to(ROOT).parent.parts))


def _imports_of(text: str, pkg: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
                names = [mod] if node.module else [f"{mod}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "gpuplan_core" or len(parts) < 2:
        return None
    return parts[1]


def test_every_sub_package_has_a_layer():
    found = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    found |= {p.stem for p in CORE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert found == set(ORDER)


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_no_import_runs_upward(path):
    if path.parent == CORE and path.stem in ("__init__", "__main__"):
        return  # the public API and the entry point sit above everything
    here = path.relative_to(CORE).parts[0].removesuffix(".py")
    upward = [
        f"line {line}: {mod}"
        for line, mod in _imports(path)
        if (layer := _layer(mod)) is not None and layer in ORDER and ORDER.index(layer) > ORDER.index(here)
    ]
    assert not upward, f"{path.relative_to(ROOT)} ({here}) imports from above: {upward}"


def _ui_files() -> list[Path]:
    return sorted([*(ROOT / "gpuplan_ui").glob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"])


@pytest.mark.parametrize("path", _ui_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_ui_imports_only_the_public_api(path):
    deep = [f"line {line}: {mod}" for line, mod in _imports(path) if mod.startswith("gpuplan_core.")]
    assert not deep, f"{path.relative_to(ROOT)} reaches past gpuplan_core/__init__.py: {deep}"


def test_no_import_cycle_in_the_ui():
    graph: dict[str, set[str]] = {}
    for path in (ROOT / "gpuplan_ui").glob("*.py"):
        deps = {m.split(".")[1] for _, m in _imports(path) if m.startswith("gpuplan_ui.") and len(m.split(".")) > 1}
        graph[path.stem] = deps - {path.stem}

    def cycle_from(start: str, node: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return (*seen, nxt)
            if nxt not in seen:
                found = cycle_from(start, nxt, (*seen, nxt))
                if found:
                    return found
        return None

    cycles = [" -> ".join(c) for s in sorted(graph) if (c := cycle_from(s, s, (s,)))]
    assert not cycles, cycles


def test_the_layering_check_reads_relative_imports():
    """The check itself: in gpuplan_core.memory, '..plan.search' is gpuplan_core.plan (above memory)."""
    assert [m for _, m in _imports_of("from ..plan.search import x\nfrom . import fit\n", "gpuplan_core.memory")] == [
        "gpuplan_core.plan.search",
        "gpuplan_core.memory.fit",
    ]

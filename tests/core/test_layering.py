"""The core's layout: sub-packages by job, each importing only those below it; the UI imports only the public API.

Read from the source (every import statement, also those inside functions), so a lazy import cannot hide a cycle.
"""

import ast
import shutil
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


def _imports(path: Path, root: Path = ROOT, names: bool = True) -> list[tuple[int, str]]:
    """(line, absolute dotted module) of every import in a file."""
    return _imports_of(path.read_text(), ".".join(path.relative_to(root).parent.parts), root, names)


def _imports_of(text: str, pkg: str, root: Path = ROOT, names: bool = True) -> list[tuple[int, str]]:
    """``from X import name`` is X.name where that is a module or package of the tree, else X (a name X defines);
    with ``names`` False, X alone (what the statement reaches into: the UI may take ``api`` from the facade)."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = [f"{mod}.{a.name}" for a in node.names if names and _is_module(f"{mod}.{a.name}", root)]
            found = subs if subs and len(subs) == len(node.names) else [*subs, mod]
            out += [(node.lineno, n) for n in found]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _is_module(dotted: str, root: Path = ROOT) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "gpuplan_core" or len(parts) < 2:
        return None
    return parts[1]


def _core_files(core: Path) -> list[Path]:
    return sorted(core.rglob("*.py"))


def test_every_sub_package_has_a_layer():
    found = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    found |= {p.stem for p in CORE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert found == set(ORDER)


def upward_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Imports from a layer above the file's, and from the bare package (``from gpuplan_core import X``: the public
    API sits above every layer, so a core module importing it imports from the top)."""
    core = root / "gpuplan_core"
    if path.parent == core and path.stem in ("__init__", "__main__"):
        return []  # the public API and the entry point sit above everything
    here = path.relative_to(core).parts[0].removesuffix(".py")
    bad = []
    for line, mod in _imports(path, root):
        if mod == "gpuplan_core":
            bad.append(f"line {line}: gpuplan_core (the public API, above every layer)")
        elif (layer := _layer(mod)) is not None and layer in ORDER and ORDER.index(layer) > ORDER.index(here):
            bad.append(f"line {line}: {mod}")
    return bad


@pytest.mark.parametrize("path", _core_files(CORE), ids=lambda p: str(p.relative_to(CORE)))
def test_no_import_runs_upward(path):
    here = path.relative_to(CORE).parts[0].removesuffix(".py")
    upward = upward_imports(path)
    assert not upward, f"{path.relative_to(ROOT)} ({here}) imports from above: {upward}"


def _module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_cycles(root: Path = ROOT) -> list[tuple[str, ...]]:
    """Every cycle of imports between the core's modules (lazy imports inside functions included), each once,
    starting from its smallest module. A package's ``__init__`` is the package's module."""
    core = root / "gpuplan_core"
    modules = {_module_of(p, root): p for p in _core_files(core) if p.stem != "__main__"}
    graph = {m: {d for _, d in _imports(p, root) if d in modules and d != m} for m, p in modules.items()}
    cycles: set[tuple[str, ...]] = set()
    component = _components(graph)  # a cycle never leaves its strongly connected component

    def walk(start: str, node: str, path: tuple[str, ...]) -> None:
        for nxt in sorted(graph[node]):
            if component[nxt] != component[start]:
                continue
            if nxt == start:
                cycles.add(path)
            elif nxt > start and nxt not in path:
                walk(start, nxt, (*path, nxt))

    for m in sorted(graph):
        walk(m, m, (m,))
    return sorted(cycles)


def _components(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each module's strongly connected component (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    comp: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, nexts = work[-1]
            nxt = next(nexts, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = index[node]
                    if w == node:
                        break
    return comp


# Cycles known on this branch and removed on another (the lead deletes an entry when the merge removes its cycle;
# test_no_known_cycle_is_stale fails once one is gone, so no allowance outlives its cycle).
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def test_no_import_cycle_in_the_core():
    cycles = [" -> ".join((*c, c[0])) for c in import_cycles() if c not in KNOWN_CYCLES]
    assert not cycles, cycles


def test_no_known_cycle_is_stale():
    assert set(import_cycles()) >= KNOWN_CYCLES, "a cycle in KNOWN_CYCLES is gone: delete its entry"


def _ui_files() -> list[Path]:
    return sorted([*(ROOT / "gpuplan_ui").glob("*.py"), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py"])


@pytest.mark.parametrize("path", _ui_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_ui_imports_only_the_public_api(path):
    deep = [f"line {line}: {mod}" for line, mod in _imports(path, names=False) if mod.startswith("gpuplan_core.")]
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
    # a name the package defines (not a module) is an import of the package itself
    assert [m for _, m in _imports_of("from .. import api, Scenario\n", "gpuplan_core.memory")] == [
        "gpuplan_core.api",
        "gpuplan_core",
    ]


@pytest.fixture
def core_copy(tmp_path: Path) -> Path:
    """A copy of gpuplan_core under tmp_path, to plant violations in."""
    shutil.copytree(CORE, tmp_path / "gpuplan_core", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_guard_catches_a_planted_bare_package_import(core_copy):
    fit = core_copy / "gpuplan_core/memory/fit.py"
    assert upward_imports(fit, core_copy) == []
    fit.write_text(fit.read_text() + "\n\ndef _late():\n    from gpuplan_core import Scenario\n")
    assert [b for b in upward_imports(fit, core_copy) if "public API" in b]
    budget = core_copy / "gpuplan_core/memory/budget.py"
    budget.write_text(budget.read_text() + "\n\ndef _late():\n    from .. import load_gpus\n")
    assert [b for b in upward_imports(budget, core_copy) if "public API" in b]


def test_the_guard_catches_a_planted_import_cycle(core_copy):
    before = set(import_cycles(core_copy))
    assert before == set(import_cycles())  # the copy reads as the tree does
    units = core_copy / "gpuplan_core/common/units.py"
    units.write_text(units.read_text() + "\n\ndef _late():\n    from . import stats\n")
    stats = core_copy / "gpuplan_core/common/stats.py"
    stats.write_text(stats.read_text() + "\n\ndef _late2():\n    from .units import GiB\n")
    assert set(import_cycles(core_copy)) - before == {("gpuplan_core.common.stats", "gpuplan_core.common.units")}

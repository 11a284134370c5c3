"""The UI reads the core's results by attribute: no string key of a report, a row or a core-made dict in
gpuplan_ui, app_pages or app.py.

A typed report refuses ``r["key"]`` at run time already (pydantic models are not subscriptable); this test holds
the rest statically: every ``x["literal"]`` and ``x.get("literal")`` in the UI must read one of the plain dicts the
UI builds for itself or holds as input state, named below with what each is. A new string-key read on anything
else (a core result, a dict the core returns) fails here: give the core result a typed field instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("gpuplan_ui/*.py"), *ROOT.glob("app_pages/*.py"), ROOT / "app.py"])

UI_DICTS = {
    "views": "a page's figures and tables, as cached.py's *_views build them",
    "cat": "cached.perf_catalog_views",
    "sv": "cached.serving_views",
    "pv": "cached.perf_views",
    "gpu_views": "cached.gpu_views",
    "dep": "cached.deployment: the vLLM command and SkyPilot task texts",
    "values": "the inputs' values by link key",
    "everything": "the inputs' values by link key",
    "state.current().values": "the inputs' values by link key",
    "DEFAULTS": "the inputs' defaults by link key",
    "last": "the session's last page run (page.py)",
    "st.session_state": "Streamlit's session state",
    "kw": "a widget's keyword arguments",
    "preset": "a use-case preset of the input registry: values by input key",
}
# Reads inside functions other sessions own, on dicts the UI caches itself (st.cache_data copies of offers).
ELSEWHERE = {("gpuplan_ui/prices.py", "_file_line", "r")}


def string_key_reads(path: Path) -> list[tuple[int, str, str]]:
    """(line, enclosing function, receiver) of every ``x["literal"]`` and ``x.get("literal", ...)``."""
    tree = ast.parse(path.read_text())
    out = []
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def enclosing(line: int) -> str:
        inner = [f for f in funcs if f.lineno <= line <= (f.end_lineno or f.lineno)]
        return max(inner, key=lambda f: f.lineno).name if inner else ""

    for node in ast.walk(tree):
        recv = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            recv = node.value if isinstance(node.slice.value, str) else None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            first = node.args[0] if node.args else None
            recv = node.func.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        if recv is not None:
            out.append((node.lineno, enclosing(node.lineno), ast.unparse(recv)))
    return out


def allowed(rel: str, func: str, recv: str) -> bool:
    is_views_call = recv.startswith("cached.") and recv.split("(")[0].endswith("_views")
    return recv in UI_DICTS or is_views_call or (rel, func, recv) in ELSEWHERE


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_ui_reads_core_results_by_attribute(path):
    rel = str(path.relative_to(ROOT))
    bad = [f"{rel}:{line} {recv}[...]" for line, func, recv in string_key_reads(path) if not allowed(rel, func, recv)]
    assert not bad, "string-key reads of core results (read a typed field instead): " + ", ".join(bad)


def test_the_check_finds_a_string_key_read(tmp_path):
    f = tmp_path / "page.py"
    f.write_text('cost = api.cost_report(sc)\nx = cost["offers"]\ny = row.get("gpu")\nz = views["cost"].offers\n')
    found = [(line, recv) for line, _, recv in string_key_reads(f) if not allowed("page.py", "", recv)]
    assert found == [(2, "cost"), (3, "row")]

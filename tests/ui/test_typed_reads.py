"""The UI reads the core's results and its own views by attribute: no string key of a report, a row, a core-made
dict or a cached view in gpuplan_ui, app_pages or app.py.

A typed report refuses ``r["key"]`` at run time already (pydantic models and frozen dataclasses are not
subscriptable); this test holds the rest statically, by what a read's receiver is *bound to*, not by its name:
``views = cost_answer; views["headline"]`` fails however the variable is called. Every ``x["literal"]`` and
``x.get("literal")`` must read a plain dict of inputs or state, followed back through its assignments (within the
function, else the module) to one of:

- a dict built right there (a literal, a comprehension, ``dict(...)``);
- one of SOURCES: the calls and attributes that hand the UI plain dicts of input values or session state;
- a parameter listed in PARAMETERS (a plain dict of input values its callers pass), or ``**kwargs``.

Anything else (a cached view, a core result, a name imported from the core, an unknown parameter) fails here: give
the view or the result a typed field instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("gpuplan_ui/*.py"), *ROOT.glob("app_pages/*.py"), ROOT / "app.py"])

# What hands the UI a plain dict: a call (by its dotted name as written) or an attribute chain.
SOURCES = {
    "page.setup": "the page's (scenario, the inputs' values by link key)",
    "values_now": "the sidebar inputs' values by link key",
    "all_values": "every input's value by link key",
    "read_scenario_file": "(the inputs' values by link key, notes) of an imported scenario file",
    "bundled_pricing": "the bundled offers as st.cache_data dicts (prices.py)",
    "st.session_state": "Streamlit's session state",
    "state.current().values": "the inputs' values by link key",
    "DEFAULTS": "the inputs' defaults by link key",
    "USE_CASES": "the use-case presets: input values by link key",
}
# Cached views other branches convert to typed views at the same time (the lead deletes an entry when the merge
# brings its typed view; test_no_allowance_is_stale fails while an entry is no longer read by string key).
PENDING_VIEWS: dict[str, str] = {}
# Parameters that are plain dicts of input values by link key: (file, function, parameter).
PARAMETERS = {
    ("gpuplan_ui/frame.py", "_model_error", "values"),
    ("gpuplan_ui/sidebar.py", "shape", "values"),
    ("gpuplan_ui/widgets.py", "render", "values"),
    ("gpuplan_ui/share.py", "report_html", "values"),
    ("gpuplan_ui/cluster.py", "plan_from", "env"),  # environment variables (os.environ by default)
}
# Parameters holding a pending view, on pages other branches convert (deleted with their PENDING_VIEWS entry).
PENDING_PARAMETERS: set[tuple[str, str, str]] = set()
METHODS_OF_THE_RECEIVER = {"get", "pop", "copy", "items", "values", "setdefault"}


class _Scope:
    """A function (or the module) and the bindings of its names: name -> [(kind, node, index)]."""

    def __init__(self, node: ast.AST, parent: _Scope | None):
        self.node, self.parent = node, parent
        self.bindings: dict[str, list[tuple[str, ast.AST, int | None]]] = {}
        self.name = getattr(node, "name", "")

    def bind(self, target: ast.AST, kind: str, value: ast.AST, index: int | None = None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append((kind, value, index))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, t in enumerate(target.elts):
                self.bind(t, kind, value, i)

    def lookup(self, name: str) -> tuple[_Scope, list] | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope, scope.bindings[name]
            scope = scope.parent
        return None


def _scopes(tree: ast.Module) -> dict[ast.AST, _Scope]:
    """Every function's scope (and the module's), with what each name in it is bound to."""
    out: dict[ast.AST, _Scope] = {}

    def visit(node: ast.AST, scope: _Scope) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = _Scope(child, scope)
                out[child] = inner
                a = child.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                    inner.bind(ast.Name(arg.arg), "param", arg)
                if a.vararg:
                    inner.bind(ast.Name(a.vararg.arg), "param", a.vararg)
                if a.kwarg:
                    inner.bind(ast.Name(a.kwarg.arg), "kwargs", a.kwarg)
                visit(child, inner)
                continue
            if isinstance(child, ast.Assign):
                for t in child.targets:
                    scope.bind(t, "value", child.value)
            elif isinstance(child, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and child.value is not None:
                scope.bind(child.target, "value", child.value)
            elif isinstance(child, (ast.For, ast.AsyncFor, ast.comprehension)):
                scope.bind(child.target, "element", child.iter)
            elif isinstance(child, (ast.With, ast.AsyncWith)):
                for item in child.items:
                    if item.optional_vars is not None:
                        scope.bind(item.optional_vars, "value", item.context_expr)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for a in child.names:
                    scope.bind(ast.Name((a.asname or a.name).split(".")[0]), "import", child)
            visit(child, scope)

    module = _Scope(tree, None)
    out[tree] = module
    visit(tree, module)
    return out


def _dotted(node: ast.AST) -> str:
    return ast.unparse(node)


class _Reader:
    def __init__(self, rel: str, scopes: dict[ast.AST, _Scope]):
        self.rel, self.scopes = rel, scopes

    def why_not(self, expr: ast.AST, scope: _Scope, seen: frozenset = frozenset()) -> str | None:
        """None when ``expr`` is a plain dict of inputs or state (by what it is bound to), else what it is."""
        text = _dotted(expr)
        if text in SOURCES:
            return None
        if isinstance(expr, (ast.Dict, ast.DictComp)):
            return None
        if isinstance(expr, ast.Call):
            func = _dotted(expr.func)
            if func in SOURCES or func == "dict":
                return None
            if func in PENDING_VIEWS:
                return None
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in METHODS_OF_THE_RECEIVER:
                return self.why_not(expr.func.value, scope, seen)
            return f"the result of {func}(...)"
        if isinstance(expr, ast.Subscript):  # an element of a plain dict or tuple of them
            return self.why_not(expr.value, scope, seen)
        if isinstance(expr, ast.BoolOp):
            return next((w for v in expr.values if (w := self.why_not(v, scope, seen))), None)
        if isinstance(expr, ast.IfExp):
            return self.why_not(expr.body, scope, seen) or self.why_not(expr.orelse, scope, seen)
        if isinstance(expr, (ast.List, ast.Tuple)):  # an empty one holds nothing; else each element
            return next((w for v in expr.elts if (w := self.why_not(v, scope, seen))), None)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return None
        if isinstance(expr, ast.Name):
            found = scope.lookup(expr.id)
            if found is None or (expr.id, id(found[0])) in seen:
                return f"{expr.id} (bound to nothing this file shows)"
            where, bindings = found
            seen = seen | {(expr.id, id(where))}
            for kind, value, _ in bindings:
                if kind == "kwargs":
                    continue
                if kind == "param":
                    if (self.rel, where.name, expr.id) not in PARAMETERS | PENDING_PARAMETERS:
                        return f"{expr.id}, a parameter of {where.name}() not listed in PARAMETERS"
                    continue
                if kind == "import":
                    return f"{expr.id}, imported ({_dotted(value)})"
                if why := self.why_not(value, where, seen):
                    return f"{expr.id} = {why}"
            return None
        return f"{text}"


def string_key_reads(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, enclosing function, receiver, why it is not a plain dict or None) of every ``x["literal"]`` and
    ``x.get("literal", ...)``."""
    tree = ast.parse(path.read_text())
    scopes = _scopes(tree)
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    reader = _Reader(rel, scopes)
    out = []

    def walk(node: ast.AST, scope: _Scope) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scopes.get(child, scope)
            recv = None
            if isinstance(child, ast.Subscript) and isinstance(child.slice, ast.Constant):
                recv = child.value if isinstance(child.slice.value, str) else None
                if isinstance(child.ctx, ast.Store):  # writing a key of a dict the UI holds
                    recv = None
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "get":
                first = child.args[0] if child.args else None
                recv = child.func.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if recv is not None:
                out.append((child.lineno, scope.name, _dotted(recv), reader.why_not(recv, scope)))
            walk(child, inner)

    walk(tree, scopes[tree])
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_ui_reads_core_results_and_views_by_attribute(path):
    rel = str(path.relative_to(ROOT))
    bad = [f"{rel}:{line} {recv}[...]: {why}" for line, _, recv, why in string_key_reads(path) if why]
    assert not bad, "string-key reads of a core result or a view (read a typed field instead): " + "; ".join(bad)


def test_no_allowance_is_stale(monkeypatch):
    """Each pending view is still read by string key somewhere (without its entry, a read fails), so an entry goes
    once its view is typed; each listed parameter still exists."""
    for view in list(PENDING_VIEWS):
        monkeypatch.setattr(f"{__name__}.PENDING_VIEWS", {k: v for k, v in PENDING_VIEWS.items() if k != view})
        used = [why for p in FILES for *_, why in string_key_reads(p) if why and view in why]
        monkeypatch.undo()
        assert used, f"{view} is no longer read by string key: delete it from PENDING_VIEWS"
    for rel, func, param in PARAMETERS | PENDING_PARAMETERS:
        tree = ast.parse((ROOT / rel).read_text())
        fns = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == func]
        assert fns and param in [a.arg for a in fns[0].args.args], f"{rel} {func}({param}) is gone"


def _plant(tmp_path: Path, name: str, text: str) -> list[tuple[int, str, str | None]]:
    f = tmp_path / name
    f.write_text(text)
    return [(line, recv, why) for line, _, recv, why in string_key_reads(f)]


def test_the_guard_catches_a_view_renamed_to_an_allowed_name(tmp_path):
    """Planted in a copy of the Cost page: a core function bound to ``views`` (the name the old guard allowed)."""
    page = (ROOT / "app_pages/Cost.py").read_text()
    assert not [why for _, _, why in _plant(tmp_path, "Cost.py", page) if why]  # the page as it is passes
    planted = page + (
        '\n\ndef _planted():\n    views = cost_answer\n    return views["headline"]\n\n\n'
        'values = cached.cost_views(k, p)\nvalues["cost"]\n'
    )
    found = _plant(tmp_path, "Cost.py", planted)
    n = len(planted.splitlines())
    bad = {line: why for line, _, why in found if why}
    assert set(bad) == {n - 4, n}, found
    assert "imported" in bad[n - 4] and "cached.cost_views" in bad[n]


def test_the_guard_follows_bindings_not_names(tmp_path):
    found = _plant(
        tmp_path,
        "page.py",
        "import streamlit as st\nfrom gpuplan_core import api\n"
        "cost = api.cost_report(sc)\nx = cost['offers']\ny = row.get('gpu')\n"
        "sc, values = page.setup('t')\nz = values['meeting']\nkw = {'a': 1}\nw = kw['a']\n"
        "s = st.session_state.get('k')\nv = s['x']\n"
        "def f(values):\n    return values['x']\n",
    )
    assert [(line, recv) for line, recv, why in found if why] == [(4, "cost"), (5, "row"), (13, "values")]

"""The import graph of ``pytest_fairness`` runs one way, without cycles.

The graph is built from the source with :mod:`ast`: every ``import`` and ``from ... import``
anywhere in a module counts (module level, inside functions, under ``if TYPE_CHECKING:``),
relative imports are resolved, and ``from x import y`` where ``y`` is a submodule counts as
an import of ``x.y``. Four rules are checked:

1. **No cycles**, between any two modules.
2. **One direction.** A module may import modules of its own rank (if that makes no cycle)
   and of the ranks below it, never of a rank above. The ranks, top to bottom:

   ====  ==========================  ===========================================
   A package entry (``report``, ``indicators``, ``data``) places the package and every
   module under it. The package ``__init__`` (``pytest_fairness``) re-exports the public
   API: it may import anything, and no module of the package may import it (import from
   the defining module instead).
3. **Side by side, apart.** Policy (``checks``, ``regression``), Store (``baseline``,
   ``history``) and Render (``report/*``) share a rank and never import one another: what
   one needs from another is passed in by the run or the command (:data:`APART`).
4. **Private stays private.** No module imports an underscore name from another module
   (``from pytest_fairness.results import _encode_float``), or reads one off an imported
   module (``terminal._table``); make the helper public in its one home, or move it. A
   private module (``indicators/_common.py``) may be imported only by the
   modules of the package that holds it.

A new module must be placed in :data:`LAYERS`; the test says so when one is missing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "pytest_fairness"
SOURCE = Path(__file__).resolve().parents[1] / PACKAGE

#: Top to bottom; a higher layer may import a lower one. Entries are relative to the package.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("face", ("plugin", "cli", "markers", "hookspec")),
    ("the run", ("session", "checkpoints", "settings", "progress", "provenance", "metadata")),
    ("policy, store, render", ("checks", "family", "readings", "regression", "baseline", "history",
                                "report")),
    ("computation and inputs", ("indicators", "features", "data", "perturbations")),
    ("values", ("records", "results", "stats", "draws", "bounds", "options", "errors",
                "files")),
)

#: Groups of one rank that must not import one another (entries as in :data:`LAYERS`).
APART: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("policy", ("checks", "family", "readings", "regression")),
    ("store", ("baseline", "history")),
    ("render", ("report",)),
)

#: Imports upward or across :data:`APART` in files this branch does not own, each with why
#: it is still here. Remove an entry when its import is gone.
KNOWN_CROSSINGS: Mapping[tuple[str, str], str] = {}

#: Underscore names imported across modules in files this branch does not own, each with
#: why it is still here. Remove an entry when its import is gone.
KNOWN_PRIVATE_IMPORTS: Mapping[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    """One import in the source: who imports what, on which line."""

    importer: str
    target: str  # a module of the package
    line: int
    name: str = ""  # the underscore name taken from ``target``, if any


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def imports(root: Path, package: str) -> Iterator[Import]:
    """Every import of a package module by a package module, wherever it is written."""
    known = modules(root, package)
    for importer, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        here = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
        aliases: dict[str, str] = {}  # local name -> module, for ``module._name`` reads
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in known:
                        yield Import(importer, alias.name, node.lineno)
                        if alias.asname:
                            aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source not in known:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in known:
                        yield Import(importer, submodule, node.lineno)
                        aliases[alias.asname or alias.name] = submodule
                    else:
                        name = alias.name if _private(alias.name) else ""
                        yield Import(importer, source, node.lineno, name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _private(node.attr)):
                yield Import(importer, aliases[node.value.id], node.lineno, node.attr)


def rank_of(module: str, package: str = PACKAGE,
            layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> int | None:
    """The module's rank (higher imports lower), by its longest entry in ``layers``."""
    best: tuple[int, int] | None = None
    for index, (_, entries) in enumerate(layers):
        for entry in entries:
            full = f"{package}.{entry}"
            if module == full or module.startswith(full + "."):
                if best is None or len(full) > best[0]:
                    best = (len(full), len(layers) - index)
    return None if best is None else best[1]


def group_of(module: str, package: str = PACKAGE,
             apart: tuple[tuple[str, tuple[str, ...]], ...] = APART) -> str | None:
    """The :data:`APART` group of a module (policy, store, render), or None."""
    for name, entries in apart:
        for entry in entries:
            full = f"{package}.{entry}"
            if module == full or module.startswith(full + "."):
                return name
    return None


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a self-import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def problems(root: Path, package: str,
             layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS,
             known_private: Mapping[tuple[str, str], str] | None = None,
             apart: tuple[tuple[str, tuple[str, ...]], ...] = (),
             known_crossings: Mapping[tuple[str, str], str] | None = None) -> list[str]:
    """Every broken rule, one message each (empty when the layering holds)."""
    known_private = {} if known_private is None else known_private
    known_crossings = {} if known_crossings is None else known_crossings
    out = []
    for module in modules(root, package):
        if module != package and rank_of(module, package, layers) is None:
            out.append(f"{module} is in no layer: place it in LAYERS in {Path(__file__).name} "
                       "(the layer of the modules it serves, above those it imports).")
    edges: dict[str, set[str]] = {}
    for imp in imports(root, package):
        where = f"{imp.importer} line {imp.line}"
        if imp.name:
            if imp.target != imp.importer and (imp.importer,
                                               f"{imp.target}.{imp.name}") not in known_private:
                out.append(f"{where} uses the private name {imp.target}.{imp.name}: make it "
                           "public in its module, or move it to where it is used.")
            continue
        if imp.target == imp.importer:
            continue
        edges.setdefault(imp.importer, set()).add(imp.target)
        if imp.importer == package:
            continue  # the package __init__ re-exports the public API
        if imp.target == package:
            out.append(f"{where} imports the package {package}: import from the module that "
                       "defines the name instead.")
            continue
        last = imp.target.rsplit(".", 1)
        if _private(last[-1]) and not (imp.importer + ".").startswith(last[0] + "."):
            out.append(f"{where} imports {imp.target}, private to {last[0]}.")
        here, there = (group_of(imp.importer, package, apart),
                       group_of(imp.target, package, apart))
        if (here and there and here != there
                and (imp.importer, imp.target) not in known_crossings):
            out.append(f"{where} imports {imp.target}: {here} and {there} stay apart; let the "
                       "run or the command pass what one needs from the other.")
        mine = rank_of(imp.importer, package, layers)
        theirs = rank_of(imp.target, package, layers)
        if (mine is not None and theirs is not None and mine < theirs
                and (imp.importer, imp.target) not in known_crossings):
            out.append(f"{where} imports {imp.target}, which is in a higher layer ({theirs} > "
                       f"{mine}); move the shared code down, or pass data up instead.")
    for component in cycles(edges):
        out.append("import cycle: " + " ↔ ".join(component))
    return sorted(set(out))


def test_the_import_graph_runs_one_way() -> None:
    """No cycle, no upward import, no private name across modules, every module placed."""
    assert SOURCE.is_dir(), SOURCE
    found = problems(SOURCE, PACKAGE, known_private=KNOWN_PRIVATE_IMPORTS, apart=APART,
                     known_crossings=KNOWN_CROSSINGS)
    assert not found, "\n".join(found)


#: The most floors the import graph may have: the longest chain of imports, each
#: sub-package counted as one node (plugin → session → store → ... → errors).
MAX_FLOORS = 7


def package_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Imports between the package's modules, each sub-package folded into one node."""
    def node(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for imp in imports(root, package):
        a, b = node(imp.importer), node(imp.target)
        if not imp.name and a != b and a != package:
            edges.setdefault(a, set()).add(b)
    return edges


def floors(edges: Mapping[str, set[str]]) -> list[str]:
    """The longest import chain of an acyclic graph, top to bottom."""
    memo: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in memo:
            below = [chain(t) for t in sorted(edges.get(node, ()))]
            memo[node] = [node, *max(below, key=len, default=[])]
        return memo[node]

    return max((chain(n) for n in sorted(edges)), key=len, default=[])


def test_sub_packages_form_no_cycle_and_few_floors() -> None:
    """Folding each sub-package into one node, the graph stays acyclic and shallow."""
    edges = package_graph(SOURCE, PACKAGE)
    assert cycles(edges) == []
    longest = floors(edges)
    assert len(longest) <= MAX_FLOORS, " → ".join(longest)


def test_floors_counts_the_longest_chain() -> None:
    assert floors({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == ["a", "b", "c"]
    assert floors({}) == []


def test_known_crossings_are_still_there() -> None:
    """An exception for a crossing that is gone must go too."""
    present = {(i.importer, i.target) for i in imports(SOURCE, PACKAGE) if not i.name}
    assert set(KNOWN_CROSSINGS) <= present, set(KNOWN_CROSSINGS) - present


def test_known_private_imports_are_still_there() -> None:
    """An exception for an import that is gone must go too."""
    present = {(i.importer, f"{i.target}.{i.name}") for i in imports(SOURCE, PACKAGE) if i.name}
    assert set(KNOWN_PRIVATE_IMPORTS) <= present, set(KNOWN_PRIVATE_IMPORTS) - present


# -- the checker itself, on a small made-up package -------------------------------------------

TOY_LAYERS = (("top", ("app",)), ("middle", ("core", "render")), ("bottom", ("base",)))
TOY_APART = (("core", ("core",)), ("render", ("render",)))


def toy(tmp_path: Path, files: Mapping[str, str]) -> Path:
    """Write a package ``toy`` with ``files`` (relative path → source) and return its root."""
    root = tmp_path / "toy"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_clean_toy_package_passes(tmp_path: Path) -> None:
    root = toy(tmp_path, {"app.py": "from toy import core\n", "core.py": "import toy.base\n",
                          "render/__init__.py": "", "render/_util.py": "X = 1\n",
                          "render/page.py": "from ._util import X\n", "base.py": ""})
    assert problems(root, "toy", TOY_LAYERS, apart=TOY_APART) == []


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"core.py": "def f():\n    from toy import app\n"}, "toy.app, which is in a higher layer"),
        ({"core.py": "from toy.render import page\n",
          "render/__init__.py": "", "render/page.py": "def f():\n    import toy.core\n"},
         "import cycle: toy.core ↔ toy.render.page"),
        ({"core.py": "from toy.base import _helper\n"}, "private name toy.base._helper"),
        ({"core.py": "from toy import base\nbase._helper()\n"}, "private name toy.base._helper"),
        ({"core.py": "from toy.render import _util\n", "render/__init__.py": "",
          "render/_util.py": ""}, "imports toy.render._util, private to toy.render"),
        ({"core.py": "from toy import app_name\n"}, "imports the package toy"),
        ({"extra.py": ""}, "toy.extra is in no layer"),
        ({"core.py": "from toy.render import page\n", "render/__init__.py": "",
          "render/page.py": ""}, "imports toy.render.page: core and render stay apart"),
    ],
)
def test_the_checker_finds(tmp_path: Path, files: dict[str, str], fragment: str) -> None:
    root = toy(tmp_path, {"app.py": "", "core.py": "", "base.py": "", **files})
    found = problems(root, "toy", TOY_LAYERS, apart=TOY_APART)
    assert any(fragment in message for message in found), found

"""The package's shape: no import cycles among its modules and no oversized module.

The graph is read from the source (``ast``), so an import inside a function counts as
much as one at the top: a cycle hidden in a function is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("replay", "importer_patches")
#: largest module, lines: a module past this holds more than one idea (what the
#: project's design asks for; the largest today is well under it).
MAX_MODULE_LINES = 600


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = p
    return mods


def _imports(path: Path, name: str, mods: dict[str, Path]) -> set[str]:
    """In-package modules that ``name`` imports (``from a import b`` counts ``a.b`` when
    ``b`` is a module, else ``a``)."""
    out = set()
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in mods}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in mods:
                    out.add(sub)
                elif base in mods:
                    out.add(base)
    out.discard(name)
    return out


def import_graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for dep in _imports(path, name, mods):
            # a package's __init__ importing its own submodules is how packages re-export
            if not dep.startswith(name + "."):
                g.add_edge(name, dep)
    return g


def test_the_reader_sees_real_edges():
    """The parser finds edges we know exist (else 'no cycles' would be vacuous)."""
    g = import_graph()
    assert g.has_edge("replay.render.montage", "replay.render.video")
    assert g.has_edge("replay.rollout", "replay.engine.mjc")
    assert g.number_of_edges() > 100


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:10])


def test_no_module_over_the_size_limit():
    big = {n: len(p.read_text().splitlines()) for n, p in _modules().items()}
    big = {n: k for n, k in big.items() if k > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines: {big}"

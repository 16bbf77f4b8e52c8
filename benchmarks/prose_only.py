"""Whether a change to ``replay/`` touched prose only: ``python benchmarks/prose_only.py BASE [HEAD]``.

Parses every ``replay/`` module at two git revisions (HEAD: the work tree), drops docstrings, and compares the
ASTs. Prints each module whose code differs (added, removed or changed) and exits 1 if any does; a module whose
docstring is read at run time (``__doc__``) is listed apart, since its prose is output.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sources(rev: str | None) -> dict[str, str]:
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "replay").rglob("*.py"))}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "replay/"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        for n in names
        if n.endswith(".py")
    }


def _code(src: str) -> str:
    tree = ast.parse(src)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [
                st
                for st in body
                if not (
                    isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)
                )
            ]
            node.body = kept or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("head", nargs="?", default=None, help="a revision (default: the work tree)")
    a = ap.parse_args(argv)
    old, new = _sources(a.base), _sources(a.head)
    differ = []
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new or _code(old[name]) != _code(new[name]):
            differ.append(name)
    reads_doc = sorted(n for n, s in new.items() if "__doc__" in s and old.get(n) != s)
    for n in differ:
        print(f"code differs: {n}")
    for n in reads_doc:
        print(f"prose changed where __doc__ is read: {n}")
    print(f"{len(differ)} module(s) with code changes")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

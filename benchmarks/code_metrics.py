"""The code-shape figures of issue #55, printed from the source: ``python benchmarks/code_metrics.py [--json F]``.

Lines and prose of ``replay/`` (docstring lines + comment-only lines), string-key reads in ``replay/study`` and
``replay/output`` (``x["k"]`` loads and ``x.get("k")``), protocol names compared outside the registry, fields of
``RolloutRecord`` and ``ReplayConfig``, modules naming each corruption, ``print`` calls, lines over 120, and public
functions and methods with more than three positional parameters (``tests/test_structure.py``'s rule).
``--by-command``: for each ``scripts/`` command, the lines of ``replay/`` it can import (lazy imports inside
functions included) and the lines no other command imports.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import io
import json
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_structure import positional_overflow  # noqa: E402  (the rule the structure test enforces)

PROTOCOL_NAMES = {"lift", "recorded", "hug-oracle", "refine"}


def _docstring_lines(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, st in enumerate(body):
            is_str = isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)
            first = i == 0 and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            if is_str and (first or i > 0):
                out.update(range(st.lineno, st.end_lineno + 1))
    return out


def prose(paths) -> dict:
    total = doc = com = 0
    for p in paths:
        src = p.read_text()
        lines = src.splitlines()
        dl = _docstring_lines(ast.parse(src))
        c = sum(
            1
            for t in tokenize.generate_tokens(io.StringIO(src).readline)
            if t.type == tokenize.COMMENT and t.start[0] not in dl and lines[t.start[0] - 1].lstrip().startswith("#")
        )
        total, doc, com = total + len(lines), doc + len(dl), com + c
    return {
        "lines": total,
        "docstring_lines": doc,
        "comment_lines": com,
        "prose_pct": round(100 * (doc + com) / total, 1),
    }


def string_key_reads(paths) -> int:
    n = 0
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                s = node.slice
                n += isinstance(s, ast.Constant) and isinstance(s.value, str)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                n += bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    return n


def protocol_comparisons(paths, registry: str) -> list[str]:
    hits = []
    for p in paths:
        rel = str(p.relative_to(ROOT))
        if rel.startswith(registry):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Compare):
                names = [c.value for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
                elts = [
                    e.value
                    for c in node.comparators
                    if isinstance(c, (ast.Tuple, ast.Set, ast.List))
                    for e in c.elts
                    if isinstance(e, ast.Constant)
                ]
                protos = [c for c in node.comparators if isinstance(c, ast.Name) and c.id.endswith("PROTOCOLS")]
                if PROTOCOL_NAMES & set(names + elts) or protos:
                    hits.append(f"{rel}:{node.lineno}")
    return hits


def public_funcs_over_3_positional(paths) -> list[str]:
    """``path:function`` of each public function or public class's method with more than three positional
    parameters (``self`` / ``cls`` not counted)."""
    return [f"{p.relative_to(ROOT)}:{f}" for p in paths for f in positional_overflow(p.read_text())]


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The ``replay`` modules one file imports anywhere in its body (relative imports resolved, ``"replay.x:f"``)."""
    here = _module_of(path).split(".") if path.is_relative_to(ROOT / "replay") else []
    pkg = here if path.name == "__init__.py" else here[:-1]
    named = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = (
                ".".join(pkg[: len(pkg) - node.level + 1] + [node.module or ""]).strip(".")
                if node.level
                else node.module
            )
            named |= {base} | {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("replay."):
            named.add(node.value.split(":")[0])  # a "replay.x:function" reference, imported when called
    out = set()
    for name in named:
        parts = name.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules
    return out


def by_command(paths) -> dict[str, dict[str, int]]:
    """``{command: {"reaches": lines, "only": lines}}`` over ``replay/`` modules."""
    lines = {_module_of(p): len(p.read_text().splitlines()) for p in paths}
    graph = {_module_of(p): _imports(p, set(lines)) for p in paths}

    def reach(roots: set[str]) -> set[str]:
        seen, todo = set(), list(roots)
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(graph.get(m, ()))
        return seen

    cmds = {p.stem: reach(_imports(p, set(lines))) for p in sorted((ROOT / "scripts").glob("*.py"))}
    out = {}
    for name, mods in cmds.items():
        others = set().union(*(v for k, v in cmds.items() if k != name))
        out[name] = {"reaches": sum(lines[m] for m in mods), "only": sum(lines[m] for m in mods - others)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--by-command", action="store_true", help="also the lines each command reaches")
    ap.add_argument("--registry", default="replay/protocol/protocols", help="module or package prefix exempted")
    a = ap.parse_args(argv)
    rp = sorted((ROOT / "replay").rglob("*.py"))
    so = [p for p in rp if p.parts[len(ROOT.parts) + 1] in ("study", "output")]
    from replay import config
    from replay.config import ReplayConfig
    from replay.results.records import RolloutRecord

    def own(cls) -> int:
        base = {f.name for b in cls.__mro__[1:] if dataclasses.is_dataclass(b) for f in dataclasses.fields(b)}
        return len([f for f in dataclasses.fields(cls) if f.name not in base])

    from replay.study import corruptions

    if hasattr(corruptions, "corruption_names"):  # the registry (issue #55)
        names = list(corruptions.corruption_names())
    else:
        names = [getattr(c, "name", c) for c in getattr(corruptions, "CORRUPTIONS", {})]
    fig = {
        **prose(rp),
        "string_key_reads_study_output": string_key_reads(so),
        "protocol_name_comparisons": protocol_comparisons(rp, a.registry),
        "rollout_record_fields": len(dataclasses.fields(RolloutRecord)),
        "rollout_record_own_fields": own(RolloutRecord),
        "replay_config_fields": len(dataclasses.fields(ReplayConfig)),
        "replay_config_fields_by_part": {g: len(n) for g, n in getattr(config, "GROUPS", {}).items()},
        "corruption_name_modules": {
            str(n): sorted(str(p.relative_to(ROOT)) for p in rp if str(n) in p.read_text()) for n in names
        },
        "print_calls": sum(
            isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"
            for p in rp
            for n in ast.walk(ast.parse(p.read_text()))
        ),
        "lines_over_120": sum(len(ln) > 120 for p in rp for ln in p.read_text().splitlines()),
        "public_funcs_over_3_positional": public_funcs_over_3_positional(rp),
    }
    if a.by_command:
        fig["by_command"] = by_command(rp)
    for k, v in fig.items():
        if k == "by_command":
            print("command: lines of replay/ it reaches / only it reaches")
            for name, n in v.items():
                print(f"  {name}: {n['reaches']} / {n['only']}")
            continue
        print(f"{k}: {len(v) if isinstance(v, list) else v}")
    if a.json:
        Path(a.json).write_text(json.dumps(fig, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

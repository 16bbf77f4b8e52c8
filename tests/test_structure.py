"""The package's shape: layers, no import cycles, no oversized module or function.

The graph is read from the source (``ast``), so an import inside a function counts as
much as one at the top: a cycle or an upward import hidden in a function still counts, and
so does a string import (``importlib.import_module("replay.x")``, ``__import__("replay.x")``,
or a ``"replay.x:function"`` reference). The layers are the ones ``docs/architecture.md`` draws.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("replay", "importer_patches")
#: an alarm, not a budget: a module past this many lines likely holds more than one idea (size modules by idea).
MAX_MODULE_LINES = 800
#: longest function body, lines: from the first statement after the docstring to the end (the signature and
#: docstring, one parameter a line under ruff format, do not count).
MAX_FUNCTION_LINES = 80
#: functions still over MAX_FUNCTION_LINES since ruff format (issue #55 splits them; this set only shrinks)
TO_SPLIT = {"replay.config.validate", "replay.sim.engine.mjwarp.warp_batch._launch_frame",
            "replay.commands.render_montage.main",
            "replay.commands.run_study.build_parser"}
#: functions allowed past MAX_FUNCTION_LINES; each says why in its docstring, with the
#: word given here.
LONG_FUNCTIONS = {
    # one Warp launch per physics step: splitting it means more launches per step
    "replay.sim.engine.mjwarp.warp_kernels.wrist_kernel": "one launch",
    "replay.sim.engine.mjwarp.warp_kernels.signals_kernel": "one launch",
}

#: bottom to top: a module imports only from its own layer and the ones before it.
LAYERS = ("base", "data", "kinematics", "checks", "sim", "protocol", "study", "output", "cli")
#: replay's top-level modules that form the base every stage uses
BASE_MODULES = {"replay", "replay.config", "replay.errors", "replay.fileio", "replay.console", "replay.datasets",
                "replay.results",
                "replay.results.records", "replay.results.files",
                "replay.results.oracle_fields", "replay.results.outcomes", "replay.results.study_log",
                "replay.results.sampled_fields", "replay.results.physics_table", "replay.results.legacy_physics",
                "replay.results.convert", "replay.results.rollout_parts", "replay.results.protocol_results",
                "replay.results.config_parts", "replay.results.judge", "replay.results.verdict_record",
                "replay.results.study_rows", "replay.results.study_counts", "replay.results.engine_choice",
                "replay.results.json_record", "replay.results.study_settings"}
#: top-level modules of the top layer: the public API (what users import) and the commands
TOP_MODULES = {"replay.api": "cli", "replay.commands": "cli"}


def layer(module: str) -> int:
    """Index in :data:`LAYERS` of ``module`` (``importer_patches`` sits with the base:
    it imports nothing of ``replay``)."""
    if module.startswith("importer_patches") or module in BASE_MODULES:
        return 0
    top = ".".join(module.split(".")[:2])
    if top in TOP_MODULES:
        return LAYERS.index(TOP_MODULES[top])
    parts = module.split(".")
    if parts[0] != "replay" or len(parts) < 2 or parts[1] not in LAYERS:
        raise AssertionError(f"{module} is in no layer: add it to a stage package or to BASE_MODULES")
    return LAYERS.index(parts[1])


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = p
    return mods


def _string_import(node: ast.AST, mods: dict[str, Path]) -> str | None:
    """The in-package module a string names as an import: the literal argument of
    ``import_module(...)`` / ``__import__(...)``, or a ``"module:function"`` reference."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        arg = node.args[0].value
        if fn in ("import_module", "__import__") and isinstance(arg, str):
            return _enclosing(arg, mods)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.count(":") == 1:
        module, _, attr = node.value.partition(":")
        if module in mods and attr.isidentifier():
            return module
    return None


def _enclosing(dotted: str, mods: dict[str, Path]) -> str | None:
    """The longest in-package module that ``dotted`` names or lies in."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in mods:
            return ".".join(parts[:k])
    return None


def _imports(path: Path, name: str, mods: dict[str, Path], source: str | None = None) -> set[str]:
    """In-package modules that ``name`` imports (``from a import b`` counts ``a.b`` when
    ``b`` is a module, else ``a``; string imports count, :func:`_string_import`)."""
    out = set()
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        named = _string_import(node, mods)
        if named:
            out.add(named)
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
            # a package's __init__ may import its own submodules for the functions it defines
            if not dep.startswith(name + "."):
                g.add_edge(name, dep)
    return g


def test_the_reader_sees_real_edges():
    """The parser finds edges we know exist (else 'no cycles' would be vacuous)."""
    g = import_graph()
    assert g.has_edge("replay.output.render.montage", "replay.output.render.video")
    assert g.has_edge("replay.protocol.rollout", "replay.sim.engine.factory")
    assert g.has_edge("replay.sim.engine.factory", "replay.sim.engine.mujoco_c.mjc")  # an import inside a function
    assert g.number_of_edges() > 100


def test_no_import_cycles():
    g = import_graph()
    cycles = list(nx.simple_cycles(g))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:10])


def test_replay_top_level_is_one_room_per_stage():
    top = sorted(p.name for p in (ROOT / "replay").iterdir() if p.name != "__pycache__")
    assert len(top) <= 17, top  # the stages, the base modules (the console among them), api.py and the commands
    for name in _modules():
        layer(name)  # every module is in a layer


def test_imports_point_down_the_layers():
    g = import_graph()
    up = [(a, b) for a, b in g.edges if layer(b) > layer(a)]
    assert not up, "upward imports: " + "; ".join(f"{a} ({LAYERS[layer(a)]}) -> {b} ({LAYERS[layer(b)]})"
                                                 for a, b in up)


def test_string_imports_are_edges():
    """A module named in a string (``import_module("replay.x")``, ``"replay.x:f"``) is an
    edge like a static import, so an upward string import cannot hide from the layer rule."""
    mods = _modules()
    src = 'import importlib\nimportlib.import_module("replay.sim.scene")\nLOADER = "replay.study.job:main"\n'
    found = _imports(ROOT / "replay" / "data" / "probe.py", "replay.data.probe", mods, source=src)
    assert found == {"replay.sim.scene", "replay.study.job"}


def test_layer_rule_sees_an_upward_import():
    """The rule is not vacuous: the graph holds edges across layers, and one from a
    lower layer to a higher one would be caught."""
    g = import_graph()
    assert g.has_edge("replay.protocol.rollout", "replay.sim.engine.factory")
    assert g.has_edge("replay.sim.engine.factory", "replay.sim.engine.mujoco_c.mjc")  # an import inside a function
    assert layer("replay.protocol.rollout") > layer("replay.sim.engine.mujoco_c.mjc") > layer("replay.data.types")


def _functions():
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                body = node.body[1:] if doc is not None and len(node.body) > 1 else node.body
                yield f"{name}.{node.name}", node.end_lineno - body[0].lineno + 1, doc or ""


def test_no_function_over_the_length_limit():
    long = {n: k for n, k, _ in _functions() if k > MAX_FUNCTION_LINES and n not in LONG_FUNCTIONS.keys() | TO_SPLIT}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
    found = {n: doc for n, _, doc in _functions() if n in LONG_FUNCTIONS}
    for n, why in LONG_FUNCTIONS.items():
        assert n in found, f"{n} is listed in LONG_FUNCTIONS but does not exist"
        assert why in found[n], f"{n}: its docstring must say why it is long ({why!r})"


def test_no_module_over_the_size_limit():
    big = {n: len(p.read_text().splitlines()) for n, p in _modules().items()}
    big = {n: k for n, k in big.items() if k > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines: {big}"


#: the one module that may pick behaviour by an engine's type (issue 28)
ENGINE_FACTORY = "replay/sim/engine/factory.py"
#: names an engine is held under at call sites (``batch``, ``engine``, ``self.batch``, ...)
ENGINE_NAMES = ("batch", "engine", "eng")


def _is_engine_ref(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower() in ENGINE_NAMES or name.lower().endswith("batch")


def _engine_class_ref(node: ast.AST) -> bool:
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    names = [e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else "" for e in elts]
    return any(n.endswith("Batch") for n in names)


def engine_dispatch(source: str) -> list[int]:
    """Lines of ``source`` that pick behaviour by an engine's type: ``isinstance(x, SomeBatch)``,
    ``type(x).__name__ == "...Batch"``, ``hasattr(batch, ...)`` / ``getattr(batch, name, default)``."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            f, args = node.func.id, node.args
            if f == "isinstance" and len(args) == 2 and _engine_class_ref(args[1]):
                hits.append(node.lineno)
            elif f == "hasattr" and _is_engine_ref(args[0]):
                hits.append(node.lineno)
            elif f == "getattr" and len(args) == 3 and _is_engine_ref(args[0]):
                hits.append(node.lineno)
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if (isinstance(side, ast.Attribute) and side.attr == "__name__" and isinstance(side.value, ast.Call)
                        and isinstance(side.value.func, ast.Name) and side.value.func.id == "type"):
                    if any(isinstance(c, ast.Constant) and str(c.value).endswith("Batch") for c in
                           [node.left, *node.comparators]):
                        hits.append(node.lineno)
    return hits


def test_no_engine_type_dispatch_outside_the_factory():
    """Callers ask an engine's ``capabilities`` (:mod:`replay.sim.engine.contract`); only the factory
    knows the classes."""
    bad = []
    for folder in ("replay", "scripts", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel != ENGINE_FACTORY:
                bad += [f"{rel}:{n}" for n in engine_dispatch(path.read_text())]
    assert not bad, f"engine type dispatch outside {ENGINE_FACTORY}: {bad}"


def test_dispatch_scan_sees_each_pattern():
    src = ("isinstance(b, NewtonStepBatch)\nok = type(batch).__name__ == 'WarpBatch'\nhasattr(batch, 'x')\n"
           "getattr(self.batch, 'engine_name', None)\nisinstance(x, int)\nf'{type(e).__name__}'\ngetattr(cfg, 'a', 1)\n")
    assert engine_dispatch(src) == [1, 2, 3, 4]


def test_every_engine_satisfies_the_contract():
    """Each engine class subclasses :class:`replay.sim.engine.contract.Engine` (one that says ``frame_spans``:
    :class:`replay.sim.engine.spans.SpanEngine`), keeps the base's parameter names in every method it
    overrides, has its :class:`~replay.sim.engine.contract.Capabilities`, and takes every constructor
    option after the variants keyword-only."""
    import inspect

    from replay.sim.engine.contract import Capabilities, Engine
    from replay.sim.engine.spans import SpanEngine
    from replay.sim.engine.mujoco_c.mjc import MjcBatch
    from replay.sim.engine.newton_ref.newton_step import NewtonStepBatch
    from replay.sim.engine.steel.steel import SteelBatch
    from replay.sim.engine.mjwarp.warp_batch import WarpBatch

    assert Engine.__abstractmethods__ == {"step_frame", "read_frame"}
    assert SpanEngine.__abstractmethods__ == {"step_frame", "read_frame", "begin_spans", "run_span"}
    methods = [n for n, v in vars(Engine).items() if inspect.isfunction(v) and not n.startswith("_")]
    span_methods = [n for n, v in vars(SpanEngine).items() if inspect.isfunction(v) and not n.startswith("_")]
    names, spans = set(), set()
    for cls in (MjcBatch, NewtonStepBatch, SteelBatch, WarpBatch):
        assert issubclass(cls, Engine) and not inspect.isabstract(cls), cls
        assert isinstance(cls.capabilities, Capabilities), cls
        names.add(cls.capabilities.name)
        if cls.capabilities.frame_spans:
            assert issubclass(cls, SpanEngine), cls
            spans.add(cls.capabilities.name)
        for m in methods + (span_methods if cls.capabilities.frame_spans else []):
            want = list(inspect.signature(getattr(SpanEngine, m)).parameters)
            got = list(inspect.signature(getattr(cls, m)).parameters)
            assert got[:len(want)] == want, (cls.__name__, m, got)
        init = inspect.signature(cls.__init__).parameters
        assert list(init)[:3] == ["self", "scene", "variants"] and "threads" in init, cls.__name__
        assert all(p.kind is p.KEYWORD_ONLY for p in list(init.values())[3:]), cls.__name__
    assert names == {"direct", "newton", "steel", "warp"}
    assert spans == {"direct"}


def _defined_in(path: Path) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments), not the
    ones it imports."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def reexport_uses(source: str, mods: dict[str, Path]) -> list[str]:
    """``from <package> import <name>`` lines of ``source`` where ``<package>`` (a package
    of ours) does not define ``<name>`` and has no submodule of that name: a re-export."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in mods
                and mods[node.module].name == "__init__.py"):
            continue
        own = _defined_in(mods[node.module])
        hits += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                 if a.name not in own and f"{node.module}.{a.name}" not in mods]
    return hits


def test_no_package_re_exports():
    """A name is imported from the module that defines it: no package ``__init__`` passes on its
    submodules' names (what users import is declared once, in replay.api, whose names are
    its own imports: a module, not a package, so the rule leaves it alone). The one package
    with an ``__all__`` is ``importer_patches``, a library of its own whose ``__init__`` is its
    public surface for users outside this project; our code imports from its modules too."""
    mods = _modules()
    files = [p for d in ("replay", "importer_patches", "scripts", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    hits = [f"{p.relative_to(ROOT)}:{h}" for p in files for h in reexport_uses(p.read_text(), mods)]
    assert not hits, "import these names from the module that defines them:\n" + "\n".join(hits)
    alls = [n for n, p in mods.items() if p.name == "__init__.py" and "__all__" in _defined_in(p)
            and n != "importer_patches"]
    assert not alls, f"packages declaring an __all__ of re-exported names: {alls}"


def test_re_export_scan_sees_one():
    """The scan flags a re-export and passes a defined name and a submodule."""
    mods = _modules()
    assert reexport_uses("from replay.checks import check_recording", mods)  # imported there, defined elsewhere
    assert not reexport_uses("from replay.checks import load_recording", mods)  # defined there
    assert not reexport_uses("from replay.results import records", mods)  # a submodule


#: every module that runs many recordings, and so must do it through the one batch runner
BATCH_USERS = ("replay.commands.run_sweep", "replay.commands.validate_pose_mapping",
               "replay.commands.validate_object_frame", "replay.study.attribution", "replay.study.gripper_check",
               "replay.study.summary", "replay.study.runner", "replay.study.bridge")


def test_many_recording_commands_use_the_one_batch_runner():
    """The study, the sweep, both validations, the attribution, the bridge and the gripper check run their recordings
    through replay.study.batch (select, isolation, resume, versions, atomic writes, Ctrl-C);
    package versions are recorded one way (replay.study.batch.package_versions, the study's too)."""
    g = import_graph()
    missing = [m for m in BATCH_USERS if not g.has_edge(m, "replay.study.batch")]
    assert not missing, f"not on the batch runner: {missing}"
    own = [n for n, p in _modules().items() if n != "replay.study.batch" and "importlib.metadata" in p.read_text()]
    assert not own, f"package versions recorded outside replay.study.batch: {own}"


def test_scripts_are_wrappers_over_the_commands():
    """scripts/*.py hold no logic: each imports ``main`` from replay.commands.<its name> and
    runs it (the logic lives in the package, where the limits above apply and a wheel has it)."""
    for p in sorted((ROOT / "scripts").glob("*.py")):
        tree = ast.parse(p.read_text())
        defs = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
        assert not defs, f"{p.name} defines {defs}: put them in replay/commands/{p.name}"
        froms = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert f"replay.commands.{p.stem}" in froms, f"{p.name} does not wrap replay.commands.{p.stem}"
        assert (ROOT / "replay" / "commands" / p.name).is_file()


#: the one module that writes to the user's terminal (issue #55): every other module says through it, or logs
CONSOLE = "replay/console.py"
#: modules that write to the terminal themselves, and why
OWN_CONSOLE = {"replay/output/export/standalone.py": "copied into every MJCF export, it runs without grasp-replay"}


def terminal_writes(source: str) -> list[int]:
    """Lines of ``source`` that write to the terminal: a ``print`` call, ``sys.stdout`` / ``sys.stderr`` (or their
    ``__stdout__`` / ``__stderr__``) named or imported, a tqdm bar made or ``tqdm.write`` called."""
    hits = []
    streams = ("stdout", "stderr", "__stdout__", "__stderr__")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.value.id if isinstance(f, ast.Attribute) and isinstance(
                f.value, ast.Name) else ""
            if name in ("print", "tqdm", "trange"):
                hits.append(node.lineno)
        elif (isinstance(node, ast.Attribute) and node.attr in streams and isinstance(node.value, ast.Name)
              and node.value.id == "sys"):
            hits.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name in streams for a in node.names):
            hits.append(node.lineno)
    return sorted(set(hits))


def test_the_console_is_the_one_module_that_writes_to_the_terminal():
    """A command's results, errors and progress bars go through :mod:`replay.console`; diagnostics through
    ``logging`` (said on stderr by the handler :func:`replay.cli.run` sets up)."""
    bad = []
    for path in sorted((ROOT / "replay").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel != CONSOLE and rel not in OWN_CONSOLE:
            bad += [f"{rel}:{n}" for n in terminal_writes(path.read_text())]
    assert not bad, f"terminal writes outside {CONSOLE} (use replay.console, or logging for a diagnostic): {bad}"
    assert terminal_writes((ROOT / CONSOLE).read_text()), "the scan finds no write in the console itself"
    for rel in OWN_CONSOLE:
        assert terminal_writes((ROOT / rel).read_text()), f"{rel} writes nothing: take it out of OWN_CONSOLE"


def test_terminal_scan_sees_each_pattern():
    src = ("print('x')\nsys.stderr.write('x')\nf(file=sys.stdout)\nbar = tqdm(total=3)\ntqdm.write('x')\n"
           "from sys import stderr\nsys.__stdout__.write('x')\nconsole.out('x')\nsys.argv\nlog.warning('x')\n"
           "def f() -> tqdm: ...\n")
    assert terminal_writes(src) == [1, 2, 3, 4, 5, 6, 7]


def python_warnings(source: str) -> list[int]:
    """Lines of ``source`` that raise a Python warning: ``warnings.warn`` / ``warnings.warn_explicit`` called or
    imported by name."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr in ("warn", "warn_explicit")
                and isinstance(node.value, ast.Name) and node.value.id == "warnings"):
            hits.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "warnings" and any(
                a.name in ("warn", "warn_explicit") for a in node.names):
            hits.append(node.lineno)
    return sorted(set(hits))


def test_diagnostics_are_logged_not_warned():
    """A diagnostic is a ``logging`` record (said by :mod:`replay.console`'s handler; a study job keeps its records
    with its result, :func:`replay.console.kept_warnings`), never a Python warning."""
    bad = [f"{p.relative_to(ROOT).as_posix()}:{n}" for p in sorted((ROOT / "replay").rglob("*.py"))
           for n in python_warnings(p.read_text())]
    assert not bad, f"warnings.warn in replay/ (log it: logging.getLogger(__name__).warning): {bad}"


def test_warning_scan_sees_each_pattern():
    src = ("warnings.warn('x')\nwarnings.warn_explicit(m, c, f, 1)\nfrom warnings import warn\n"
           "warnings.catch_warnings()\nlog.warning('x')\n")
    assert python_warnings(src) == [1, 2, 3]


#: modules whose public functions take every parameter past the third keyword-only (issue #55; more packages
#: join as their modules are edited)
KEYWORD_ONLY = ("replay.commands", "replay.cli", "replay.console", "replay.study", "replay.output", "replay.config",
                "replay.errors", "replay.fileio", "replay.datasets", "replay.api", "replay.results", "replay.sim",
                "replay.data", "replay.kinematics", "replay.checks", "replay.protocol")
MAX_POSITIONAL = 3
#: why a function keeps more than three positional parameters, one line each (issue #55 item 7)
_WARP = "Warp reads a kernel's or wp.func's parameters from getfullargspec().args: keyword-only ones are none"
_JITTED = "njit, called from jitted code ({}): numba 0.68 cannot bind a keyword-only parameter there"
_HOT = "njit, called from Python on the stepping path ({}): numba binds keyword arguments on a slower dispatch"
KEYWORD_EXEMPT = {
    "replay.sim.engine.mjwarp.warp_kernels.wrist_kernel": _WARP,
    "replay.sim.engine.mjwarp.warp_kernels.finger_ctrl_kernel": _WARP,
    "replay.sim.engine.mjwarp.warp_kernels.park_kernel": _WARP,
    "replay.sim.engine.mjwarp.warp_kernels.hand_object_kernel": _WARP,
    "replay.sim.engine.mjwarp.warp_kernels.signals_kernel": _WARP,
    "replay.sim.engine.mjwarp.warp_wrist.rotvec_unnormalized": _WARP,
    "replay.sim.engine.mjwarp.warp_wrist.authored_wrench_part": _WARP,
    "replay.sim.engine.steel.steel_drive.quat_drive_kernel": _WARP,
    "replay.sim.engine.finger_drive.quat_drive": _JITTED.format("c_loop.run_frames"),
    "replay.sim.engine.signals.fastest_body": _JITTED.format("c_loop.run_frames"),
    "replay.sim.engine.wrist.apply_substep": _JITTED.format("c_loop.run_frames"),
    "replay.sim.engine.wrist.wrench": _JITTED.format("wrist.apply_substep"),
    "replay.sim.engine.wrist.substep_target": _JITTED.format("wrist.apply_substep"),
    "replay.sim.engine.wrist.slerp_wxyz": _JITTED.format("wrist.substep_target"),
    "replay.sim.engine.signals.hand_object_contacts": _HOT.format("signals.data_contacts, per frame"),
    "replay.sim.engine.signals.finger_ctrl": _HOT.format("layout.MjLayout.finger_ctrl, per frame"),
    "replay.sim.engine.mujoco_c.c_loop.run_frames": _HOT.format("mujoco_c.mjc_spans, per span"),
    "replay.sim.engine.mujoco_c.ctrl_steps.ctrl_steps": _HOT.format("replay.sim.gripper, per chunk of steps"),
}


def positional_overflow(source: str) -> list[str]:
    """Public functions and public classes' methods of ``source`` with more than :data:`MAX_POSITIONAL` positional
    parameters (``self`` / ``cls`` not counted)."""
    hits = []

    def visit(body, prefix: str, method: bool):
        for n in body:
            if isinstance(n, ast.ClassDef) and not n.name.startswith("_"):
                visit(n.body, f"{prefix}{n.name}.", True)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    not n.name.startswith("_") or n.name == "__init__"):
                pos = n.args.posonlyargs + n.args.args
                if method and pos and pos[0].arg in ("self", "cls"):
                    pos = pos[1:]
                if len(pos) > MAX_POSITIONAL:
                    hits.append(f"{prefix}{n.name}")

    visit(ast.parse(source).body, "", False)
    return hits


def test_public_functions_of_more_than_three_parameters_take_the_rest_by_keyword():
    mods = _modules()
    found = {f"{m}.{f}" for m, p in mods.items() if m.startswith(KEYWORD_ONLY)
             for f in positional_overflow(p.read_text())}
    bad = sorted(found - KEYWORD_EXEMPT.keys())
    assert set(KEYWORD_EXEMPT) <= found, f"exempt but gone or converted: {sorted(set(KEYWORD_EXEMPT) - found)}"
    assert not bad, f"more than {MAX_POSITIONAL} positional parameters (put a * after the natural ones): {bad}"


def test_positional_scan_sees_functions_and_methods():
    src = ("def a(w, x, y, z): ...\ndef b(w, x, y, *, z): ...\ndef _c(w, x, y, z): ...\n"
           "class K:\n    def __init__(self, w, x, y, z): ...\n    def m(self, x, y, z): ...\n"
           "class _H:\n    def m(self, w, x, y, z): ...\n")
    assert positional_overflow(src) == ["a", "K.__init__"]


def test_replay_is_ruff_clean():
    """Issue #55 item 7: ``ruff check`` and ``ruff format --check`` (pyproject.toml's settings) pass on replay/."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: `make setup` installs the dev extra, which pins it")
    for args in (["check", "replay"], ["format", "--check", "replay"]):
        r = subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, f"ruff {' '.join(args)}:\n{r.stdout[-3000:]}{r.stderr[-1000:]}"

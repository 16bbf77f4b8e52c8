"""Convex decomposition with CoACD (Wei et al., SIGGRAPH 2022), cached, in a child process (it can crash natively)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import trimesh

from replay.data.cache import cache_dir, sha256_text
from replay.data.mesh_io import load_mesh
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, sha256_file

#: CoACD settings for TACO meshes: pre-processing off gave the smallest hull gap and no part below the mesh; threshold
#: 0.05 is CoACD's default
COACD_SETTINGS = {
    "threshold": 0.05,
    "max_convex_hull": 12,
    "preprocess_mode": "off",
    "preprocess_resolution": 20,
    "resolution": 500,
    "mcts_nodes": 10,
    "mcts_iterations": 30,
    "mcts_max_depth": 2,
    "seed": 0,
}


#: s, wall-clock limit of one CoACD run (far above a TACO mesh's; stops a hung decomposition)
COACD_TIMEOUT_S = 300.0


def _run_coacd(vertices: np.ndarray, faces: np.ndarray, settings: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """``coacd.run_coacd`` on (V, 3) m vertices, (F, 3) faces -> [(vertices, faces)] per part."""
    import coacd

    coacd.set_log_level("error")
    parts = coacd.run_coacd(coacd.Mesh(vertices, faces), **settings)
    return [(np.asarray(v, float), np.asarray(f, np.int64)) for v, f in parts]


def convex_decomposition(mesh_path: str | Path) -> list[Path]:
    """Convex parts (object frame, m) as STL under ``cache_dir("coacd/taco")``, keyed by the mesh's SHA-256 and
    :data:`COACD_SETTINGS`. Raises DataError: unreadable mesh; CoACD crashed (signal named), ran past
    :data:`COACD_TIMEOUT_S` or returned no part; a degenerate part."""
    import coacd

    mesh_path = Path(mesh_path)
    settings = dict(COACD_SETTINGS)
    mesh = load_mesh(mesh_path, "mesh")
    key = sha256_text(
        sha256_file(mesh_path),
        json.dumps(settings, sort_keys=True),
        f"coacd-{coacd.__version__ if hasattr(coacd, '__version__') else '1'}",
    )
    out = cache_dir("coacd/taco") / f"{mesh_path.stem}-{key[:16]}"
    done = out / "done"
    if done.is_file():
        parts = sorted(out.glob("part_*.stl"))
        if parts:
            return parts
    from replay.data.isolate import call_isolated

    result = call_isolated(
        _run_coacd,
        np.asarray(mesh.vertices, float),
        np.asarray(mesh.faces, np.int64),
        settings,
        timeout_s=COACD_TIMEOUT_S,
        what="CoACD convex decomposition",
        path=mesh_path,
        field="mesh",
        advice="this recording is skipped; repair the mesh (one closed, non-self-intersecting surface) "
        "or supply convex collision parts",
    )
    if not result:
        raise DataError(mesh_path, "mesh", "CoACD returned no convex part")
    paths = []
    for i, (v, f) in enumerate(result):
        part = trimesh.Trimesh(v, f, process=True)
        paths.append(atomic_write_bytes(out / f"part_{i:02d}.stl", trimesh.exchange.stl.export_stl(part)))
    atomic_write_bytes(done, json.dumps({"source": str(mesh_path), "settings": settings, "parts": len(paths)}).encode())
    return paths

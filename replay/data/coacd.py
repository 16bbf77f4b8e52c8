"""Convex decomposition of a mesh with CoACD (TACO objects have none), cached on disk.

CoACD (Wei et al., SIGGRAPH 2022; github.com/SarahWeiii/CoACD) runs in a child process
(:func:`replay.data.isolate.call_isolated`): it can crash natively on a bad mesh.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import trimesh

from replay.data.cache import cache_dir, sha256_text
from replay.data.mesh_io import load_mesh
from replay.errors import DataError
from replay.fileio import atomic_write_bytes, sha256_file

#: CoACD settings for TACO meshes, chosen on the two mirror meshes (1000
#: vertices, not watertight) by the hull-gap metric of
#: :mod:`replay.checks.object_frame` (median / p90 / max mm, 3000 samples):
#: with CoACD's manifold pre-processing on (resolution 20) 2.9/7.5/10.4 and
#: 3.6/6.1/10.8 mm and parts reaching 1.5-2 mm below the mesh's lowest point
#: (the voxel remesh inflates the shape); resolution 40: 1.7/4.9/6.8 and
#: 2.7/5.8/8.5 mm at 1.5-2x the time; pre-processing off: 0.56/3.0/6.1 and
#: 2.1/5.6/10.5 mm, no part below the mesh, and the fastest (~6-17 s on a shared
#: core). threshold 0.05 is CoACD's default concavity tolerance; 12 parts max.
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


#: Wall-clock limit of one CoACD run, s. Measured: 6-17 s per TACO mirror mesh (1000 vertices)
#: on a shared core with :data:`COACD_SETTINGS`; 300 s leaves a 20x margin for larger meshes
#: and stops a hung decomposition.
COACD_TIMEOUT_S = 300.0


def _run_coacd(vertices: np.ndarray, faces: np.ndarray, settings: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """``coacd.run_coacd`` on (V, 3) m vertices and (F, 3) int faces -> [(vertices, faces)] per part.
    Runs in a child process (:func:`replay.data.isolate.call_isolated`): CoACD can segfault."""
    import coacd

    coacd.set_log_level("error")
    parts = coacd.run_coacd(coacd.Mesh(vertices, faces), **settings)
    return [(np.asarray(v, float), np.asarray(f, np.int64)) for v, f in parts]


def convex_decomposition(mesh_path: str | Path, settings: dict | None = None, sub: str = "coacd") -> list[Path]:
    """Convex parts of a mesh from CoACD, cached on disk.

    The cache key is the SHA-256 of the mesh file plus the settings, so the
    parts are recomputed only when either changes. Parts are written as STL to
    ``cache_dir(sub)/<stem>-<key>/part_XX.stl`` (atomic writes; a ``done``
    marker is written last so an interrupted run is recomputed).

    Args:
        mesh_path: source mesh (object frame, m).
        settings: keyword arguments for ``coacd.run_coacd`` (default :data:`COACD_SETTINGS`).

    Returns:
        Paths of the convex parts (at least one).

    Raises:
        DataError: the mesh cannot be read; CoACD crashed (it runs in a child process,
            :func:`replay.data.isolate.call_isolated`; the signal is named), ran past
            :data:`COACD_TIMEOUT_S`, or returned no part; a part is degenerate
            (:func:`replay.data.mesh_checks.check_collision_part`).
    """
    import coacd

    mesh_path = Path(mesh_path)
    settings = dict(COACD_SETTINGS if settings is None else settings)
    mesh = load_mesh(mesh_path, "mesh")
    key = sha256_text(
        sha256_file(mesh_path),
        json.dumps(settings, sort_keys=True),
        f"coacd-{coacd.__version__ if hasattr(coacd, '__version__') else '1'}",
    )
    out = cache_dir(sub) / f"{mesh_path.stem}-{key[:16]}"
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

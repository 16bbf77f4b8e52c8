"""One mesh cache per run (replay.data.mesh_io.load_mesh): a file is parsed once, each caller
gets its own copy, a rewritten file is read again, and errors still name file and field."""

from __future__ import annotations

import os

import numpy as np
import pytest
import trimesh

from replay.data import mesh_io
from replay.errors import DataError


def test_a_mesh_is_parsed_once_and_each_caller_owns_its_copy(tmp_path):
    path = tmp_path / "box.stl"
    trimesh.creation.box(extents=(0.04, 0.04, 0.04)).export(path)
    before = mesh_io._cached_mesh.cache_info()
    a = mesh_io.load_mesh(path, "visual_mesh")
    b = mesh_io.load_mesh(path, "collision_meshes[0]")
    info = mesh_io._cached_mesh.cache_info()
    assert (info.misses - before.misses, info.hits - before.hits) == (1, 1)
    assert a is not b and np.array_equal(a.vertices, b.vertices)  # the same file's copies, bit for bit
    assert a.extents == pytest.approx([0.04] * 3)  # 40 mm cube, as exported
    b.apply_scale(10.0)  # a caller transforming its copy changes nobody else's
    assert mesh_io.load_mesh(path).extents == pytest.approx([0.04] * 3)
    # a file rewritten during the run (new size / modification time) is read again
    trimesh.creation.box(extents=(0.02, 0.02, 0.06)).export(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert mesh_io.load_mesh(path).extents == pytest.approx([0.02, 0.02, 0.06])


def test_errors_are_not_cached_and_name_file_and_field(tmp_path):
    path = tmp_path / "empty.stl"
    path.write_text("solid x\nendsolid x\n")
    for field in ("visual_mesh", "collision_meshes[1]"):
        with pytest.raises(DataError, match=rf"empty\.stl \[{field.replace('[', '.').replace(']', '.')}\]: mesh has no triangles"):
            mesh_io.load_mesh(path, field)
    with pytest.raises(DataError, match="mesh file not found"):
        mesh_io.load_mesh(tmp_path / "missing.stl", "visual_mesh")

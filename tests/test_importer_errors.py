"""Bad input gives a clear error naming the file and the element; version guard; CLI."""

from __future__ import annotations

import json
import shutil
import warnings

import newton
import pytest

import importer_patches as ip
from importer_patches import inspect_import as ip_inspect
from importer_patches import version
from replay.errors import DataError


def test_missing_file(tmp_path):
    path = tmp_path / "nope.xml"
    with pytest.raises(ip.MJCFError, match="not found") as err:
        ip.add_mjcf(newton.ModelBuilder(), path)
    assert err.value.path == path and err.value.field == "file"
    assert isinstance(err.value, DataError)


def test_malformed_xml(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<mujoco><worldbody><body name='a'></worldbody></mujoco>")
    with pytest.raises(ip.MJCFError, match="malformed XML") as err:
        ip.add_mjcf(newton.ModelBuilder(), path)
    assert err.value.field == "xml" and str(path) in str(err.value)


def test_not_mjcf(tmp_path):
    path = tmp_path / "urdf.xml"
    path.write_text("<robot name='r'/>")
    with pytest.raises(ip.MJCFError, match="not an MJCF"):
        ip.add_mjcf(newton.ModelBuilder(), path)


def test_missing_mesh_small(tmp_path):
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="bone" file="meshes/bone.obj"/></asset>'
        '<worldbody><body name="a"><joint type="ball"/><geom type="mesh" mesh="bone"/></body></worldbody></mujoco>'
    )
    with pytest.raises(ip.MJCFError, match="mesh 'bone'") as err:
        ip.add_mjcf(newton.ModelBuilder(), path)
    assert str(tmp_path / "meshes" / "bone.obj") in str(err.value)


@pytest.mark.needs_data
def test_missing_mesh_manosim_copy(tmp_path, capsule_rhand):
    """The manosim MJCF copied away from its meshes/ folder: the first mesh is named."""
    copy = tmp_path / "capsule_hand.xml"
    shutil.copy(capsule_rhand, copy)
    with pytest.raises(ip.MJCFError, match="mesh 'mano_bone_0'"):
        ip.add_mjcf(newton.ModelBuilder(), copy)


@pytest.mark.needs_data
def test_meshes_resolve_relative_to_original_file(capsule_rhand, tmp_path, monkeypatch):
    """Import works from any working directory (paths resolve against the MJCF's folder)."""
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ip.FreeJointActuatorWarning)
        report = ip.add_mjcf(newton.ModelBuilder(), capsule_rhand.parent / "mesh_hand.xml")
    assert report.shape_count == 16


def test_unknown_patch_name(tmp_path):
    with pytest.raises(ValueError, match="unknown patch 'dampening'"):
        ip.add_mjcf(newton.ModelBuilder(), tmp_path / "x.xml", patches={"dampening": False})


def test_newton_version_guard(tmp_path, monkeypatch):
    path = tmp_path / "one.xml"
    path.write_text('<mujoco><worldbody><body name="a"><joint type="ball"/><geom size="0.1"/></body></worldbody></mujoco>')
    monkeypatch.setattr(version, "installed_newton_version", lambda: "1.9.0")
    with pytest.raises(ip.NewtonVersionError, match=r"newton==1\.8\.0.*allow_untested_newton"):
        ip.add_mjcf(newton.ModelBuilder(), path)
    with pytest.warns(UserWarning, match="1.9.0"):
        report = ip.add_mjcf(newton.ModelBuilder(), path, allow_untested_newton=True)
    assert report.newton_version == "1.9.0" and report.joint_types == ["BALL"]


@pytest.mark.needs_data
def test_cli_json_compare_mujoco(capsule_rhand, capsys):
    rc = ip_inspect.main([str(capsule_rhand), "--json", "--compare-mujoco"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    r, mj = doc["report"], doc["mujoco"]
    assert (r["body_count"], r["joint_count"], r["dof_count"], r["coord_count"]) == (16, 16, 51, 67)
    assert mj["ok"] and mj["counts"]["mujoco"]["nv"] == 51 and mj["max_kd_rel_err"] < 0.01
    assert any("FreeJointActuatorWarning" in w or "FREE in Newton" in w for w in r["warnings"])


@pytest.mark.needs_data
def test_cli_text_and_patch_off(capsule_rhand, capsys):
    assert ip_inspect.main([str(capsule_rhand), "--compare-mujoco"]) == 0
    out = capsys.readouterr().out
    assert "joints 16 {'FREE': 1, 'BALL': 15}" in out and "match: True" in out
    assert ip_inspect.main([str(capsule_rhand), "--compare-mujoco", "--disable", "dampratio"]) == 2
    assert ip_inspect.main([str(capsule_rhand), "--disable", "free_joint"]) == 1

"""Objects weighed as made (replay.sim.made_mass): a GRAB print's mass re-derived from its mesh, the range the
sampled verdict draws from inside the declared bounds, the scene weighing the centre (inertia with it), and the
authored physics keeping the MJCF's 1250 kg/m^3."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import trimesh
from short_window import still_window

from replay.config import ReplayConfig
from replay.data.grab import load_grab
from replay.data.objects import collision_volume
from replay.sim import physics
from replay.sim.made_mass import made_mass, print_mass

pytestmark = pytest.mark.needs_data

#: the sources' print ranges, typed here (physics choice object_print): PLA 1210-1250 kg/m^3 (Farah et al. 2016),
#: infill 15-20 % (ContactDB's 15 %; slicer defaults 15-20 %), shells 2-3 lines of 0.4 mm
RHO, INFILL, SHELL_M = (1210.0, 1250.0), (0.15, 0.20), (0.0008, 0.0012)


def _asset(grab_dir, name):
    return load_grab(grab_dir / "recordings" / f"{name}_lift.pkl").target_object.asset


def test_a_printed_cube_weighs_its_shell_plus_infill(grab_dir):
    """cubelarge: its STL is a 12 cm cube (trimesh: watertight, extents 0.12 m), so V = a^3 and A = 6 a^2; the
    print's mass at the ends of the sources' ranges, rho (A t + f (V - A t)), is the model's range (1e-3); a
    solid cube at object_sim's 1250 kg/m^3 weighs several times more."""
    asset = _asset(grab_dir, "cubelarge")
    mesh = trimesh.load(asset.visual_mesh, force="mesh")
    a = float(np.mean(mesh.extents))
    assert mesh.is_watertight and mesh.extents == pytest.approx([0.12] * 3, abs=5e-4)
    V, A = a**3, 6 * a * a
    lo = RHO[0] * (A * SHELL_M[0] + INFILL[0] * (V - A * SHELL_M[0]))
    hi = RHO[1] * (A * SHELL_M[1] + INFILL[1] * (V - A * SHELL_M[1]))
    mm = made_mass(asset, ReplayConfig())
    assert mm.model == "printed" and mm.mesh == "watertight visual"
    assert (mm.low_kg, mm.high_kg) == pytest.approx((lo, hi), rel=1e-3)
    assert mm.centre_kg == pytest.approx(0.5 * (lo + hi), rel=1e-3)
    assert 0.35 < lo < hi < 0.6 and V * 1250 > 4 * hi  # solid: 2.16 kg


def test_mug_from_trimesh_and_a_mesh_with_holes_from_the_parts(grab_dir):
    """mug: trimesh's volume and area of its watertight STL give the range; stapler (not watertight): its area and
    the union of its collision parts; a shell is never more than the volume."""
    mug = _asset(grab_dir, "mug")
    mesh = trimesh.load(mug.visual_mesh, force="mesh")
    V, A = abs(mesh.volume), mesh.area
    mm = made_mass(mug, ReplayConfig())
    assert (mm.low_kg, mm.high_kg) == pytest.approx(
        (print_mass(V, A, RHO[0], infill=INFILL[0], shell_m=SHELL_M[0]),
         print_mass(V, A, RHO[1], infill=INFILL[1], shell_m=SHELL_M[1])), rel=1e-9
    )
    assert (mm.volume_m3, mm.area_m2) == pytest.approx((V, A), rel=1e-9)
    st = made_mass(_asset(grab_dir, "stapler"), ReplayConfig())
    assert st.mesh == "collision parts' union" and st.low_kg < st.high_kg
    assert print_mass(1e-6, 1.0, 1000.0, infill=0.2, shell_m=0.001) == pytest.approx(1e-3)  # shell capped at the volume: solid


def test_unstated_stated_and_authored(grab_dir):
    """An object whose making is unstated weighs as its asset, sampled +-20 % (object_mass_unstated_spread); a
    stated mass is the mass, not sampled; under ``authored`` a print weighs as the MJCF says (its density over the
    collision parts)."""
    cube = _asset(grab_dir, "cubesmall")
    solid = 1250.0 * collision_volume(cube)
    auth = made_mass(cube, physics.apply_physics(ReplayConfig(), "authored"))
    assert auth.model == "asset" and not auth.sets_mass and auth.centre_kg == pytest.approx(solid, rel=1e-9)
    assert auth.scale_range() == pytest.approx((0.8, 1.2))
    plain = made_mass(dataclasses.replace(cube, made="unstated"), ReplayConfig())
    assert plain.model == "asset" and plain.centre_kg == pytest.approx(solid, rel=1e-9)
    stated = made_mass(dataclasses.replace(cube, mass=0.3), ReplayConfig())
    assert stated.model == "stated" and (stated.low_kg, stated.centre_kg, stated.high_kg) == (0.3, 0.3, 0.3)


def test_the_sampled_range_and_the_scene_weigh_the_model(grab_dir, capsule_rhand):
    """The sampled verdict draws each recording's mass scale within its object's own range (the declared bounds
    over the centre), and the scene of the single run weighs the centre: MuJoCo's compiled body mass, its
    principal inertia the authored scene's times the same ratio (mass and inertia move together)."""
    from replay.protocol.rollout import build_replay_scene
    from replay.sim.engine.layout import MjLayout
    from replay.study.sampler import draw_samples
    from replay.study.uncertainty import object_ranges, variables

    rec, coords = still_window(grab_dir, "cubelarge")
    cfg = ReplayConfig(approach_window_s=0.5, settle_s=0.2)
    mm = made_mass(rec.target_object.asset, cfg)
    ranges = object_ranges(rec, cfg)
    lo, hi = ranges["object_mass_scale"]
    assert (lo * mm.centre_kg, hi * mm.centre_kg) == pytest.approx((mm.low_kg, mm.high_kg), rel=1e-12)
    s = draw_samples(0, "cubelarge_lift", 16, sigmas={"wrist_mm": 1.0, "object_mm": 0.1}, variables=variables(cfg), ranges=ranges)
    kg = np.array([x["object_mass_scale"] for x in s]) * mm.centre_kg
    assert np.all((kg >= mm.low_kg) & (kg <= mm.high_kg)) and np.ptp(kg) > 0.8 * (mm.high_kg - mm.low_kg)
    scene = build_replay_scene(rec, coords, capsule_rhand, cfg=cfg)[1]
    auth = build_replay_scene(rec, coords, capsule_rhand, cfg=physics.apply_physics(cfg, "authored"))[1]
    m, ma = scene.solver.mj_model, auth.solver.mj_model
    b, ba = MjLayout.from_scene(scene).object_body, MjLayout.from_scene(auth).object_body
    assert m.body_mass[b] == pytest.approx(mm.centre_kg, rel=1e-6) and scene.object_mass == pytest.approx(mm.centre_kg)
    assert ma.body_mass[ba] == pytest.approx(1250.0 * collision_volume(rec.target_object.asset), rel=1e-4)
    np.testing.assert_allclose(m.body_inertia[b] / ma.body_inertia[ba], m.body_mass[b] / ma.body_mass[ba], rtol=1e-5)
    assert scene.readback["object_mass_model"]["model"] == "printed"

"""The grasp-and-lift check of one object asset: settle it alone, make its grasp lines, run the nine phases on a fresh
scene per line."""

from __future__ import annotations

import time

import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.data.types import ObjectAsset, Recording
from replay.errors import DataError
from replay.protocol.gripper_lines import hull_planes, principal_lines, thumb_index_line
from replay.protocol.gripper_phases import LineRun, PhaseConfig, object_verdict, plan_line, run_phases
from replay.sim.gripper import FixtureConfig, build_gripper_scene
from replay.sim.world_builder import load_collision_parts

#: the object's lowest collision point starts this far above the ground, m (FET005: "just above")
DROP_GAP = 0.001


def settle_object(
    asset: ObjectAsset, quat_xyzw: np.ndarray, config: ReplayConfig, *, fixture: FixtureConfig, pc: PhaseConfig
) -> dict:
    """Rest the object (``quat_xyzw``, lowest point :data:`DROP_GAP` above z = 0) on the ground until still or
    ``pc.settle_timeout_s``: ``{"origin": (7,) m/xyzw, "com": (3,) m, "inertia": (3, 3) kg·m^2 body frame, "mass": kg,
    "parts": [(V_i, 3) world vertices], "at_rest", "settle_s": s}``."""
    parts = [v for v, _ in load_collision_parts(asset)]
    rot = Rotation.from_quat(np.asarray(quat_xyzw, float))
    allv = rot.apply(np.concatenate(parts))
    pos = np.array(
        [
            -0.5 * (allv[:, 0].min() + allv[:, 0].max()),
            -0.5 * (allv[:, 1].min() + allv[:, 1].max()),
            DROP_GAP - allv[:, 2].min(),
        ]
    )
    sc = build_gripper_scene(
        asset, pos, rot.as_quat(), gantry0=np.zeros(3), u=None, jaw0=0.0, config=config, fixture=fixture
    )
    st = {"ref": sc.read().com, "t_ref": 0.0, "rest": None}

    def still(_k, r):
        if np.linalg.norm(r.com - st["ref"]) > pc.rest_tol:
            st["ref"], st["t_ref"] = r.com, sc.time
        elif sc.time - st["t_ref"] >= pc.rest_window_s:
            st["rest"] = sc.time
            return True
        return False

    sc.run(int(np.ceil(pc.settle_timeout_s / sc.dt)), still)
    rest = st["rest"]
    origin = sc.object_origin()
    r = Rotation.from_quat(origin[3:7])
    return dict(
        origin=origin,
        com=sc.read()[0],
        inertia=sc.object_inertia,
        mass=sc.object_mass,
        parts=[r.apply(v) + origin[:3] for v in parts],
        at_rest=rest is not None,
        settle_s=sc.time,
    )


def grasp_lines(rec: Recording | None, settled: dict) -> tuple[list, dict]:
    """``(lines, skipped {name: reason})``: the thumb-index line (with ``rec``) and the two principal axes."""
    lines, skipped = [], {}
    if rec is not None:
        try:
            lines.append(thumb_index_line(rec, settled["origin"]))
        except DataError as e:
            skipped["thumb_index"] = str(e)
    lines += principal_lines(settled["com"], settled["inertia"], settled["origin"][3:7])
    return lines, skipped


def check_object(
    asset: ObjectAsset,
    rec: Recording | None,
    config: ReplayConfig,
    *,
    fixture: FixtureConfig | None = None,
    pc: PhaseConfig | None = None,
    lines: list[str] | None = None,
    keep_trace: bool = False,
) -> dict:
    """``{"object", "mass_kg", "jaw_force_n", "settle", "bbox_m", "lines", "skipped_lines", **object_verdict}``: every
    grasp line through the nine phases (``rec`` None: upright, principal lines only). Raises DataError (unreadable or
    degenerate collision parts, no mass)."""
    fixture, pc = fixture or FixtureConfig(), pc or PhaseConfig()
    quat0 = rec.target_object.quat[0] if rec is not None else np.array([0.0, 0.0, 0.0, 1.0])
    settled = settle_object(asset, quat0, config, fixture=fixture, pc=pc)
    allv = np.concatenate(settled["parts"])
    bbox = allv.max(axis=0) - allv.min(axis=0)
    planes = hull_planes(settled["parts"])
    cand, skipped = grasp_lines(rec, settled)
    results, force = [], None
    for line in cand:
        if lines is not None and line.name not in lines:
            continue
        t0 = time.perf_counter()
        plan = plan_line(line, planes, fixture.pad_half_width, preload=fixture.preload, open_margin=fixture.open_margin)
        run = LineRun(
            asset,
            settled["origin"],
            plan,
            config=config,
            fixture=fixture,
            pc=pc,
            height=float(bbox[2]),
            longest_edge=float(bbox.max()),
        )
        force = run.sc.force
        res = run_phases(run)
        res.update(
            line=line.to_dict(),
            plan=_plan_dict(plan),
            wall_s=time.perf_counter() - t0,
            jaw=dict(force_n=run.sc.force, kp=run.sc.kp, kd=run.sc.kd, pad_mass_kg=run.sc.pad_mass),
        )
        if keep_trace:
            res["trace"] = {k: np.asarray(v) for k, v in run.trace.items()}
        results.append(res)
    return dict(
        object=asset.name,
        mass_kg=settled["mass"],
        jaw_force_n=force,
        bbox_m=[float(x) for x in bbox],
        settle=dict(
            at_rest=settled["at_rest"], settle_s=settled["settle_s"], origin=[float(x) for x in settled["origin"]]
        ),
        lines=results,
        skipped_lines=skipped,
        **object_verdict(results),
    )


def _plan_dict(plan: dict) -> dict:
    return dict(
        centre=[float(x) for x in plan["centre"]],
        half_span_mm=plan["half_span"] * 1000.0,
        jaw_open_mm=plan["jaw_open"] * 1000.0,
        jaw_target_mm=plan["jaw_target"] * 1000.0,
        centre_hit=bool(plan["centre_hit"]),
    )

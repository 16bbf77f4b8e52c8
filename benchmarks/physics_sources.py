"""The figures behind docs/sources.md: each GRAB object's declared mass as made against the MJCF's solid
1250 kg/m^3, each finger joint's strength under the replay physics, and how many fingers the pad compression
closes on the real grasps and on the same grasps with the fingers opened 20 deg (the corruption
``fingers_open_20deg``, solved on the opened pose as the sampled verdict does).

    python benchmarks/physics_sources.py --data $REPLAY_MIRROR --out docs/results/physics-sources.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mujoco
import numpy as np

from replay.config import ReplayConfig
from replay.data.objects import collision_volume
from replay.protocol import release
from replay.protocol.finger_closure import closed_targets, flexion_axes, ramp
from replay.protocol.lift_plan import plan_rollout
from replay.protocol.pad_compression import PadPlan
from replay.sim import finger_strength, physics
from replay.sim.hand_assets import resolve_hand_variant
from replay.sim.made_mass import made_mass
from replay.study.corruptions import FINGERS_OPEN_DEG
from replay.study.prepare import prepare_recording

#: MANO bone -> (finger, joint) name, bones 1..15 (index 0 = bone 1): the keys of ``joint_limit_nm``
JOINT_NAMES = tuple(f"{f}_{j}" for f in ("index", "middle", "pinky", "ring") for j in ("mcp", "pip", "dip")) + (
    "thumb_cmc",
    "thumb_mcp",
    "thumb_ip",
)


def _axes(mjcf) -> np.ndarray:
    m = mujoco.MjModel.from_xml_path(str(mjcf))
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"mano_body_{b}") for b in range(16)]
    return flexion_axes(np.asarray(m.body_pos)[ids])


def _pad_counts(rec, coords, mjcf, cfg) -> dict:
    """Fingers near the object (within pad_near_mm), closed by the compression, at the plan's depth: real take and
    the take with every finger opened FINGERS_OPEN_DEG."""
    plan = plan_rollout(rec, coords, cfg)
    plan = release.extend_plan(
        plan, plan.coords[0], cfg.frame_dt, release_s=cfg.lift.release_s, fall_s=cfg.lift.release_fall_s
    )
    depth = float(physics.choice_value(cfg, "pad_compression"))
    pad = PadPlan.build(rec, coords, mjcf, cfg=cfg, plan=plan, depth_mm=depth)
    opened = closed_targets(
        pad.raw,
        (-np.radians(FINGERS_OPEN_DEG),) * 5,
        _axes(mjcf),
        weight=ramp(plan, cfg.replay_speed, cfg.frame_dt, release_s=cfg.lift.release_s),
    )
    out = {}
    for name, fingers in (("real", None), ("fingers_open", opened)):
        s = pad.solve(depth, fingers)[0]
        out[name] = {
            "near": sorted(n for n, f in s["fingers"].items() if f["status"] != "far"),
            "closed": s["fingers_closed"],
            "already": sorted(n for n, f in s["fingers"].items() if f["status"] == "already"),
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=Path, help="the mirror (REPLAY_MIRROR)")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)
    cfg = resolve_hand_variant(ReplayConfig(), "grab")
    objects, pad = {}, {}
    for pkl in sorted((a.data / "grab" / "recordings").glob("*_lift.pkl")):
        seq = pkl.stem
        rec, coords, mjcf, _ = prepare_recording("grab", seq, a.data / "grab", manosim_dir=a.data / "manosim", cfg=cfg)
        asset = rec.target_object.asset
        mm = made_mass(asset, cfg)
        objects[asset.name] = dict(mm.record(), solid_1250_kg=1250.0 * collision_volume(asset))
        pad[seq] = _pad_counts(rec, coords, mjcf, cfg)
        print(seq, f"{mm.low_kg:.3f}-{mm.high_kg:.3f} kg (solid {objects[asset.name]['solid_1250_kg']:.3f})", pad[seq])
    lim = finger_strength.joint_limits(cfg, mjcf)
    n = {
        k: {
            "near": sum(len(p[k]["near"]) for p in pad.values()),
            "closed": sum(len(p[k]["closed"]) for p in pad.values()),
        }
        for k in ("real", "fingers_open")
    }
    doc = {
        "command": "python benchmarks/physics_sources.py --data $REPLAY_MIRROR --out docs/results/physics-sources.json",
        "hand": str(Path(mjcf).relative_to(a.data)),
        "objects": objects,
        "tip_force_n": dict(zip(finger_strength.FINGERS, finger_strength.tip_forces(cfg).tolist())),
        "joint_limit_nm": dict(zip(JOINT_NAMES, lim.tolist())),
        "pad_depth_mm": float(physics.choice_value(cfg, "pad_compression")),
        "pad": pad,
        "pad_totals": n,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1))
    print("fingers near / closed by the pad compression, real:", n["real"], "opened 20 deg:", n["fingers_open"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

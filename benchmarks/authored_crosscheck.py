"""An independent plain-MuJoCo replay of the hug-oracle protocol on the scene as authored.

    REPLAY_MIRROR=/work/shared/datasets .venv/bin/python benchmarks/authored_crosscheck.py \
        [SEQ ...] [--set name=value ...] [--json OUT]

The model is :func:`benchmarks.authored_reference.authored_spec` (the manosim hand, the GRAB object
and table as shipped, MuJoCo's default options), compiled and stepped by the ``mujoco`` package
alone: no Newton, no project engine. From the project it takes only inputs: the recording's
landmark-IK hand coords (:func:`replay.study.prepare.prepare_recording`), the oracle plan's
per-control-frame wrist and finger targets (:func:`replay.protocol.oracle_plan.plan_oracle`) and
the recording's object and table poses. Per control frame (50 Hz, the plan's ``frame_dt``) the
ctrl is held for ``frame_dt / timestep`` ``mj_step`` calls (0.02 / 0.002 = 10):

* wrist: the slide actuators get the target position (m, world: the root body sits at the
  origin), the ball actuators (gear e_x, e_y, e_z) the target rotation vector (rad): MuJoCo's ball
  transmission length is the rotation vector of the joint quaternion;
* fingers: the rotation vector of each target finger quaternion (3 actuators per ball joint).

Success (the oracle's off-table test, :mod:`replay.protocol.oracle_success`, read from MuJoCo's
own contact list instead of vertices): at every control frame of the hold no contact of an object
geom with a table geom in ``mj_forward``'s contacts, and the object origin above its height at the
frame before the lift; no step reset by MuJoCo (``mjWARN_BADQACC``) and the state finite.

``--set`` switches one element at a time (:data:`benchmarks.authored_reference.SWITCHES`), e.g.
``--set gravcomp=1``, ``--set cone=elliptic --set impratio=10``, ``--set integrator=implicitfast``,
``--set hand_contact=hand``, ``--set object_margin=0``, ``--set visual=inert``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from replay.config import ReplayConfig
from replay.data import list_sequences
from replay.errors import DataError
from replay.kinematics.hand_layout import MANOSIM_HAND
from replay.kinematics.model import HandKinematics
from replay.protocol.oracle_plan import oracle_config, plan_oracle
from replay.protocol.plan import PHASE_HOLD, PHASE_LIFT
from authored_reference import (
    AuthoredSettings,
    authored_spec,
    compile_spec,
    hand_qpos,
    object_qpos_adr,
    parse_setting,
)
from replay.sim.hand_assets import resolve_hand_variant
from replay.sim.physics import apply_physics
from replay.study.prepare import prepare_recording


def actuator_map(m: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """``(wrist (6,), fingers (15, 3))`` actuator indices by name (wrist tx ty tz rx ry rz;
    ``mano_motor_<j>_<x|y|z>``)."""
    wrist = np.array([m.actuator(f"wrist_motor_{a}").id for a in ("tx", "ty", "tz", "rx", "ry", "rz")])
    fingers = np.array([[m.actuator(f"mano_motor_{j + 1}_{a}").id for a in "xyz"]
                        for j in range(MANOSIM_HAND.finger_joints)])
    return wrist, fingers


def ctrl_of(row: np.ndarray, wrist: np.ndarray, fingers: np.ndarray, nu: int) -> np.ndarray:
    """(nu,) ctrl for one (67,) target row (module doc)."""
    ctrl = np.zeros(nu)
    ctrl[wrist[:3]] = row[:3]
    ctrl[wrist[3:]] = Rotation.from_quat(row[3:7]).as_rotvec()
    fs = MANOSIM_HAND.finger_coord_start
    ctrl[fingers.reshape(-1)] = Rotation.from_quat(row[fs:].reshape(-1, 4)).as_rotvec().reshape(-1)
    return ctrl


def _geoms_of(m: mujoco.MjModel, body: str) -> set[int]:
    b = m.body(body).id
    return {g for g in range(m.ngeom) if m.geom_bodyid[g] == b}


def table_contacts(m: mujoco.MjModel, d: mujoco.MjData, obj: set[int], table: set[int]) -> int:
    """Number of entries in ``d.contact`` between an object geom and a table geom."""
    n = 0
    for c in d.contact[: d.ncon]:
        a, b = int(c.geom1), int(c.geom2)
        n += (a in obj and b in table) or (b in obj and a in table)
    return n


def fk_check_mm(m: mujoco.MjModel, d: mujoco.MjData, mjcf: Path, coords0: np.ndarray) -> float:
    """Largest distance, mm, between the 16 hand body origins MuJoCo places at ``coords0`` and the
    project's FK (:class:`replay.kinematics.model.HandKinematics`) of the same coords."""
    kin = HandKinematics.from_mjcf(mjcf)
    fq = Rotation.from_quat(coords0[MANOSIM_HAND.finger_coord_start:].reshape(-1, 4)).as_matrix()
    X, _, _ = kin.fk_frames(coords0[None, :3], Rotation.from_quat(coords0[3:7]).as_matrix()[None], fq[None])
    ours = np.array([d.xpos[m.body(f"mano_body_{i}").id] for i in range(16)])
    return float(np.abs(ours - X[0]).max() * 1000.0)


def replay_one(rec, coords, mjcf: Path, grab_dir: Path, cfg: ReplayConfig, settings: AuthoredSettings) -> dict:
    """The oracle on the authored scene for one recording; its figures (module doc)."""
    plan = plan_oracle(rec, coords, cfg)
    obj, table = rec.target_object, rec.meta["table"]
    f0 = plan.start_frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the objects' <visual> znear differs from the hand's: kept the hand's
        spec = authored_spec(mjcf, grab_dir / "objects" / obj.asset.name, grab_dir / "objects" / "table",
                             obj.pos[f0], obj.quat[f0], table["pos"], table["quat"], settings)
        m = compile_spec(spec, mjcf)
    d = mujoco.MjData(m)
    d.qpos[:] = hand_qpos(m, plan.coords[0])
    oa = object_qpos_adr(m)
    d.qpos[oa:oa + 3] = obj.pos[f0]
    d.qpos[oa + 3:oa + 7] = [obj.quat[f0][3], *obj.quat[f0][:3]]
    mujoco.mj_forward(m, d)
    fk_mm = fk_check_mm(m, d, mjcf, plan.coords[0])
    wrist, fingers = actuator_map(m)
    n_sub = int(round(cfg.frame_dt / m.opt.timestep))  # the plan's rows are frame_dt s apart
    og, tg = _geoms_of(m, "object"), _geoms_of(m, "table")
    lift0 = int(np.flatnonzero(plan.phase == PHASE_LIFT)[0])
    z_ref, touching, hold_seen, unstable, z = None, 0, 0, None, np.nan
    t0 = time.perf_counter()
    for k in range(len(plan.phase)):
        d.ctrl[:] = ctrl_of(plan.coords[k], wrist, fingers, m.nu)
        for _ in range(n_sub):
            mujoco.mj_step(m, d)
        if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0 or not np.all(np.isfinite(d.qpos)):
            unstable = k
            break
        z = float(d.qpos[oa + 2])
        if k == lift0 - 1:
            z_ref = z
        if plan.phase[k] == PHASE_HOLD:
            mujoco.mj_forward(m, d)  # the contacts of the pose reached
            hold_seen += 1
            touching += table_contacts(m, d, og, tg) > 0
    n_hold = int(np.sum(plan.phase == PHASE_HOLD))
    rise = z - z_ref if z_ref is not None and unstable is None else float("nan")
    lifted = bool(unstable is None and hold_seen == n_hold and touching == 0 and rise > 0)
    return {"object": obj.asset.name, "lifted": lifted,
            "rise_mm": rise * 1000.0, "touching_hold_frames": int(touching), "hold_frames": n_hold,
            "unstable_frame": unstable, "object_mass_kg": float(m.body_mass[m.body("object").id]),
            "fk_check_mm": fk_mm, "steps": len(plan.phase) * n_sub, "wall_s": time.perf_counter() - t0}


def result_line(r: dict) -> str:
    """One recording's printed line: lifted yes/no, rise mm, hold frames touching the table, mass kg."""
    return (f"{r['sequence']:24s} lifted={'yes' if r['lifted'] else 'no ':3s} rise={r['rise_mm']:8.1f} mm "
            f"touching={r['touching_hold_frames']}/{r['hold_frames']} mass={r['object_mass_kg']:.4f} kg "
            f"fk={r['fk_check_mm']:.4f} mm unstable={r['unstable_frame']} ({r['wall_s']:.1f} s)")


def _settings(pairs: list[str]) -> AuthoredSettings:
    s = AuthoredSettings()
    for p in pairs:
        s = parse_setting(s, p)
    return s


def compare_study(study_path: Path, rows: list[dict]) -> dict:
    """Recording by recording, this replay's ``lifted`` against a hug-oracle study's (its ``oracle_rollouts``
    rows); prints the count that agree and each that does not. Returns ``{"study", "paired", "agree",
    "disagree": [{sequence, plain, project}], "missing": [sequences]}``."""
    doc = json.loads(Path(study_path).read_text())
    theirs = {r["sequence"]: bool(r.get("lifted")) for r in doc.get("oracle_rollouts") or []}
    paired = [r for r in rows if r["sequence"] in theirs]
    bad = [{"sequence": r["sequence"], "plain": bool(r["lifted"]), "project": theirs[r["sequence"]]}
           for r in paired if bool(r["lifted"]) != theirs[r["sequence"]]]
    missing = [r["sequence"] for r in rows if r["sequence"] not in theirs]
    print(f"agreement with {study_path}: {len(paired) - len(bad)}/{len(paired)} recordings"
          + (f"; {len(missing)} not in the study" if missing else ""))
    for b in bad:
        print(f"  {b['sequence']}: plain MuJoCo {'lifted' if b['plain'] else 'not lifted'}, "
              f"project {'lifted' if b['project'] else 'not lifted'}")
    return {"study": str(study_path), "paired": len(paired), "agree": len(paired) - len(bad), "disagree": bad,
            "missing": missing}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sequences", nargs="*", help="GRAB sequences (default: every *_lift)")
    ap.add_argument("--data", default=os.environ.get("REPLAY_MIRROR"), help="the data mirror (default $REPLAY_MIRROR)")
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="NAME=VALUE")
    ap.add_argument("--json", type=Path, help="write per-recording results here")
    ap.add_argument("--compare", type=Path, default=None, metavar="STUDY",
                    help="a study.json of `run_study.py --protocol hug-oracle --physics authored`: print, recording by "
                         "recording, whether its verdict agrees with this replay's (and write it into --json)")
    args = ap.parse_args(argv)
    try:
        if not args.data:
            raise DataError(None, "--data", "no data mirror: pass --data or set REPLAY_MIRROR")
        settings = _settings(args.sets)
        data = Path(args.data).resolve()
        seqs = args.sequences or [s for s in list_sequences("grab", data) if s.endswith("_lift")]
        # the plan's inputs under the authored physics (its closure profile: linear); this replay's own physics
        # is the plain MuJoCo model below, whatever the project's engines do
        cfg = oracle_config(resolve_hand_variant(apply_physics(ReplayConfig(), "authored"), "grab"))
        rows = []
        for seq in seqs:
            rec, coords, mjcf, _ = prepare_recording(
                "grab", seq, data, manosim_dir=data / "manosim", cfg=cfg, protocol="hug-oracle"
            )
            r = {"sequence": seq, **replay_one(rec, coords, Path(mjcf), data / "grab", cfg, settings)}
            rows.append(r)
            print(result_line(r), flush=True)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n = sum(r["lifted"] for r in rows)
    print(f"lifted {n}/{len(rows)} with {settings.changed() or 'as authored'}")
    agreement = compare_study(args.compare, rows) if args.compare else None
    if args.json:
        args.json.write_text(json.dumps({"settings": settings.changed(), "lifted": n, "recordings": len(rows),
                                         "results": rows, "agreement": agreement}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

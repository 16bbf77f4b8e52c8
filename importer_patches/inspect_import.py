"""``python -m importer_patches.inspect_import MJCF [--json] [--compare-mujoco] [--contacts]``.

Imports MJCF with :func:`importer_patches.add_mjcf` into an empty builder and prints
bodies, joints by type, DOF and coordinate counts, per-DOF damping/armature and
``joint_target_ke/kd``, the actuator -> DOF map and the warnings. With
``--compare-mujoco`` it also compiles the file with ``mujoco.MjModel.from_xml_path``
and prints MuJoCo's values side by side (kd vs ``-actuator_biasprm[:, 2]``,
relative error per DOF).

With ``--contacts`` it prints, per body of MuJoCo's compile, each geom's own contact
attributes and what a contact of it with a geom that sets nothing (MuJoCo's defaults, as
GRAB's object parts compile) really uses (:mod:`importer_patches.contact_params`).

Options ``--disable PATCH`` (repeatable) and ``--allow-untested-newton`` are passed on.
Exit status: 0 on success, 1 on an import error (message on stderr), 2 when
``--compare-mujoco`` finds a difference beyond tolerance (damping/armature 1e-6
relative, kd 1 %, counts exact).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import warnings

import numpy as np


def mujoco_reference(path: str) -> dict:
    """Counts and per-DOF values of MuJoCo's compile of ``path`` (MuJoCo order).

    ``dof_kd``: per DOF, the kv of the position actuator(s) on it (``-biasprm[2]``),
    for joint transmissions with a unit-axis gear; 0 where no actuator.
    """
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    kd = np.zeros(m.nv)
    kp = np.zeros(m.nv)
    act_dofs = {}
    for i in range(m.nu):
        if int(m.actuator_trntype[i]) not in (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)):
            continue
        jnt = m.actuator_trnid[i, 0]
        adr = m.jnt_dofadr[jnt]
        ndof = {0: 6, 1: 3}.get(int(m.jnt_type[jnt]), 1)
        gear = m.actuator_gear[i, :ndof]
        nz = np.flatnonzero(gear)
        dof = adr + (int(nz[0]) if len(nz) == 1 else 0)
        kd[dof] = -m.actuator_biasprm[i, 2]
        kp[dof] = m.actuator_gainprm[i, 0]
        act_dofs[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator_{i}"] = int(dof)
    types = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}
    return {
        "nbody": int(m.nbody - 1),
        "njnt": int(m.njnt),
        "joint_types": dict(sorted({t: int(sum(types[int(x)] == t for x in m.jnt_type)) for t in types.values()}.items())),
        "nv": int(m.nv),
        "nq": int(m.nq),
        "nu": int(m.nu),
        "dof_damping": m.dof_damping.tolist(),
        "dof_armature": m.dof_armature.tolist(),
        "dof_kp": kp.tolist(),
        "dof_kd": kd.tolist(),
        "actuator_dof": act_dofs,
    }


def compare(report, ref: dict) -> dict:
    """Side-by-side per-DOF table and pass/fail flags (Newton DOF i vs MuJoCo DOF i).

    Newton's per-DOF kd of the free joint is 0 by design; the comparison uses the
    report's ``wrist_gains["kd"]`` there (the gains the wrench controller applies).
    """
    n = report.dof_count
    kd = np.array(report.dof_target_kd, dtype=float)
    kp = np.array(report.dof_target_ke, dtype=float)
    wg = report.wrist_gains
    if wg:
        o = wg["dof_start"] - report.dof_start
        kd[o : o + 6] = wg["kd"]
        kp[o : o + 6] = wg["kp"]
    out = {"counts": {}, "per_dof": [], "ok": True}
    ours = {
        "nbody": report.body_count,
        "njnt_newton": report.joint_count,
        "nv": report.dof_count,
        "nq": report.coord_count,
    }
    out["counts"] = {"newton": ours, "mujoco": {k: ref[k] for k in ("nbody", "njnt", "joint_types", "nv", "nq", "nu")}}
    if ours["nbody"] != ref["nbody"] or n != ref["nv"] or report.coord_count != ref["nq"]:
        out["ok"] = False
        return out
    max_kd_err = 0.0
    for i in range(n):
        row = {
            "dof": report.dof_start + i,
            "damping": [report.dof_damping[i], ref["dof_damping"][i]],
            "armature": [report.dof_armature[i], ref["dof_armature"][i]],
            "kp": [float(kp[i]), ref["dof_kp"][i]],
            "kd": [float(kd[i]), ref["dof_kd"][i]],
        }
        rk = ref["dof_kd"][i]
        row["kd_rel_err"] = abs(kd[i] - rk) / abs(rk) if rk else abs(kd[i])
        max_kd_err = max(max_kd_err, row["kd_rel_err"])
        if not np.isclose(row["damping"][0], row["damping"][1], rtol=1e-6, atol=0) or not np.isclose(
            row["armature"][0], row["armature"][1], rtol=1e-6, atol=1e-12
        ):
            out["ok"] = False
        if row["kd_rel_err"] > 0.01:
            out["ok"] = False
        out["per_dof"].append(row)
    out["max_kd_rel_err"] = max_kd_err
    return out


def _print_text(report, cmp: dict | None) -> None:
    p = print
    p(f"MJCF: {report.path}   (newton {report.newton_version})")
    p("patches: " + ", ".join(f"{k}={'on' if v else 'off'}" for k, v in report.patches.items()))
    p(f"bodies {report.body_count}, joints {report.joint_count} {report.joint_type_counts}, "
      f"DOFs {report.dof_count}, coords {report.coord_count}, shapes {report.shape_count}, "
      f"actuators imported {report.imported_actuator_count}/{len(report.actuators)}")
    p("bodies: " + ", ".join(report.body_names))
    p("joints:")
    for name, t in zip(report.joint_names, report.joint_types):
        p(f"  {name:<28s} {t:<8s} dof {report.joint_dof_starts[name]:>3d}  coord {report.joint_coord_starts[name]:>3d}")
    p(f"per DOF ({'newton | mujoco' if cmp else 'newton'}):")
    p(f"  {'dof':>4s} {'damping':>17s} {'armature':>17s} {'ke':>17s} {'kd':>21s}  mode")
    for i in range(report.dof_count):
        d = report.dof_start + i
        if cmp and cmp.get("per_dof"):
            r = cmp["per_dof"][i]
            p(f"  {d:>4d} {r['damping'][0]:>8.4g}|{r['damping'][1]:<8.4g} {r['armature'][0]:>8.4g}|{r['armature'][1]:<8.4g} "
              f"{r['kp'][0]:>8.4g}|{r['kp'][1]:<8.4g} {r['kd'][0]:>10.6g}|{r['kd'][1]:<10.6g}  {report.dof_target_mode[i]}")
        else:
            p(f"  {d:>4d} {report.dof_damping[i]:>17.6g} {report.dof_armature[i]:>17.6g} "
              f"{report.dof_target_ke[i]:>17.6g} {report.dof_target_kd[i]:>21.6g}  {report.dof_target_mode[i]}")
    p("actuator -> DOF:")
    for a in report.actuators:
        p(f"  {a['name']:<20s} {a['type']:<9s} joint {a['joint']!s:<14s} dofs {a['dofs']}  kp {a['kp']:g} "
          f"kv {a['kv_resolved'] if a['kv_resolved'] is not None else a['kv']:.6g}{'' if a['imported'] else '  (NOT imported)'}")
    if report.wrist_gains:
        w = report.wrist_gains
        p(f"wrist (free joint '{w['joint']}', dof_start {w['dof_start']}): kp {w['kp']}  kd {[round(x, 6) for x in w['kd']]}")
    p("changes:")
    for k, lines in report.changes.items():
        for line in lines:
            p(f"  [{k}] {line}")
    p("warnings:" + ("" if report.warnings else " none"))
    for w in report.warnings:
        p(f"  {w}")
    if cmp:
        p(f"MuJoCo: {cmp['counts']['mujoco']}")
        p(f"max kd relative error: {cmp.get('max_kd_rel_err', float('nan')):.3g}; match: {cmp['ok']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m importer_patches.inspect_import", description=__doc__.split("\n")[0])
    parser.add_argument("mjcf")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--compare-mujoco", action="store_true", help="compile with MuJoCo and compare")
    parser.add_argument("--disable", action="append", default=[], metavar="PATCH", help="switch a patch off")
    parser.add_argument("--allow-untested-newton", action="store_true")
    parser.add_argument("--contacts", action="store_true",
                        help="per geom: its contact attributes and what a pair with a default-attribute geom uses")
    args = parser.parse_args(argv)
    if args.contacts:
        return _print_contacts(args.mjcf, args.json)

    # Warp and Newton print progress to stdout; keep stdout for the report (clean JSON).
    with contextlib.redirect_stdout(sys.stderr):
        result = _run(args)
    if isinstance(result, int):
        return result
    report, cmp = result
    if args.json:
        doc = {"report": report.to_dict()}
        if cmp is not None:
            doc["mujoco"] = cmp
        print(json.dumps(doc, indent=1))
    else:
        _print_text(report, cmp)
    return 2 if cmp is not None and not cmp["ok"] else 0


def _run(args):
    import newton

    from . import add_mjcf
    from .errors import MJCFError, NewtonVersionError

    builder = newton.ModelBuilder()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # they are collected in report.warnings
            report = add_mjcf(
                builder,
                args.mjcf,
                patches={p: False for p in args.disable},
                allow_untested_newton=args.allow_untested_newton,
            )
    except (MJCFError, NewtonVersionError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    cmp = compare(report, mujoco_reference(args.mjcf)) if args.compare_mujoco else None
    return report, cmp



def contact_rows(path: str) -> list[dict]:
    """Per geom of MuJoCo's compile of ``path`` that can collide (contype or conaffinity
    set): body, geom, its own attributes and the pair it makes with
    :data:`~importer_patches.contact_params.MUJOCO_DEFAULT_GEOM`."""
    import mujoco

    from .contact_params import MUJOCO_DEFAULT_GEOM, GeomParams, combine

    m = mujoco.MjModel.from_xml_path(path)
    rows = []
    for g in range(m.ngeom):
        if not (m.geom_contype[g] or m.geom_conaffinity[g]):
            continue
        own = GeomParams.of(m, g)
        pair = combine(own, MUJOCO_DEFAULT_GEOM).as_dict()
        pair["taken_from"] = {0: "this geom", 1: "the other geom", -1: None}[pair.pop("winner")]
        rows.append({"body": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(m.geom_bodyid[g])),
                     "geom": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom_{g}",
                     "priority": own.priority, "solmix": own.solmix, "solref": list(own.solref),
                     "solimp": list(own.solimp), "friction": list(own.friction), "with_default_geom": pair})
    return rows


def _print_contacts(path: str, as_json: bool) -> int:
    try:
        rows = contact_rows(path)
    except ValueError as exc:  # MuJoCo's compile error
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps({"mjcf": path, "geoms": rows}, indent=1))
        return 0
    print(f"{path}: {len(rows)} colliding geoms; 'vs default' = the pair with a geom that sets nothing "
          "(MuJoCo defaults: solref 0.02 1, solimp 0.9 0.95 0.001, friction 1)")
    fmt = lambda v: " ".join(f"{x:g}" for x in v)  # noqa: E731
    for r in rows:
        p = r["with_default_geom"]
        print(f"  {r['body']:<12} {r['geom']:<18} priority {r['priority']} solref {fmt(r['solref'])} "
              f"solimp {fmt(r['solimp'][:3])} | vs default: {p['rule']:<8} solref {fmt(p['solref'])} "
              f"solimp {fmt(p['solimp'][:3])} mu {p['friction'][0]:g} condim {p['condim']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The project's compiled hug-oracle model against MuJoCo's compile of the files as authored.

    REPLAY_MIRROR=/work/shared/datasets .venv/bin/python benchmarks/authored_diff.py \
        [SEQ ...] [--set name=value ...] [--out NOTES.md]

Per recording (default ``cubesmall_lift mug_lift``): the scene the hug-oracle rollout builds
(:func:`replay.protocol.rollout.build_replay_scene`, direct MuJoCo C engine, its
``scene.solver.mj_model`` after the oracle's contact edit) and the authored reference of the same
poses (:func:`benchmarks.authored_reference.authored_spec`), compared by
:func:`benchmarks.model_diff.diff_models` with the project's table-top box ``support`` matched to the
table's collision part. Rows that differ the same way on many elements are printed once with the
elements counted. Writes Markdown to ``--out`` (default: stdout only).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections import defaultdict
from pathlib import Path

from authored_reference import AuthoredSettings, authored_spec, compile_spec, parse_setting  # noqa: E402  (benchmarks/)
from model_diff import diff_models  # noqa: E402

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.protocol.oracle_plan import oracle_config
from replay.protocol.rollout import build_replay_scene
from replay.sim.hand_assets import resolve_hand_variant
from replay.study.prepare import prepare_recording


def grouped_rows(diffs) -> list[str]:
    """Markdown rows, one per (field, ours, reference), the elements listed (first 3, then a count)."""
    groups = defaultdict(list)
    for d in diffs:
        groups[(d.field, d.ours, d.reference)].append(d.where)
    rows = []
    for (f, a, b), where in groups.items():
        w = ", ".join(where[:3]) + (f" (+{len(where) - 3} more)" if len(where) > 3 else "")
        rows.append(f"| {f} | {w} | {a} | {b} |")
    return rows


def wrist_rows(scene, ref) -> list[str]:
    """Markdown rows: the project's wrist wrench gains (``scene.wrist_kp/kd``) against the MJCF's six
    wrist position actuators as MuJoCo compiled them (kp = gainprm[0], kv = -biasprm[2])."""
    names = ("tx", "ty", "tz", "rx", "ry", "rz")
    ids = [ref.actuator(f"wrist_motor_{n}").id for n in names]
    kp_ref = [float(ref.actuator_gainprm[i, 0]) for i in ids]
    kv_ref = [-float(ref.actuator_biasprm[i, 2]) for i in ids]
    fmt = lambda v: " ".join(f"{x:.6g}" for x in v)  # noqa: E731
    return [f"| wrist kp (tx ty tz rx ry rz) | wrench vs position actuators | {fmt(scene.wrist_kp)} | {fmt(kp_ref)} |",
            f"| wrist kd / kv | wrench vs position actuators | {fmt(scene.wrist_kd)} | {fmt(kv_ref)} |"]


def collapse_bits(rows: list[str], diffs) -> list[str]:
    """The raw contype/conaffinity rows folded into one (Newton writes its collision groups there;
    the ``collides`` rows say which pairs differ)."""
    bits = [d for d in diffs if d.field in ("geom_contype", "geom_conaffinity")]
    kept = [r for r in rows if not r.startswith(("| geom_contype ", "| geom_conaffinity "))]
    if bits:
        n = len({d.where for d in bits})
        pairs = sum(d.field == "collides" for d in diffs)
        kept.append(f"| geom_contype / geom_conaffinity | {n} geoms | Newton's group bits | 1 / 1 (MuJoCo default) "
                    f"| ({pairs} body pairs collide differently, rows 'collides') |")
    return kept


def diff_recording(seq: str, data: Path, settings: AuthoredSettings) -> list[str]:
    """Markdown lines of one recording's diff."""
    cfg = oracle_config(resolve_hand_variant(ReplayConfig(), "grab"))
    rec, coords, mjcf, _ = prepare_recording(
        "grab", seq, data, manosim_dir=data / "manosim", cfg=cfg, protocol="hug-oracle"
    )
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg=cfg, protocol="hug-oracle")
    ours = scene.solver.mj_model
    obj, table = rec.target_object, rec.meta["table"]
    f0 = plan.start_frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = compile_spec(authored_spec(mjcf, data / "grab" / "objects" / obj.asset.name, data / "grab" / "objects" /
                                         "table", obj.pos[f0], obj.quat[f0], table["pos"], table["quat"], settings),
                           mjcf)
    support = [ours.geom(g).name for g in range(ours.ngeom) if ours.geom(g).name.startswith("support")]
    diffs, unmatched = diff_models(ours, ref, geom_pairs=[(support[0], "table/table_contact0")] if support else ())
    lines = [f"## {seq} ({obj.asset.name}; hand {Path(mjcf).parent.parent.name}/{Path(mjcf).name}; reference "
             f"{settings.changed() or 'as authored'})", "", "| field | where | ours | reference |", "|---|---|---|---|"]
    lines += collapse_bits(grouped_rows(diffs), diffs) + wrist_rows(scene, ref)
    lines += ["", "Unmatched:", ""] + [f"- {u}" for u in unmatched] + [""]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sequences", nargs="*", default=["cubesmall_lift", "mug_lift"])
    ap.add_argument("--data", default=os.environ.get("REPLAY_MIRROR"))
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="NAME=VALUE")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not args.data:
        print("error: no data mirror: pass --data or set REPLAY_MIRROR", file=sys.stderr)
        return 2
    settings = AuthoredSettings()
    lines = []
    try:
        for s in args.sets:
            settings = parse_setting(settings, s)
        for seq in args.sequences:
            lines += diff_recording(seq, Path(args.data).resolve(), settings)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

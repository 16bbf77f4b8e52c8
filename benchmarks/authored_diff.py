"""The project's compiled hug-oracle model against MuJoCo's compile of the files as authored.

    REPLAY_MIRROR=/work/shared/datasets .venv/bin/python benchmarks/authored_diff.py \
        [SEQ ...] [--set name=value ...] [--out NOTES.md]

Per recording (default ``cubesmall_lift mug_lift``): the scene the hug-oracle rollout builds
(:func:`replay.protocol.rollout.build_replay_scene`, direct MuJoCo C engine, its
``scene.solver.mj_model`` after the oracle's contact edit) and the authored reference of the same
poses (:func:`replay.sim.authored_reference.authored_spec`), compared by
:func:`replay.sim.model_diff.diff_models` with the project's table-top box ``support`` matched to the
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

from replay.config import ReplayConfig, resolve_hand_variant
from replay.protocol.oracle_plan import oracle_config
from replay.protocol.rollout import build_replay_scene
from replay.sim.authored_reference import AuthoredSettings, authored_spec, compile_spec, parse_setting
from replay.sim.model_diff import diff_models
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


def diff_recording(seq: str, data: Path, settings: AuthoredSettings) -> list[str]:
    """Markdown lines of one recording's diff."""
    cfg = oracle_config(resolve_hand_variant(ReplayConfig(), "grab"))
    rec, coords, mjcf, _ = prepare_recording("grab", seq, data, data / "manosim", cfg, protocol="hug-oracle")
    plan, scene, _ = build_replay_scene(rec, coords, mjcf, cfg, protocol="hug-oracle")
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
    lines += grouped_rows(diffs)
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
    for s in args.sets:
        settings = parse_setting(settings, s)
    lines = []
    for seq in args.sequences:
        lines += diff_recording(seq, Path(args.data).resolve(), settings)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

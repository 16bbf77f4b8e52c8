"""Object-frame validation of one or more datasets -> JSON.

    python scripts/validate_object_frame.py --dataset grab [taco hug-bench] \
        [--sequences mug_lift ...] [--data-dir data] [--samples 4000] \
        --out out/object_frame_validation.json

Per object the frame's figures (:mod:`replay.checks.object_frame`) and the checks every replay runs; one section per
dataset, replaced alone by a rerun. Exit status 1 when any sequence failed to load.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from replay import console
from replay.checks import load_recording
from replay.checks import object_frame as of
from replay.cli import Parser
from replay.commands.common import add_data_dir_option
from replay.data import list_sequences
from replay.datasets import RECORDING_DATASETS
from replay.errors import DataError
from replay.fileio import ensure_parent, sha256_file


def _settings(samples: int) -> dict:
    import coacd  # noqa: F401

    from replay.data.adapter_fields import LIFT_THRESHOLD_M
    from replay.data.coacd import COACD_SETTINGS

    return {
        "samples_per_surface": samples,
        "density_range_kg_m3": of.DENSITY_RANGE,
        "lift_threshold_m": LIFT_THRESHOLD_M,
        "rest_margin_s": of.REST_MARGIN_S,
        "rest_translation_mm": of.REST_TRANSLATION_MM,
        "rest_rotation_deg": of.REST_ROTATION_DEG,
        "motion_mm_deg": [of.MOTION_MM, of.MOTION_DEG],
        "coacd": COACD_SETTINGS,
    }


def _validate(dataset: str, data_dir, samples: int, cache: dict):
    """One recording's object-frame figures, its lines printed."""

    def one(name: str) -> dict:
        rec = load_recording(dataset, name, data_dir)
        res = of.validate_recording(rec, n=samples, asset_cache=cache)
        res["source_sha256"] = sha256_file(rec.source)
        res["input_flags"] = rec.meta.get("input_flags", {})
        res["physical_checks"] = of.physical_figures(rec)  # the same checks as every replay's
        tgt = next(o for o in res["objects"] if o["target"])
        console.out(
            f"{dataset}/{name}: gap median {tgt['hull_gap_mm']['median']} p90 {tgt['hull_gap_mm']['p90']} "
            f"max {tgt['hull_gap_mm']['max']} mm, density {tgt['effective_density_kg_m3']}, rest "
            f"{tgt['rest_gap_collision_mm']} mm, grasp {res['hand']['grasp_frame']}, hand "
            f"{res['hand'].get('min_hand_object_mm')} mm ({res['seconds']} s)"
            + (f", input flags {res['input_flags']}" if res["input_flags"] else "")
        )
        console.out(f"{dataset}/{name}: physical {of.physical_line(res['physical_checks'])}")
        return res

    return one


def run_dataset(dataset: str, sequences: list[str] | None, *, data_dir: str | None, samples: int) -> dict:
    """One dataset's section (a bad recording listed in ``errors``). Raises DataError: the dataset is not found."""
    from replay.study.batch import run_batch

    names = sequences or list_sequences(dataset, data_dir)
    res = run_batch(
        names,
        _validate(dataset, data_dir, samples, {}),
        label="validate_object_frame",
        on_fail=lambda name, exc: console.err(f"{dataset}/{name}: ERROR {exc}"),
    )
    if res.interrupted:
        raise KeyboardInterrupt
    results = list(res.results.values())
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "settings": _settings(samples) | {"versions": res.versions},
        "summary": of.summarize(results) if results else None,
        "errors": res.failed,
        "sequences": results,
        "seconds": round(res.wall_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", nargs="+", required=True, choices=RECORDING_DATASETS)
    ap.add_argument("--sequences", nargs="*", default=None, help="names from list_sequences (default: all)")
    add_data_dir_option(ap)
    ap.add_argument("--samples", type=int, default=of.N_SAMPLES, help="surface samples per mesh")
    ap.add_argument("--out", default="out/object_frame_validation.json")
    args = ap.parse_args(argv)

    out = ensure_parent(args.out)  # an unwritable --out fails now, not after the work
    payload = {"schema": "object_frame_validation/1", "datasets": {}}
    if out.is_file():
        try:
            old = json.loads(out.read_text())
            if old.get("schema") == payload["schema"]:
                payload = old
        except json.JSONDecodeError:
            pass
    failed = False
    for ds in args.dataset:
        try:
            section = run_dataset(ds, args.sequences, data_dir=args.data_dir, samples=args.samples)
        except DataError as exc:
            console.err(f"{ds}: ERROR {exc}")
            return 1
        failed |= bool(section["errors"])
        payload["datasets"][ds] = section
        of.write_report(out, payload)
        s = section["summary"]
        if s:
            console.out(
                f"{ds}: {s['recordings']} recordings, {s['objects']} objects; gap median over objects "
                f"{s['hull_gap_median_mm_over_objects']}, p90 {s['hull_gap_p90_mm_over_objects']}, max "
                f"{s['hull_gap_max_mm_over_objects']} mm; density flagged {s['density_flagged']}; "
                f"rest gap {s['rest_gap_target_mm']} mm; hand at grasp {s['min_hand_object_mm_at_grasp']} mm; "
                f"{section['seconds']} s"
            )
    console.out(f"wrote {out}")
    return 1 if failed else 0

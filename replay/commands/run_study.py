#!/usr/bin/env python
"""Replay every recording of a dataset with force-limited drives and a contact ablation.

    python scripts/run_study.py --dataset grab --out out/study.json --workers 2 --resume
    python scripts/run_study.py --dataset grab --protocol recorded --objects mug_pass_1,waterbottle_pour_1
    python scripts/run_study.py --dataset grab --protocol lift,recorded --objects mug
    python scripts/run_study.py --dataset grab --samples 32 --verdicts lift,hug-oracle,hug-oracle@authored

Writes the study JSON, ``study.csv`` and per rollout a JSON and an ``.npz`` of poses under ``<out stem>_rollouts/``
(docs/results.md). Exit status 0: every recording replayed or refused as bad input; 1: data missing, a recording
not replayed for another reason or, with ``--strict``, any refused; 2: bad arguments or settings; 130: Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from replay import console
from replay.cli import EXIT_INTERRUPTED, Parser, folder_arg, report, say_error
from replay.config import ReplayConfig
from replay.datasets import RECORDING_DATASETS
from replay.errors import ReplayError
from replay.output.p_lift_table import num
from replay.results.judge import DEFAULT_JUDGE
from replay.sim import physics
from replay.sim.hand_assets import HAND_SHAPES
from replay.study.config_layers import layered_config
from replay.study.corruptions import corruption_names
from replay.study.end_table import end_lines, failure_lines, input_flag_lines, primary_rows
from replay.study.executor import Executor
from replay.study.presets import preset_names
from replay.study.sampling_setup import DEFAULT_SAMPLES
from replay.study.verdict_conditions import condition_names


def build_parser() -> argparse.ArgumentParser:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, choices=RECORDING_DATASETS)
    p.add_argument(
        "--effort",
        type=float,
        default=None,
        help="finger drive effort limit at every finger joint, N·m (default: the physics' finger_effort_limit; "
        "replay: human strength per finger, docs/sources.md)",
    )
    p.add_argument(
        "--out",
        default="out/study.json",
        help="study JSON path (default out/study.json; make study writes out/<dataset>/study.json)",
    )
    p.add_argument(
        "--objects",
        default=None,
        help="comma-separated objects or sequences (default: all). An object name selects its lift "
        "recording only (GRAB: mug -> mug_lift); name another intent by its sequence "
        "(mug_pass_1). Where a study of the same config is at --out, the named recordings run "
        "(even with --resume) and are merged into it",
    )
    _input_options(p)
    p.add_argument("--hand", choices=["capsule", "mesh"], default=None, help="manosim hand model (default: capsule)")
    p.add_argument(
        "--hand-shape",
        choices=sorted(HAND_SHAPES),
        default=None,
        help="manosim hand shape (default: the physics' choice; calibrated: fitted, the recording's own hand, "
        "docs/hand.md; replay: zerohand for grab/taco, myhand for hug-bench); a departure from it is listed in "
        "every rollout's 'physics'",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes (default: one per CPU core); a worker that crashes costs its recording "
        "only; 0 = run in this process (no crash isolation; debugging)",
    )
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default=None,
        help="Warp device of mujoco-warp, Steel and the Newton reference (default: cpu)",
    )
    p.add_argument(
        "--solver",
        choices=["mujoco", "steel"],
        default=None,
        help="physics: mujoco (SolverMuJoCo, default) or steel (newton.solvers.SolverSteel, "
        "projected Gauss-Seidel hard contact; fingers on the quaternion drive)",
    )
    p.add_argument("--no-ablation", action="store_true", help="skip the contact ablation rerun")
    p.add_argument(
        "--ablation-only",
        action="store_true",
        help="rerun only the contact ablation of --objects into the existing study (the rest is kept)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="skip rollouts already written with the same config and inputs (recordings named in "
        "--objects where the study holds others run anyway)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any recording is refused as bad input (default: listed, exit 0)",
    )
    p.add_argument(
        "--data",
        type=folder_arg,
        default=None,
        help="staged data folder (fetch_data.py --dest); else $REPLAY_DATA, else ./data, else $REPLAY_MIRROR",
    )
    p.add_argument(
        "--preset",
        choices=preset_names(),
        default=None,
        help="named, versioned settings (replay.study.presets.PRESETS): over --config, under the other flags",
    )
    _physics_args(p)
    p.add_argument("--config", default=None, help="JSON with config overrides (a study JSON's 'config' works)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or notes")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="let Warp and Newton print their own messages; say notes and warnings in full",
    )
    p.add_argument(
        "--executor",
        choices=Executor.cli_choices(),
        default=Executor.POOL.value,
        help="pool: worker processes on this machine (default); ray: one Ray task per recording "
        "(pip install 'grasp-replay[cluster]')",
    )
    p.add_argument(
        "--address", default=None, help="Ray cluster address (with --executor ray; default: start a local Ray instance)"
    )
    p.add_argument(
        "--protocol",
        default="lift",
        help="lift (default: settle, approach, synthetic 18 cm lift, hold, shake), recorded (the whole "
        "recorded motion, tracked against the recorded object), hug-oracle (the HUG authors' grasp "
        "oracle: start at the grasp backed off 3 cm, close, rise 0.5 m, off the table; "
        "replay.protocol.oracle_plan), or several: lift,recorded",
    )
    p.add_argument(
        "--recorded-max-s",
        type=float,
        default=None,
        help="recorded protocol: at most this many recorded seconds after the lift onset "
        "(default: to the end of the manipulation)",
    )
    p.add_argument(
        "--refine",
        action="store_true",
        help="also search each recording's smallest wrist/finger correction that lifts it "
        "(replay.protocol.refine): <sequence>.refine.json, the study's refine_rollouts",
    )
    p.add_argument("--refine-seed", type=int, default=0, help="--refine: the search's seed")
    p.add_argument("--refine-worlds", type=int, default=None, help="--refine: corrections per iteration (24)")
    return p


def _physics_args(p: argparse.ArgumentParser) -> None:
    """The physics, sampled-verdict and verdicts options."""
    p.add_argument(
        "--physics",
        choices=physics.NAMES,
        default=None,
        help="named physics (replay.sim.physics): 'authored' = the hand and object files as written plus "
        "MuJoCo's defaults; 'replay' = the project's declared choices; 'calibrated' = replay "
        "with the choices fitted once on GRAB's lifts (scripts/calibrate.py, replay/results/calibration.json); "
        f"default: {DEFAULT_JUDGE.physics}, the default judge's (replay.results.judge)",
    )
    p.add_argument(
        "--physics-set",
        action="append",
        default=[],
        metavar="CHOICE=VALUE",
        help="depart from the named physics in one choice (repeatable), e.g. wrist_gravity_compensation=true, "
        "cone=elliptic, wrist_target_offset_mm=2,0,0; listed in every rollout's 'physics'",
    )
    p.add_argument(
        "--samples",
        type=int,
        nargs="?",
        const=DEFAULT_SAMPLES,
        default=0,
        metavar="N",
        help="the sampled verdict (issue #46): every lift / hug-oracle recording replayed under N joint "
        "samples of the declared physics and data uncertainty (replay.study.uncertainty) per condition: "
        "p_lift with its 95 %% Wilson interval, class and driver; N defaults to 32; 0 = single rollouts",
    )
    p.add_argument("--seed", type=int, default=0, help="--samples: the samples' seed (same seed, same samples)")
    p.add_argument(
        "--conditions",
        default=None,
        metavar="A,B",
        help=f"--samples: conditions reported side by side (replay.study.verdict_conditions: "
        f"{', '.join(condition_names())}); default: the first and the other wrist gravity assumption",
    )
    p.add_argument(
        "--corruptions",
        nargs="?",
        const="all",
        default=None,
        metavar="A,B",
        help=f"--samples: also each recording corrupted (replay.study.corruptions: {', '.join(corruption_names())}; "
        "default all) and the study's discrimination table",
    )
    p.add_argument(
        "--verdicts",
        default=None,
        metavar="P@PHYSICS,...",
        help="the verdicts side by side (replay.study.verdicts): (protocol, physics) pairs, e.g. "
        "lift,hug-oracle,hug-oracle@authored (a name without @: the study's physics); each pair "
        "that is not a --protocol under --physics adds one single rollout with its contact "
        "ablation per recording under that physics (the report sets them side by side)",
    )


def _input_options(p: argparse.ArgumentParser) -> None:
    """``--fps`` and ``--object-time-offset``."""
    p.add_argument(
        "--fps",
        type=float,
        default=None,
        help="the recordings' frame rate, Hz, where the reader's assumed rate is wrong (e.g. a GRAB take "
        "exported at 30 Hz); the input checks compare the motion with the rate either way",
    )
    p.add_argument(
        "--object-time-offset",
        type=float,
        default=None,
        metavar="S",
        help="s the object stream runs behind the hand stream (< 0: ahead), where the input checks find "
        "them out of sync and the offset is known: the object tracks are shifted by it (recorded in "
        "each rollout as object_time_offset_s)",
    )


def config_from_args(a) -> ReplayConfig:
    """The study's :class:`ReplayConfig` (:func:`replay.study.config_layers.layered_config`). Raises ReplayError: a
    setting out of range."""
    choices = dict(physics.parse_setting(t) for t in a.physics_set)
    if a.effort is not None:
        choices["finger_effort_limit"] = physics.parse_setting(f"finger_effort_limit={a.effort}")[1]
    if a.hand_shape is not None:  # a physics departure (choice hand_shape), listed in every rollout's 'physics'
        choices["hand_shape"] = a.hand_shape
    fields = {
        k: v
        for k, v in (("recording_fps", a.fps), ("object_time_offset_s", a.object_time_offset), ("hand", a.hand))
        if v is not None
    }
    if a.solver == "steel":
        fields["finger_drive"] = "quat"  # SolverSteel drives no BALL joint (replay.sim.engine.steel.steel_drive)
    return layered_config(
        config_file=a.config,
        preset=a.preset,
        physics=a.physics,
        choices=choices,
        fields=fields,
        solver=a.solver,
        device=a.device,
    )


def print_outcome(study: dict) -> None:
    """The study's end lines, then each refused or failed recording with its reason (stderr)."""
    for line in end_lines(study):
        console.out(line)
    for line in input_flag_lines(primary_rows(study)):
        console.err(line)
    for r in study.get("recorded_rollouts") or []:
        console.out(
            f"recorded: {r['sequence']} ({r.get('intent')}): {r['outcome']}, within 2 cm/30 deg "
            f"{num(r.get('track_within'), '.0%')}, position error median "
            f"{num(r.get('track_pos_err_median_mm'), '.1f')} p95 {num(r.get('track_pos_err_p95_mm'), '.1f')} mm, "
            f"rotation median {num(r.get('track_rot_err_median_deg'), '.1f')} p95 "
            f"{num(r.get('track_rot_err_p95_deg'), '.1f')} deg, "
            f"lost at {num(r.get('track_lost_s'), '.2f')} s after onset; errors over {r.get('track_frames')} of "
            f"{r.get('track_frames_planned')} frames simulated"
        )
    for r in study.get("refine_rollouts") or []:
        found = "a correction that holds" if r.get("refine_found") else "no correction held; the best tried"
        console.out(
            f"refine: {r['sequence']}: {found}: {r['refine_outcome']} with wrist {r['refine_wrist_mm']:.1f} mm / "
            f"{r['refine_wrist_deg']:.1f} deg, fingers <= {r['refine_finger_deg']:.1f} deg; ablation "
            f"{r['refine_ablation_max_disp_mm']:.2f} mm; {r['refine_rollouts']} rollouts, {r['refine_wall_s']:.0f} s"
        )
    for line in failure_lines(study):  # in full: the reason is the one line that says what to fix
        console.err(line)


def main(argv=None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    executor = Executor(a.executor)
    if a.address and executor is not Executor.RAY:
        p.error("--address needs --executor ray")
    try:
        cfg = config_from_args(a)
    except ReplayError as e:
        say_error(str(e))
        return 2
    try:
        from replay.study.runner import run_study

        study = run_study(
            a.dataset,
            a.out,
            cfg,
            objects=[s.strip() for s in a.objects.split(",") if s.strip()] if a.objects else None,
            workers=a.workers,
            ablation=not a.no_ablation,
            resume=a.resume,
            data_dir=a.data,
            progress=not a.quiet,
            ablation_only=a.ablation_only,
            executor=executor,
            address=a.address,
            verbose=a.verbose,
            protocols=[x.strip() for x in a.protocol.split(",") if x.strip()],
            recorded_max_s=a.recorded_max_s,
            refine=({"seed": a.refine_seed} | ({"worlds": a.refine_worlds} if a.refine_worlds else {}))
            if a.refine
            else None,
            samples=a.samples,
            seed=a.seed,
            conditions=a.conditions,
            corruptions=a.corruptions,
            verdicts=a.verdicts,
        )
    except ReplayError as e:
        return report(e)
    except KeyboardInterrupt:  # the study wrote what is done and said how to resume
        if executor is Executor.POOL:
            # leave now: the exit handlers joining the pool's threads can take long on a loaded machine
            console.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    with console.printable_output():
        print_outcome(study)
    console.out(f"study: {a.out}")
    if a.ablation_only:  # the study changed under an existing page: remade (or said stale)
        from replay.output.report import refresh_report

        if (line := refresh_report(Path(a.out))) is not None:
            console.out(line)
    failed = study.get("failed") or {}
    refused = set((study.get("counts") or {}).get("refused_keys") or [])
    crashed = [k for k in failed if k not in refused]
    if crashed or (a.strict and failed):
        say_error(
            f"{len(crashed) if crashed else len(failed)} recording(s) could not be replayed "
            f"({'see failed: above' if crashed else 'refused as bad input, --strict'}); the others are "
            "in the study"
        )
        return 1
    return 0

#!/usr/bin/env python
"""Robustness maps: each recording over a grid of finger effort x friction, with wrist
perturbations and the contact ablation, one batch of worlds per recording.

    python scripts/run_sweep.py --dataset grab --objects mug,cubesmall \\
        --grid effort=0.1:1.5:4,mu=0.3:1.2:4 --perturb 4 --out out/grab/sweep

Writes ``<out>/<sequence>.json`` and ``.png`` (heatmap) per recording and ``<out>/sweep.json``; ``--resume`` skips
recordings done with the same settings. Exit status 1 when a recording could not be replayed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

from replay import console
from replay.cli import Parser, folder_arg
from replay.commands.common import named_recordings
from replay.datasets import RECORDING_DATASETS
from replay.errors import UsageError
from replay.fileio import atomic_write_bytes, atomic_write_text, out_folder
from replay.results.engine_choice import EngineChoice
from replay.results.files import dumps
from replay.results.records import FORMAT_VERSION
from replay.sim.hand_assets import resolve_hand_variant

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, choices=RECORDING_DATASETS)
    p.add_argument("--objects", default=None, help="comma-separated objects or sequences (default: all)")
    p.add_argument(
        "--grid",
        default="effort=0.1:1.5:8,mu=0.2:1.5:8",
        help="axes LOW:HIGH:COUNT: effort (finger effort limit, N·m) and mu (hand-object friction)",
    )
    p.add_argument("--perturb", type=int, default=0, help="wrist perturbations at the study operating point")
    p.add_argument("--perturb-mm", type=float, default=10.0, help="size of each perturbation's horizontal offset, mm")
    p.add_argument("--perturb-deg", type=float, default=10.0, help="size of each perturbation's rotation, deg")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbation directions")
    p.add_argument("--effort", type=float, default=None, help="the study's finger effort limit, N·m (default 0.4)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads stepping the worlds")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--data", type=folder_arg, default=None, help="staged data folder; falls back to $REPLAY_MIRROR")
    p.add_argument("--config", default=None, help="JSON with config overrides")
    p.add_argument("--resume", action="store_true")
    p.add_argument(
        "--verbose", action="store_true", help="let Warp and Newton print their own messages; say warnings in full"
    )
    return p


def _setup(a):
    """The sweep's config, recordings, output folder and plan from the parsed arguments."""
    from replay.study.config_layers import layered_config
    from replay.study.sweep import parse_grid, plan_sweep, study_effort, sweep_key

    grid = parse_grid(a.grid)
    if a.perturb < 0 or a.perturb_mm < 0 or a.perturb_deg < 0:
        raise UsageError("--perturb", "counts and sizes must be >= 0")
    choices = {} if a.effort is None else {"finger_effort_limit": a.effort}
    cfg = resolve_hand_variant(layered_config(config_file=a.config, choices=choices), a.dataset)
    effort = study_effort(cfg)
    if cfg.engine is not EngineChoice.MUJOCO_C:
        raise UsageError("--config", "sweeps run on the MuJoCo C engine (engine mujoco-c)")
    seqs = named_recordings(a.dataset, a.data, a.objects, lifts=False)
    out = out_folder(a.out, a.out)
    sp = plan_sweep(grid, effort, a.perturb, perturb_mm=a.perturb_mm, perturb_deg=a.perturb_deg, seed=a.seed)
    key = sweep_key(cfg, grid, a.perturb, perturb_mm=a.perturb_mm, perturb_deg=a.perturb_deg, seed=a.seed)
    console.out(
        f"sweep {a.dataset}: {len(seqs)} recording(s) x {len(sp.variants)} worlds "
        f"({len(grid['effort'])}x{len(grid['mu'])} grid, lines at mu=1 and effort={effort}, "
        f"{a.perturb} perturbation(s), ablation)"
    )
    return cfg, seqs, out, sp, key


def _one_recording(a, cfg, sp, key, out: Path, said: set):
    """One recording's sweep, its warnings said once per sweep."""
    from replay.data.locate import dataset_dir
    from replay.study.console import one_line
    from replay.study.sweep import run_recording_sweep

    manosim = dataset_dir("manosim", a.data)

    def one(seq: str) -> dict:
        stem = seq.replace("/", "__")
        with console.kept_warnings() as caught:
            doc = run_recording_sweep(a.dataset, seq, a.data, manosim_dir=manosim, cfg=cfg, sp=sp, threads=a.threads)
        doc["run_warnings"] = sorted(set(caught))
        for w in doc["run_warnings"]:
            if w not in said:
                said.add(w)
                log.warning(
                    "  warning (%s; full text in %s.json run_warnings): %s", seq, stem, w if a.verbose else one_line(w)
                )
        doc.update(
            format_version=FORMAT_VERSION,
            sweep_key=key,
            config=cfg.to_dict(),
            grid_spec=a.grid,
            perturb_mm=a.perturb_mm,
            perturb_deg=a.perturb_deg,
            seed=a.seed,
            png=f"{stem}.png",
        )
        return doc

    return one


def _write(out: Path, effort: float | None):
    """The recording's heatmap and JSON, and its line."""
    from replay.study.sweep import heatmap_png

    def write(seq: str, doc: dict) -> None:
        stem = seq.replace("/", "__")
        atomic_write_bytes(out / f"{stem}.png", heatmap_png(doc, f"{seq} ({doc['object_mass_kg']:.3f} kg)"))
        atomic_write_text(out / f"{stem}.json", dumps(doc))
        me, mm = doc["min_effort_lifting_at_mu1_nm"], doc["min_mu_lifting_at_study_effort"]
        at = "the study effort" if effort is None else f"{effort} N·m"
        pf = doc["perturbed_success_fraction"]
        console.out(
            f"  {seq}: {doc['success_fraction']:.0%} of the grid lifts; min effort at mu=1: "
            f"{'none' if me is None else f'{me:.3g} N·m'}; min mu at {at}: "
            f"{'none' if mm is None else f'{mm:.3g}'}; perturbed: {'-' if pf is None else f'{pf:.0%}'}; "
            f"ablation {doc['ablation']['outcome']}; {doc['worlds']} worlds in {doc['wall_s']:.1f} s"
        )

    return write


def _resume(out: Path, key: str):
    """A recording's JSON written before with the same settings, or None."""

    def prior(seq: str) -> dict | None:
        jpath = out / f"{seq.replace('/', '__')}.json"
        try:
            doc = json.loads(jpath.read_text()) if jpath.is_file() else None
        except (OSError, json.JSONDecodeError):
            return None
        ok = doc is not None and doc.get("sweep_key") == key and doc.get("format_version") == FORMAT_VERSION
        return doc if ok else None

    return prior


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from replay.study.batch import run_batch
    from replay.study.console import quiet_libraries
    from replay.study.sweep import summarize_over

    if not a.verbose:
        quiet_libraries()
    cfg, seqs, out, sp, key = _setup(a)
    res = run_batch(
        seqs,
        _one_recording(a, cfg, sp, key, out, set()),
        write=_write(out, sp.study_effort),
        resume=_resume(out, key) if a.resume else None,
        label="sweep",
    )
    summary = summarize_over(res.results, res.failed, versions=res.versions, wall_s=res.wall_s)
    summary.update(grid_spec=a.grid, sweep_key=key)
    atomic_write_text(out / "sweep.json", dumps({"format_version": FORMAT_VERSION, **summary}))
    console.out(f"sweep: {out / 'sweep.json'}")
    if res.interrupted:
        return 130
    if res.failed:
        console.err(f"run_sweep.py: error: {len(res.failed)} recording(s) could not be replayed; the others are kept")
        return 1
    return 0

"""The verdict envelope's rollouts of one recording, in the study's worker (:mod:`replay.study.envelope`).

Every setting other than ``default`` is a rollout of its own (its own scene: the cone, impratio,
contact mixing and hand shape are options of the compiled model, the wrist law's gravity term a
switch of the batch, the wrist target offset a shift of the plan), without its contact ablation
(the ablation runs for the default setting only, as the study's). A setting that changes the hand
shape refits the hand coordinates on that shape's MJCF (:func:`replay.study.prepare.prepare_recording`,
the landmark IK cached per MJCF). The ``default`` setting's verdict is the study's contact run.
"""

from __future__ import annotations

import time

from replay.config import ReplayConfig
from replay.study.envelope import envelope_settings, setting_config, verdict_envelope
from replay.study.prepare import prepare_recording


def run_envelope(job, prepared: tuple, cfg: ReplayConfig, default: dict) -> dict:
    """The ``verdict_envelope`` of ``job``'s recording (:func:`replay.study.envelope.verdict_envelope`,
    with ``wall_s`` per setting, s).

    Args:
        job: the study's :class:`replay.study.job.Job` (dataset, sequence, data, hand folder, protocol).
        prepared: ``(recording, coords (T, 67), hand MJCF)`` of the study's own hand shape.
        cfg: the study's config (hand shape resolved). default: the contact run's metrics
            (``outcome``, ``lifted``, ``wall_s``).

    Raises:
        DataError: a setting's config or recording cannot be replayed (bad input).
    """
    from replay.protocol.rollout import run_rollouts  # in the worker only (Newton's import)
    from replay.sim.engine.variants import Variant

    names, outcomes, lifted, overrides, walls = [], [], [], [], []
    for name, over in envelope_settings(cfg, job.protocol):
        names.append(name)
        overrides.append(over)
        if not over:
            outcomes.append(default["outcome"])
            lifted.append(bool(default["lifted"]))
            walls.append(float(default.get("wall_s") or 0.0))
            continue
        t0 = time.perf_counter()
        c = setting_config(cfg, over, job.protocol)
        rec, coords, mjcf = prepared
        if c.hand_variant != cfg.hand_variant:  # the other hand: its own MJCF and its own IK fit
            rec, coords, mjcf, _ = prepare_recording(job.dataset, job.sequence, job.data_dir, job.manosim_dir, c,
                                                     job.protocol, job.recorded_max_s)
        m = run_rollouts(rec, coords, str(mjcf), c, [Variant()], protocol=job.protocol)[0].metrics
        outcomes.append(m["outcome"])
        lifted.append(bool(m["lifted"]))
        walls.append(time.perf_counter() - t0)
    return dict(verdict_envelope(names, outcomes, lifted, overrides), wall_s=walls)

"""The sampled verdict's results fields, of a rollout (:class:`SampledVerdict`) and of a study
(:class:`SampledStudyFields`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from replay.results.rollout_parts import Part
from replay.results.rollout_parts import described as _f
from replay.results.verdict_record import PLiftEntry, p_lift_entries

P_LIFT_DOC = (
    "--samples N (replay.study.sample_job): {condition: {p (k / n, the fraction of samples lifted), lo, "
    "hi (95 % Wilson score interval), n, k, class (robust_lift: lo >= 0.5, robust_failure: hi <= 0.5, "
    "else uncertain; replay.protocol.p_lift_stats.CLASS_THRESHOLD), driver ({variable, effect, low, high}: the "
    "sampled variable whose lower / upper half of samples differ most in lift rate, effect = high - low; "
    "or null)}}"
)
P_LIFT_CORRUPTED_DOC = (
    "--corruptions: {corruption: {condition: the p_lift dict of the recording's samples so corrupted "
    "(replay.study.corruptions)}}"
)
P_LIFT_SAMPLES_DOC = (
    "--samples N: what the p_lift was drawn from: {seed, sigmas ({wrist_mm, object_mm, source}: the "
    "recording's data sigmas, mm), object_mass (the object's declared mass distribution, replay.sim.made_mass: "
    "{model, centre_kg, low_kg, high_kg, sets_mass, volume_m3, area_m2, mesh}), samples ([{friction, softness, "
    "torsional_friction m, object_mass_scale (of centre_kg), grip_force_n N and pad_compression_mm where the physics "
    "samples them, wrist_offset m (3), object_offset m (3)}] per sample), lifted "
    "({'<condition>/<real or corruption>': [0/1 per sample]}), diagnoses ({the same keys: [the sample's "
    "diagnosis class (replay.protocol.diagnosis.CLASSES) or null where it lifted and held, per sample]}), "
    "wall_s ({condition: s})}"
)
SAMPLING_DOC = (
    "--samples N: {samples, seed, conditions [{name, overrides, why}] (the lift protocol's; "
    "conditions_by_protocol: each protocol's), variables [{name, distribution, source}], classes "
    "{threshold, interval}, corruptions [names]} (replay.study.sampling_setup)"
)
DISCRIMINATION_DOC = (
    "--corruptions: [{protocol, condition, corruption, p_real, p_corrupted (mean p_lift), auc (P(p_lift "
    "real > corrupted) + half the ties, over recording pairs), ratio (p_corrupted / p_real; null if "
    "p_real 0), n_recordings, reference ({ratio, source}: HUG's figure, or null)}] "
    "(replay.study.discrimination)"
)


VERDICTS_DOC = (
    "--verdicts: [{name ('<protocol>@<physics>'), protocol (lift or hug-oracle), physics (replay.sim.physics), "
    "main (true: the study's own protocol under its own physics, its rows in rollouts / oracle_rollouts, its "
    "counts in counts[protocol], sampled with --samples; false: one extra single rollout per recording with its "
    "contact ablation, its rows in verdict_rollouts[name], its counts in counts[name]), config_hash}] "
    "(replay.study.verdicts)"
)
VERDICT_ROLLOUTS_DOC = (
    "--verdicts: {name: one row per recording (ROW_FIELDS; full record, with its own physics, in its `json`, "
    "`<sequence>.<protocol>@<physics>.json`)} of each extra (protocol, physics) pair; study.csv's "
    "`lifted_<name>` columns carry each pair's lifted per recording"
)


@dataclass
class SampledVerdict(Part):
    """A rollout's sampled verdict (``run_study.py --samples N``, :mod:`replay.study.sample_job`)."""

    key: ClassVar[str] = "sampled"

    p_lift: dict | None = _f("-", P_LIFT_DOC)
    p_lift_corrupted: dict | None = _f("-", P_LIFT_CORRUPTED_DOC)
    p_lift_samples: dict | None = _f("mm, m, s", P_LIFT_SAMPLES_DOC)

    def entries(self) -> dict[str, PLiftEntry]:
        """``{condition: PLiftEntry}`` of ``p_lift`` ({} where not sampled)."""
        return p_lift_entries(self.p_lift)

    def per_sample(self, what: str, condition: str, corruption: str | None = None) -> list | None:
        """The per-sample list ``what`` (``lifted`` 0/1; ``diagnoses`` a class or None) of ``condition`` and
        ``corruption`` (None: recorded); None where the file holds none."""
        by = (self.p_lift_samples or {}).get(what)
        got = by.get(f"{condition}/{corruption or 'real'}") if isinstance(by, dict) else None
        return got if isinstance(got, list) else None


@dataclass
class SampledStudyFields:
    """A study's sampled verdict settings and discrimination table (:mod:`replay.study.sampling_setup`)."""

    sampling: dict | None = _f("-", SAMPLING_DOC)
    discrimination: list | None = _f("-", DISCRIMINATION_DOC)
    verdicts: list | None = _f("-", VERDICTS_DOC)
    verdict_rollouts: dict | None = _f("-", VERDICT_ROLLOUTS_DOC)


def sampled_last(fields) -> list:
    """``dataclasses.fields`` of a study record with this base's fields last."""
    names = {f.name for f in dataclasses.fields(SampledStudyFields)}
    return sorted(fields, key=lambda f: f.name in names)

"""The sampled verdict's settings: checked before the study runs, handed to every job, written into the study."""

from __future__ import annotations

from dataclasses import dataclass

from replay.config import ReplayConfig
from replay.errors import DataError, UsageError
from replay.protocol.p_lift_stats import CLASS_THRESHOLD, CONFIDENCE
from replay.protocol.protocols.base import ResultKey, all_protocols, primary_protocol, protocol_named
from replay.results.engine_choice import EngineChoice
from replay.study.calibration import variables_for
from replay.study.corruptions import parse_corruptions
from replay.study.discrimination import discrimination
from replay.study.verdict_conditions import check_conditions, conditions_record, parse_conditions

#: ``--samples`` given without a number
DEFAULT_SAMPLES = 32


@dataclass(frozen=True)
class SamplingSetup:
    """A sampled study's settings: samples per recording and condition, ``conditions`` names per protocol."""

    samples: int
    seed: int
    conditions: dict[str, list[str]]
    corruptions: list[str]


def check_sampling(
    cfg: ReplayConfig, protocols: list[str], *, samples: int, seed: int, conditions: str | None, corruptions
) -> SamplingSetup | None:
    """The settings of a sampled study, or None (``samples`` 0: a study of single rollouts). Raises UsageError: samples
    < 0, corruptions or conditions without samples, an unknown or unrunnable condition or corruption, an engine other
    than MuJoCo C."""
    samples = int(samples or 0)
    if samples < 0:
        raise UsageError("--samples", f"must be >= 0, got {samples}")
    try:
        corr = parse_corruptions(corruptions)
        if not samples:
            if corr:
                raise UsageError("--corruptions", "needs --samples N (N > 0): P(lift) is what it compares")
            if conditions:
                raise UsageError("--conditions", "needs --samples N (N > 0)")
            return None
        if cfg.engine is not EngineChoice.MUJOCO_C:
            raise UsageError(
                "--samples",
                "the sampled variables are edits of the MuJoCo C engine: run with --device cpu (engine mujoco-c)",
            )
        conds = {}
        for proto in protocols:
            if protocol_named(proto).sampled:
                conds[proto] = parse_conditions(conditions, cfg, proto)
                check_conditions(cfg, conds[proto], proto)
    except DataError as e:
        raise UsageError(e.field or "--samples", e.message) from None
    return SamplingSetup(samples, int(seed), conds, corr)


def job_sampling(sampling: SamplingSetup | None, protocol: str) -> dict:
    """The Job fields of a sampled study for ``protocol`` ({} when not sampled)."""
    if not sampling or protocol not in sampling.conditions:
        return {}
    return {
        "samples": sampling.samples,
        "seed": sampling.seed,
        "conditions": tuple(sampling.conditions[protocol]),
        "corruptions": tuple(sampling.corruptions),
    }


def sampling_record(sampling: SamplingSetup, cfg: ReplayConfig) -> dict:
    """The study's ``sampling`` field (docs/results.md); ``conditions``: the primary protocol's."""
    by = {p: conditions_record(cfg, names, p) for p, names in sampling.conditions.items()}
    first = by.get(primary_protocol().name) or next(iter(by.values()), [])
    return {
        "samples": sampling.samples,
        "seed": sampling.seed,
        "conditions": first,
        "conditions_by_protocol": by,
        "variables": [v.record() for v in variables_for(cfg)],
        "classes": {"threshold": CLASS_THRESHOLD, "interval": f"wilson{round(CONFIDENCE * 100)}"},
        "corruptions": list(sampling.corruptions),
    }


def study_discrimination(results: dict, seqs: list[str]) -> list[dict]:
    """The study's ``discrimination`` of ``results`` ``{ResultKey: record}``, per sampled protocol in registry order."""
    out = []
    for p in all_protocols():
        if p.sampled:
            out += discrimination([results[k].sampled for s in seqs if (k := ResultKey(s, p.name)) in results], p.name)
    return out

"""The results files the figure tables read (:mod:`replay.output.tables`), each read once into a typed record."""

from __future__ import annotations

from dataclasses import dataclass, field

from replay.results.json_record import JsonRecord, read_as


@dataclass(frozen=True)
class FactorRow(JsonRecord):
    """A factor of an attribution result (:func:`replay.study.attribution.summarize_factor`)."""

    name: object = None
    value: object = None
    source: object = ""
    lifted: int | None = None
    of: int | None = None
    shake_held: object = "-"
    unstable: int = 0
    diagnosis: dict = read_as(lambda d: d or {})


@dataclass(frozen=True)
class Attribution(JsonRecord):
    factors: list[FactorRow] = read_as(FactorRow.many)


@dataclass(frozen=True)
class BridgeRow(JsonRecord):
    """A row of the bridge (:mod:`replay.study.bridge`)."""

    path: str | None = None
    element: str | None = None
    value: str | None = None
    lifted: int | None = None
    of: int | None = None
    unstable: int = 0
    diagnosis: dict = read_as(lambda d: d or {})


@dataclass(frozen=True)
class Bridge(JsonRecord):
    rows: list[BridgeRow] = read_as(BridgeRow.many)


@dataclass(frozen=True)
class TestRun(JsonRecord):
    """A test run's counts and wall time s (:func:`replay.output.results_summary.junit_summary`)."""

    tests: int | None = None
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    time_s: float | None = None
    skip_reasons: dict = read_as(lambda d: d or {})
    failed_tests: list = read_as(lambda d: d or [])


@dataclass(frozen=True)
class Disagreement(JsonRecord):
    """A recording the plain MuJoCo replay and the study judged apart (``plain``, ``project``: lifted)."""

    sequence: str | None = None
    plain: bool | None = None
    project: bool | None = None


@dataclass(frozen=True)
class Agreement(JsonRecord):
    agree: int | None = None
    paired: int | None = None
    disagree: list[Disagreement] = read_as(Disagreement.many)


@dataclass(frozen=True)
class Lifted(JsonRecord):
    sequence: str | None = None
    lifted: bool | None = None


@dataclass(frozen=True)
class CrossCheckRun(JsonRecord):
    """The plain-MuJoCo cross-check (:func:`replay.output.results_summary.crosscheck_summary`)."""

    settings: object = None
    lifted: int | None = None
    recordings: int | None = None
    agreement: object = None
    results: list[Lifted] = read_as(Lifted.many)

    def agreed(self) -> Agreement | None:
        return Agreement.from_dict(self.agreement) if self.agreement else None


@dataclass(frozen=True)
class ScaleSize(JsonRecord):
    """One study size of ``benchmarks/study_scale.py``: s, MB, bytes per recording."""

    recordings: int | None = None
    wall_s: float | None = None
    overhead_per_recording_s: float | None = None
    bytes_per_recording: float | None = None
    driver_peak_rss_mb: float | None = None
    report_s: float | None = None
    report_load_s: float | None = None
    montage_s: float | None = None
    montage_tiles: int | None = None


@dataclass(frozen=True)
class ScaleRun(JsonRecord):
    """``benchmarks/study_scale.py --json``: its sizes and the stepping share of a worker's CPU time (s)."""

    sizes: list[ScaleSize] = read_as(ScaleSize.many)
    stepping_fraction: float | None = None
    stepping_s: float | None = None
    profiled_s: float | None = None
    profiled: list | None = None
    stepping_fraction_placed: float | None = None
    stepping_placed_s: float | None = None
    profiled_placed_s: float | None = None
    profiled_placed: list | None = None


@dataclass(frozen=True)
class Throughput(JsonRecord):
    """One checkout of ``benchmarks/study_throughput.py``: rollouts per minute, CPU s, jobs' s, their ratios."""

    median_per_min: float | None = None
    median_ratio: float | None = None
    best_per_min: float | None = None
    best_ratio: float | None = None
    median_cpu_s: float | None = None
    cpu_ratio: float | None = None
    median_jobs_s: float | None = None
    jobs_ratio: float | None = None


@dataclass(frozen=True)
class ThroughputRun(JsonRecord):
    """``benchmarks/study_throughput.py --json``: ``{checkout: Throughput}`` and each checkout's commit."""

    summary: dict[str, Throughput] = read_as(Throughput.by_key)
    tree_commits: dict = read_as(lambda d: d or {})


@dataclass(frozen=True)
class Step(JsonRecord):
    command: str | None = None
    wall_s: float | None = None


@dataclass(frozen=True)
class MakeStudyRun(JsonRecord):
    """``benchmarks/make_study_time.py``: the steps, the whole time s, the machine's cores and load."""

    steps: list[Step] = read_as(Step.many)
    total_s: float | None = None
    cpus: int | None = None
    load_1min: list | None = None
    note: str | None = None


@dataclass(frozen=True)
class Cost(JsonRecord):
    """CPU and wall s of a rollout or of ``n`` samples, and their stepping s."""

    n: int | None = None
    cpu_s: float | None = None
    wall_s: float | None = None
    stepping_s: float | None = None

    def time(self, cpu: bool) -> float | None:
        return self.cpu_s if cpu else self.wall_s


@dataclass(frozen=True)
class RecordingCost(JsonRecord):
    """One recording of ``benchmarks/sample_cost.py``: one rollout's cost and each sample size's."""

    recording: str | None = None
    one: Cost = read_as(Cost.from_dict)
    samples: list[Cost] = read_as(Cost.many)


@dataclass(frozen=True)
class SampleCostRun(JsonRecord):
    """``benchmarks/sample_cost.py --json``: per recording the costs, then issue 47's ratios."""

    sizes: list = read_as(lambda d: d or [])
    recordings: list[RecordingCost] = read_as(RecordingCost.many)
    device: str = "cpu"
    extra_sample_cost_ratio: float | None = None
    stepping_share: float | None = None
    batch_efficiency: float | None = None
    batch_efficiency_1thread: float | None = None


@dataclass(frozen=True)
class LandmarkError(JsonRecord):
    """Distances mm."""

    name: str | None = None
    median_mm: float | None = None
    p90_mm: float | None = None


@dataclass(frozen=True)
class PoseMappingRun(JsonRecord):
    """One run of a pose-mapping summary (:func:`replay.output.results_summary.pose_mapping_summary`)."""

    hand_shape: object = None
    window: object = None
    frames: int | None = None
    sequences: list = field(default_factory=list)
    per_landmark: list[LandmarkError] = read_as(LandmarkError.many)


@dataclass(frozen=True)
class PoseMapping(JsonRecord):
    runs: list[PoseMappingRun] = read_as(PoseMappingRun.many)

"""Figure tables of README.md and docs/ from results files, one function per :data:`KINDS`; in a document a table sits
between ``<!-- table:KIND ... -->`` (naming the command that wrote it) and ``<!-- /table:KIND -->``."""

from __future__ import annotations

import re

from replay.output import table_docs as td
from replay.output.bridge_table import bridge_markdown
from replay.output.p_lift_table import markdown_table, p_lift_markdown, verdict_markdown, with_notes
from replay.protocol.diagnosis import CLASSES
from replay.protocol.protocols.base import protocol_named
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.results.outcomes import words as display_outcome
from replay.results.records import StudyRecord
from replay.results.study_counts import Counts
from replay.results.study_rows import RefineRow, StudyRow, study_rows


def _fmt(v, spec: str = ".1f") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return format(v, spec) if isinstance(v, (int, float)) else str(v)


def _md(header: list[str], rows: list[list[str]]) -> str:
    return markdown_table(header, rows) + "\n"


def _outcome(row: StudyRow) -> str:
    """The outcome as the report says it (``not lifted``), with the diagnosis class."""
    d = row.diagnosis
    shown = display_outcome(row.outcome)
    return f"{shown} ({d})" if d else str(shown)


def _rows(study: dict) -> list[StudyRow]:
    return study_rows(StudyRecord.view(study).rollouts)


def study_table(study: dict) -> str:
    """Per recording of a study: outcome, diagnosis, rise mm, held through the shake, release, contact agreement."""
    rows = [
        [
            r.sequence,
            _outcome(r),
            _fmt(None if r.rise is None else r.rise * 1000.0),
            _fmt(r.shake_held),
            "-" if r.stuck_after_release is None else ("stuck" if r.stuck_after_release else "fell"),
            _fmt(r.contact_agreement_precision, ".2f"),
            _fmt(r.contact_agreement_recall, ".2f"),
        ]
        for r in _rows(study)
    ]
    return _md(
        ["recording", "outcome", "rise mm", "held through the shake", "release", "contact precision", "contact recall"],
        rows,
    )


def refine_table(study: dict) -> str:
    """Per recording of a ``--refine`` study (mm, deg, 0-1). ValueError: no ``refine_rollouts``."""
    ref = {r.sequence: r for r in RefineRow.many(StudyRecord.view(study).refine_rollouts)}
    if not ref:
        raise ValueError("no refine_rollouts: run_study.py --refine writes them")
    rows = []
    for r in _rows(study):
        f = ref.get(r.sequence)
        if f is None:
            continue
        rows.append(
            [
                r.sequence.removesuffix("_lift"),
                _outcome(r),
                _fmt(display_outcome(f.refine_outcome)),
                _fmt(f.refine_wrist_mm),
                _fmt(f.refine_wrist_deg),
                _fmt(f.refine_finger_deg),
                _fmt(f.refine_shake_held),
                _fmt(f.refine_neighbourhood_success, ".2f"),
                _fmt(f.refine_seed_agreement),
                _fmt(f.refine_ablation_max_disp_mm, ".2f"),
            ]
        )
    return _md(
        [
            "recording",
            "as recorded",
            "refined",
            "wrist mm",
            "wrist deg",
            "fingers deg",
            "refined held through the shake",
            "neighbourhood held",
            "seeds agree",
            "refined ablation mm",
        ],
        rows,
    )


def attribution_table(result: dict) -> str:
    """Per factor of ``scripts/attribute.py``'s result: lifted ``n/of``, held, unstable, each diagnosis class."""
    rows = []
    for f in td.Attribution.from_dict(result).factors:
        rows.append(
            [str(f.name), str(f.value), f"{f.lifted}/{f.of}", str(f.shake_held), str(f.unstable)]
            + [str(f.diagnosis.get(c, 0)) for c in CLASSES if c != "unstable"]
        )
    return _md(
        ["factor", "value", "lifted", "held through the shake", "unstable"] + [c for c in CLASSES if c != "unstable"],
        rows,
    )


def _named(rows: list[StudyRow], test) -> str:
    names = sorted(r.sequence.removesuffix("_lift") for r in rows if test(r))
    return f"{len(names)}" + (f" ({', '.join(names)})" if names else "")


def _median(v, unit: str) -> str:
    return "-" if v is None else f"{v:.1f}{unit}"


def _peak(rows: list[StudyRow]) -> str:
    """The largest ``wrist_err_peak_mm`` of the rows, mm, with its recording (``-`` where none has one)."""
    have = [r for r in rows if r.wrist_err_peak_mm is not None]
    if not have:
        return "-"
    r = max(have, key=lambda r: r.wrist_err_peak_mm)
    return f"{r.wrist_err_peak_mm:.1f} mm ({r.sequence.removesuffix('_lift')})"


def _n(v):
    return 0 if v is None else v


def counts_table(study: dict, protocol: str = "lift") -> str:
    """Headline figures of a study under ``protocol``; mm where named."""
    proto = protocol_named(protocol)
    rec = StudyRecord.view(study)
    every = Counts.from_dict(rec.counts)
    rows = study_rows(rec.rows_of(proto.rows_field))
    c = every if proto.primary else (every.of(protocol) or Counts.from_dict(None))
    n = len(rows) if c.rollouts is None else c.rollouts
    diag = c.diagnosis or {}
    d = {k: diag[k] for k in [*CLASSES, *sorted(set(diag) - set(CLASSES))] if diag.get(k)}
    ab = _n(c.ablation_run)
    refused = every.refused_keys or []
    lift = proto.shakes  # the hug-oracle protocol has no shake and no release
    out = [
        ["recordings replayed", f"{n}" + (f" ({len(refused)} refused: {', '.join(refused)})" if refused else "")],
        ["stable (no physics failure)", f"{_n(c.stable)}/{n}"],
        [
            "lifted at the end of the hold" if lift else "lifted (the oracle's success test)",
            _named(rows, lambda r: r.lifted) + f" of {n}",
        ],
    ]
    if lift:
        out += [
            ["held through the shake", _named(rows, lambda r: r.shake_held) + f" of {n}"],
            ["stuck after the release", str(_n(c.stuck))],
        ]
    out += [
        [
            "diagnosis (not lifted" + (", or not held through the shake)" if lift else ")"),
            ", ".join(f"{k} {v}" for k, v in d.items()) or "-",
        ],
        [
            "ablation: nothing rose / moved < 1 mm / lifted",
            f"{_n(c.ablation_no_rise)}/{ab} / {_n(c.ablation_clean)}/{ab} / {_n(c.ablation_lifted)}",
        ],
        ["ablation: largest displacement", _median(c.ablation_max_disp_mm, " mm")],
        ["force-carrying contacts at lift (median)", _median(c.median_contacts_force_at_lift, "")],
        ["wrist tracking error (median of the recordings' medians)", _median(c.median_wrist_err_mm, " mm")],
        [
            "wrist tracking error, peak over the lift and hold (median of the recordings' peaks / largest)",
            f"{_median(c.median_wrist_err_peak_mm, ' mm')} / {_peak(rows)}",
        ],
        ["study wall time", _median(c.wall_s, " s")],
    ]
    return _md(["figure", "value"], out)


def tests_table(run: dict) -> str:
    """A test run's counts, wall time (s) and why tests skipped."""
    t = td.TestRun.from_dict(run)
    out = [
        ["tests", str(t.tests)],
        ["passed", str(t.passed)],
        ["failed", str(t.failed)],
        ["errors", str(t.errors)],
        ["skipped", str(t.skipped)],
        ["wall time", f"{t.time_s:.0f} s"],
    ]
    out += [[f"skipped: {why or '(no reason)'}".replace("|", "/"), str(k)] for why, k in t.skip_reasons.items()]
    out += [[f"failed: `{name}`", "1"] for name in t.failed_tests]
    return _md(["figure", "value"], out)


def crosscheck_table(doc: dict) -> str:
    """The plain-MuJoCo replay's count and per-recording agreement with a study."""
    x = td.CrossCheckRun.from_dict(doc)
    lifted = [r.sequence for r in x.results if r.lifted]
    out = [
        ["plain MuJoCo, settings", str(x.settings or "as authored")],
        ["lifted", f"{x.lifted} of {x.recordings} ({', '.join(s.replace('_lift', '') for s in lifted)})"],
    ]
    a = x.agreed()
    if a:
        out.append(["same verdict as the project's study", f"{a.agree} of {a.paired}"])
        out += [
            [
                f"differs: {d.sequence}",
                f"plain {'lifted' if d.plain else 'not lifted'}, project {'lifted' if d.project else 'not lifted'}",
            ]
            for d in a.disagree
        ]
    return _md(["figure", "value"], out)


def scale_table(doc: dict) -> str:
    """``benchmarks/study_scale.py``'s figures, then the stepping share and issue 41's goals."""
    run = td.ScaleRun.from_dict(doc)
    rows = run.sizes
    out = [
        [
            f"{r.recordings:,}",
            _fmt(r.wall_s),
            f"{r.overhead_per_recording_s:.3f}",
            f"{r.bytes_per_recording / 1000:.1f}",
            _fmt(r.driver_peak_rss_mb, ".0f"),
            _fmt(r.report_s),
            _fmt(r.report_load_s, ".2f"),
            f"{_fmt(r.montage_s)} ({r.montage_tiles} tiles)",
        ]
        for r in rows
    ]
    text = markdown_table(
        [
            "recordings",
            "wall s",
            "overhead s / recording",
            "kB written / recording",
            "driver peak MB",
            "report s",
            "report load s (Chromium)",
            "montage s",
        ],
        out,
    )
    lo, hi = rows[0], rows[-1]
    notes = []
    if len(rows) > 1:
        notes.append(
            f"overhead per recording at {hi.recordings:,} / at {lo.recordings:,}: "
            f"{hi.overhead_per_recording_s / lo.overhead_per_recording_s:.2f}x (goal at most 1.2x); "
            f"bytes per recording {hi.bytes_per_recording / lo.bytes_per_recording:.2f}x (goal flat)"
        )
    notes.append(f"driver peak {max(r.driver_peak_rss_mb for r in rows):.0f} MB (goal under 1,024 MB)")
    if run.stepping_fraction is not None:
        notes.append(
            f"stepping: {run.stepping_fraction * 100:.0f} % of a worker's CPU time "
            f"({run.stepping_s:.2f} of {run.profiled_s:.2f} s over {', '.join(run.profiled)}, "
            "each with its ablation, the first recording of its object: its scene compiled; goal at least 70 %)"
        )
    if run.stepping_fraction_placed is not None:  # older files have only the first
        notes.append(
            f"stepping, another recording of each object (its scene kept and placed): "
            f"{run.stepping_fraction_placed * 100:.0f} % ({run.stepping_placed_s:.2f} of "
            f"{run.profiled_placed_s:.2f} s over {', '.join(run.profiled_placed)})"
        )
    return with_notes(text, notes)


def throughput_table(doc: dict) -> str:
    """``benchmarks/study_throughput.py``'s summary: per checkout rollouts/min and CPU s, with ratios to the first."""
    run = td.ThroughputRun.from_dict(doc)
    out = []
    for name, s in run.summary.items():
        jobs = "-" if not s.median_jobs_s else f"{s.median_jobs_s:.1f} ({s.jobs_ratio:.2f}x)"
        out.append(
            [
                f"{name} ({run.tree_commits.get(name, '?')})",
                f"{s.median_per_min:.0f} ({s.median_ratio:.2f}x)",
                f"{s.best_per_min:.0f} ({s.best_ratio:.2f}x)",
                f"{s.median_cpu_s:.1f} ({s.cpu_ratio:.2f}x)",
                jobs,
            ]
        )
    return _md(["checkout", "rollouts/min, median", "best", "CPU s, median", "jobs' own time s, median"], out)


def make_study_table(doc: dict) -> str:
    """``make study``'s steps and whole time (s, m:ss), then the machine's cores and load before and after."""
    run = td.MakeStudyRun.from_dict(doc)
    out = [[f"`{s.command}`", f"{s.wall_s:.1f}"] for s in run.steps]
    m, sec = divmod(round(run.total_s), 60)
    out.append(["**`make study`, in all**", f"**{run.total_s:.1f} ({m}:{sec:02d})**"])
    load = run.load_1min or ["?", "?"]
    text = _md(["command (what `make study` runs, in order)", "wall s"], out)
    return text + (
        f"\nMeasured on {run.cpus} cores, 1-minute load average {load[0]} before and {load[1]} after "
        "(the study's own workers load every core)" + (f" ({run.note})" if run.note else "") + ".\n"
    )


def sample_cost_table(doc: dict) -> str:
    """``benchmarks/sample_cost.py``'s CPU s per recording, then issue 47's figures against their goals."""
    run = td.SampleCostRun.from_dict(doc)
    sizes = run.sizes
    out = []
    for r in run.recordings:
        by_n = {x.n: x for x in r.samples}
        cpu = r.one.cpu_s is not None  # mujoco-warp: wall s
        out.append(
            [r.recording, f"{r.one.time(cpu):.2f} ({r.one.stepping_s:.2f})"]
            + [f"{by_n[n].time(cpu):.2f} ({by_n[n].stepping_s:.2f})" for n in sizes]
        )
    clock = "CPU" if run.device == "cpu" else "wall"
    text = markdown_table(["recording", f"1 rollout: {clock} s (stepping)"] + [f"{n} samples" for n in sizes], out)
    notes = [
        f"each extra sample: {_fmt(run.extra_sample_cost_ratio, '.2f')}x its own stepping CPU (goal at most 1.25x)",
        f"stepping: {run.stepping_share * 100:.0f} % of a 32-sample study's CPU (goal at least 70 %)",
    ]
    if run.batch_efficiency is not None:
        notes.append(
            f"{sizes[0]} samples on 2 threads: {run.batch_efficiency:.2f} of 2 x raw mj_step (goal at "
            f"least 0.85; wall time on a shared machine); on 1 thread, CPU: "
            f"{run.batch_efficiency_1thread:.2f} of raw mj_step"
        )
    return with_notes(text, notes)


def pose_mapping_table(doc: dict) -> str:
    """Per landmark, each run's median (p90) fitted-to-recorded distance, mm, then the frames and recordings."""
    runs = td.PoseMapping.from_dict(doc).runs
    shape = lambda r: ", ".join(sorted({str(v) for v in (r.hand_shape or {}).values()})) or "?"  # noqa: E731
    per = [{p.name: p for p in r.per_landmark} for r in runs]
    rows = [
        [name] + [f"{p[name].median_mm:.2f} ({p[name].p90_mm:.2f})" if name in p else "-" for p in per]
        for name in [p.name for p in runs[0].per_landmark]
    ]
    what = lambda r: f"{r.frames} frames (window {r.window}) of {len(r.sequences or [])} " + (  # noqa: E731
        f"recordings: {', '.join(r.sequences or [])}"
    )
    if len({what(r) for r in runs}) == 1:
        notes = [f"- each: {what(runs[0])}"]
    else:
        notes = [f"- `{shape(r)}`: {what(r)}" for r in runs]
    return _md(["landmark"] + [f"`{shape(r)}` median (p90) mm" for r in runs], rows) + "\n" + "\n".join(notes) + "\n"


#: each kind's table
_TABLES = {
    "study": study_table,
    "refine": refine_table,
    "attribution": attribution_table,
    "counts": counts_table,
    "oracle": lambda d: counts_table(d, HugOracle.name),
    "bridge": bridge_markdown,
    "tests": tests_table,
    "crosscheck": crosscheck_table,
    "scale": scale_table,
    "throughput": throughput_table,
    "make_study": make_study_table,
    "sample_cost": sample_cost_table,
    "p_lift": p_lift_markdown,
    "verdict": verdict_markdown,
    "pose_mapping": pose_mapping_table,
}
KINDS = tuple(_TABLES)
_STUDY = ("rollouts", "a study", "scripts/run_study.py")
#: the key each kind of table needs in its document, what the document then is and what writes it (a study where not
#: named)
_NEEDS = {
    "attribution": ("factors", "an attribution result", "scripts/attribute.py"),
    "bridge": ("rows", "a bridge result", "scripts/bridge.py"),
    "crosscheck": ("results", "a crosscheck summary", "scripts/tables.py summarize crosscheck"),
    "tests": ("tests", "a test run summary", "scripts/tables.py summarize junit"),
    "scale": ("sizes", "a scale benchmark result", "benchmarks/study_scale.py --json"),
    "make_study": ("steps", "a make-study timing", "benchmarks/make_study_time.py"),
    "sample_cost": ("extra_sample_cost_ratio", "a sample cost result", "benchmarks/sample_cost.py --json"),
    "pose_mapping": ("runs", "a pose-mapping summary", "scripts/tables.py summarize pose_mapping"),
    "throughput": ("summary", "a throughput result", "benchmarks/study_throughput.py --json"),
}


def table(kind: str, doc: dict) -> str:
    """The table of ``kind`` from a results document; ValueError: an unknown kind or a document lacking it."""
    if kind not in _TABLES:
        raise ValueError(f"unknown table {kind!r}; choose from {KINDS}")
    need, what, writer = _NEEDS.get(kind, _STUDY)
    if need not in doc:
        raise ValueError(f"not {what} (no {need!r}): {writer} writes one")
    return _TABLES[kind](doc)


def replace_block(text: str, kind: str, command: str, *, body: str, name: str | None = None) -> str:
    """``text`` with the block of ``kind`` replaced by ``body``, naming ``command``; ValueError: not exactly one."""
    tag = kind if name is None else f"{kind}:{name}"
    pat = re.compile(rf"([ \t]*)<!-- table:{re.escape(tag)}( [^\n]*)? -->\n.*?<!-- /table:{re.escape(tag)} -->", re.S)
    found = pat.findall(text)
    if len(found) != 1:
        raise ValueError(f"{len(found)} blocks <!-- table:{tag} ... --> ... <!-- /table:{tag} --> (need exactly one)")

    def block(mt: re.Match) -> str:  # indented as the opening comment (a table inside a list item)
        ind = mt.group(1)
        rows = "".join(ind + ln + "\n" for ln in body.splitlines())
        return f"{ind}<!-- table:{tag} written by: {command} -->\n{rows}{ind}<!-- /table:{tag} -->"

    return pat.sub(block, text)

"""What a study says on the terminal: one progress bar, each warning once, a table at the end.

The bar (tqdm) shows done/total, the ETA and the outcome counts so far. Warp's banner and
"Module ... load on device" lines, Newton's log records and Python warnings raised in the
workers are kept off the terminal unless ``--verbose`` (:func:`quiet_libraries`); warnings
the workers caught come back with each result and are said once per study.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from replay.checks.causes import cause_counts_text
from replay.errors import printable
from replay.protocol.diagnosis import display_outcome
from replay.protocol.intent_counts import LIFTS, group_words, intent_groups
from replay.protocol.protocols.base import all_protocols, primary_protocol

#: characters of a long note (the hand import's warnings) said on the console; the whole
#: text is in the rollout JSON (``import_warnings``)
NOTE_CHARS = 160


def quiet_libraries() -> None:
    """Silence Warp's banner and module-load lines and Newton's info logging (this process)."""
    import warp as wp

    # Warp >= 1.19: messages below config.log_level are not printed (the init banner and the
    # "Module ... load on device" timers are INFO, the missing-CUDA-driver note a WARNING)
    if hasattr(wp, "LOG_ERROR"):
        wp.config.log_level = wp.LOG_ERROR
    wp.config.quiet = True  # older Warp
    # the native library prints "Warp CUDA warning: Could not find ... driver" itself at init on a
    # machine without a GPU: initialise with the process's stdout/stderr on /dev/null
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(null, 1), os.dup2(null, 2)
        wp.init()
    finally:
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
    for name in ("newton", "warp", "mujoco_warp"):
        logging.getLogger(name).setLevel(logging.ERROR)


#: a sentence ends at . ! or ? followed by a space and a capital, a quote or a bracket
#: (not inside ``1.25`` or after ``e.g.``)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])")


def one_line(text: str, n: int = NOTE_CHARS) -> str:
    """One line, absolute paths shortened to their file name (the full text is in the
    results), never cut inside a sentence: when longer than ``n`` characters, asides in
    parentheses are left out, then whole sentences up to ``n`` (the first always), the rest
    marked ``[...]``."""
    text = re.sub(r"(?:/[^\s/:]+)+/([^\s/:]+)", r"\1", " ".join(str(text).split()))
    if len(text) <= n:
        return text
    brief = re.sub(r" \([^()]*\)", "", text)  # " (SolverMuJoCo cannot ...)", not "actuator(s)"
    sentences = _SENTENCE_END.split(brief)
    out = sentences[0]
    for s in sentences[1:]:
        if len(out) + 1 + len(s) > n:
            return out + " [...]"
        out += " " + s
    return out


class StudyConsole:
    """The study's terminal output (all of it through ``tqdm.write``, so the bar stays whole).

    Args:
        dataset: for the bar's label.
        total: jobs (recordings x protocols) in the study; done: those already done (resumed).
            Both can be given later with :meth:`start` (the bar appears then).
        enabled: False: print nothing (``--quiet``).
        verbose: say notes and warnings in full.
    """

    def __init__(self, dataset: str, total: int, done: int, enabled: bool = True, verbose: bool = False):
        self.enabled, self.verbose = enabled, verbose
        self.counts: Counter = Counter()
        self.said: set[str] = set()
        self.dataset = dataset
        self.bar = tqdm(total=total, initial=done, desc=f"study {dataset}", unit="rec", disable=True)
        if total:
            self.start(total, done)

    def start(self, total: int, done: int) -> None:
        """Show the bar: ``total`` jobs, ``done`` of them already done."""
        self.bar.close()
        self.bar = tqdm(
            total=total,
            initial=done,
            desc=f"study {self.dataset}",
            unit="rec",
            disable=not self.enabled,
            dynamic_ncols=True,
            file=sys.stderr,
        )

    def say(self, text: str) -> None:
        """One console line (names from the data in it: control characters escaped, :func:`replay.errors.printable`)."""
        if self.enabled:
            tqdm.write(printable(text, keep_newlines=True), file=sys.stderr)

    def once(self, text: str, key: str | None = None, prefix: str = "") -> None:
        """Say ``prefix`` + ``text`` (shortened with :func:`one_line` unless ``verbose``) unless the
        same ``key`` (default: the text) was said before."""
        key = text if key is None else key
        if key not in self.said:
            self.said.add(key)
            self.say(prefix + (text if self.verbose else one_line(text)))

    def intro(
        self,
        ablation_only: bool,
        todo: int,
        total: int,
        rdir: Path,
        chash: str,
        failed: int = 0,
        failed_recordings: int | None = None,
        recordings: int | None = None,
    ) -> None:
        """Say what this run does: rerun ablations, or how many rollouts it keeps from disk (and the
        recordings the study could not replay before, kept as it has them). ``todo``, ``total`` and
        ``failed`` count jobs (a recording under each protocol and verdict pair); ``failed_recordings``
        and ``recordings`` (the study's) count recordings, where the message is about them."""
        if ablation_only:
            self.say(
                f"ablation only: rerunning the contact ablation of {todo} recording(s); the study keeps "
                f"the other {(total if recordings is None else recordings) - todo} as they are"
            )
        elif todo < total - failed:
            self.say(
                f"kept: {total - todo - failed} of {total - failed} rollouts already in {rdir} with this "
                f"config (hash {chash[:12]}); running {todo}"
            )
        if failed:
            self.say(
                f"kept: {failed if failed_recordings is None else failed_recordings} recording(s) the study "
                "could not replay before, with their reasons "
                "(name them in --objects to try again)"
            )

    def result(self, sequence, status: str, value) -> None:
        """One job ended (``value``: its :class:`~replay.results.records.RolloutRecord`, else its one-line reason):
        count its outcome, say its new warnings once, advance the bar."""
        if status == "ok":  # the bar words it as the summary does ("not lifted")
            self.counts[display_outcome(value.outcome) or "?"] += 1
            for w in value.scene.import_warnings or []:
                self.once(
                    w, prefix="note (hand import, every rollout; full text in the rollout JSON's import_warnings): "
                )
            for w in value.run_warnings or []:
                self.once(w, prefix=f"warning ({sequence}; full text in its rollout JSON's run_warnings): ")
        elif status == "refused":  # bad input, named: listed with its reason at the end (summary_table)
            self.counts["refused"] += 1
        else:
            self.counts["failed"] += 1
            self.say(f"failed: {sequence}: {one_line(str(value).splitlines()[0] if value else value, 300)}")
        self.bar.set_postfix_str(" ".join(f"{k} {v}" for k, v in sorted(self.counts.items())), refresh=False)
        self.bar.update(1)

    def interrupted(self, out: Path, n_done: int, total: int) -> None:
        self.bar.close()
        if n_done >= total:
            print(f"interrupted: all {total} recordings are in {out}", file=sys.stderr, flush=True)
        else:
            print(
                f"interrupted: {n_done} of {total} recordings are in {out}; rerun the same command with --resume "
                "to finish the others",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        self.bar.close()


def input_flag_lines(rollouts: list[dict]) -> list[str]:
    """The rollouts' ``input_flags`` (repaired or corrected input, :mod:`replay.checks.recording_checks`)
    one line per flag: the recordings that carry it and what it says (said once for all, e.g.
    the 8 GRAB recordings of another intent than lift)."""
    by_flag: dict[str, list[tuple[str, str]]] = {}
    for r in rollouts:
        for k, v in (r.get("input_flags") or {}).items():
            by_flag.setdefault(k, []).append((str(r.get("sequence")), str(v)))
    lines = []
    for k, hits in by_flag.items():
        # "drink: the recorded motion ..." -> the part after its own name, the same for all
        why = {v.split(": ", 1)[-1] for _, v in hits}
        if len(why) == 1 and all(": " in v for _, v in hits):
            names = ", ".join(f"{s} ({v.split(': ', 1)[0]})" for s, v in hits)
            lines.append(f"input flags: {k} on {len(hits)} recording(s): {names}: {why.pop()}")
        else:
            lines.append(f"input flags: {k} on {len(hits)} recording(s): " + "; ".join(f"{s}: {v}" for s, v in hits))
    return lines


def _cell(v, fmt: str = "{:.1f}") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return fmt.format(v)
    return str(v)


def summary_table(study: dict) -> str:
    """A study's rows and counts as a plain-text table (the end of ``run_study.py``): the lift
    protocol's recordings when it ran, and a line for the recorded protocol's."""
    c = study.get("counts") or {}
    lift = primary_protocol().name
    lines = _lift_lines(study, c) if lift in (study.get("protocols") or [lift]) else []
    rc = c.get("recorded")
    if rc:
        per = intent_groups({k: {"rollouts": v.get("rollouts", 0)} for k, v in (rc.get("by_intent") or {}).items()})
        split = f" ({', '.join(group_words(k, g['rollouts']) for k, g in per.items())})" if len(per) > 1 else ""
        lines.append(
            f"recorded protocol: {rc.get('rollouts', 0)} recordings{split}: tracked {rc.get('tracked', 0)}, lost "
            f"{rc.get('lost', 0)}, unstable {rc.get('unstable', 0)} (per recording below: within 2 cm / "
            f"30 deg, errors over the frames simulated, when lost)"
        )
    oc = c.get("hug-oracle")
    if oc:
        lines += oracle_count_lines(oc)
        lines += _oracle_lines(study)
    refused = int(c.get("refused") or 0)
    if refused:
        lines.append(f"refused: {refused} (bad input; listed below with the reasons)")
    if (c.get("failed_inputs") or 0) > refused:
        lines.append(f"failed: {c['failed_inputs'] - refused} (listed below)")
    if (per_cause := cause_counts_text(c.get("causes"))) is not None:
        lines.append(f"input causes: {per_cause}")
    if c.get("wall_s") is not None:
        lines.append(wall_line(c))
    return "\n".join(lines)


def wall_line(c: dict) -> str:
    """The study's wall time, s, as what it is: this run's alone, this ``--ablation-only`` rerun's beside the
    study's (``ablation_only_keys``), or with the earlier run(s) whose rollouts ``--resume`` kept
    (``resumed_wall_s`` > 0)."""
    this = c.get("wall_s_this_run", c["wall_s"])
    rerun = c.get("ablation_only_keys")
    if rerun is not None:
        return (
            f"wall time {this:.1f} s (--ablation-only: the contact ablation of {len(rerun)} recording(s) rerun; "
            f"the study's rollouts took {c['wall_s']:.1f} s in all)"
        )
    if (c.get("resumed_wall_s") or 0.0) > 0.0:  # --resume: the earlier run(s) finished or were interrupted
        return (
            f"wall time {this:.1f} s ({c['wall_s']:.1f} s with the earlier run(s) whose "
            f"{c.get('resumed', 0)} rollout(s) it kept)"
        )
    return f"wall time {this:.1f} s"


def group_lines(c: dict, held: bool = True) -> list[str]:
    """One line per intent group (:func:`replay.protocol.intent_counts.intent_groups` of ``c["by_intent"]``): the
    lifts first, the other intents and recordings with no intent named apart (their motion after the
    grasp is not a lift; the protocol replaces it); ``held``: with the shake's count (the lift protocol)."""
    out = []
    for k, g in intent_groups(c.get("by_intent") or {}).items():
        shake = f" (held through the shake {g['shake_held']})" if held else ""
        out.append(
            f"{group_words(k, g['rollouts'])}: lifted {g['lifted']} of {g['rollouts']}{shake}, not lifted "
            f"{g['not_lifted']}, unstable {g['unstable']}"
            + ("" if k == LIFTS else " (not a lift: the protocol replaced the motion after the grasp)")
        )
    return out


def oracle_count_lines(oc: dict) -> list[str]:
    """The hug-oracle protocol's counts (``counts["hug-oracle"]``): a line per intent group, the lifts
    first (docs/oracle.md's figure is the lifts'), then the ablation and the diagnosis."""
    groups = group_lines(oc, held=False) or [f"{oc.get('rollouts', 0)} recordings: lifted {oc.get('lifted', 0)}"]
    return (
        [f"hug-oracle protocol, lifted (off the table): {groups[0]}"]
        + [f"hug-oracle protocol: {g}" for g in groups[1:]]
        + [
            f"hug-oracle protocol: contact ablation rose {oc.get('ablation_run', 0) - oc.get('ablation_no_rise', 0)}/"
            f"{oc.get('ablation_run', 0)}; diagnosis (all {oc.get('rollouts', 0)}): "
            + (", ".join(f"{k} {v}" for k, v in (oc.get("diagnosis") or {}).items() if v) or "none")
        ]
    )


def _oracle_lines(study: dict) -> list[str]:
    """One line per hug-oracle recording (its rows, ``oracle_rollouts``): lifted off the table or not,
    its diagnosis, the end rise (mm) and whether its contact ablation stayed down."""
    out = []
    for r in study.get("oracle_rollouts") or []:
        rise = r.get("rise")
        what = [
            x
            for x in (
                r.get("diagnosis"),
                f"end rise {1000.0 * rise:.1f} mm" if isinstance(rise, (int, float)) else None,
            )
            if x
        ]
        ab = {True: "ablation stayed down", False: "ablation rose"}.get(r.get("ablation_no_rise"))
        out.append(
            f"  {r.get('sequence')}: {'lifted' if r.get('lifted') else 'not lifted'}"
            + (f" ({', '.join(what)})" if what else "")
            + (f", {ab}" if ab else "")
        )
    return out


def wrist_line(c: dict) -> str:
    """The study's wrist tracking error, mm: the median of the recordings' medians, and the median and the
    largest of their peaks over the lift and hold (:func:`replay.protocol.protocols.counting.summarize`)."""
    f = lambda k: "-" if c.get(k) is None else f"{c[k]:.1f}"  # noqa: E731
    return (
        f"wrist tracking error: median {f('median_wrist_err_mm')} mm (median of the recordings' medians); "
        f"peak over the lift and hold: median {f('median_wrist_err_peak_mm')} mm, largest "
        f"{f('max_wrist_err_peak_mm')} mm"
    )


def _lift_lines(study: dict, c: dict) -> list[str]:
    """The lift protocol's table (under ``--ablation-only`` the rows it reran alone) and its counts."""
    cols = (
        ("recording", "sequence", None),
        ("intent", "intent", None),
        ("outcome", "outcome", None),
        ("diagnosis", "diagnosis", None),
        ("end rise mm", "rise", 1000.0),
        ("slip mm", "slip_mm", None),
        ("contacts", "contacts_force_at_lift", None),
        ("wrist err mm median", "wrist_err_median_mm", None),
        ("peak", "wrist_err_peak_mm", None),
        ("ablation clean", "ablation_clean", None),
    )
    rows = [[h for h, _, _ in cols]]
    rerun = c.get("ablation_only_keys")
    shown = [r for r in study.get("rollouts") or [] if rerun is None or r.get("sequence") in rerun]
    for r in shown:  # outcome as the report words it ("not lifted")
        r = dict(r, outcome=display_outcome(r.get("outcome")))
        rows.append([_cell(r.get(k) * s if (s and r.get(k) is not None) else r.get(k)) for _, k, s in cols])
    w = [max(len(row[i]) for row in rows) for i in range(len(cols))]
    lines = ["  ".join(col.ljust(w[i]) for i, col in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * x for x in w))
    diag = ", ".join(f"{k} {v}" for k, v in (c.get("diagnosis") or {}).items() if v)
    lines.append("")
    lines += group_lines(c) or [f"{c.get('rollouts', 0)} recordings: lifted {c.get('lifted', 0)}"]
    if diag:
        lines.append(f"diagnosis (all {c.get('rollouts', 0)}): {diag}")
    if c.get("median_wrist_err_mm") is not None:
        lines.append(wrist_line(c))
    if c.get("ablation_run"):
        lines.append(
            f"contact ablation: {c.get('ablation_clean', 0)} of {c['ablation_run']} clean, "
            f"{c.get('ablation_lifted', 0)} lifted without contact"
        )
    return lines


def p_lift_lines(study: dict) -> list[str]:
    """The console's lines of a sampled study: per protocol and condition robust lift / uncertain /
    robust failure, then the discrimination table (:mod:`replay.study.discrimination`); [] without samples."""
    c = study.get("counts") or {}
    out = []
    n = (study.get("sampling") or {}).get("samples")
    lead = c.get("protocol", primary_protocol().name)
    sampled = [p.name for p in all_protocols() if p.sampled]
    per = [(p, (c.get(p) or {}).get("p_lift")) for p in sampled]
    if not any(x for _, x in per):  # counts without per-protocol entries: the top level's
        per = [(lead, c.get("p_lift"))]
    for label, counts in per:
        for cond, k in (counts or {}).items():
            out.append(
                f"p_lift ({label}, {cond}, {n} samples): robust lift {k['robust_lift']}, uncertain "
                f"{k['uncertain']}, robust failure {k['robust_failure']}"
            )
    for proto in sampled:  # the other groups (other intents, no intent named), each apart
        groups = (c.get(proto) or {}) if proto in c else (c if lead == proto else {})
        for group, counts in (groups.get("p_lift_groups") or {}).items():
            for cond, k in (counts if group != LIFTS else {}).items():
                out.append(
                    f"p_lift ({proto}, {group}, {cond}, {n} samples): robust lift {k['robust_lift']}, "
                    f"uncertain {k['uncertain']}, robust failure {k['robust_failure']}"
                )
    if study.get("discrimination"):
        out.append(
            "discrimination, real vs corrupted recordings: p = mean p_lift real -> corrupted; AUC = how well "
            "p_lift separates them (0.5 chance, 1 perfect); ratio = success corrupted / real (HUG: the "
            "HUG paper's ratio for the same corruption)"
        )
    for d in study.get("discrimination") or []:
        ref = d.get("reference") or {}
        auc = "n/a" if d.get("auc") is None else f"{d['auc']:.2f}"
        ratio = "n/a" if d.get("ratio") is None else f"{d['ratio']:.2f}"
        out.append(
            f"  {d.get('protocol', lead)} {d['condition']} vs {d['corruption']}: p {d['p_real']:.2f} -> "
            f"{d['p_corrupted']:.2f}, AUC {auc}, ratio {ratio}"
            + (f" (HUG: {ref['ratio']:g})" if ref.get("ratio") is not None else "")
        )
    return out

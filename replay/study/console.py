"""What a study says on the terminal while it runs: a progress bar of recordings, failures as they happen, its
notes once at the end; library output off unless ``--verbose``."""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from pathlib import Path

from replay import console
from replay.protocol.verdict import verdict_of
from replay.study.progress import Progress

#: characters of a long note said on the console (the whole text is in the rollout JSON)
NOTE_CHARS = 160


def quiet_libraries() -> None:
    """Silence Warp's banner and module-load lines and Newton's info logging (this process)."""
    import warp as wp

    # Warp >= 1.19: the banner and load timers are INFO, the missing-CUDA-driver note a WARNING
    if hasattr(wp, "LOG_ERROR"):
        wp.config.log_level = wp.LOG_ERROR
    wp.config.quiet = True  # older Warp
    # without a GPU the native library prints its CUDA driver warning itself at init: init with stdio on /dev/null
    with console.silenced():
        wp.init()
    for name in ("newton", "warp", "mujoco_warp"):
        logging.getLogger(name).setLevel(logging.ERROR)


#: a sentence ends at . ! or ? then a space and a capital, quote or bracket (not in ``1.25``, not after ``e.g.``)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])")


def one_line(text: str, n: int = NOTE_CHARS) -> str:
    """One line, absolute paths shortened to their file name; over ``n`` characters: asides in parentheses left
    out, then whole sentences up to ``n`` (the first always), the rest marked ``[...]``."""
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


#: what the bar says of the time left until a recording is done (no estimate from a part of one)
ETA_PENDING = "ETA after the first recording"


class StudyConsole:
    """The study's terminal output (through ``tqdm.write``): a bar of recordings with the time left and the verdicts
    so far, failures as they happen, notes once at :meth:`close`. ``total``, ``done``: recordings in the study and
    already done; ``enabled`` False: print nothing; ``verbose``: notes in full."""

    def __init__(self, dataset: str, total: int = 0, done: int = 0, *, enabled: bool = True, verbose: bool = False):
        self.enabled, self.verbose = enabled, verbose
        self.counts: Counter = Counter()
        self.said: set[str] = set()
        self.dataset = dataset
        self.lead: str | None = None
        self.progress = Progress([])
        self.t0 = time.perf_counter()
        self.notes: dict[str, set[str]] = {}  # a note's text: the recordings it came from
        self.total, self.done = total, done  # recordings in the study, and done
        self.bar = console.bar(False, total=total, initial=done)
        if total:
            self.start([(f"#{i}", 0) for i in range(total - done)], done)

    def start(self, jobs: list[tuple[str, int]], done: int = 0, lead: str | None = None) -> None:
        """Show the bar: ``jobs`` as ``(recording, sampled worlds)``; ``lead``: the protocol whose verdict it counts."""
        self.bar.close()
        self.progress, self.lead, self.t0 = Progress(jobs), lead, time.perf_counter()
        self.total, self.done = self.progress.recordings + done, done
        self.bar = console.bar(
            self.enabled,
            total=self.progress.recordings + done,
            initial=done,
            desc=f"study {self.dataset}",
            unit="recording",
            bar_format="{desc}: {n_fmt}/{total_fmt} recordings |{bar}| {elapsed}{postfix}",
            dynamic_ncols=True,
        )

    def say(self, text: str) -> None:
        """One console line, control characters escaped."""
        if self.enabled:
            console.err(text)

    def note(self, text: str, recording: str) -> None:
        """Keep a note to say once at :meth:`close`, with the recordings it came from."""
        self.notes.setdefault(text, set()).add(recording)

    def intro(
        self,
        ablation_only: bool,
        todo: int,
        total: int,
        *,
        rdir: Path,
        chash: str,
        failed: int = 0,
        failed_recordings: int | None = None,
        recordings: int | None = None,
    ) -> None:
        """Say what this run does: rerun ablations, or how many rollouts it keeps from disk. ``todo``, ``total``,
        ``failed`` count jobs; ``failed_recordings``, ``recordings`` count recordings."""
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

    def result(self, key, status: str, value, *, worlds: int = 0) -> None:
        """One job ended (``key``: its ResultKey or recording; ``value``: its RolloutRecord, else its one-line
        reason): keep its notes, count the lead protocol's verdict, advance the bar when its recording is done."""
        rec = str(getattr(key, "sequence", key))
        wall = None
        if status == "ok":
            wall = value.timing.wall_s_total
            if getattr(key, "physics", None) is None and getattr(key, "protocol", self.lead) == self.lead:
                self.counts[verdict_of(value).word.value] += 1
            for w in value.scene.import_warnings or []:
                self.note(f"hand import: {w}", rec)
            for w in value.run_warnings or []:
                self.note(w, rec)
        elif status == "refused":
            if rec not in self.said:
                self.said.add(rec)
                self.counts["refused"] += 1
        else:
            self.counts["failed"] += 1
            self.say(f"failed: {key}: {one_line(str(value).splitlines()[0] if value else value, 300)}")
        finished = self.progress.done(rec, worlds, wall)
        said = [f"{k} {v}" for k, v in sorted(self.counts.items())] + self._time_left()
        self.bar.set_postfix_str(", ".join(said), refresh=False)
        self.done += int(finished)
        self.bar.update(int(finished))

    def _time_left(self) -> list[str]:
        """``about 0:12:30 left``; ``ETA after the first recording`` until one is done; nothing once all jobs are."""
        if not self.progress.todo:
            return []
        left = self.progress.left_s(time.perf_counter() - self.t0)
        return [ETA_PENDING if left is None else f"about {_clock(left)} left"]

    def interrupted(self, out: Path, n_done: int, total: int) -> None:
        self.bar.close()
        if n_done >= total:
            console.err(f"interrupted: all {total} recordings are in {out}")
        else:
            console.err(
                f"interrupted: {n_done} of {total} recordings are in {out}; rerun the same command with --resume "
                "to finish the others"
            )

    def close(self) -> None:
        """Close the bar, then say each note once (shortened unless ``verbose``) with the recordings it came from."""
        self.bar.close()
        if not self.notes:
            return
        self.say("notes (expected; each in full in its rollout JSON's import_warnings or run_warnings):")
        shown: dict[str, set[str]] = {}  # notes that differ past the shortened text (a cache path) said once
        for text, recs in self.notes.items():
            shown.setdefault(text if self.verbose else one_line(text), set()).update(recs)
        for text, recs in shown.items():
            where = "every recording" if len(recs) == len(self.progress.left) > 1 else ", ".join(sorted(recs))
            self.say(f"  {text} ({where})")
        self.notes = {}


def _clock(s: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour)."""
    m, sec = divmod(round(s), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"

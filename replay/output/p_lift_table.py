"""The README's first tables (``verdict``, ``p_lift``) from a ``--samples N`` study or its summary."""

from __future__ import annotations

from dataclasses import dataclass

from replay.checks.intent import INTENT_LIFT
from replay.protocol.intent_counts import LIFTS, group_words
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.protocol.protocols.lift import Lift
from replay.protocol.verdict import WORD_OF_CLASS, judged_condition, verdict_of, words
from replay.results.json_record import JsonRecord, read_as
from replay.results.records import RolloutRecord, StudyRecord
from replay.results.study_counts import Counts
from replay.results.study_settings import Sampling, StudyJudge
from replay.results.verdict_record import Tally, discriminations
from replay.study.discrimination import INTERVAL_METHOD, MIN_RECORDINGS, auc_text
from replay.study.end_table import judge_text


def num(x, spec: str = ".2f") -> str:
    """``x`` formatted as ``spec``; ``-`` for None."""
    return "-" if x is None else format(float(x), spec)


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of string cells, no final newline."""
    return "\n".join(
        ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    )


def with_notes(table: str, notes: list[str]) -> str:
    return table + "\n\n" + "".join(f"- {n}\n" for n in notes)


def _conditions(study: StudyRecord, counts: dict) -> list[str]:
    names = Sampling.from_dict(study.sampling).condition_names()
    return names + [c for c in counts if c not in names]


def verdict_markdown(doc: dict) -> str:
    """Lift recordings that hold, are uncertain, fail with shared reasons, then the discrimination; ValueError: run
    without ``--samples``."""
    study = StudyRecord.view(doc)
    c = Counts.from_dict(study.counts)
    t = c.verdicts.get(LIFTS) or next(iter(c.verdicts.values()), None)
    older = t is None
    if older:
        t = _older_tally(doc)
    if t is None:
        raise ValueError("the study has no verdict counts and no p_lift per recording (run_study.py --samples N)")
    rows = []
    for w, (n, causes) in t.by_word.items():
        why = ", ".join(f"{words(k) if k else 'reason not kept'} {m}" for k, m in causes.items())
        rows.append([f"**{w.value}**", str(n), why or "-"])
    cond = StudyJudge.from_dict(study.judge).condition
    if older:  # no judge kept: the condition a verdict is read under (replay.protocol.verdict.judged_condition)
        cond = judged_condition(_conditions(study, {}))
        samples = Sampling.from_dict(study.sampling).samples
        notes = [
            f"read under condition {cond}, {samples} samples each; the interval of p_lift is Wilson's 95 % against 0.5",
            "a study before issue 56: the verdicts read from each recording's p_lift, the reasons of those that "
            "fail or hold not kept (its samples' diagnoses); rerun it for them (`make docs-results`)",
        ]
    else:
        notes = [f"read under {judge_text(study)}; the interval of p_lift is Wilson's 95 % against 0.5"]
    disc = [d for d in discriminations(study.discrimination) if d.condition == cond]
    if disc:
        n = max(d.n_recordings or 0 for d in disc)
        each = "; ".join(f"`{d.corruption}` {auc_text(d).removeprefix('AUC ').split(' over ')[0]}" for d in disc)
        little = f" (fewer than {MIN_RECORDINGS}: it means little)" if n < MIN_RECORDINGS else ""
        ci = (
            f"95 % interval over {n} recordings{little}: {INTERVAL_METHOD}"
            if all(d.auc_lo is not None for d in disc)
            else f"over {n} recordings{little}; no interval in a study before issue 56"
        )
        notes.append(f"tells a real grasp from a corrupted one (AUC of p_lift, 0.5 chance, 1 always, {ci}): {each}")
    return with_notes(markdown_table(["verdict", group_words(LIFTS, t.total), "why"], rows), notes)


@dataclass(frozen=True)
class _Row(JsonRecord):
    sequence: str | None = None
    intent: str | None = None
    p_lift: dict | None = None


@dataclass(frozen=True)
class _Older(JsonRecord):
    """A study (or its summary) before issue 56: its rows, or the summary's ``{protocol: {sequence: p_lift}}``."""

    p_lift: dict = read_as(lambda d: d or {})
    rollouts: list[_Row] = read_as(_Row.many)


def _older_tally(doc: dict) -> Tally | None:
    """The lift recordings' verdicts of a study before issue 56, from each one's p_lift; None without p_lift."""
    old = _Older.from_dict(doc)
    by_seq = old.p_lift.get(Lift.name) or {
        r.sequence: r.p_lift for r in old.rollouts if r.p_lift and r.intent in (None, INTENT_LIFT)
    }
    recs = []
    for entries in by_seq.values():
        rec = RolloutRecord()
        rec.sampled.p_lift = entries
        recs.append(verdict_of(rec))
    return Tally.of(recs) if recs else None


def p_lift_markdown(doc: dict) -> str:
    """Recordings that hold / are uncertain / fail per protocol and condition, then the discrimination per corruption;
    ValueError: no ``counts["p_lift"]``."""
    study = StudyRecord.view(doc)
    c = Counts.from_dict(study.counts)
    oracle = c.of(HugOracle.name)
    by_proto = {p: n for p, n in ((Lift.name, c.p_lift), (HugOracle.name, oracle and oracle.p_lift)) if n}
    if not by_proto:
        raise ValueError("the study has no p_lift counts (run_study.py --samples N)")
    s = Sampling.from_dict(study.sampling)
    disc = discriminations(study.discrimination)
    corruptions = list(dict.fromkeys(d.corruption for d in disc))
    head = ["protocol", "condition", *(w.value for w in WORD_OF_CLASS.values()), "of"]
    head += [f"`{x}`: p_lift real -> corrupted, AUC [95 %], ratio (published)" for x in corruptions]
    rows = []
    for proto, counts in by_proto.items():
        for cond in _conditions(study, counts):
            if cond not in counts:
                continue
            n = {k: int(v) for k, v in (counts[cond] or {}).items()}
            row = [proto, f"`{cond}`", *(str(n.get(k, 0)) for k in WORD_OF_CLASS), str(sum(n.values()))]
            for x in corruptions:
                d = next((e for e in disc if (e.protocol, e.condition, e.corruption) == (proto, cond, x)), None)
                if d is None:
                    row.append("-")
                    continue
                ref = f" ({num(d.reference_ratio)})" if d.reference_ratio is not None else ""
                ci = f" [{num(d.auc_lo)}, {num(d.auc_hi)}]" if d.auc_lo is not None else ""
                row.append(f"{num(d.p_real)} -> {num(d.p_corrupted)}, AUC {num(d.auc)}{ci}, ratio {num(d.ratio)}{ref}")
            rows.append(row)
    size = f"; {s.samples} samples per recording and condition, seed {s.seed}" if s.samples else ""
    notes = [
        f"what the 95 % interval of p_lift ({s.classes.interval}) says against "
        f"{s.classes.threshold}{size}; lift recordings only (other intents are counted apart)"
    ]
    if disc and any(d.auc_lo is not None for d in disc):
        notes.append(f"AUC interval: {INTERVAL_METHOD}")
    refs = sorted({d.reference_source for d in disc if d.reference_source})
    if refs:
        notes.append("published ratio: " + "; ".join(refs))
    return with_notes(markdown_table(head, rows), notes)

"""The report's verdicts side by side (``run_study.py --verdicts``, :mod:`replay.study.verdicts`): per
recording the verdict of every (protocol, physics) pair the study holds (lifted, held through the
shake, contact ablation clean, p_lift where sampled), and per study each pair's lifted of the lifts
and the agreement between pairs (how many recordings each two pairs judge alike).

A study's pairs are its ``verdicts`` field; a study without one (older, or no ``--verdicts``) holds its
main pairs only: each of its lift-judged protocols under its own physics. The pairs of
:data:`replay.study.verdicts.DEFAULT_VERDICTS` it lacks are named with the command that adds them.

* :func:`study_pairs`: ``{name: {sequence: entry}}`` from the study's rows;
* :func:`recording_pairs_html`: a recording's table; :func:`pairs_summary_html`: the study's.
"""

from __future__ import annotations

import html
from itertools import combinations

from replay.checks.intent import INTENT_LIFT
from replay.output.p_lift_section import CLASS_CSS, class_word
from replay.protocol.protocols.base import is_known, primary_protocol, protocol_named
from replay.study.verdicts import DEFAULT_VERDICTS, VerdictPair


def _pairs(study) -> list[VerdictPair]:
    """The study's pairs (``verdicts``), else its main ones: each lift-judged protocol under its physics."""
    if study.verdicts:
        return VerdictPair.read(study.verdicts)
    phys = (study.config or {}).get("physics") or "replay"
    names = study.protocols or [primary_protocol().name]
    return [VerdictPair(p, phys, True) for p in names if is_known(p) and protocol_named(p).judged_on_lift]


def _entry(row: dict, p_lift: dict | None) -> dict:
    return {
        "lifted": row.get("lifted"),
        "held": row.get("shake_held"),
        "ablation_clean": row.get("ablation_clean"),
        "p_lift": p_lift,
        "intent": row.get("intent"),
    }


def study_pairs(study, lift_rows: list[dict], side_p_lift: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """``{pair name: {sequence: {lifted, held, ablation_clean, p_lift, intent}}}`` of each pair the study
    holds, in its order: the main pair of the primary (lift) protocol from ``lift_rows`` (the report's rows:
    ``p_lift`` and ``intent`` read from their records), another main pair (the hug-oracle's) from its protocol's
    rows (its ``p_lift`` from ``side_p_lift``, ``{protocol: {sequence: p_lift}}``), an extra pair from
    ``verdict_rollouts[name]`` (single rollouts: no ``p_lift``); ``held`` is None under a protocol without the
    shake (the hug-oracle)."""
    intent = {str(r.get("sequence")): r.get("intent") for r in lift_rows}
    out: dict[str, dict[str, dict]] = {}
    for v in _pairs(study):
        proto = protocol_named(v.protocol) if is_known(v.protocol) else None
        if v.main and proto is not None and proto.primary:
            got = {str(r.get("sequence")): _entry(r, r.get("p_lift")) for r in lift_rows}
        elif v.main and proto is not None:
            by = side_p_lift.get(proto.name) or {}
            got = {
                str(r.get("sequence")): _entry(r, by.get(str(r.get("sequence"))))
                for r in study.rows_of(proto.rows_field)
            }
        else:
            got = {str(r.get("sequence")): _entry(r, None) for r in (study.verdict_rollouts or {}).get(v.name) or []}
        for seq, e in got.items():
            e["intent"] = e["intent"] if e["intent"] is not None else intent.get(seq)
        out[v.name] = got
    return out


def _missing(study, pairs: dict) -> str:
    """A line naming the default pairs the study lacks and the command that adds them, or ``""``."""
    lack = [n for n in DEFAULT_VERDICTS if n not in pairs]
    if not lack:
        return ""
    want = ",".join(list(pairs) + lack)
    return (
        f"Not in this study: {', '.join(lack)}. Add {'it' if len(lack) == 1 else 'them'} to this study: its own "
        f"command (scripts/run_study.py --dataset {study.dataset} ..., the same flags) with --verdicts {want} "
        "--resume: the rollouts it holds are kept, each new pair is one single rollout per recording."
    )


def _yes(v) -> str:
    return "-" if v is None else ("yes" if v else "no")


def _p_lift_cell(pl: dict | None) -> str:
    if not pl:
        return "single rollout (not sampled)"
    return "; ".join(
        f"{c}: {class_word(e)} {float(e['p']):.2f}" if isinstance(e, dict) and e.get("p") is not None else f"{c}: -"
        for c, e in pl.items()
    )


def recording_pairs_html(study, pairs: dict[str, dict[str, dict]], seq: str) -> str:
    """A recording's verdicts side by side: one row per pair (lifted, held through the shake, contact
    ablation clean, p_lift per condition where sampled), then the pairs the study lacks; ``""`` where no
    pair holds the recording."""
    body = []
    for name, by_seq in pairs.items():
        e = by_seq.get(seq)
        if e is None:
            body.append(
                f"<tr><th>{html.escape(name)}</th><td colspan=4>not replayed (refused or failed: see the study's "
                "failed)</td></tr>"
            )
            continue
        col = CLASS_CSS["robust_lift"] if e["lifted"] else CLASS_CSS["robust_failure"]
        proto = name.partition("@")[0]
        held = _yes(e["held"]) if not is_known(proto) or protocol_named(proto).shakes else "- (no shake)"
        body.append(
            f"<tr><th>{html.escape(name)}</th><td style='color:{col}'><b>{_yes(e['lifted'])}</b></td>"
            f"<td>{held}</td><td>{_yes(e['ablation_clean'])}</td><td>{html.escape(_p_lift_cell(e['p_lift']))}</td></tr>"
        )
    if not any(seq in by_seq for by_seq in pairs.values()):
        return ""
    miss = _missing(study, pairs)
    return (
        "<h2>Verdicts side by side</h2><p>This recording judged by each protocol under each physics the study "
        "holds (protocol@physics): lifted, held through the shake (the lift protocol's), its contact ablation "
        "clean (the hand moved through the same motion without contact; the object stayed put), and p_lift "
        "where the pair was sampled (--samples).</p><table id=pair-verdicts><tr><th>protocol@physics</th>"
        "<th>lifted</th><th>held through the shake</th><th>contact ablation clean</th><th>p_lift</th></tr>"
        f"{''.join(body)}</table>" + (f"<p id=pairs-absent>{html.escape(miss)}</p>" if miss else "")
    )


def agreement(pairs: dict[str, dict[str, dict]]) -> list[tuple[str, str, int, int]]:
    """``[(a, b, alike, both)]`` per two pairs: of the ``both`` recordings each judged, how many ``alike``
    (both lifted or both not)."""
    out = []
    for a, b in combinations(pairs, 2):
        both = [s for s in pairs[a] if s in pairs[b]]
        alike = sum(bool(pairs[a][s]["lifted"]) == bool(pairs[b][s]["lifted"]) for s in both)
        out.append((a, b, alike, len(both)))
    return out


def pairs_summary_html(study, pairs: dict[str, dict[str, dict]]) -> str:
    """The study's table: per pair lifted of the lifts (intent ``lift``) and of the other recordings apart,
    contact ablation clean, then the agreement between each two pairs (:func:`agreement`), and the pairs it
    lacks with the command that adds them; ``""`` for a study with no pair."""
    if not pairs:
        return ""
    body = []
    for name, by_seq in pairs.items():
        lifts = [e for e in by_seq.values() if e["intent"] == INTENT_LIFT]
        other = [e for e in by_seq.values() if e["intent"] != INTENT_LIFT]
        clean = [e for e in by_seq.values() if e["ablation_clean"] is not None]
        body.append(
            f"<tr><th>{html.escape(name)}</th><td>{sum(bool(e['lifted']) for e in lifts)} of {len(lifts)}</td>"
            f"<td>{sum(bool(e['lifted']) for e in other)} of {len(other)}</td>"
            f"<td>{sum(bool(e['ablation_clean']) for e in clean)} of {len(clean)}</td></tr>"
        )
    agree = "".join(
        f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td><td>{k} of {n}</td></tr>"
        for a, b, k, n in agreement(pairs)
    )
    miss = _missing(study, pairs)
    return (
        "<h2>Verdicts side by side</h2><p>Each protocol under each physics the study holds (protocol@physics; "
        "--verdicts): lifted of the lift recordings, of the other recordings (other intents or none named; "
        "their outcome is not a lift's), and contact ablation clean. The pair without --samples is one "
        "contact run per recording.</p><table id=pair-counts><thead><tr><th>protocol@physics</th><th>lifted of "
        "the lifts</th><th>lifted of the others</th><th>ablation clean</th></tr></thead><tbody>"
        f"{''.join(body)}</tbody></table>"
        + (
            f"<p>How many recordings each two pairs judge alike (both lifted, or both not):</p><table "
            f"id=pair-agreement><thead><tr><th>pair</th><th>pair</th><th>alike</th></tr></thead><tbody>{agree}"
            "</tbody></table>"
            if agree
            else ""
        )
        + (f"<p id=pairs-absent>{html.escape(miss)}</p>" if miss else "")
    )

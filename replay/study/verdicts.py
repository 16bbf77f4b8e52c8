"""The verdicts of one study side by side (issue #46): each recording judged by each (protocol, physics)
pair, e.g. the lift protocol under the physics ``replay``, the HUG authors' hug-oracle under ``replay``
and the hug-oracle as authored (``run_study.py --verdicts lift,hug-oracle,hug-oracle@authored``).

A pair is named ``<protocol>@<physics>`` (a name without ``@`` is under the study's own physics). The
pairs of the study's own protocols under its own physics are its *main* verdicts: the rollouts it ran
anyway (``rollouts``, ``oracle_rollouts``; sampled with ``--samples N``). Every other pair is an
*extra* verdict: one more job per recording, a single rollout with its contact ablation under the pair's
config (:func:`verdict_config`: the study's config under the pair's named physics, as
``run_study.py --physics NAME`` would make it), its own ``config_hash`` and ``physics`` record, written
``<sequence>.<protocol>@<physics>.json``, keyed ``<sequence> [<protocol>@<physics>]``; its rows are the
study's ``verdict_rollouts[name]``, its counts ``counts[name]`` (the protocol's count function,
:data:`replay.study.summary.COUNTERS`: lifts, other intents and no intent named apart), and study.csv a
``lifted_<name>`` column per pair. Fields: ``docs/results.md``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from replay.config import ReplayConfig
from replay.errors import UsageError, did_you_mean
from replay.protocol.oracle_plan import ORACLE
from replay.results.records import RolloutRecord, study_row
from replay.sim import physics
from replay.study.counts import LIFTS, group_words, intent_groups
from replay.study.job import config_hash, job_config, result_key, result_stem
from replay.study.summary import COUNTERS

#: the protocols a verdict pair may name: those judged on a lift
VERDICT_PROTOCOLS = ("lift", ORACLE)
#: the pairs the report asks for where a study lacks one (lift and hug-oracle under the project's
#: physics, the hug-oracle as its authors wrote the files: docs/oracle.md)
DEFAULT_VERDICTS = ("lift@replay", f"{ORACLE}@replay", f"{ORACLE}@authored")


def pair_name(protocol: str, physics_name: str) -> str:
    """``<protocol>@<physics>``."""
    return f"{protocol}@{physics_name}"


def parse_verdicts(text: str | list[str] | None, protocols: list[str], study_physics: str) -> list[dict]:
    """The study's verdict pairs: ``[{name, protocol, physics, main}]``, the main ones first (each of
    ``protocols`` judged on a lift, under ``study_physics``), then each extra of ``text`` (comma-separated
    or a list; a name without ``@`` is under ``study_physics``) once, in order.

    Raises:
        UsageError: an unknown protocol (or one not judged on a lift: ``recorded``) or physics.
    """
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text or []) if t.strip()]
    main = [pair_name(p, study_physics) for p in protocols if p in VERDICT_PROTOCOLS]
    out = {n: {"name": n, "protocol": n.split("@")[0], "physics": study_physics, "main": True} for n in main}
    for t in items:
        proto, _, phys = t.partition("@")
        phys = phys or study_physics
        if proto not in VERDICT_PROTOCOLS:
            raise UsageError(
                "--verdicts",
                f"{t!r}: the protocol must be one judged on a lift ({', '.join(VERDICT_PROTOCOLS)})"
                f"; {did_you_mean(proto, VERDICT_PROTOCOLS)}e.g. hug-oracle@authored",
            )
        if phys not in physics.NAMES:
            raise UsageError(
                "--verdicts",
                f"{t!r}: unknown physics {phys!r}; {did_you_mean(phys, physics.NAMES)}"
                f"choose from {', '.join(physics.NAMES)}",
            )
        n = pair_name(proto, phys)
        out.setdefault(n, {"name": n, "protocol": proto, "physics": phys, "main": False})
    return list(out.values())


def extras(verdicts: list[dict] | None) -> list[dict]:
    """The extra pairs of ``verdicts`` (those that are not the study's own rollouts)."""
    return [v for v in verdicts or [] if not v.get("main")]


def verdict_config(cfg: ReplayConfig, physics_name: str) -> ReplayConfig:
    """The study's config ``cfg`` under the named physics ``physics_name`` (:func:`replay.sim.physics.apply_physics`,
    the user's ``--physics-set`` departures kept), as ``run_study.py --physics NAME`` with the study's other
    flags makes it: the same config, so the same ``config_hash``. Leaving ``authored``, the hug-oracle's
    contact mixing (which only ``authored`` sets) returns to the default. ``cfg`` itself where it is of that
    physics already.

    Raises:
        DataError: the physics ``calibrated`` without its results file.
    """
    if physics_name == cfg.physics:
        return cfg
    if cfg.physics == "authored":
        cfg = dataclasses.replace(cfg, oracle_contact=ReplayConfig().oracle_contact)
    return physics.apply_physics(cfg, physics_name)


def with_hashes(verdicts: list[dict], cfg: ReplayConfig) -> tuple[list[dict], dict[str, ReplayConfig]]:
    """``verdicts`` each with its ``config_hash``, and ``{name: config}`` of the extra pairs."""
    cfgs = {v["name"]: verdict_config(cfg, v["physics"]) for v in extras(verdicts)}
    return [dict(v, config_hash=config_hash(cfgs.get(v["name"], cfg))) for v in verdicts], cfgs


def study_verdicts(
    text, protocols: list[str], cfg: ReplayConfig, prior: dict | None, chash: str
) -> tuple[list[dict] | None, dict[str, tuple[dict, str]]]:
    """(the study's pairs with their hashes, ``{extra pair: (job config dict, config hash)}``): those of
    ``text`` (:func:`parse_verdicts`; None: not asked, ``(None, {})``) with the extras of the study at
    ``--out`` that an ``--objects`` subset merges into (``prior``, of this config ``chash``: :func:`merged`).

    Raises:
        UsageError: a pair of an unknown protocol or physics (:func:`parse_verdicts`).
    """
    if text is None and not (prior and prior.get("config_hash") == chash and extras(prior.get("verdicts"))):
        return None, {}
    pairs = parse_verdicts(text, protocols, cfg.physics)
    pairs, cfgs = with_hashes(merged(prior, pairs, chash), cfg)
    return pairs, {n: (job_config(c), config_hash(c)) for n, c in cfgs.items()}


def record_verdicts(
    rec,
    verdicts: list[dict] | None,
    prior: dict | None,
    results: dict,
    seqs: list[str],
    failed: dict,
    wall_s: float,
    rdir: Path,
    out_dir: Path,
) -> None:
    """Put the pairs into the study record ``rec`` (its ``verdicts``, ``verdict_rollouts``, ``counts[name]``
    and the rows' ``lifted_<name>``: :func:`verdict_part`), in place. ``prior``: under ``--ablation-only``, the
    study as it was, whose extra verdicts the rerun keeps as they are."""
    if verdicts is not None:
        rec.verdicts = verdicts
        rec.verdict_rollouts = verdict_part(
            results, seqs, verdicts, rec.rollouts, rec.counts, failed, wall_s, rdir, out_dir
        )
    elif prior and prior.get("verdicts"):
        rec.verdicts, rec.verdict_rollouts = prior.get("verdicts"), prior.get("verdict_rollouts")
        rec.counts.update({v["name"]: (prior.get("counts") or {}).get(v["name"]) for v in extras(rec.verdicts)})
        lifted = {
            v["name"]: {
                r.get("sequence"): r.get("lifted") for r in (prior.get("verdict_rollouts") or {}).get(v["name"]) or []
            }
            for v in extras(rec.verdicts)
        }
        for row in rec.rollouts:
            row.update({f"lifted_{n}": by.get(row.get("sequence")) for n, by in lifted.items()})


def merged(prior: dict | None, verdicts: list[dict], chash: str) -> list[dict]:
    """``verdicts`` with the extra pairs of the study at ``--out`` (``prior``, of this config ``chash``) it
    does not name: an ``--objects`` subset merged into a study keeps the study's pairs."""
    if not prior or prior.get("config_hash") != chash:
        return verdicts
    names = {v["name"] for v in verdicts}
    kept = [v for v in extras(prior.get("verdicts")) if isinstance(v, dict) and v.get("name") not in names]
    return verdicts + kept


def verdict_part(
    results: dict,
    seqs: list[str],
    verdicts: list[dict],
    rows: list[dict],
    counts: dict,
    failed: dict,
    wall_s: float,
    rdir: Path,
    out_dir: Path,
) -> dict:
    """The study's ``verdict_rollouts`` (``{name: rows}`` of each extra pair, in ``seqs`` order), each extra's
    counts put into ``counts[name]``, and each lift row (``rows``, the lift protocol's) given a
    ``lifted_<name>`` per other pair (study.csv's columns), in place; ``wall_s`` in s."""
    out: dict[str, list[dict]] = {}
    lifted: dict[str, dict[str, bool]] = {}
    for v in verdicts:
        name, proto = v["name"], v["protocol"]
        key = (lambda s: result_key(s, proto)) if v.get("main") else (lambda s: result_key(s, name))
        docs = [results[k] for s in seqs if (k := key(s)) in results]
        lifted[name] = {d["sequence"]: bool(d.get("lifted")) for d in docs}
        if v.get("main"):
            continue
        out[name] = [
            study_row(
                RolloutRecord.from_dict(d, nested=True),
                os.path.relpath(rdir / f"{result_stem(d['sequence'], name)}.json", out_dir),
            )
            for d in docs
        ]
        mine = {k: why for k, why in failed.items() if k.endswith(f" [{name}]")}
        counts[name] = COUNTERS[proto](docs, mine, wall_s)
    own = next((v["name"] for v in verdicts if v.get("main") and v["protocol"] == "lift"), None)
    for row in rows:
        for name, by_seq in lifted.items():
            if name != own:
                row[f"lifted_{name}"] = by_seq.get(row.get("sequence"))
    return out


def verdict_count_lines(study: dict) -> list[str]:
    """One console line per pair of the study (``verdicts``): lifted of the lifts, then the other groups
    apart, and the contact ablation; ``[]`` for a study without ``--verdicts``."""
    c = study.get("counts") or {}
    lines = []
    for v in study.get("verdicts") or []:
        pc = c.get(v["protocol"] if v.get("main") else v["name"]) or {}
        groups = intent_groups(pc.get("by_intent") or {})
        lead = groups.get(LIFTS)
        parts = [f"lifted {lead['lifted']}/{lead['rollouts']} lifts"] if lead else []
        parts += [f"{group_words(g, n['rollouts'])}: lifted {n['lifted']}" for g, n in groups.items() if g != LIFTS]
        head = "; ".join(parts) or "no recording"
        clean = f"; contact ablation clean {pc.get('ablation_clean', 0)}/{pc.get('ablation_run', 0)}"
        own = " (the study's own)" if v.get("main") else ""
        lines.append(f"verdict {v['name']}{own}: {head}{clean}")
    return lines

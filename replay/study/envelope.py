"""The verdict envelope (``run_study.py --envelope``, issue #39): every recording replayed under a
small declared set of defensible physics settings, and whether its verdict survives them.

:data:`ENVELOPE` is the one table of those settings: each a name, the physics overrides it makes
(:mod:`replay.sim.physics` choices, as a function of the choices in effect for the study, so that
"flipped" always means the other value than the study's own) and why it is defensible. The
``default`` setting is the study's own physics (its rollout is the study's contact run). Per
recording :func:`verdict_envelope` gives ``{settings, lifted, outcomes, overrides, fraction,
flips, class}``: ``class`` is ``robust_lift`` (lifted under every setting), ``robust_failure``
(under none) or ``fragile`` (some); :func:`envelope_counts` is the study's headline.

Imports no physics engine (the study's process reads it); the settings are run by
:mod:`replay.study.envelope_job` in the worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.protocol import oracle_plan
from replay.sim import physics

#: protocols the envelope runs with (the lift verdict: ``lifted``; ``recorded`` has no lift verdict)
ENVELOPE_PROTOCOLS = ("lift", oracle_plan.ORACLE)

#: the wrist target offset of the six offset settings, mm along each world axis
OFFSET_MM = 2.0

#: verdict classes (headline order)
CLASSES = ("robust_lift", "fragile", "robust_failure")


@dataclass(frozen=True)
class Setting:
    """One envelope setting: ``name``, ``overrides(cur)`` the physics overrides it makes given ``cur``
    ({choice: value in effect for the study}, :func:`choices_in_effect`), and ``why``."""

    name: str
    overrides: Callable[[dict], dict]
    why: str


def _flip_cone(cur: dict) -> dict:
    elliptic10 = cur["cone"] == "elliptic" and float(cur["impratio"]) == 10.0
    return {"cone": "pyramidal", "impratio": 1.0} if elliptic10 else {"cone": "elliptic", "impratio": 10.0}


def _offset(axis: int, sign: float) -> Callable[[dict], dict]:
    def over(cur: dict) -> dict:
        v = [float(x) for x in cur["wrist_target_offset_mm"]]
        v[axis] += sign * OFFSET_MM
        return {"wrist_target_offset_mm": tuple(v)}
    return over


_OFFSET_WHY = ("the recorded wrist is known to about 2 mm (landmark IK median 1.9 mm on the GRAB lifts, README); "
               "a verdict that a 2 mm shift of every wrist target flips is not the recording's")

#: the envelope's settings, in order (``default`` first)
ENVELOPE = (
    Setting("default", lambda cur: {}, "the study's own physics"),
    Setting("gravity_compensation", lambda cur: {"wrist_gravity_compensation": not cur["wrist_gravity_compensation"]},
            "the MJCF's wrist has no gravity compensation, the replay's wrench adds +M g: neither is stated by "
            "the recordings (issue #39: 8 -> 1 of 30 hug-oracle lifts)"),
    Setting("cone_impratio", _flip_cone, "pyramidal / impratio 1 is MuJoCo's default (the MJCF sets none), "
            "elliptic / 10 the modeling guide's advice for grasping: the other one than the study's"),
    Setting("contact_mixing", lambda cur: {"contact_mixing": "hand" if cur["contact_mixing"] == "mujoco" else "mujoco"},
            "MuJoCo's own solref/solimp mixing vs the hand's values forced on the pair (manosim's oracle): the "
            "other one than the study's"),
    Setting("hand_shape", lambda cur: {"hand_shape": "myhand" if cur["hand_shape"] == "zerohand" else "zerohand"},
            "both manosim shapes are authored files; the hand coordinates are refitted (landmark IK) on the other"),
    *(Setting(f"wrist_{ax}{'+' if s > 0 else '-'}{OFFSET_MM:g}mm", _offset(i, s), _OFFSET_WHY)
      for i, ax in enumerate("xyz") for s in (1.0, -1.0)),
)

#: the settings' names, in order
SETTING_NAMES = tuple(s.name for s in ENVELOPE)


def choices_in_effect(cfg: ReplayConfig, protocol: str) -> dict:
    """{choice: value} of every physics choice as a rollout of ``protocol`` under ``cfg`` runs it
    (the hug-oracle protocol's own contact, :func:`replay.protocol.oracle_plan.oracle_config`,
    included); ``cfg.hand_variant`` must be resolved (the study's :func:`replay.config.resolve_hand_variant`)."""
    eff = oracle_plan.oracle_config(cfg) if protocol == oracle_plan.ORACLE else cfg
    return {r["name"]: r["value"] for r in physics.physics_record(eff)}


def envelope_settings(cfg: ReplayConfig, protocol: str) -> list[tuple[str, dict]]:
    """``[(name, overrides)]`` of every :data:`ENVELOPE` setting for a study of ``cfg`` under
    ``protocol`` (``default``: ``{}``)."""
    cur = choices_in_effect(cfg, protocol)
    return [(s.name, s.overrides(cur)) for s in ENVELOPE]


def setting_config(cfg: ReplayConfig, overrides: dict, protocol: str = "lift") -> ReplayConfig:
    """``cfg`` under one setting's physics ``overrides`` (merged over ``cfg.physics_overrides``,
    :func:`replay.sim.physics.apply_physics`); ``cfg`` itself for ``{}``. Every other choice stays
    as it is in effect for ``cfg`` under ``protocol`` (a config field set apart from its physics is
    carried as an override), which is checked.

    Raises:
        DataError: an override this physics cannot take, or a choice that would not stay."""
    if not overrides:
        return cfg
    cur = choices_in_effect(cfg, protocol)
    want = {**cur, **{k: _plain(v) for k, v in overrides.items()}}
    new = physics.apply_physics(cfg, None, overrides)
    drift = {k: cur[k] for k, v in choices_in_effect(new, protocol).items() if k not in overrides and v != cur[k]}
    if drift:  # a field apart from the physics that apply_physics would reset: kept as it was
        new = physics.apply_physics(cfg, None, {**drift, **overrides})
    got = choices_in_effect(new, protocol)
    if got != want:
        bad = sorted(k for k in want if got.get(k) != want[k])
        raise DataError(None, "config.physics_overrides", f"the setting {overrides} leaves {bad} not as wanted")
    return new


def _plain(v):
    return list(v) if isinstance(v, tuple) else v


def check_settings(cfg: ReplayConfig, protocol: str) -> None:
    """Raises DataError (one line, naming the setting) when a setting's config is invalid or its
    engine cannot run it (:func:`replay.sim.physics.refuse_unsupported`): said before a study runs."""
    for name, over in envelope_settings(cfg, protocol):
        try:
            c = setting_config(cfg, over, protocol)
            physics.refuse_unsupported(oracle_plan.oracle_config(c) if protocol == oracle_plan.ORACLE else c)
        except DataError as e:
            raise DataError(None, f"--envelope setting {name}", str(e)) from None


def verdict_envelope(names: list[str], outcomes: list[str], lifted: list[bool], overrides: list[dict]) -> dict:
    """One recording's envelope: ``{settings, lifted, outcomes, overrides, fraction, flips, class}``;
    ``names[0]`` is the default setting; ``fraction`` = lifted settings / settings; ``flips``: the
    settings whose verdict differs from the default's; ``class`` one of :data:`CLASSES`."""
    lifted = [bool(x) for x in lifted]
    n = sum(lifted)
    cls = CLASSES[0] if n == len(lifted) else CLASSES[2] if n == 0 else CLASSES[1]
    return {"settings": list(names), "lifted": lifted, "outcomes": list(outcomes),
            "overrides": [{k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()} for o in overrides],
            "fraction": n / len(lifted), "flips": [s for s, x in zip(names, lifted) if x != lifted[0]], "class": cls}


def envelope_counts(rollouts: list[dict]) -> dict | None:
    """The headline of rollouts with a ``verdict_envelope``: ``{recordings, robust_lift, fragile,
    robust_failure, settings, lifted_by_setting, flips_by_setting, rollouts}`` (``rollouts``: the
    settings' replays other than the default, which is the study's contact run), or None if none."""
    env = [r["verdict_envelope"] for r in rollouts if r.get("verdict_envelope")]
    if not env:
        return None
    names = env[0]["settings"]
    out = {"recordings": len(env), **{c: sum(e["class"] == c for e in env) for c in CLASSES}, "settings": names,
           "rollouts": sum(len(e["settings"]) - 1 for e in env)}
    same = [e for e in env if e["settings"] == names]
    out["lifted_by_setting"] = {s: sum(e["lifted"][i] for e in same) for i, s in enumerate(names)}
    out["flips_by_setting"] = {s: sum(s in e["flips"] for e in same) for s in names[1:]}
    return out


def envelope_lines(study: dict) -> list[str]:
    """The console's headline of a study's envelopes (lift and hug-oracle): robust lifts, fragile,
    robust failures, and per setting how many recordings it flips; [] without an envelope."""
    c = study.get("counts") or {}
    out = []
    lift_env = c.get("envelope") if c.get("protocol", "lift") == "lift" else None  # the top level is the first protocol's
    for label, env in (("lift", lift_env), (oracle_plan.ORACLE, (c.get(oracle_plan.ORACLE) or {}).get("envelope"))):
        if not env:
            continue
        flips = ", ".join(f"{s} {n}" for s, n in (env.get("flips_by_setting") or {}).items() if n)
        out.append(f"envelope ({label}, {len(env['settings'])} settings, {env['recordings']} recordings): robust lift "
                   f"{env['robust_lift']}, fragile {env['fragile']}, robust failure {env['robust_failure']}; "
                   f"verdict flipped by: {flips or 'none'}")
    return out

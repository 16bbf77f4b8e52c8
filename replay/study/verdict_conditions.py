"""The sampled verdict's conditions: assumptions reported side by side (``p_lift`` per condition), never mixed into
the sampled uncertainty (docs/verdict.md); each a registered :class:`Condition`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.protocol.protocols.base import protocol_named
from replay.results.judge import DEFAULT_JUDGE
from replay.sim import physics

#: config fields a condition may set besides the physics choices (the collision proxy)
CONFIG_KEYS = ("hand",)


@dataclass(frozen=True)
class Condition:
    """One condition: ``overrides(cur)`` ({physics choice or :data:`CONFIG_KEYS` field: value} given the choices in
    effect) and ``why`` (its source)."""

    name: str
    overrides: Callable[[dict], dict]
    why: str

    def apply(self, cfg: ReplayConfig, protocol: str = "lift") -> ReplayConfig:
        """``cfg`` under this condition: its overrides set, every other choice in effect under ``protocol`` kept. Raises
        DataError: an override this physics cannot take, or a choice that would not stay."""
        over = self.overrides_for(cfg, protocol)
        fields = {k: over.pop(k) for k in CONFIG_KEYS if k in over}
        if not over and not fields:
            return cfg
        cur = choices_in_effect(cfg, protocol)
        new = cfg
        if over:
            new = physics.apply_physics(cfg, None, over)
            drift = {
                k: cur[k]
                for k, v in choices_in_effect(new, protocol).items()
                if k not in over and k != "hand" and v != cur[k]
            }
            if drift:  # a field apart from the physics that apply_physics would reset: kept as it was
                new = physics.apply_physics(cfg, None, {**drift, **over})
        new = dataclasses.replace(new, **fields).validate() if fields else new
        want = {**cur, **over, **fields}
        got = choices_in_effect(new, protocol)
        bad = sorted(k for k in want if got.get(k) != want[k])
        if bad:
            raise DataError(None, f"--conditions {self.name}", f"leaves {bad} not as wanted")
        return new

    def overrides_for(self, cfg: ReplayConfig, protocol: str) -> dict:
        """Its overrides for a study of ``cfg`` under ``protocol`` (tuples as lists)."""
        over = self.overrides(choices_in_effect(cfg, protocol))
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in over.items()}


_REGISTRY: dict[str, Condition] = {}


def register(c: Condition) -> Condition:
    """Add condition ``c`` (returned). Raises ValueError: a name registered already."""
    if c.name in _REGISTRY:
        raise ValueError(f"condition {c.name!r} is registered already")
    _REGISTRY[c.name] = c
    return c


def condition_named(name: str) -> Condition:
    """The registered condition ``name``. Raises KeyError."""
    return _REGISTRY[name]


def condition_names() -> tuple[str, ...]:
    """Every registered condition's name, in registration order."""
    return tuple(_REGISTRY)


_GRAV = (
    "the recordings do not say whether the arm carried the hand: manosim's MJCF has no gravity compensation "
    "(the hand hangs M g / kp below its target: 0.400 kg x 9.81 / 300 = 13 mm), the replay's wrench adds +M g "
    "(what it moves: docs/physics.md)"
)

#: the study's own physics (the first condition)
AS_REPLAYED = register(
    Condition("as_replayed", lambda cur: {}, "the study's own physics (its named physics and overrides)")
)
WRIST_UNCOMPENSATED = register(
    Condition("wrist_uncompensated", lambda cur: {"wrist_gravity_compensation": False}, _GRAV)
)
WRIST_COMPENSATED = register(Condition("wrist_compensated", lambda cur: {"wrist_gravity_compensation": True}, _GRAV))
register(
    Condition(
        "mesh_hand",
        lambda cur: {"hand": "mesh"},
        "manosim ships a capsule hand and a mesh hand (assets/<shape>/mano_<side>/mesh_hand.xml, same bodies and "
        "joints); its README names the capsule hand the one meant for contact: which proxy stands for the skin "
        "is a modelling assumption",
    )
)
register(
    Condition("capsule_hand", lambda cur: {"hand": "capsule"}, "manosim's capsule hand (the README's contact hand)")
)
register(
    Condition(
        "other_hand_shape",
        lambda cur: {"hand_shape": "myhand" if cur["hand_shape"] == "zerohand" else "zerohand"},
        "manosim's other authored shape (myhand = HUG's, zerohand = zero betas), the hand refitted by landmark IK "
        "on it (its fit on GRAB is worse: docs/results/grab-hand-shapes.json)",
    )
)


def choices_in_effect(cfg: ReplayConfig, protocol: str) -> dict:
    """{choice: value} of every physics choice as a rollout of ``protocol`` under ``cfg`` runs it, plus ``hand``."""
    eff = protocol_named(protocol).config(cfg)
    return {**{r["name"]: r["value"] for r in physics.physics_record(eff)}, "hand": cfg.hand}


def default_conditions(cfg: ReplayConfig, protocol: str = "lift") -> list[str]:
    """The default ``--conditions``: the default judge's (``as_replayed`` where it is the study's own), then
    ``as_replayed``, else the study's other wrist gravity assumption."""
    cur = choices_in_effect(cfg, protocol)
    comp = bool(cur["wrist_gravity_compensation"])
    judge = condition_named(DEFAULT_JUDGE.condition)
    same = all(cur.get(k) == v for k, v in judge.overrides(cur).items())  # the judge's condition is the study's own
    names = [
        AS_REPLAYED.name if same else judge.name,
        AS_REPLAYED.name,
        (WRIST_UNCOMPENSATED if comp else WRIST_COMPENSATED).name,
    ]
    return list(dict.fromkeys(names))[:2]


def parse_conditions(text: str | None, cfg: ReplayConfig, protocol: str = "lift") -> list[str]:
    """``--conditions a,b`` as names (None or empty: :func:`default_conditions`). Raises DataError: an unknown name (the
    known ones listed)."""
    if not text:
        return default_conditions(cfg, protocol)
    names = list(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    bad = [n for n in names if n not in _REGISTRY]
    if bad or not names:
        raise DataError(None, "--conditions", f"unknown condition(s) {bad}; choose from {', '.join(_REGISTRY)}")
    return names


def condition_config(cfg: ReplayConfig, name: str, protocol: str = "lift") -> ReplayConfig:
    """``cfg`` under condition ``name`` (:meth:`Condition.apply`)."""
    return _REGISTRY[name].apply(cfg, protocol)


def check_conditions(cfg: ReplayConfig, names: list[str], protocol: str) -> None:
    """Raises DataError naming the condition whose config is invalid or whose engine cannot run it."""
    for name in names:
        try:
            c = condition_config(cfg, name, protocol)
            physics.refuse_unsupported(protocol_named(protocol).config(c))
        except DataError as e:
            raise DataError(None, f"--conditions {name}", str(e)) from None


def conditions_record(cfg: ReplayConfig, names: list[str], protocol: str = "lift") -> list[dict]:
    """``[{name, overrides, why}]`` of the study's conditions (the study's ``sampling.conditions``)."""
    return [{"name": n, "overrides": _REGISTRY[n].overrides_for(cfg, protocol), "why": _REGISTRY[n].why} for n in names]

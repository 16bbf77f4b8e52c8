"""Which engine steps a rollout (``config.engine``) and where Warp runs it (``config.device``): command line over config
file over the default (MuJoCo C, CPU)."""

from __future__ import annotations

import enum

from replay.errors import DataError

#: ``config.device``: the Warp device of mujoco-warp, the Newton reference and Steel (MuJoCo C: cpu)
DEVICES = ("cpu", "cuda")


class EngineChoice(str, enum.Enum):
    """The engine (``Capabilities.name`` in results: direct, warp, newton, steel)."""

    MUJOCO_C = "mujoco-c"  #: the compiled MuJoCo model stepped directly in MuJoCo C (replay.sim.engine.mujoco_c)
    MUJOCO_WARP = "mujoco-warp"  #: every variant of a recording in one mujoco-warp launch (replay.sim.engine.mjwarp)
    NEWTON = "newton"  #: every step through SolverMuJoCo.step, one world (the reference, 10-60x slower)
    STEEL = "steel"  #: newton.solvers.SolverSteel, one world (replay.sim.engine.steel)

    def mujoco_cpu(self, device: str) -> bool:
        """True when this engine's ``SolverMuJoCo`` runs MuJoCo's C backend (``use_mujoco_cpu``) on ``device``."""
        return device == "cpu" and self in (EngineChoice.MUJOCO_C, EngineChoice.NEWTON)


def from_legacy(solver_backend: str, engine: str, device: str) -> tuple[EngineChoice, str]:
    """``(engine, device)`` of the older ``solver_backend``, ``engine``, ``device``; DataError for a combination no
    engine ran (the Newton reference on Warp's CPU) or an unknown value."""
    if solver_backend not in ("mujoco", "steel") or engine not in ("direct", "newton"):
        raise DataError(None, "config.engine", f"unknown engine {solver_backend!r} / {engine!r}")
    if device not in ("cpu", "cuda", "warp-cpu"):
        raise DataError(None, "config.device", f"{device!r} not in ('cpu', 'cuda', 'warp-cpu')")
    warp_device = "cuda" if device == "cuda" else "cpu"
    if solver_backend == "steel":
        return EngineChoice.STEEL, warp_device
    if engine == "newton":
        if device == "warp-cpu":
            raise DataError(None, "config.device", "the Newton reference on warp-cpu: use device cpu or cuda")
        return EngineChoice.NEWTON, device
    return (EngineChoice.MUJOCO_C, "cpu") if device == "cpu" else (EngineChoice.MUJOCO_WARP, warp_device)


def to_legacy(engine: EngineChoice, device: str) -> tuple[str, str, str]:
    """The three older fields that :func:`from_legacy` reads back as ``(engine, device)``."""
    if engine is EngineChoice.STEEL:
        return "steel", "direct", device
    if engine is EngineChoice.NEWTON:
        return "mujoco", "newton", device
    if engine is EngineChoice.MUJOCO_WARP:
        return "mujoco", "direct", "cuda" if device == "cuda" else "warp-cpu"
    return "mujoco", "direct", device


def engine_from_flags(
    engine: EngineChoice, device: str, *, solver: str | None = None, cli_device: str | None = None
) -> tuple[EngineChoice, str]:
    """The config's ``(engine, device)`` after ``--solver`` (mujoco, steel) and ``--device`` (cpu, cuda), None: not
    given; ``--device cuda`` moves MuJoCo C onto mujoco-warp, ``--solver mujoco`` turns Steel into MuJoCo C."""
    backend, mode, dev = to_legacy(engine, device)
    return from_legacy(solver or backend, mode, cli_device or dev)

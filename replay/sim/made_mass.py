"""An object's mass as it was made: the physics choice ``object_mass_model`` for one asset (docs/physics.md,
docs/sources.md). Units: kg, m^3, m^2, kg/m^3."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from replay.checks.geometry import collision_parts
from replay.checks.object_mass import part_overlap
from replay.data.asset_memo import memo
from replay.data.objects import asset_mass, asset_meshes
from replay.errors import DataError
from replay.sim import physics


@dataclass(frozen=True)
class MadeMass:
    """One object's mass distribution, uniform on ``[low_kg, high_kg]`` kg; ``centre_kg`` the single run's mass, kg.

    Attributes:
        model: ``"printed"``, ``"stated"`` or ``"asset"``. sets_mass: the scene's mass is set to ``centre_kg`` (False:
            the asset's as built). volume_m3, area_m2, mesh: a print's geometry and its mesh."""

    model: str
    centre_kg: float
    low_kg: float
    high_kg: float
    sets_mass: bool
    volume_m3: float | None = None
    area_m2: float | None = None
    mesh: str | None = None

    def scale_range(self) -> tuple[float, float]:
        """``(low, high)`` of the mass relative to ``centre_kg``."""
        return self.low_kg / self.centre_kg, self.high_kg / self.centre_kg

    def record(self) -> dict:
        return asdict(self)


def print_geometry(asset) -> dict:
    """``{volume_m3, area_m2, mesh}`` of a printed object's mesh, kept per file content. Raises DataError: a mesh
    missing or unreadable, or a volume or area not > 0 (names the file)."""

    def measure() -> dict:
        visual, parts = asset_meshes(asset)
        if visual.is_watertight:
            out = {"volume_m3": float(abs(visual.volume)), "area_m2": float(visual.area), "mesh": "watertight visual"}
        else:
            union = part_overlap(parts, visual, collision_parts(asset))["union_m3"]
            out = {"volume_m3": float(union), "area_m2": float(visual.area), "mesh": "collision parts' union"}
        if not (out["volume_m3"] > 0 and out["area_m2"] > 0):
            raise DataError(asset.visual_mesh, "visual_mesh", f"a print needs a volume and an area > 0, got {out}")
        return out

    return memo(
        "print_geometry",
        [asset.visual_mesh, *asset.collision_meshes],
        {},
        compute=measure,
        code=(__name__, "replay.checks.object_mass", "replay.checks.geometry", "replay.data.objects"),
    )


def print_mass(volume_m3: float, area_m2: float, rho: float, *, infill: float, shell_m: float) -> float:
    """kg of a print: ``rho (S + infill (V - S))``, ``S = min(A t, V)``."""
    shell = min(area_m2 * shell_m, volume_m3)
    return float(rho * (shell + infill * (volume_m3 - shell)))


def made_mass(asset, cfg) -> MadeMass:
    """The mass distribution of ``asset`` under ``cfg``'s physics. Raises DataError: a mesh missing or unreadable, a
    print parameter out of range (names the choice)."""
    model = physics.choice_value(cfg, "object_mass_model")
    if model == "as_made" and asset.mass is not None:
        m = float(asset.mass)
        return MadeMass("stated", m, m, m, True)
    if model == "as_made" and asset.made == "printed":
        p = physics.choice_value(cfg, "object_print")
        (r0, r1), (f0, f1), (t0, t1) = (p["material_density_kg_m3"], p["infill"], p["shell_mm"])
        if not (0 < r0 <= r1 and 0 <= f0 <= f1 <= 1 and 0 < t0 <= t1):
            raise DataError(None, "physics.object_print", f"ranges must be increasing and physical, got {p!r}")
        g = print_geometry(asset)
        lo = print_mass(g["volume_m3"], g["area_m2"], r0, infill=f0, shell_m=t0 / 1000.0)
        hi = print_mass(g["volume_m3"], g["area_m2"], r1, infill=f1, shell_m=t1 / 1000.0)
        return MadeMass("printed", 0.5 * (lo + hi), lo, hi, True, g["volume_m3"], g["area_m2"], g["mesh"])
    s0, s1 = physics.choice_value(cfg, "object_mass_unstated_spread")
    m = asset_mass(asset)
    return MadeMass("asset", m, m * float(s0), m * float(s1), False)

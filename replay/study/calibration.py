"""``--physics calibrated``'s candidates (:data:`CENTRES` x :data:`CONDITIONS` on :data:`OWN_WORLD`) and figure,
ties to the first declared; :data:`ATTRIBUTIONS` revert issue #54's items one at a time (docs/physics.md)."""

from __future__ import annotations

import dataclasses
import itertools
import statistics
from dataclasses import dataclass

from replay.errors import DataError
from replay.results.study_rows import study_rows
from replay.results.verdict_record import discriminations, p_lift_entries
from replay.study.verdict_conditions import AS_REPLAYED, WRIST_UNCOMPENSATED

#: the decision: a recording is decided "real" (lifted) when its p_lift is at least this
DECISION_THRESHOLD = 0.5

#: contact softness candidates: the levels of the physics choice hand_object_softness fixed to one
SOFTNESS_CENTRES = (
    ("mujoco_default", "MuJoCo XML reference, geom solref/solimp defaults (0.02 1 / 0.9 0.95 0.001)"),
    ("manosim_soft", "manosim README: the soft set HUG chose by replaying human grasps (0.04 1 / 0.5 0.95 0.001)"),
)
#: sliding friction centres (the declared uniform's width kept)
FRICTION_CENTRES = (
    (0.65, "the middle of the declared range [0.3, 1.0] (Derler & Gerhardt 2012, finger pad on common materials)"),
    (1.0, "MuJoCo's default sliding friction and GRAB object_sim's object_col as authored (friction 1 0.5 0.01)"),
)
#: the centre candidates {variable: centre}, in declared order; the first, {}: as declared
CENTRES = ({},) + tuple(
    {"softness": s, "friction": f} for (s, _), (f, _) in itertools.product(SOFTNESS_CENTRES, FRICTION_CENTRES)
)
#: the condition candidates (replay.study.verdict_conditions): both wrist gravity assumptions of the replay physics
CONDITIONS = (AS_REPLAYED.name, WRIST_UNCOMPENSATED.name)
#: what the figure is, as the results file says it
FIGURE = (
    "balanced accuracy of real vs corrupted recordings, p_lift >= 0.5 deciding 'real': (TPR + TNR) / 2, TPR "
    "over the real recordings, TNR over the (recording, corruption) pairs"
)


#: what every candidate replays with (issue #54): the subject's fitted hand
OWN_WORLD = {"hand_shape": "fitted"}


@dataclass(frozen=True)
class Attribution:
    """One of issue #54's items reverted on the chosen candidate by the physics ``overrides``."""

    name: str
    reverts: str
    overrides: dict


_OLD_EFFORT = {"lift": 0.4, "hug-oracle": None}
#: the attribution rows, in the order they run: items 2 and 3 reverted alone, then item 1, then all together
ATTRIBUTIONS = (
    Attribution(
        "mass", "item 2: object_sim's solid 1250 kg/m^3 (+-20 %), not weighed as made", {"object_mass_model": "asset"}
    ),
    Attribution(
        "strength", "item 3: 0.4 N·m at every finger joint, not people's", {"finger_effort_limit": _OLD_EFFORT}
    ),
    Attribution("grip", "item 3: no pad compression (the recorded fingers)", {"pad_compression": 0.0}),
    Attribution("hand", "item 1: manosim zerohand, not the subject's fitted hand", {"hand_shape": "zerohand"}),
)
ATTRIBUTIONS = ATTRIBUTIONS + (
    Attribution(
        "all",
        "items 1-3 together: the physics before issue #54",
        {k: v for a in ATTRIBUTIONS for k, v in a.overrides.items()},
    ),
)


def centres_name(centres: dict) -> str:
    """A candidate's name: ``softness=manosim_soft,friction=1``; ``as declared`` for {}."""
    if not centres:
        return "as declared"
    return ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in centres.items())


def balanced_accuracy(rows: list[dict], condition: str, threshold: float = DECISION_THRESHOLD) -> dict | None:
    """:data:`FIGURE` of ``condition`` over the study's ``rows``: ``{balanced_accuracy, tpr, tnr, n_real,
    n_corrupted}``; None where no row has the condition both real and corrupted."""
    real, bad = [], []
    for r in study_rows(rows):
        pl, pc = r.p_lift, [p_lift_entries(v) for v in (r.p_lift_corrupted or {}).values()]
        if condition not in pl or not any(condition in v for v in pc):
            continue
        real.append(pl[condition].p >= threshold)
        bad += [v[condition].p < threshold for v in pc if condition in v]
    if not real or not bad:
        return None
    tpr, tnr = sum(real) / len(real), sum(bad) / len(bad)
    return {
        "balanced_accuracy": (tpr + tnr) / 2.0,
        "tpr": tpr,
        "tnr": tnr,
        "n_real": len(real),
        "n_corrupted": len(bad),
    }


def candidate_figures(rows: list[dict], discrimination: list | None, condition: str) -> dict | None:
    """:func:`balanced_accuracy` with ``median_p_real`` (the real recordings' median p_lift) and ``auc``
    ({corruption: AUC} under ``condition``); None as :func:`balanced_accuracy`."""
    fig = balanced_accuracy(rows, condition)
    if fig is None:
        return None
    real = [r.p_lift[condition].p for r in study_rows(rows) if condition in r.p_lift]
    fig["median_p_real"] = statistics.median(real)
    fig["auc"] = {d.corruption: d.auc for d in discriminations(discrimination) if d.condition == condition}
    return fig


def choose(figures: list[dict]) -> dict:
    """The candidate with the highest ``balanced_accuracy`` (ties: the first). Raises ValueError: none has a figure."""
    have = [f for f in figures if f.get("balanced_accuracy") is not None]
    if not have:
        raise ValueError("no candidate has a figure: the studies have no p_lift of the real and corrupted recordings")
    return max(have, key=lambda f: (f["balanced_accuracy"], -figures.index(f)))


def centred(variables: tuple, centres: dict) -> tuple:
    """``variables`` with each one named in ``centres`` moved there: a ``uniform`` shifted (width kept), a ``choice``
    fixed to that level; its ``distribution`` says so. Raises ValueError: a centre for an undeclared variable, a level
    not among its levels, or a data variable."""
    names = {v.name for v in variables}
    unknown = sorted(set(centres) - names)
    if unknown:
        raise ValueError(f"calibration centres for undeclared variables {unknown}; declared: {sorted(names)}")
    out = []
    for v in variables:
        if v.name not in centres:
            out.append(v)
            continue
        c = centres[v.name]
        if v.kind == "uniform":
            half = (float(v.high) - float(v.low)) / 2.0
            lo, hi = float(c) - half, float(c) + half
            out.append(
                dataclasses.replace(
                    v,
                    low=lo,
                    high=hi,
                    distribution=f"uniform on [{lo:g}, {hi:g}] (calibrated: "
                    f"centred at {float(c):g}, width kept; declared: {v.distribution})",
                )
            )
        elif v.kind == "choice":
            if c not in v.levels:
                raise ValueError(f"calibration centre {v.name}={c!r} is not one of its levels {v.levels}")
            out.append(
                dataclasses.replace(v, levels=(c,), distribution=f"{c} (calibrated; declared: {v.distribution})")
            )
        else:
            raise ValueError(f"{v.name} ({v.kind}) cannot be centred: it is each recording's own measured accuracy")
    return tuple(out)


def variables_for(cfg) -> tuple:
    """The sampled variables as ``cfg``'s physics samples them (centred under ``calibrated``). Raises DataError: the
    calibration's centres do not fit the declared variables."""
    from replay.sim import calibration_file, physics
    from replay.study.uncertainty import variables

    declared = variables(cfg)
    centres = physics.calibrated_centres(cfg)
    try:
        return centred(declared, centres) if centres else declared
    except ValueError as e:
        raise DataError(calibration_file.calibration_path(), "choice.centres", str(e)) from None

"""The study rollout an export is of, and a re-run recording its inputs under the study's config."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.config import ReplayConfig
from replay.errors import DataError, UsageError
from replay.protocol.protocols.base import ResultKey, protocol_named
from replay.protocol.protocols.hug_oracle import HugOracle
from replay.protocol.protocols.lift import Lift
from replay.protocol.protocols.refine import Refine
from replay.results.convert import ResultsFormatError
from replay.results.files import check_poses_version, read_rollout, read_study
from replay.study.verdicts import lead_protocol

#: ``--rollout`` values: the contact run, its contact ablation, a refine job's run and its ablation, the
#: hug-oracle protocol's run and its ablation
ROLLOUTS = ("contact", "ablation", "refine", "refine-ablation", "hug-oracle", "hug-oracle-ablation")

#: the protocol whose results file each kind of rollout is, and the protocol it ran (a refined run is a lift's)
_KIND = {
    "contact": (Lift.name, Lift.name),
    "refine": (Refine.name, Lift.name),
    "hug-oracle": (HugOracle.name, HugOracle.name),
}


@dataclass
class RolloutSource:
    """One study rollout: ``doc`` its record's fields by name (an ablation's with its parent's identity), ``poses``
    (body_pos (F, 17, 3) m, body_quat (F, 17, 4) xyzw, contact_force N, wrist_err m)."""

    study_path: Path
    study: dict
    doc: dict
    sequence: str
    rollout: str
    poses: dict
    config: ReplayConfig

    @property
    def dataset(self) -> str:
        return str(self.study["dataset"])

    @property
    def protocol(self) -> str:
        """The protocol the rollout ran (a refined run: the lift protocol)."""
        return _KIND[_kind(self.rollout)][1]

    def variant(self):
        from replay.sim.engine.variants import Variant

        v = dict(self.doc.get("variant") or {"ablation": self.rollout.endswith("ablation")})
        for k in ("wrist_offset", "wrist_rotvec", "finger_closure"):
            if k in v:
                v[k] = tuple(v[k])
        return Variant(**v)


def _pick_sequence(study: dict, sequence: str, path: Path) -> str:
    seqs = [str(s) for s in study.get("sequences") or [r["sequence"] for r in study["rollouts"]]]
    if sequence in seqs:
        return sequence
    close = difflib.get_close_matches(sequence, seqs, n=3, cutoff=0.5)
    hint = f" (did you mean {' or '.join(close)}?)" if close else f"; it holds {', '.join(seqs[:8])}"
    raise UsageError("--sequence", f"no sequence {sequence!r} in {path}{hint}")


def _kind(rollout: str) -> str:
    """``contact``, ``refine`` or ``hug-oracle``: the run a ``--rollout`` value is of (or its ablation)."""
    return "contact" if rollout in ("contact", "ablation") else rollout.removesuffix("-ablation")


def load_source(study_path: str | Path, sequence: str, rollout: str = "contact") -> RolloutSource:
    """UsageError: an unknown sequence or ``rollout``; DataError: a study or rollout missing, unreadable or of another
    format version."""
    if rollout not in ROLLOUTS:
        raise UsageError("--rollout", f"{rollout!r} is not one of {', '.join(ROLLOUTS)}")
    path = Path(study_path)
    study = read_study(path).to_dict()
    seq = _pick_sequence(study, sequence, path)
    lead = lead_protocol(study.get("protocols"))
    if _kind(rollout) == "contact" and not lead.primary and lead.name in _KIND:  # a hug-oracle study alone
        rollout = lead.name + ("-ablation" if rollout.endswith("ablation") else "")
    key = ResultKey(seq, _KIND[_kind(rollout)][0])
    jpath = path.parent / f"{path.stem}_rollouts" / f"{key.stem}.json"
    if not key.bare and not jpath.exists():
        how = "--refine" if rollout.startswith("refine") else "--protocol hug-oracle"
        raise UsageError(
            "--rollout", f"{seq} has no {_kind(rollout)} rollout ({jpath} not found): run the study with {how}"
        )
    rec = read_rollout(jpath)
    doc = rec.flat()
    if rollout.endswith("ablation"):
        if rec.ablation is None:
            raise DataError(jpath, "ablation", "this rollout has no contact ablation (study run with --no-ablation)")
        doc = {
            **rec.ablation.flat(),
            **{k: doc[k] for k in ("sequence", "object", "dataset", "hand_mjcf", "support_height")},
        }
    poses_path = path.parent / str(doc.get("poses") or "")
    if not doc.get("poses") or not poses_path.is_file():
        raise DataError(jpath, "poses", f"saved poses {poses_path} not found")
    with np.load(poses_path, allow_pickle=False) as z:
        check_poses_version(poses_path, z)
        poses = {k: z[k] for k in z.files}
    try:
        cfg = ReplayConfig.from_dict(study["config"])
    except (TypeError, ValueError, KeyError) as e:
        raise ResultsFormatError(
            path, "config", f"not a config this grasp-replay reads ({e}); re-run the study"
        ) from None
    src = RolloutSource(path, study, doc, seq, rollout, poses, cfg)
    _check_physics(src, jpath)
    return src


def _check_physics(src: RolloutSource, jpath: Path) -> None:
    """DataError where the rollout's ``physics`` record is not what the study's config gives (a re-run would differ)."""
    from replay.sim.physics import physics_record

    saved = src.doc.get("physics")
    if saved is None:
        return
    cfg = protocol_named(src.protocol).config(src.config)
    now = {r["name"]: r["value"] for r in physics_record(cfg)}  # the values, each row the record has (an older
    if any(now.get(r["name"], r["value"]) != r["value"] for r in saved):  # record has fewer rows, other wording)
        raise DataError(
            jpath,
            "physics",
            "the rollout's physics is not what the study's config gives (its config changed since?): re-run the study",
        )


def _prepare(src: RolloutSource, data_dir: str | Path | None):
    """(recording, coords, hand MJCF) of ``src``, loaded as its study did. Raises DataError: cannot be loaded."""
    from replay.study.prepare import prepare_recording

    manosim = src.study.get("hand", {}).get("manosim_dir")
    return prepare_recording(
        src.dataset, src.sequence, data_dir, manosim_dir=manosim, cfg=src.config, protocol=src.protocol
    )[:3]


def rerun_inputs(src: RolloutSource, data_dir: str | Path | None = None):
    """The :class:`InputLog` of ``src`` re-run on the direct engine. Raises DataError: the recording cannot be
    loaded; UsageError: not a direct-engine study."""
    from replay.protocol.input_log import record_rollout

    return record_rollout(*_prepare(src, data_dir), cfg=src.config, variant=src.variant(), protocol=src.protocol)


def rebuild_scene(src: RolloutSource, data_dir: str | Path | None = None):
    """The rollout's scene rebuilt, nothing stepped (a USD export draws it); DataError: cannot be loaded."""
    from replay.protocol.rollout import build_replay_scene

    cfg = protocol_named(src.protocol).config(src.config)
    return build_replay_scene(*_prepare(src, data_dir), cfg=cfg, protocol=src.protocol)[1]


def check_reproduces(src: RolloutSource, trace) -> None:
    """Raises :class:`DataError` unless the re-run's float32 poses equal the study's saved ones bit for bit."""
    saved = src.poses["body_pos"]
    got = trace.body_pos[: trace.done]
    if got.shape != saved.shape or not np.array_equal(got, saved):
        diff = float(np.nanmax(np.abs(got - saved))) if got.shape == saved.shape else float("nan")
        raise DataError(
            src.study_path,
            "rollouts",
            f"the re-run of {src.sequence} ({src.rollout}) does not reproduce "
            f"the study's saved poses ({trace.done} frames vs {len(saved)}, largest difference "
            f"{diff:.3g} m): data, code or config changed since the study; re-run the study",
        )

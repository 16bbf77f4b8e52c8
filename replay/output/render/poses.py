"""Saved poses: one rollout's ``.npz`` read and checked against the study contract
(``docs/results.md``): what every drawing in :mod:`replay.output.render` draws."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay.errors import DataError
from replay.results.files import check_poses_version


@dataclass
class PoseTrack:
    """World poses of named bodies over time: ``time`` (F,) s increasing; ``body_names`` (B, the render model's mocap
    bodies); ``body_pos`` (F, B, 3) m, Z up; ``body_quat`` (F, B, 4) **xyzw**; ``source`` the file read."""

    time: np.ndarray
    body_names: list[str]
    body_pos: np.ndarray
    body_quat: np.ndarray
    source: Path | None = None

    @property
    def num_frames(self) -> int:
        return int(self.time.shape[0])

    def index(self, name: str) -> int:
        try:
            return self.body_names.index(name)
        except ValueError:
            raise DataError(self.source, "body_names", f"no body named {name!r} in the saved poses") from None


def load_poses_npz(path: str | Path, truncate_nonfinite: bool = False) -> tuple[PoseTrack, np.ndarray, np.ndarray]:
    """(PoseTrack, contact_count (F,) int, phase (F,) int) of one rollout's ``.npz``, checked; ``truncate_nonfinite``
    cuts before the first non-finite or non-unit pose (an unstable rollout). Raises DataError: a missing or malformed
    array, or no usable frame."""
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a data error
        raise DataError(path, None, f"cannot read saved poses: {exc}") from None
    with z:
        check_poses_version(path, z)
        need = ("time", "body_names", "body_pos", "body_quat", "contact_count", "phase")
        for k in need:
            if k not in z.files:
                raise DataError(path, k, f"missing from saved poses (has {sorted(z.files)})")
        t = np.asarray(z["time"], dtype=np.float64)
        names = [str(n) for n in z["body_names"]]
        pos = np.asarray(z["body_pos"], dtype=np.float64)
        quat = np.asarray(z["body_quat"], dtype=np.float64)
        contact = np.asarray(z["contact_count"])
        phase = np.asarray(z["phase"])
    if t.ndim != 1:
        raise DataError(path, "time", f"expected shape (F,), got {t.shape}")
    F, B = t.shape[0], len(names)
    for key, arr, shape in (
        ("body_pos", pos, (F, B, 3)),
        ("body_quat", quat, (F, B, 4)),
        ("contact_count", contact, (F,)),
        ("phase", phase, (F,)),
    ):
        if arr.shape != shape:
            raise DataError(path, key, f"expected shape {shape}, got {arr.shape}")
    good = (
        np.all(np.isfinite(pos.reshape(F, -1)), axis=1)
        & np.all(np.isfinite(quat.reshape(F, -1)), axis=1)
        & np.isfinite(t)
    )
    with np.errstate(invalid="ignore"):
        good &= np.all(np.abs(np.linalg.norm(quat, axis=-1) - 1.0) <= 1e-3, axis=1)
    if not good.all():
        bad = int(np.flatnonzero(~good)[0])
        if not truncate_nonfinite:
            raise DataError(path, "body_pos/body_quat", f"non-finite or non-unit pose at frame {bad}")
        F = bad
        t, pos, quat, contact, phase = t[:F], pos[:F], quat[:F], contact[:F], phase[:F]
    if F < 1:
        raise DataError(path, "time", "no frames saved (or none with a finite pose)")
    if F > 1 and not np.all(np.diff(t) > 0):
        raise DataError(path, "time", "timestamps are not strictly increasing")
    track = PoseTrack(time=t, body_names=names, body_pos=pos, body_quat=quat, source=path)
    return track, contact.astype(np.int64), phase.astype(np.int64)

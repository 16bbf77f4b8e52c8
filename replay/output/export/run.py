"""One export of one rollout of a study (``scripts/export_rollout.py``, ``grasp-replay export``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay.errors import UsageError
from replay.output.export.source import check_reproduces, load_source, rebuild_scene, rerun_inputs

FORMATS = ("mjcf", "usd", "rrd")


def default_out(study: str | Path, sequence: str, rollout: str = "contact") -> Path:
    """``<study folder>/exports/<sequence>[.<rollout>]``: where an export goes without ``--out``."""
    stem = sequence.replace("/", "__") + ("" if rollout == "contact" else f".{rollout}")
    return Path(study).parent / "exports" / stem


def export_rollout(
    study: str | Path,
    sequence: str,
    fmt: str,
    *,
    out: str | Path | None = None,
    rollout: str = "contact",
    data_dir: str | Path | None = None,
) -> dict:
    """Export one rollout of ``study`` as ``fmt`` into ``out``; returns ``{"format", "out", ...}``. UsageError: unknown
    format, rollout or sequence, a missing extra; DataError: study or rollout missing, of another format, not
    reproduced."""
    if fmt not in FORMATS:
        raise UsageError("--format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "usd":
        from replay.output.export.usd import _viewer_usd

        _viewer_usd()  # the extra is there before anything is built
    if fmt == "rrd":
        from replay.output.export.rrd import _rerun

        _rerun()
    src = load_source(study, sequence, rollout)
    rollout = src.rollout  # a hug-oracle study alone: its contact run is the oracle's
    out = Path(out) if out is not None else default_out(study, src.sequence, rollout)
    meta = {
        "study": str(src.study_path),
        "sequence": src.sequence,
        "rollout": rollout,
        "protocol": src.protocol,
        "variant": src.doc.get("variant"),
        "outcome": src.doc.get("outcome"),
    }
    if fmt == "usd":
        from replay.output.export.usd import export_usd

        scene = rebuild_scene(src, data_dir)
        return {
            "format": fmt,
            "out": str(out),
            **meta,
            **export_usd(scene, src.poses, out / "rollout.usd", fps=1.0 / src.config.frame_dt),
        }
    log = rerun_inputs(src, data_dir)
    check_reproduces(src, log.trace)
    if fmt == "mjcf":
        from replay.output.export.mjcf import STUDY_FIGURES, export_mjcf

        meta["study_figures"] = {v: src.doc.get(k) for k, v in STUDY_FIGURES.items()}
        return {"format": fmt, "out": str(out), **export_mjcf(log, out, src.config, meta=meta)}
    from replay.output.export.rrd import export_rrd, frame_contacts

    hand = list(log.bodies[:16])
    parents = [hand.index(int(p)) if int(p) in hand else -1 for p in log.model.body_parentid[log.bodies[:16]]]
    contacts = frame_contacts(log, src.config.contact_force_min)
    verts = np.asarray(log.scene.object_vertices, float)
    return {
        "format": fmt,
        "out": str(out),
        **meta,
        **export_rrd(
            src.poses, out / "rollout.rrd", verts, parents=parents, contacts=contacts, name=f"{src.sequence}.{rollout}"
        ),
    }

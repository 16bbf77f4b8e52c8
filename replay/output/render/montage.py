"""Many study clips tiled into one H.264 mp4, kept when its inputs have not changed."""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import tempfile
import time as _time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replay import console
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text, sha256_file
from replay.output.render.camera import clip_camera
from replay.output.render.clip import Clip, DrawSettings, StudyRollout, load_clip, load_study, study_rollout
from replay.output.render.model import _load_mesh
from replay.output.render.montage_pick import pick_tiles
from replay.output.render.overlay import caption_band, clip_overlay, draw_overlay, head_lines, rule_header
from replay.output.render.style import OUTCOME_RGB
from replay.output.render.video import (
    FrameTiming,
    RenderStats,
    frame_indices,
    prepare_output,
    render_frames,
    write_mp4,
)
from replay.protocol.protocols.base import protocol_named
from replay.results.files import json_default
from replay.results.outcomes import UNSTABLE
from replay.results.records import StudyRecord

#: largest montage canvas chosen automatically, (W, H) px, below :data:`MONTAGE_LARGE_FROM` tiles
MONTAGE_MAX_CANVAS = (1920, 1080)
MONTAGE_LARGE_FROM = 39
#: the canvas from :data:`MONTAGE_LARGE_FROM` tiles, px
MONTAGE_LARGE_CANVAS = (2560, 1440)
#: the narrowest tile a person can read, px (issue 49)
MONTAGE_MIN_READABLE_W = 320
#: default cap on tiles: as many 4:3 tiles :data:`MONTAGE_MIN_READABLE_W` wide as fit :data:`MONTAGE_MAX_CANVAS`
#: with the rule's header; more rollouts are shown by a selection (:mod:`replay.output.render.montage_pick`)
MONTAGE_MAX_CLIPS = (MONTAGE_MAX_CANVAS[0] // MONTAGE_MIN_READABLE_W) * (
    MONTAGE_MAX_CANVAS[1] // (MONTAGE_MIN_READABLE_W * 3 // 4)
)
#: the readability rule in words, drawn with every montage's selection rule
READABLE_RULE = (
    f"at most {MONTAGE_MAX_CLIPS} tiles by default, so each stays at least {MONTAGE_MIN_READABLE_W} px "
    f"wide on a {MONTAGE_MAX_CANVAS[0]} x {MONTAGE_MAX_CANVAS[1]} screen"
)
#: the runs each ``variant`` of :func:`render_montage` draws per rollout
_VARIANTS = {"main": ("main",), "ablation": ("ablation",), "both": ("main", "ablation")}


def montage_layout(
    n: int, cols: int | None = None, tile: tuple[int, int] | None = None
) -> tuple[int, int, tuple[int, int]]:
    """(cols, rows, (tile_w, tile_h) px) for ``n`` clips. Default columns: 3 up to 6 clips, else
    ``round(sqrt(4 n / 3))`` (about 16:9 of 4:3 tiles); default tile: the largest even 4:3 tile, at most 640 x 480,
    that fits the canvas. Raises ValueError: no clip, or a tile odd or under 16 px."""
    if n < 1:
        raise ValueError("montage needs at least one clip")
    if cols is None:
        cols = min(n, 3) if n <= 6 else int(round(math.sqrt(4.0 / 3.0 * n)))
    cols = max(1, min(int(cols), n))
    rows = int(math.ceil(n / cols))
    if tile is None:
        cw, ch = MONTAGE_LARGE_CANVAS if n >= MONTAGE_LARGE_FROM else MONTAGE_MAX_CANVAS
        tw = min(640, cw // cols)
        th = min(480, ch // rows)
        tw = min(tw, int(th * 4 / 3))
        th = int(tw * 3 / 4)
        tile = (tw - tw % 2, th - th % 2)
    if tile[0] < 16 or tile[1] < 16 or tile[0] % 2 or tile[1] % 2:
        raise ValueError(f"tile size must be even and >= 16 px, got {tile}")
    return cols, rows, (int(tile[0]), int(tile[1]))


def select_rollouts(
    study: StudyRecord, objects: Sequence[str] | None, source: Path, *, key: str = "rollouts"
) -> list[tuple[int, StudyRollout]]:
    """(index, rollout) of the study's rows list ``key`` in study order, only ``objects`` where given (an object name
    takes all its rollouts, a sequence name one). Raises UsageError: a name matches none; DataError: none at all."""
    base = Path(source).parent
    rolls = [(i, study_rollout(r, base, source=source, where=f"{key}[{i}]")) for i, r in enumerate(study.rows_of(key))]
    if objects:
        have = {str(e.record.object) for _, e in rolls}
        seqs = [str(e.record.sequence) for _, e in rolls if e.record.sequence]
        missing = [o for o in objects if o not in have and o not in seqs]
        if missing:
            hints = [
                f"{m!r} (did you mean {' or '.join(c)}?)"
                if (c := difflib.get_close_matches(m, sorted(have) + seqs, n=3))
                else repr(m)
                for m in missing
            ]
            raise UsageError(
                "--objects",
                f"no rollout for {', '.join(hints)} in {source}; it has {len(have)} objects"
                + (f" ({', '.join(sorted(have))})" if len(have) <= 12 else "")
                + " (a sequence name works too)",
            )
        want = set(objects)
        rolls = [(i, e) for i, e in rolls if str(e.record.object) in want or str(e.record.sequence) in want]
    if not rolls:
        raise DataError(source, key, "study has no rollouts to render")
    return rolls


def montage_record_path(out_path: str | Path) -> Path:
    """The JSON beside a montage (``montage.mp4.json``): what it shows and the key of its inputs."""
    out = Path(out_path)
    return out.with_name(out.name + ".json")


@dataclass(frozen=True)
class MontagePlan:
    """What a montage draws: the study's ``chosen`` rollouts (:func:`_choose`), their ``variant``, the grid
    (``cols``, ``tile`` (W, H) px; None: :func:`montage_layout`), ``fps`` Hz, the names ``left_out`` and the rule."""

    study_path: Path
    study_dir: Path
    settings: DrawSettings
    chosen: list[tuple[int, StudyRollout]]
    variant: str
    cols: int | None
    tile: tuple[int, int] | None
    fps: float
    left_out: list[str]
    rule: str

    def key(self, params: dict) -> str:
        """SHA-256 of what the montage is drawn from: each shown rollout's record and poses, ``params`` and this
        package's source (not the study summary, which a resume rewrites)."""
        h = hashlib.sha256()
        h.update(json.dumps(params, sort_keys=True).encode())
        for src in sorted(Path(__file__).parent.glob("*.py")):
            h.update(sha256_file(src).encode())
        for _, e in self.chosen:
            h.update(json.dumps(e.record.to_dict(), sort_keys=True, default=json_default).encode())
            for v in _VARIANTS[self.variant]:
                run = e.record.ablation if v == "ablation" else e.record
                poses = None if run is None else run.poses
                p = self.study_dir / str(poses) if poses else None
                h.update((sha256_file(p) if p is not None and p.is_file() else f"missing:{poses}").encode())
        return h.hexdigest()


def render_montage(
    study_path: str | Path,
    out_path: str | Path,
    cols: int | None = None,
    *,
    objects: Sequence[str] | None = None,
    tile: tuple[int, int] | None = None,
    fps: float = 30.0,
    variant: str = "main",
    max_clips: int | None = MONTAGE_MAX_CLIPS,
    progress: bool = False,
    force: bool = False,
    protocol: str = "lift",
) -> RenderStats:
    """Tile the study's clips, each with its overlay, into one H.264 mp4; every rollout is checked before any
    rendering, and a clip shorter than the longest holds its last frame.

    Args:
        cols, tile: grid columns and (W, H) px per clip (default :func:`montage_layout`).
        objects: only these objects' or sequences' rollouts (:func:`select_rollouts`).
        fps: frame rate, Hz.
        variant: ``"main"``, ``"ablation"`` (the contact-ablation re-runs) or ``"both"`` (pairs on one row).
        max_clips: at most this many tiles (None: all); more rollouts: :func:`~.montage_pick.pick_tiles`' selection,
            its rule drawn above the tiles, the rest in ``RenderStats.left_out_names``.
        protocol: the protocol whose rows are drawn (recorded: with the recorded object as a ghost).
        force: render even when ``out_path``'s record (:func:`montage_record_path`) has the same input key
            (otherwise kept: ``RenderStats.skipped``).

    Returns:
        :class:`RenderStats` (``ms_per_frame``: mean per-tile render time).

    Raises:
        DataError: bad study JSON, a rollout without poses or assets; UsageError: an unknown object; OutputError:
        ``out_path`` unwritable; ValueError: unknown ``variant``.
    """
    t_start = _time.perf_counter()
    out = prepare_output(out_path)
    study_path = Path(study_path)
    study, study_dir = load_study(study_path)
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be 'main', 'ablation' or 'both', got {variant!r}")
    list_key = protocol_named(protocol).rows_field
    chosen, left_out, rule = _choose(study, study_path, objects, _VARIANTS[variant], max_clips, list_key)
    plan = MontagePlan(study_path, study_dir, DrawSettings.of(study), chosen, variant, cols, tile, fps, left_out, rule)
    params = {
        "cols": cols,
        "tile": list(tile) if tile else None,
        "fps": fps,
        "variant": variant,
        "max_clips": max_clips,
        "objects": list(objects) if objects else None,
        "protocol": protocol,
    }
    key = plan.key(params)
    kept = None if force else _up_to_date(out, montage_record_path(out), key)
    if kept is not None:
        return RenderStats(
            out,
            int(kept.get("frames", 0)),
            tuple(kept.get("size", (0, 0))),
            _time.perf_counter() - t_start,
            0.0,
            left_out=len(left_out),
            skipped=True,
            left_out_names=tuple(left_out),
        )
    return _render(plan, out, key, progress=progress, t_start=t_start)


def _render(plan: MontagePlan, out: Path, key: str, *, progress: bool, t_start: float) -> RenderStats:
    """Render, compose and encode ``plan``'s tiles to ``out`` under its rule's header, and write its record with the
    input ``key``."""
    cols, n_chosen = plan.cols, len(plan.chosen)
    if plan.variant == "both" and cols is None:  # keep each pair on one row
        cols = 2 * max(1, min(n_chosen, 1 if n_chosen == 1 else round(math.sqrt(2.0 * n_chosen / 3.0))))
    clips = _load_clips(plan)
    cols, rows, (tw, th) = montage_layout(len(clips), cols, plan.tile)
    timing = FrameTiming()
    with tempfile.TemporaryDirectory(prefix="montage_") as tmp:
        bar = console.bar(progress, total=len(clips), desc="montage tiles", unit="tile", dynamic_ncols=True)
        stores = []
        for k, clip in enumerate(clips):
            stores.append(_render_tile(clip, Path(tmp) / f"{k}.npy", (tw, th), plan.fps, timing))
            bar.update(1)
        bar.close()
        header = rule_header(plan.rule, cols * tw, max(10, min(18, cols * tw // 120)))  # on every montage
        n = write_mp4(_compose(stores, cols, rows, (tw, th), header), out, plan.fps)
        del stores  # close the memory maps before the folder goes
    secs = _time.perf_counter() - t_start
    size = (cols * tw, rows * th + (0 if header is None else header.shape[0]))
    record = {
        "montage": out.name,
        "study": str(plan.study_path.resolve()),
        "key": key,
        "frames": n,
        "size": list(size),
        "tile": [tw, th],
        "grid": [cols, rows],
        "variant": plan.variant,
        "rollouts": [e.name for _, e in plan.chosen],
        "left_out": len(plan.left_out),
        "left_out_rollouts": plan.left_out,
        "render_s": secs,
        "rule": plan.rule,
    }
    atomic_write_text(montage_record_path(out), json.dumps(record, indent=1) + "\n")
    ms = 1000.0 * timing.render_s / max(timing.frames, 1)
    return RenderStats(out, n, size, secs, ms, left_out=len(plan.left_out), left_out_names=tuple(plan.left_out))


def _choose(
    study: StudyRecord,
    study_path: Path,
    objects: Sequence[str] | None,
    variants: Sequence[str],
    max_clips: int | None,
    key: str = "rollouts",
) -> tuple[list[tuple[int, StudyRollout]], list[str], str]:
    """(the rollouts a montage shows: those with an ablation run where one is drawn, at most ``max_clips`` tiles by
    :func:`~.montage_pick.pick_tiles`; the names left out; the selection's rule)."""
    chosen = select_rollouts(study, objects, study_path, key=key)
    if "ablation" in variants:
        chosen = [(i, e) for i, e in chosen if e.record.ablation is not None]
        if not chosen:
            raise DataError(study_path, "rollouts[].ablation", "no rollout has a contact-ablation run")
    picked, rule = pick_tiles(chosen, None if max_clips is None else max(1, max_clips // len(variants)))
    shown = {i for i, _ in picked}
    if max_clips == MONTAGE_MAX_CLIPS:
        rule = f"{rule}; {READABLE_RULE}"
    return picked, [e.name for i, e in chosen if i not in shown], rule


def _up_to_date(out: Path, record_path: Path, key: str) -> dict | None:
    """The montage's record when ``out`` exists and was drawn from inputs with this ``key``."""
    if not (out.is_file() and record_path.is_file()):
        return None
    try:
        rec = json.loads(record_path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return rec if isinstance(rec, dict) and rec.get("key") == key else None


def _load_clips(plan: MontagePlan) -> list[Clip | str]:
    """Every tile's :class:`Clip`, checked with its meshes; an unstable rollout with no finite frame becomes its
    title (a placeholder tile). Raises DataError: any other bad input."""
    clips: list[Clip | str] = []
    for i, e in plan.chosen:
        for v in _VARIANTS[plan.variant]:
            try:
                clips.append(
                    load_clip(
                        e,
                        plan.study_dir,
                        variant=v,
                        source=plan.study_path,
                        field_prefix=f"{e.field}.",
                        settings=plan.settings,
                    )
                )
            except DataError as exc:
                run = e.record.ablation if v == "ablation" else e.record
                if run is not None and run.outcome == UNSTABLE and "no frames" in str(exc):
                    clips.append(
                        str(e.record.object or f"rollout {i}") + (" (contact ablation)" if v == "ablation" else "")
                    )
                    continue
                raise
    for c in clips:  # fail on a bad mesh before spending minutes rendering
        for o in c.objects if isinstance(c, Clip) else []:
            _load_mesh(str(o.mesh))
    return clips


def _render_tile(
    clip: Clip | str, store_path: Path, tile: tuple[int, int], fps: float, timing: FrameTiming
) -> np.ndarray:
    """One tile's frames, (n, th, tw, 3) uint8, memory-mapped at ``store_path`` (one frame for a placeholder)."""
    tw, th = tile
    if isinstance(clip, str):
        blank = np.full((1, th, tw, 3), 40, dtype=np.uint8)
        blank[0] = draw_overlay(
            blank[0],
            [
                (clip, (245, 245, 245)),
                (f"result: {UNSTABLE}", OUTCOME_RGB[UNSTABLE]),
                ("no frames saved", (245, 245, 245)),
            ],
        )
        return blank
    idx = frame_indices(clip.track.time, fps)
    store = np.lib.format.open_memmap(store_path, mode="w+", dtype=np.uint8, shape=(len(idx), th, tw, 3))
    lines = clip_overlay(clip)
    own = 1 + len(head_lines(clip))  # the title, the verdict and what the video shows where it disagrees, a row each
    band = caption_band(lines(int(idx[0])), tw, th, own_rows=own).shape[0]  # above the picture, never over the hands
    ih = th - band
    for j, img in enumerate(
        render_frames(
            clip.track,
            clip.hand_mjcf,
            clip.objects,
            support=clip.support,
            size=(tw, ih),
            fps=fps,
            camera=clip_camera(clip, tw / ih, top_clear=0.0),
            timing=timing,
        )
    ):
        store[j, :band] = caption_band(lines(int(idx[j])), tw, th, height=band, own_rows=own)
        store[j, band:] = img
    store.flush()
    return store


def _compose(stores: list[np.ndarray], cols: int, rows: int, tile: tuple[int, int], header: np.ndarray | None = None):
    """Montage frames, (hh + rows*th, cols*tw, 3) uint8, ``header`` (hh, cols*tw, 3) above the tiles; a short clip
    holds its last frame."""
    tw, th = tile
    top = 0 if header is None else header.shape[0]
    canvas = np.full((top + rows * th, cols * tw, 3), 24, dtype=np.uint8)
    if header is not None:
        canvas[:top] = header
    for f in range(max(s.shape[0] for s in stores)):
        for k, s in enumerate(stores):
            r, c = divmod(k, cols)
            canvas[top + r * th : top + (r + 1) * th, c * tw : (c + 1) * tw] = s[min(f, s.shape[0] - 1)]
        yield canvas

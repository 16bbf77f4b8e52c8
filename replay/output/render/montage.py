"""Many study clips tiled into one H.264 mp4, kept when its inputs have not changed."""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import tempfile
import time as _time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from replay import console
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text, sha256_file
from replay.output.render.camera import clip_camera
from replay.output.render.clip import Clip, expand_rollout, load_clip, load_study
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
    study: dict, objects: Sequence[str] | None, source: Path, *, key: str = "rollouts"
) -> list[tuple[int, dict]]:
    """(index, rollout) of the study's list ``key`` in study order, only ``objects`` where given (an object name
    takes all its rollouts, a sequence name one). Raises UsageError: a name matches none; DataError: none at all."""
    rolls = list(enumerate(study.get(key) or []))
    base = Path(source).parent
    rolls = [(i, expand_rollout(r, base, source, field_prefix=f"{key}[{i}].")) for i, r in rolls]
    if objects:
        have = {str(r.get("object")) for _, r in rolls}
        seqs = [str(r.get("sequence")) for _, r in rolls if r.get("sequence")]
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
        rolls = [(i, r) for i, r in rolls if str(r.get("object")) in want or str(r.get("sequence")) in want]
    if not rolls:
        raise DataError(source, key, "study has no rollouts to render")
    return rolls


def montage_record_path(out_path: str | Path) -> Path:
    """The JSON beside a montage (``montage.mp4.json``): what it shows and the key of its inputs."""
    out = Path(out_path)
    return out.with_name(out.name + ".json")


def _montage_key(
    chosen: list[tuple[int, dict]], study_dir: Path, study_path: Path, variants: Sequence[str], params: dict
) -> str:
    """SHA-256 of what a montage is drawn from: each shown rollout's JSON and poses, the settings and this package's
    source (not the study summary, which a resume rewrites)."""
    h = hashlib.sha256()
    h.update(json.dumps(params, sort_keys=True).encode())
    for src in sorted(Path(__file__).parent.glob("*.py")):
        h.update(sha256_file(src).encode())
    for i, r in chosen:
        full = expand_rollout(r, study_dir, study_path, field_prefix=f"rollouts[{i}].")
        h.update(json.dumps(full, sort_keys=True, default=str).encode())
        for v in variants:
            entry = full.get("ablation") if v == "ablation" else full
            poses = entry.get("poses") if isinstance(entry, dict) else None
            p = Path(study_dir) / str(poses) if poses else None
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
    variants = _VARIANTS[variant]
    list_key = protocol_named(protocol).rows_field
    chosen, left_out, rule = _choose(study, study_path, objects, variants, max_clips, list_key)
    params = {
        "cols": cols,
        "tile": list(tile) if tile else None,
        "fps": fps,
        "variant": variant,
        "max_clips": max_clips,
        "objects": list(objects) if objects else None,
        "protocol": protocol,
    }
    key = _montage_key(chosen, study_dir, study_path, variants, params)
    record_path = montage_record_path(out)
    kept = None if force else _up_to_date(out, record_path, key)
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
    return _render(
        study, study_dir, study_path, chosen, variant, cols, tile, fps, out, key, (left_out, rule), progress, t_start
    )


def _render(
    study: dict,
    study_dir: Path,
    study_path: Path,
    chosen: list[tuple[int, dict]],
    variant: str,
    cols: int | None,
    tile: tuple[int, int] | None,
    fps: float,
    out: Path,
    key: str,
    selection: tuple[list[str], str],
    progress: bool,
    t_start: float,
) -> RenderStats:
    """Render, compose and encode the tiles of ``chosen`` to ``out`` under the rule's header, and write its record
    with the input ``key``; ``selection``: (names left out, rule)."""
    left_out, rule = selection
    variants = _VARIANTS[variant]
    if variant == "both" and cols is None:  # keep each pair on one row
        cols = 2 * max(1, min(len(chosen), 1 if len(chosen) == 1 else round(math.sqrt(2.0 * len(chosen) / 3.0))))
    cfg = study.get("config") if isinstance(study.get("config"), dict) else {}
    clips = _load_clips(chosen, variants, study_dir, study_path, cfg.get("support_thickness"))
    cols, rows, (tw, th) = montage_layout(len(clips), cols, tile)
    timing = FrameTiming()
    with tempfile.TemporaryDirectory(prefix="montage_") as tmp:
        bar = console.bar(progress, total=len(clips), desc="montage tiles", unit="tile", dynamic_ncols=True)
        stores = []
        for k, clip in enumerate(clips):
            stores.append(_render_tile(clip, Path(tmp) / f"{k}.npy", (tw, th), fps, timing))
            bar.update(1)
        bar.close()
        header = rule_header(rule, cols * tw, max(10, min(18, cols * tw // 120)))  # on every montage
        n = write_mp4(_compose(stores, cols, rows, (tw, th), header), out, fps)
        del stores  # close the memory maps before the folder goes
    secs = _time.perf_counter() - t_start
    size = (cols * tw, rows * th + (0 if header is None else header.shape[0]))
    atomic_write_text(
        montage_record_path(out),
        json.dumps(
            {
                "montage": out.name,
                "study": str(study_path.resolve()),
                "key": key,
                "frames": n,
                "size": list(size),
                "tile": [tw, th],
                "grid": [cols, rows],
                "variant": variant,
                "rollouts": [_name(i, r) for i, r in chosen],
                "left_out": len(left_out),
                "left_out_rollouts": left_out,
                "render_s": secs,
                "rule": rule,
            },
            indent=1,
        )
        + "\n",
    )
    return RenderStats(
        out,
        n,
        size,
        secs,
        1000.0 * timing.render_s / max(timing.frames, 1),
        left_out=len(left_out),
        left_out_names=tuple(left_out),
    )


def _name(i: int, r: dict) -> str:
    """A tile's name in the montage's record: its sequence (else object, else index)."""
    return str(r.get("sequence") or r.get("object") or i)


def _choose(
    study: dict,
    study_path: Path,
    objects: Sequence[str] | None,
    variants: Sequence[str],
    max_clips: int | None,
    key: str = "rollouts",
) -> tuple[list[tuple[int, dict]], list[str], str]:
    """(the rollouts a montage shows: those with an ablation run where one is drawn, at most ``max_clips`` tiles by
    :func:`~.montage_pick.pick_tiles`; the names left out; the selection's rule)."""
    chosen = select_rollouts(study, objects, study_path, key=key)
    if "ablation" in variants:
        chosen = [(i, r) for i, r in chosen if isinstance(r.get("ablation"), dict)]
        if not chosen:
            raise DataError(study_path, "rollouts[].ablation", "no rollout has a contact-ablation run")
    picked, rule = pick_tiles(chosen, None if max_clips is None else max(1, max_clips // len(variants)))
    shown = {i for i, _ in picked}
    if max_clips == MONTAGE_MAX_CLIPS:
        rule = f"{rule}; {READABLE_RULE}"
    return picked, [_name(i, r) for i, r in chosen if i not in shown], rule


def _up_to_date(out: Path, record_path: Path, key: str) -> dict | None:
    """The montage's record when ``out`` exists and was drawn from inputs with this ``key``."""
    if not (out.is_file() and record_path.is_file()):
        return None
    try:
        rec = json.loads(record_path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return rec if isinstance(rec, dict) and rec.get("key") == key else None


def _load_clips(
    chosen: list[tuple[int, dict]], variants: Sequence[str], study_dir: Path, study_path: Path, thickness: float | None
) -> list[Clip | str]:
    """Every tile's :class:`Clip`, checked with its meshes; an unstable rollout with no finite frame becomes its
    title (a placeholder tile). Raises DataError: any other bad input."""
    clips: list[Clip | str] = []
    for i, r in chosen:
        for v in variants:
            try:
                clips.append(
                    load_clip(
                        r,
                        study_dir,
                        variant=v,
                        source=study_path,
                        field_prefix=f"rollouts[{i}].",
                        support_thickness=thickness,
                    )
                )
            except DataError as exc:
                oc = (r.get("ablation") or {}).get("outcome") if v == "ablation" else r.get("outcome")
                if oc == "unstable" and "no frames" in str(exc):
                    clips.append(
                        f"{r.get('object', f'rollout {i}')}" + (" (contact ablation)" if v == "ablation" else "")
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
                ("result: unstable", OUTCOME_RGB["unstable"]),
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
            support_height=clip.support,
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

"""Frames from saved poses (MuJoCo offscreen on EGL) and H.264 mp4 files, written atomically."""

from __future__ import annotations

import os
import tempfile
import time as _time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import imageio_ffmpeg
import mujoco
import numpy as np

from replay.errors import OutputError
from replay.fileio import atomic_path
from replay.output.render.camera import CameraView, clip_camera, frame_camera
from replay.output.render.clip import PoseTrack, SceneObject, StudyRollout, Support, load_clip
from replay.output.render.model import apply_poses, build_render_model, mocap_index
from replay.output.render.overlay import clip_overlay, draw_overlay


@dataclass
class RenderStats:
    """What a render produced: ``frames``, ``size`` (W, H) px, wall ``seconds``, ``ms_per_frame`` (render, readback
    and overlay, not encoding); a montage's ``left_out`` rollouts and ``skipped`` (an up-to-date one kept)."""

    path: Path
    frames: int
    size: tuple[int, int]
    seconds: float
    ms_per_frame: float
    left_out: int = 0
    skipped: bool = False
    left_out_names: tuple[str, ...] = ()


@dataclass
class FrameTiming:
    """Render time summed over frames: ``render_s`` s over ``frames`` frames."""

    render_s: float = 0.0
    frames: int = 0


def frame_indices(time: np.ndarray, fps: float) -> np.ndarray:
    """Indices of the saved frames nearest to a uniform ``fps`` (Hz) timeline over ``time`` (s)."""
    if time.shape[0] == 1:
        return np.zeros(1, dtype=np.int64)
    n = int(round((time[-1] - time[0]) * fps)) + 1
    ts = time[0] + np.arange(n) / fps
    idx = np.searchsorted(time, ts).clip(1, time.shape[0] - 1)
    left = time[idx - 1]
    pick_left = (ts - left) <= (time[idx] - ts)
    return np.where(pick_left, idx - 1, idx).astype(np.int64)


def _check_gl() -> None:
    """Switch MuJoCo's GL context class to EGL when there is no display and ``mujoco`` was imported without
    ``MUJOCO_GL=egl`` (GLFW needs a display). Raises RuntimeError: EGL cannot be loaded."""
    from mujoco.rendering.classic import gl_context as glc

    cur = getattr(glc, "GLContext", None)
    if cur is not None and cur.__module__.startswith(("mujoco.egl", "mujoco.osmesa")):
        return
    if os.environ.get("DISPLAY") and cur is not None:
        return  # a desktop session: GLFW works
    try:
        from mujoco.egl import GLContext as EGLContext
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(
            "no display and MuJoCo was imported without MUJOCO_GL=egl; EGL could not be loaded "
            f"({exc}). Export MUJOCO_GL=egl (or osmesa) before starting Python."
        ) from None
    glc.GLContext = EGLContext


def render_frames(
    track: PoseTrack,
    hand_mjcf: str | Path | None,
    objects: Sequence[SceneObject],
    *,
    support: Support | None,
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    overlay: Callable[[int], list[tuple[str, tuple[int, int, int]]]] | None = None,
    camera: CameraView | None = None,
    timing: FrameTiming | None = None,
    decorate: Callable[[int, mujoco.MjvScene], None] | None = None,
) -> Iterator[np.ndarray]:
    """(H, W, 3) uint8 frames of saved poses at ``fps`` Hz (nearest saved frame).

    Args:
        track: body poses of every hand body of ``hand_mjcf`` and every ``objects[i].body``.
        hand_mjcf, objects, support, size: see :func:`build_render_model`.
        overlay: a *saved* frame index to overlay lines, or None.
        camera: fixed view, default :func:`frame_camera` over the whole track.
        timing: adds each frame's render time where given.
        decorate: ``decorate(saved_frame_index, scene)`` adds ``mjvGeom`` s after each scene update.

    Raises:
        DataError: see :func:`build_render_model` and :func:`mocap_index`; RuntimeError: no headless GL.
    """
    _check_gl()
    w, h = int(size[0]), int(size[1])
    model = build_render_model(hand_mjcf, objects, support, size=(w, h))
    mids, cols = mocap_index(model, track)
    cam = (camera or _default_camera(model, track, objects, w / h)).mjv()
    data = mujoco.MjData(model)
    opt = mujoco.MjvOption()
    idx = frame_indices(track.time, fps)
    renderer = mujoco.Renderer(model, height=h, width=w)
    try:
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SKYBOX] = True
        for i in idx:
            t0 = _time.perf_counter()
            apply_poses(model, data, track, frame=int(i), mids=mids, cols=cols)
            renderer.update_scene(data, camera=cam, scene_option=opt)
            if decorate is not None:
                decorate(int(i), renderer.scene)
            img = renderer.render()
            if overlay is not None:
                img = draw_overlay(img, overlay(int(i)))
            if timing is not None:
                timing.render_s += _time.perf_counter() - t0
                timing.frames += 1
            yield img
    finally:
        renderer.close()


def _default_camera(
    model: mujoco.MjModel, track: PoseTrack, objects: Sequence[SceneObject], aspect: float
) -> CameraView:
    """:func:`frame_camera` over the whole track, the render model's non-object bodies as the hand."""
    hand_bodies = [
        model.body(b).name for b in range(1, model.nbody) if model.body(b).name not in {o.body for o in objects}
    ]
    return frame_camera(track, hand_bodies, objects, aspect=aspect)


def prepare_output(out_path: str | Path) -> Path:
    """``out_path``, checked writable (its folder created) before any rendering. Raises OutputError: not an .mp4,
    a folder, or its folder cannot be created or written."""
    out = Path(out_path)
    if out.suffix.lower() != ".mp4":
        raise OutputError(f"{out}: output must be an .mp4 file")
    if out.is_dir():
        raise OutputError(f"{out}: output path is a folder")
    for parent in out.absolute().parents:  # the first existing ancestor must be a folder
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"{out}: cannot write there: {parent} is a file, not a folder")
            break
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.stem}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise OutputError(f"{out}: cannot write to {out.parent}: {exc.strerror or exc}") from None
    return out


def write_mp4(frames: Iterable[np.ndarray], out_path: str | Path, fps: float = 30.0) -> int:
    """Encode (H, W, 3) uint8 frames (H, W even) as an H.264 yuv420p mp4 at ``fps`` Hz, atomically; the number
    written. Raises OutputError: unwritable or no frames; ValueError: odd or changing size."""
    out = prepare_output(out_path)
    n, writer, shape = 0, None, None
    with atomic_path(out, suffix=".tmp.mp4") as tmp:
        try:
            for img in frames:
                if writer is None:
                    shape = img.shape
                    if img.ndim != 3 or img.shape[2] != 3 or img.shape[0] % 2 or img.shape[1] % 2:
                        raise ValueError(f"frames must be (H, W, 3) with even H and W for yuv420p, got {img.shape}")
                    writer = imageio_ffmpeg.write_frames(
                        str(tmp),
                        (img.shape[1], img.shape[0]),
                        fps=fps,
                        codec="libx264",
                        pix_fmt_in="rgb24",
                        pix_fmt_out="yuv420p",
                        quality=None,
                        macro_block_size=1,
                        output_params=["-crf", "20", "-preset", "veryfast", "-movflags", "+faststart"],
                        ffmpeg_log_level="error",
                    )
                    writer.send(None)
                elif img.shape != shape:
                    raise ValueError(f"frame {n} has shape {img.shape}, expected {shape}")
                writer.send(np.ascontiguousarray(img, dtype=np.uint8))
                n += 1
            if writer is None:
                raise OutputError(f"{out}: no frames to write")
        finally:
            if writer is not None:
                writer.close()
    return n


def render_clip(
    rollout: dict | StudyRollout,
    study_dir: str | Path,
    out_path: str | Path,
    *,
    size: tuple[int, int] = (640, 480),
    fps: float = 30.0,
    label: str | None = None,
    variant: str = "main",
    source: str | Path | None = None,
) -> RenderStats:
    """One study rollout's saved poses as an H.264 mp4 with :func:`clip_overlay` (``label`` replaces the title) and
    :func:`clip_camera`; ``size`` (W, H) px even, ``fps`` Hz; ``rollout``, ``study_dir``, ``variant``, ``source``:
    :func:`load_clip`. Raises DataError: see :func:`load_clip`; OutputError: ``out_path`` unwritable."""
    out = prepare_output(out_path)
    clip = load_clip(rollout, study_dir, variant=variant, source=source)
    if label:
        clip.title = label
    return render_mp4(
        out,
        clip.track,
        clip.hand_mjcf,
        objects=clip.objects,
        support=clip.support,
        size=size,
        fps=fps,
        overlay=clip_overlay(clip),
        camera=clip_camera(clip, size[0] / size[1]),
    )


def render_mp4(
    out: Path, track: PoseTrack, hand_mjcf, *, objects, size: tuple[int, int], fps: float, **kw
) -> RenderStats:
    """:func:`render_frames` (its keywords ``kw``) encoded to ``out`` by :func:`write_mp4`, timed."""
    timing = FrameTiming()
    t0 = _time.perf_counter()
    n = write_mp4(render_frames(track, hand_mjcf, objects, size=size, fps=fps, timing=timing, **kw), out, fps)
    secs = _time.perf_counter() - t0
    return RenderStats(out, n, (int(size[0]), int(size[1])), secs, 1000.0 * timing.render_s / max(n, 1))

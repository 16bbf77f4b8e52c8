"""Text drawn over each frame: title, phase, outcome, contact count, time."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from replay.output.render.clip import PHASE_NAMES, Clip
from replay.output.render.style import OUTCOME_RGB
from replay.results import Phase


@lru_cache(maxsize=16)
def _font(px: int):
    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
    try:
        return ImageFont.truetype(str(ttf), px)
    except OSError:
        return ImageFont.load_default()


def draw_overlay(img: np.ndarray, lines: Sequence[tuple[str, tuple[int, int, int]]]) -> np.ndarray:
    """Draw text lines in a translucent box at the top-left of an RGB frame.

    Args:
        img: (H, W, 3) uint8 frame (modified copy returned).
        lines: (text, rgb 0-255) per line.

    Returns:
        (H, W, 3) uint8 frame with the overlay.
    """
    h, w = img.shape[:2]
    px = max(10, int(round(h / 24)))
    font = _font(px)
    pad, gap = max(3, px // 3), max(1, px // 5)
    widths = [font.getlength(t) for t, _ in lines]
    box_w = min(w, int(max(widths, default=0)) + 2 * pad + 1)
    box_h = min(h, len(lines) * (px + gap) + 2 * pad - gap + 1)
    out = np.array(img, dtype=np.uint8, copy=True)
    # darken only the box (alpha 140/255 black), then draw the text on that crop
    box = out[:box_h, :box_w].astype(np.uint16) * (255 - 140) // 255
    crop = Image.fromarray(box.astype(np.uint8))
    d = ImageDraw.Draw(crop)
    y = pad
    for text, rgb in lines:
        d.text((pad, y), text, font=font, fill=tuple(int(c) for c in rgb))
        y += px + gap
    out[:box_h, :box_w] = np.asarray(crop)
    return out


def clip_overlay(clip: Clip) -> Callable[[int], list[tuple[str, tuple[int, int, int]]]]:
    """Per-frame overlay lines for a study clip: title (object name, and the sequence where
    it is not in the name, e.g. TACO ``20231104_010``); the phase name while it runs, the
    outcome only once it is decided: ``result: <outcome>`` in its colour from the end of
    the hold on (:func:`overlay_status`); during the shake, ``shake test...`` and at its
    end whether the object stayed in hand (``shake_held``); contact count and phase; time
    since the clip's first frame."""
    white = (245, 245, 245)
    status_of = overlay_status(clip)

    def lines(i: int):
        t = clip.track.time[i] - clip.track.time[0]
        code = int(clip.phase[i])
        ph = PHASE_NAMES.get(code, str(code))
        out = [(clip_title(clip), white)] + status_of(i)
        return out + [
            (f"contacts {int(clip.contact_count[i])}  {ph}", white),
            (f"t = {t:5.2f} s", white),
        ]

    return lines


def clip_title(clip: Clip) -> str:
    """The overlay title: the clip's title, plus the sequence unless it is just the object's
    lift (GRAB ``mug_lift``): TACO and HUG-Bench sequences are dates and scene ids, and GRAB's
    other intents (``mug_pass_1``) must not look like the lift of the same object."""
    seq = str((clip.meta or {}).get("sequence") or "").split("/")[-1]
    name = clip.title.split(" (")[0]
    if not seq or seq in (name, f"{name}_lift"):
        return clip.title
    return f"{clip.title} - {seq}"


def overlay_status(clip: Clip) -> Callable[[int], list[tuple[str, tuple[int, int, int]]]]:
    """Status lines for frame ``i`` that never say what has not happened yet: the phase
    name (``lift...``, ``hold...``) until the end of the hold, where ``lifted`` is judged;
    then ``result: <outcome>``; in the shake, ``shake test...`` until its last frame, then
    ``shake: held`` / ``shake: dropped``. A rollout that ended early (dropped: no shake;
    unstable) shows its result from its last frame."""
    grey = (200, 200, 200)
    oc = OUTCOME_RGB.get(clip.outcome, (245, 245, 245))
    shake_held = (clip.meta or {}).get("shake_held")
    ph_arr = np.asarray(clip.phase)
    last = len(ph_arr) - 1
    hold = np.flatnonzero(ph_arr == int(Phase.HOLD))
    judged = min(int(hold[-1]) if hold.size else last, last)  # last frame of the hold

    def status(i: int):
        code = int(ph_arr[i])
        name = PHASE_NAMES.get(code, str(code))
        if code == int(Phase.SHAKE):
            out = [(f"result: {clip.outcome}", oc)]
            if i < last or shake_held is None:
                return out + [("shake test...", grey)]
            return out + [("shake: held" if shake_held else "shake: dropped",
                           OUTCOME_RGB["lifted" if shake_held else "dropped"])]
        if i >= judged:
            return [(f"result: {clip.outcome}", oc)]
        return [(f"{name}...", grey)]

    return status

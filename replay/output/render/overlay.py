"""Text drawn over each frame: title, phase, outcome, contact count, time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from scipy.spatial.transform import Rotation

from replay.output.render.clip import PHASE_NAMES, Clip
from replay.output.render.style import OUTCOME_RGB, VERDICT_RGB
from replay.protocol.verdict import tile_text
from replay.results.outcomes import LIFTED, NOT_LIFTED, words
from replay.results.records import Phase
from replay.study.cross_checks import run_video, video_disagreement


@lru_cache(maxsize=16)
def _font(px: int):
    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
    try:
        return ImageFont.truetype(str(ttf), px)
    except OSError:
        return ImageFont.load_default()


def draw_overlay(img: np.ndarray, lines: Sequence[tuple[str, tuple[int, int, int]]]) -> np.ndarray:
    """A copy of the (H, W, 3) uint8 frame with ``lines`` ((text, rgb 0-255) each) in a dark box at its top left."""
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


def caption_band(
    lines: Sequence[tuple[str, tuple[int, int, int]]],
    width: int,
    tile_h: int,
    *,
    height: int | None = None,
    own_rows: int = 1,
) -> np.ndarray:
    """A montage tile's caption band above its picture, (height, width, 3) uint8: :func:`clip_overlay`'s ``lines``,
    the first ``own_rows`` a row each (wrapped to ``width``), the status lines side by side, then the last line (each
    shortened to fit); text ``tile_h / 18`` px (at least 10); ``height`` px default every row, even."""
    px = max(10, int(round(tile_h / 18)))
    font = _font(px)
    pad, gap = max(3, px // 3), max(1, px // 5)
    own = max(1, min(own_rows, len(lines) - 2))
    if len(lines) >= 3:
        heads = [[(part, rgb)] for text, rgb in lines[:own] for part in wrap_text(text, font, width - 2 * pad)]
        rows = [*heads, list(lines[own:-1]), [lines[-1]]]
    else:
        rows = [[ln] for ln in lines]
    if height is None:
        height = len(rows) * (px + gap) + 2 * pad - gap
        height += height % 2
    band = Image.new("RGB", (width, height), (16, 16, 16))
    d = ImageDraw.Draw(band)
    y = pad
    for row in rows:
        x = pad
        for text, rgb in row:
            text = shorten_text(text, font, width - pad - x)
            d.text((x, y), text, font=font, fill=tuple(int(c) for c in rgb))
            x += int(font.getlength(text + "  "))
        y += px + gap
    return np.asarray(band, dtype=np.uint8)


def wrap_text(text: str, font, width: float) -> list[str]:
    """``text`` in rows at most ``width`` px wide in ``font`` (at word breaks; a word wider alone shortened)."""
    rows, cur = [], ""
    for w in text.split(" "):
        trial = f"{cur} {w}" if cur else w
        if cur and font.getlength(trial) > width:
            rows.append(cur)
            cur = w
        else:
            cur = trial
    return [shorten_text(r, font, width) for r in [*rows, cur]]


def shorten_text(text: str, font, width: float) -> str:
    """``text``, or its longest start that fits ``width`` px in ``font`` with an ellipsis."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "\u2026") > width:
        text = text[:-1]
    return text.rstrip() + "\u2026"


def rule_header(rule: str, width: int, px: int = 16) -> np.ndarray:
    """A montage's header, (h, width, 3) uint8, h even: ``rule`` wrapped to ``width`` px in ``px`` px text."""
    font = _font(px)
    rows = wrap_text(" ".join(rule.split()), font, width - 2 * px)
    h = len(rows) * (px + 4) + px
    h += h % 2
    img = Image.new("RGB", (width, h), (16, 16, 16))
    d = ImageDraw.Draw(img)
    for k, row in enumerate(rows):
        d.text((px, px // 2 + k * (px + 4)), row, font=font, fill=(235, 235, 235))
    return np.asarray(img, dtype=np.uint8)


def verdict_line(clip: Clip) -> tuple[str, tuple[int, int, int]] | None:
    """The study row's verdict (:func:`replay.protocol.verdict.tile_text`) in its colour; None without one or on
    the contact ablation's tile."""
    v = clip.row.verdict
    return None if v is None or clip.title.endswith("(contact ablation)") else (tile_text(v), VERDICT_RGB[v.word])


def video_line(clip: Clip) -> tuple[str, tuple[int, int, int]] | None:
    """``video: ...`` in the colour of what it shows where the run drawn disagrees with the sampled verdict
    (:func:`replay.study.cross_checks.video_disagreement`); else None."""
    if verdict_line(clip) is None:
        return None
    row = clip.row
    says = video_disagreement(row)
    return None if says is None else (f"video: {says}", OUTCOME_RGB[LIFTED if run_video(row)[0] else NOT_LIFTED])


def head_lines(clip: Clip) -> list[tuple[str, tuple[int, int, int]]]:
    """The lines under the title, the same on every frame: the verdict, and what the video shows where it disagrees."""
    return [ln for ln in (verdict_line(clip), video_line(clip)) if ln is not None]


def clip_overlay(clip: Clip) -> Callable[[int], list[tuple[str, tuple[int, int, int]]]]:
    """Per-frame overlay lines of a study clip: :func:`clip_title`, :func:`head_lines`, :func:`overlay_status`, and
    the contact count and time since the first frame."""
    white = (245, 245, 245)
    head = head_lines(clip)
    status_of = overlay_status(clip, "run" if head else "result")

    def lines(i: int):
        t = clip.track.time[i] - clip.track.time[0]
        return [
            (clip_title(clip), white),
            *head,
            *status_of(i),
            (f"contacts {int(clip.contact_count[i])}   t = {t:5.2f} s", white),
        ]

    return lines


def clip_title(clip: Clip) -> str:
    """The clip's title, plus the sequence unless it is the object's name or its lift (``mug_pass_1`` must not
    look like ``mug_lift``)."""
    seq = str(clip.row.sequence or "").split("/")[-1]
    name = clip.title.split(" (")[0]
    if not seq or seq in (name, f"{name}_lift"):
        return clip.title
    return f"{clip.title} - {seq}"


def overlay_status(clip: Clip, said: str = "result") -> Callable[[int], list[tuple[str, tuple[int, int, int]]]]:
    """Status lines of frame ``i``, each outcome from the frame it is decided on: the phase (``lift...``) until the
    hold ends, then ``<said>: <outcome>``; in the shake ``shake test...`` until :func:`shake_decided_frame`, then
    ``shake: held`` or ``<said>: shaken loose`` alone."""
    grey = (200, 200, 200)
    oc = OUTCOME_RGB.get(clip.outcome, (245, 245, 245))
    result = f"{said}: {words(clip.outcome)}"
    shake_held = clip.row.shake_held
    ph_arr = np.asarray(clip.phase)
    last = len(ph_arr) - 1
    hold = np.flatnonzero(ph_arr == int(Phase.HOLD))
    judged = min(int(hold[-1]) if hold.size else last, last)  # last frame of the hold
    decided = shake_decided_frame(clip)

    def status(i: int):
        code = int(ph_arr[i])
        name = PHASE_NAMES.get(code, str(code))
        if code == int(Phase.SHAKE):
            if i < decided or shake_held is None:
                return [(result, oc), ("shake test...", grey)]
            if shake_held:
                return [(result, oc), ("shake: held", OUTCOME_RGB[LIFTED])]
            return [(f"{said}: shaken loose", OUTCOME_RGB[NOT_LIFTED])]
        if i >= judged:
            return [(result, oc)]
        return [(f"{name}...", grey)]

    return status


def shake_decided_frame(clip: Clip, max_slip_m: float | None = None) -> int:
    """The frame from which the shake's verdict (``shake_held``) is settled: held, the last frame; not held, the
    first shake frame from which the object stays more than ``max_slip_m`` (m, default :attr:`Clip.shake_max_slip`)
    from where it sat in the wrist (``mano_body_0``) frame at the lift start, else the last."""
    ph = np.asarray(clip.phase)
    last = len(ph) - 1
    shake = np.flatnonzero(ph == int(Phase.SHAKE))
    if clip.row.shake_held is not False or not shake.size:
        return last
    names = clip.track.body_names
    if "mano_body_0" not in names or "object" not in names:
        return last
    w, o = names.index("mano_body_0"), names.index("object")
    lift = np.flatnonzero(ph == int(Phase.LIFT))
    ref = max(int(lift[0]) - 1, 0) if lift.size else max(int(shake[0]) - 1, 0)
    pos, quat = clip.track.body_pos, clip.track.body_quat
    in_hand = Rotation.from_quat(quat[:, w]).inv().apply(pos[:, o] - pos[:, w])  # object in the wrist frame, m
    slip = np.linalg.norm(in_hand - in_hand[ref], axis=1)
    limit = clip.shake_max_slip if max_slip_m is None else max_slip_m
    out = slip[shake] > limit
    if not out[-1]:
        return last
    start = len(out) - int(np.argmax(~out[::-1])) if not out.all() else 0
    return int(shake[start])

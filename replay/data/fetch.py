"""Stage datasets into ``<dest>/<dataset>/...`` from a mirror, GitHub or the Hub, recorded in
``<dest>/MANIFEST.json``: :func:`fetch` (guarantees in ``docs/data.md``)."""

from __future__ import annotations

import os
from pathlib import Path

from replay.data.hub import fetch_hug_bench
from replay.data.manifest import Manifest
from replay.data.sources import HUG_SPLITS, pinned_files
from replay.data.stage import stage_extra, stage_mirror_tree, stage_pinned
from replay.data.transfer import FetchResult
from replay.datasets import FETCH_ORDER
from replay.errors import FetchError

LINK_MODES = ("copy", "hardlink", "symlink")


def resolve_mirror(mirror: str | Path | None) -> Path | None:
    """``mirror`` or ``$REPLAY_MIRROR``, or None for online. Raises FetchError: the folder does not exist."""
    value = mirror if mirror is not None else os.environ.get("REPLAY_MIRROR") or None
    if value is None or value == "":
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        origin = "--mirror" if mirror is not None else "REPLAY_MIRROR"
        raise FetchError(
            f"mirror folder {path} (from {origin}) does not exist; point it at a folder laid out "
            f"like shared/datasets, or drop it to download from the internet"
        )
    return path.resolve()


def _check_choices(dataset: str, link: str, split: str) -> None:
    """Raises FetchError for an unknown dataset, link mode or HUG-Bench split."""
    if dataset != "all" and dataset not in FETCH_ORDER:
        raise FetchError(f"unknown dataset {dataset!r}; choose one of {', '.join(FETCH_ORDER)} or all")
    if link not in LINK_MODES:
        raise FetchError(f"unknown link mode {link!r}; choose one of {', '.join(LINK_MODES)}")
    if split not in HUG_SPLITS:
        raise FetchError(f"unknown HUG-Bench split {split!r}; choose one of {', '.join(HUG_SPLITS)}")


def fetch(
    dataset: str,
    dest: str | Path,
    *,
    mirror: str | Path | None = None,
    local: str | Path | None = None,
    link: str = "copy",
    split: str = "test",
    scenes: list[str] | None = None,
    hub_revision: str | None = None,
    recordings_revision: str | None = None,
    progress: bool | None = None,
    follow_symlinks: bool = False,
) -> list[FetchResult]:
    """Stage one dataset (or ``"all"``) into ``dest`` and record it in ``dest/MANIFEST.json``.

    ``mirror`` default ``$REPLAY_MIRROR`` (unset: download; HUG-Bench, never in a mirror, comes from the Hub or is
    skipped with a note in ``all``); ``local``: the user's own files laid out like the mirror; ``hub_revision``,
    ``recordings_revision``: commits of ``kevinywu/hug-bench``, ``kevinywu/1m-hugs``; ``progress`` None: bars on a
    terminal only. Raises FetchError: unknown dataset or split, missing or incomplete mirror, network failure, unknown
    upstream layout, a symlink out of a staged folder, a refused revision; IntegrityError: a mirror file or download
    does not match its pinned SHA-256."""
    _check_choices(dataset, link, split)
    dest = Path(dest)
    if local is not None:
        return _fetch_local(dataset, dest, Path(local).expanduser(), link, progress, follow_symlinks)
    mirror_dir = resolve_mirror(mirror)
    dest.mkdir(parents=True, exist_ok=True)
    man = Manifest(dest)
    names = list(FETCH_ORDER) if dataset == "all" else [dataset]
    results = []
    for name in names:
        if name == "hug-bench":
            results.append(
                _fetch_hug(
                    dest,
                    man,
                    mirror_dir,
                    link,
                    progress,
                    in_all=dataset == "all",
                    split=split,
                    scenes=scenes,
                    hub_revision=hub_revision,
                    recordings_revision=recordings_revision,
                    follow_symlinks=follow_symlinks,
                )
            )
            continue
        if mirror_dir is not None and not (mirror_dir / name).is_dir():
            raise FetchError(
                f"mirror {mirror_dir} has no {name}/ folder; use a complete mirror or drop --mirror "
                f"to download {name} from GitHub"
            )
        res = stage_pinned(name, dest, man, mirror=mirror_dir, link=link, progress=progress)
        res.pinned = len(pinned_files(name))
        if mirror_dir is not None:
            stage_extra(
                name,
                mirror_dir,
                dest,
                man=man,
                source="mirror",
                link=link,
                result=res,
                progress=progress,
                follow_symlinks=follow_symlinks,
            )
        results.append(res)
    return results


def _fetch_hug(
    dest: Path,
    man: Manifest,
    mirror_dir: Path | None,
    link: str,
    progress: bool | None,
    *,
    in_all: bool,
    split: str,
    scenes: list[str] | None,
    hub_revision: str | None,
    recordings_revision: str | None,
    follow_symlinks: bool = False,
) -> FetchResult:
    """HUG-Bench for :func:`fetch`: the mirror's copy, else skipped in ``all`` with a mirror, else from the Hub."""
    if mirror_dir is not None and (mirror_dir / "hug-bench").is_dir():
        return stage_mirror_tree(
            "hug-bench", mirror_dir, dest, man=man, link=link, progress=progress, follow_symlinks=follow_symlinks
        )
    if mirror_dir is not None and in_all:
        return FetchResult(
            "hug-bench",
            "skipped",
            note=f"skipped: the mirror {mirror_dir} has no hug-bench copy (HUG-Bench is only on the "
            f"Hugging Face Hub); fetch it online with `--dataset hug-bench` and no mirror",
        )
    res = fetch_hug_bench(
        dest,
        man,
        split=split,
        scenes=scenes,
        assets_revision=hub_revision,
        recordings_revision=recordings_revision,
        progress=progress,
    )
    if mirror_dir is not None:
        res.note = "; ".join(
            x
            for x in (f"the mirror {mirror_dir} has no hug-bench copy, so it came from the Hugging Face Hub", res.note)
            if x
        )
    return res


def _fetch_local(
    dataset: str, dest: Path, local: Path, link: str, progress: bool | None, follow_symlinks: bool = False
) -> list[FetchResult]:
    """Stage every file of the selected datasets found in ``local``. Raises FetchError: ``local`` missing or holding
    none of them; IntegrityError: a file at a pinned path differs from its pin."""
    if not local.is_dir():
        raise FetchError(f"--local folder {local} does not exist")
    names = [n for n in (FETCH_ORDER if dataset == "all" else [dataset]) if (local / n).is_dir()]
    if not names:
        raise FetchError(
            f"--local folder {local} has no {dataset if dataset != 'all' else 'dataset'} folder; lay it "
            f"out like the mirror, e.g. {local}/grab/recordings/<name>.pkl and {local}/grab/objects/"
        )
    dest.mkdir(parents=True, exist_ok=True)
    man = Manifest(dest)
    results = []
    for name in names:
        res = FetchResult(name, "local")
        stage_extra(
            name,
            local.resolve(),
            dest,
            man=man,
            source="local",
            link=link,
            result=res,
            progress=progress,
            follow_symlinks=follow_symlinks,
        )
        results.append(res)
    return results

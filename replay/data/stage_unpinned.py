"""Staging of the files a pin list does not name: a mirror's or ``--local`` folder's own files (``pinned: false``
with their SHA-256 and origin) and a HUG-Bench mirror copy."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from replay.data.confine import is_inside
from replay.data.manifest import Manifest, move_aside
from replay.data.sources import is_hidden, pinned_files
from replay.data.stage_pinned import record_pinned, stage_from_mirror, triage
from replay.data.transfer import FetchResult, clear_parts, part_path, progress_bar
from replay.errors import FetchError, IntegrityError
from replay.fileio import sha256_file

_PINNED_DATASETS = ("manosim", "grab", "taco")


def outside_link(src: Path, folder: Path, follow: bool) -> str | None:
    """The target of ``src`` when a symlink (the file or a folder above it) leads it outside ``folder``, else None;
    raises FetchError for such a link without ``follow`` (``--follow-symlinks``), naming the file and its target."""
    if is_inside(src, folder):
        return None
    target = os.path.realpath(src)
    if not follow:
        raise FetchError(
            f"{src}: a symlink to {target}, outside the staged folder {folder}; refused (a dataset "
            "may not copy files from elsewhere on this machine); pass --follow-symlinks to stage "
            "the target anyway (recorded as such in MANIFEST.json)"
        )
    return target


def stage_extra(
    dataset: str,
    root: Path,
    dest: Path,
    *,
    man: Manifest,
    source: str,
    link: str,
    result: FetchResult,
    progress: bool | None,
    follow_symlinks: bool = False,
) -> None:
    """Stage every file of ``root/<dataset>/`` the pin list does not name, as unpinned (``origin`` the absolute
    source path; repository and revision ``unknown``); a file at a pinned path is held to its pin. A symlink out
    of ``root/<dataset>`` is refused unless ``follow_symlinks`` (then ``symlink_target`` is recorded).

    Raises:
        IntegrityError: a local file at a pinned path differs from its pin.
        FetchError: a symlink leading outside the folder, without ``follow_symlinks``.
    """
    pins = {pf.path: pf for pf in pinned_files(dataset)} if dataset in _PINNED_DATASETS else {}
    folder = root / dataset
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and not is_hidden(p.relative_to(folder).as_posix())
        and ".part-" not in p.name
        and ".corrupt-" not in p.name
    )
    for src in progress_bar(
        progress, iterable=files, desc=f"{dataset} <- {source} (unpinned)", unit="file", leave=False
    ):
        key = src.relative_to(root).as_posix()
        pf = pins.get(key)
        if pf is not None:
            if source == "mirror":
                continue  # staged and counted by stage_pinned
            if src.stat().st_size != pf.size or sha256_file(src) != pf.sha256:  # before any staged copy counts
                raise IntegrityError(
                    f"{source} file {src} is at the pinned path {pf.path} but is not the pinned file (size or "
                    "SHA-256 differs): give your own recording a name of its own to stage it"
                )
            todo = triage([pf], dest, man, result=result, origin=source, progress=progress)
            for p in todo:
                n, used = stage_from_mirror(p, root, dest, link=link, on_bytes=lambda _n: None)
                record_pinned(man, p, source, link=used)
                result.staged += 1
                result.bytes += n
            result.pinned += 1
            continue
        followed = outside_link(src, folder, follow_symlinks)
        digest = sha256_file(src)
        result.unpinned += 1
        if key in man.files:
            problem = man.check(key, fix=True)
            if problem is None and man.files[key]["sha256"] == digest:
                result.skipped += 1
                continue
            if problem is None:  # the source changed since it was staged: stage the new file
                moved = move_aside(dest / key)
                result.repaired.append(
                    f"{key}: source {src} changed since it was staged; old copy moved aside to {moved.name}"
                )
            else:
                result.repaired.append(problem.describe())
        target = dest / key
        _place(src, target, link)
        man.add(
            dataset=dataset,
            source=source,
            repo="unknown",
            revision="unknown",
            path=key,
            size=src.stat().st_size,
            sha256=digest,
            link="symlink" if link == "symlink" else "copy",
            pinned=False,
            origin=str(src.resolve()),
            symlink_target=followed,
        )
        result.staged += 1
        result.bytes += src.stat().st_size
    man.save()


def _place(src: Path, target: Path, link: str) -> None:
    """Put ``src`` at ``target`` atomically: a copy or a symlink written under a partial name,
    then renamed (``hardlink`` falls back to a copy here; leftovers of interrupted writes go)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_parts(target)
    tmp = part_path(target)
    if link == "symlink":
        os.symlink(src.resolve(), tmp)
    else:
        shutil.copyfile(src, tmp)
    os.replace(tmp, target)


def stage_mirror_tree(
    dataset: str,
    mirror: Path,
    dest: Path,
    *,
    man: Manifest,
    link: str,
    progress: bool | None,
    follow_symlinks: bool = False,
) -> FetchResult:
    """Stage a dataset with no pin list (a HUG-Bench mirror copy) file by file, provenance from the mirror's own
    ``MANIFEST.json`` where it has one, else ``unknown``; symlinks as in :func:`stage_extra`.

    Raises:
        IntegrityError: a file differs from the mirror manifest's SHA-256.
        FetchError: a symlink leading outside the folder, without ``follow_symlinks``.
    """
    result = FetchResult(dataset, "mirror")
    src_root = mirror / dataset
    upstream = {}
    if (mirror / "MANIFEST.json").is_file():
        upstream = Manifest(mirror).for_dataset(dataset)
    for src in progress_bar(
        progress,
        iterable=sorted(
            p for p in src_root.rglob("*") if p.is_file() and ".cache" not in p.relative_to(src_root).parts
        ),
        desc=f"{dataset} <- mirror",
        unit="file",
    ):
        key = src.relative_to(mirror).as_posix()
        followed = outside_link(src, src_root, follow_symlinks)
        digest = sha256_file(src)
        target = dest / key
        expected = upstream.get(key, {}).get("sha256")
        if expected is not None and expected != digest:
            raise IntegrityError(
                f"mirror file {src} does not match the SHA-256 in {mirror / 'MANIFEST.json'} "
                f"({digest[:12]}… vs {expected[:12]}…); nothing was staged for {key}"
            )
        if key in man.files:
            problem = man.check(key, fix=True)
            if problem is None and man.files[key]["sha256"] == digest:
                result.skipped += 1
                continue
            if problem is not None:
                result.repaired.append(problem.describe())
        _place(src, target, link)
        prov = upstream.get(key, {})
        man.add(
            dataset=dataset,
            source="mirror",
            repo=prov.get("repo", "unknown"),
            revision=prov.get("revision", "unknown"),
            path=key,
            size=src.stat().st_size,
            sha256=digest,
            upstream_path=prov.get("upstream_path"),
            link="symlink" if link == "symlink" else "copy",
            symlink_target=followed,
        )
        result.staged += 1
        result.bytes += src.stat().st_size
    man.save()
    return result

"""Stage datasets into ``<dest>/<dataset>/...`` from a mirror, GitHub or the Hub.

Public entry point: :func:`fetch`. Every staged file is recorded in
``<dest>/MANIFEST.json`` (see :mod:`replay.data.manifest`).

Guarantees:

* **Pinned.** GitHub files come from raw-file URLs at fixed commits and must match
  the SHA-256 pinned in ``replay/data/pinned_files.json``; mirror copies are held
  to the same digests.
* **Atomic and resumable.** Each file is written to ``.<name>.part-<pid>`` in its
  final folder and renamed when complete and verified; the manifest is saved
  atomically every few dozen files and at the end. A re-run skips every file whose
  on-disk SHA-256 matches its manifest entry.
* **Never silently bad.** A staged file that no longer matches its manifest entry
  is named, moved aside (``<name>.corrupt-<time>``) and staged again.
* **Never ignored.** Every other file a mirror (``--mirror``) or a local folder
  (``--local``, laid out like the mirror) holds under a dataset folder, e.g. a user's
  own GRAB recordings and objects, is staged too and recorded as ``pinned: false``
  with its SHA-256 and ``origin`` (the absolute path it was copied from). Dot-named
  files and folders (tool and editor leftovers) are skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import urllib.error
import urllib.request
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

from replay.data.hub import fetch_hug_bench
from replay.data.manifest import Manifest, move_aside
from replay.data.sources import DATASET_NAMES, HUG_SPLITS, PinnedFile, pinned_files
from replay.data.transfer import (
    FetchResult,
    clear_parts,
    copy_hashing,
    network_hint,
    part_path,
    progress_bar,
)
from replay.errors import FetchError, IntegrityError
from replay.fileio import sha256_file

LINK_MODES = ("copy", "hardlink", "symlink")
HTTP_TIMEOUT_S = 60.0
GITHUB_WORKERS = 8
_SAVE_EVERY = 50


# --------------------------------------------------------------------------- pinned datasets


def _triage(pins: list[PinnedFile], dest: Path, man: Manifest, result: FetchResult, origin: str,
            progress: bool | None) -> list[PinnedFile]:
    """Split pinned files into already-good (counted as skipped) and to-stage.

    Staged files are re-hashed; one that fails its manifest entry (or its pin) is moved
    aside and re-staged; an unrecorded file that matches its pin is adopted.
    """
    todo = []
    for pf in progress_bar(progress, iterable=pins, desc=f"{pins[0].dataset}: check", unit="file", leave=False):
        target = dest / pf.path
        entry = man.files.get(pf.path)
        if entry is not None:
            problem = man.check(pf.path, fix=True)
            if problem is None and entry["sha256"] == pf.sha256:
                result.skipped += 1
                continue
            if problem is not None:
                result.repaired.append(problem.describe())
            else:  # matches a stale entry whose digest differs from the pin
                moved = move_aside(target)
                del man.files[pf.path]
                result.repaired.append(f"{pf.path}: staged copy differs from the pinned SHA-256; "
                                       f"moved aside to {moved.name}")
        elif target.exists() or target.is_symlink():
            if target.exists() and sha256_file(target) == pf.sha256:
                _record(man, pf, origin, "symlink" if target.is_symlink() else "copy")
                result.skipped += 1
                continue
            moved = move_aside(target)
            result.repaired.append(f"{pf.path}: unrecorded file with the wrong SHA-256 moved aside to {moved.name}")
        todo.append(pf)
    return todo


def _record(man: Manifest, pf: PinnedFile, origin: str, link: str) -> None:
    src = pf.source
    man.add(dataset=pf.dataset, source=origin, repo=src.repo_url, revision=src.commit, path=pf.path,
            size=pf.size, sha256=pf.sha256, upstream_path=src.upstream_path(pf.relpath), link=link, pinned=True)


def _check_digest(pf: PinnedFile, n: int, digest: str, tmp: Path, where: str) -> None:
    if digest != pf.sha256 or n != pf.size:
        tmp.unlink(missing_ok=True)
        raise IntegrityError(
            f"{where} does not match the pinned {pf.source.repo}@{pf.source.commit[:7]}:"
            f"{pf.source.upstream_path(pf.relpath)} (size {n} vs {pf.size}, sha256 {digest[:12]}… vs "
            f"{pf.sha256[:12]}…); nothing was staged for {pf.path}"
        )


def mirror_source(pf: PinnedFile, mirror: Path) -> Path:
    """Where ``mirror`` keeps a pinned file: at its staging path, else at its ``mirror_path``
    (:data:`replay.data.sources.MIRROR_ALIASES`)."""
    src = mirror / pf.path
    if not src.is_file() and pf.mirror_path is not None:
        return mirror / pf.mirror_path
    return src


def _stage_from_mirror(pf: PinnedFile, mirror: Path, dest: Path, link: str,
                       on_bytes: Callable[[int], None]) -> tuple[int, str]:
    """Stage one pinned file from the mirror; returns (bytes written, link mode used)."""
    src = mirror_source(pf, mirror)
    target = dest / pf.path
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_parts(target)
    tmp = part_path(target)
    if link != "copy":
        digest = sha256_file(src)
        _check_digest(pf, src.stat().st_size, digest, tmp, f"mirror file {src}")
        try:
            if link == "hardlink":
                os.link(src, tmp)
            else:
                os.symlink(src.resolve(), tmp)
            os.replace(tmp, target)
            on_bytes(pf.size)
            return 0, link
        except OSError:
            tmp.unlink(missing_ok=True)
            if link == "symlink":
                raise
            # hardlink across file systems / onto a protected file: fall back to a copy
    with open(src, "rb") as f:
        n, digest = copy_hashing(f, tmp, on_bytes)
    _check_digest(pf, n, digest, tmp, f"mirror file {src}")
    os.replace(tmp, target)
    return n, "copy"


def _http_open(url: str):
    """Open ``url`` for streaming (the network boundary; tests replace urlopen)."""
    req = urllib.request.Request(url, headers={"User-Agent": "grasp-replay-fetch/0.1"})
    return urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S)


def _stage_from_github(pf: PinnedFile, dest: Path, on_bytes: Callable[[int], None]) -> int:
    url = pf.source.raw_url(pf.relpath)
    target = dest / pf.path
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_parts(target)
    tmp = part_path(target)
    try:
        with _http_open(url) as resp:
            n, digest = copy_hashing(resp, tmp, on_bytes)
    except urllib.error.HTTPError as exc:
        tmp.unlink(missing_ok=True)
        if exc.code == 404:
            raise FetchError(f"{url} returned 404: {pf.source.upstream_path(pf.relpath)} is not in "
                             f"{pf.source.repo} at commit {pf.source.commit}") from None
        raise FetchError(f"{url} returned HTTP {exc.code} {exc.reason}; try again later or use --mirror DIR") from None
    except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise FetchError(network_hint(f"raw.githubusercontent.com for {pf.dataset} "
                                      f"({pf.source.repo}@{pf.source.commit[:7]})", reason)) from None
    _check_digest(pf, n, digest, tmp, f"download {url}")
    os.replace(tmp, target)
    return n


def _stage_pinned(dataset: str, dest: Path, man: Manifest, *, mirror: Path | None, link: str,
                  progress: bool | None) -> FetchResult:
    origin = "mirror" if mirror is not None else "github"
    result = FetchResult(dataset, origin)
    pins = pinned_files(dataset)
    if mirror is not None:
        missing = [pf.path for pf in pins if not mirror_source(pf, mirror).is_file()]
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise FetchError(f"mirror {mirror} lacks {len(missing)} of the {len(pins)} files of {dataset!r}: {shown}")
    todo = _triage(pins, dest, man, result, origin, progress)
    if not todo:
        return result
    total = sum(pf.size for pf in todo)
    bar = progress_bar(progress, total=total, unit="B", unit_scale=True, desc=f"{dataset} <- {origin}")
    done = 0
    try:
        if mirror is not None:
            for pf in todo:
                n, used = _stage_from_mirror(pf, mirror, dest, link, bar.update)
                _record(man, pf, origin, used)
                result.staged += 1
                result.bytes += n
                done += 1
                if done % _SAVE_EVERY == 0:
                    man.save()
        else:
            with ThreadPoolExecutor(GITHUB_WORKERS) as pool:
                futures = {pool.submit(_stage_from_github, pf, dest, bar.update): pf for pf in todo}
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
                    for fut in finished:
                        exc = fut.exception()
                        if exc is not None:
                            for other in pending:
                                other.cancel()
                            raise exc
                        _record(man, futures[fut], origin, "copy")
                        result.staged += 1
                        result.bytes += fut.result()
                        done += 1
                        if done % _SAVE_EVERY == 0:
                            man.save()
    finally:
        bar.close()
        man.save()
    return result


# --------------------------------------------------------------------------- files not on the pin list


def _is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _stage_extra(dataset: str, root: Path, dest: Path, man: Manifest, *, source: str, link: str,
                 result: FetchResult, progress: bool | None) -> None:
    """Stage every file of ``root/<dataset>/`` the pin list does not name, as unpinned.

    A file whose staging path is pinned is held to its pin instead (staged only from a
    ``--local`` folder: a mirror's pinned files went through :func:`_stage_pinned`).
    Unpinned entries record ``pinned: false``, their SHA-256 and ``origin`` (the
    absolute source path); repository and revision are ``unknown``.

    Raises:
        IntegrityError: a local file at a pinned path differs from its pin.
    """
    pins = {pf.path: pf for pf in pinned_files(dataset)} if dataset in _PINNED_DATASETS else {}
    folder = root / dataset
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _is_hidden(p.relative_to(folder).as_posix())
                   and ".part-" not in p.name and ".corrupt-" not in p.name)
    for src in progress_bar(progress, iterable=files, desc=f"{dataset} <- {source} (unpinned)", unit="file", leave=False):
        key = src.relative_to(root).as_posix()
        pf = pins.get(key)
        if pf is not None:
            if source == "mirror":
                continue  # staged and counted by _stage_pinned
            todo = _triage([pf], dest, man, result, source, progress)
            for p in todo:
                n, used = _stage_from_mirror(p, root, dest, link, lambda _n: None)
                _record(man, p, source, used)
                result.staged += 1
                result.bytes += n
            result.pinned += 1
            continue
        digest = sha256_file(src)
        result.unpinned += 1
        if key in man.files:
            problem = man.check(key, fix=True)
            if problem is None and man.files[key]["sha256"] == digest:
                result.skipped += 1
                continue
            if problem is None:  # the source changed since it was staged: stage the new file
                moved = move_aside(dest / key)
                result.repaired.append(f"{key}: source {src} changed since it was staged; old copy moved aside "
                                       f"to {moved.name}")
            else:
                result.repaired.append(problem.describe())
        target = dest / key
        _place(src, target, link)
        man.add(dataset=dataset, source=source, repo="unknown", revision="unknown", path=key,
                size=src.stat().st_size, sha256=digest, link="symlink" if link == "symlink" else "copy",
                pinned=False, origin=str(src.resolve()))
        result.staged += 1
        result.bytes += src.stat().st_size
    man.save()


_PINNED_DATASETS = ("manosim", "grab", "taco")


# --------------------------------------------------------------------------- entry point


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


def resolve_mirror(mirror: str | Path | None) -> Path | None:
    """The mirror folder to use: ``mirror`` or ``$REPLAY_MIRROR``, or ``None`` for online.

    Raises:
        FetchError: the folder does not exist.
    """
    value = mirror if mirror is not None else os.environ.get("REPLAY_MIRROR") or None
    if value is None or value == "":
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        origin = "--mirror" if mirror is not None else "REPLAY_MIRROR"
        raise FetchError(f"mirror folder {path} (from {origin}) does not exist; point it at a folder laid out "
                         f"like shared/datasets, or drop it to download from the internet")
    return path.resolve()


def fetch(dataset: str, dest: str | Path, *, mirror: str | Path | None = None, local: str | Path | None = None,
          link: str = "copy",
          split: str = "test", scenes: list[str] | None = None, hub_revision: str | None = None,
          recordings_revision: str | None = None, progress: bool | None = None) -> list[FetchResult]:
    """Stage one dataset (or ``"all"``) into ``dest`` and record it in ``dest/MANIFEST.json``.

    Args:
        dataset: ``manosim``, ``grab``, ``taco``, ``hug-bench`` or ``all``.
        dest: staging root; files land in ``dest/<dataset>/...`` (mirror layout).
        mirror: offline mirror folder (default ``$REPLAY_MIRROR``; ``None`` and unset =
            download). With a mirror, ``manosim``/``grab``/``taco`` come from it and never
            from the network. HUG-Bench has no mirror copy: asked for explicitly it is
            fetched from the Hub; as part of ``all`` with a mirror it is skipped (with
            a note in the result) so that an offline ``all`` succeeds.
        local: a folder of the user's own files laid out like the mirror
            (``<local>/grab/recordings/*.pkl``, ``<local>/grab/objects/<name>/``):
            every file of the selected datasets it holds is staged, pinned ones held
            to their pins, the others recorded as unpinned; nothing is downloaded.
        link: ``copy`` (default), ``hardlink`` (falls back to copy across file systems)
            or ``symlink`` for mirror files.
        split, scenes: HUG-Bench selection (``val``/``test``; scene names such as
            ``small_2``; default every scene of the split).
        hub_revision, recordings_revision: override the pinned revisions of
            ``kevinywu/hug-bench`` and ``kevinywu/1m-hugs``.
        progress: tqdm bars (``None``: only on a terminal).

    Returns:
        One :class:`FetchResult` per dataset.

    Raises:
        FetchError: unknown dataset or split, missing mirror (or mirror lacking the
            dataset's files), network failure (message names the source and suggests
            ``--mirror``), or an upstream layout the fetch does not recognise.
        IntegrityError: a mirror file or download does not match its pinned SHA-256.
    """
    if dataset != "all" and dataset not in DATASET_NAMES:
        raise FetchError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASET_NAMES)} or all")
    if link not in LINK_MODES:
        raise FetchError(f"unknown link mode {link!r}; choose one of {', '.join(LINK_MODES)}")
    if split not in HUG_SPLITS:
        raise FetchError(f"unknown HUG-Bench split {split!r}; choose one of {', '.join(HUG_SPLITS)}")
    dest = Path(dest)
    if local is not None:
        return _fetch_local(dataset, dest, Path(local).expanduser(), link, progress)
    mirror_dir = resolve_mirror(mirror)
    dest.mkdir(parents=True, exist_ok=True)
    man = Manifest(dest)
    names = list(DATASET_NAMES) if dataset == "all" else [dataset]
    results = []
    for name in names:
        if name == "hug-bench":
            if mirror_dir is not None and (mirror_dir / "hug-bench").is_dir():
                results.append(_stage_mirror_tree("hug-bench", mirror_dir, dest, man, link, progress))
            elif mirror_dir is not None and dataset == "all":
                results.append(FetchResult(
                    "hug-bench", "skipped",
                    note=f"skipped: the mirror {mirror_dir} has no hug-bench copy (HUG-Bench is only on the "
                         f"Hugging Face Hub); fetch it online with `--dataset hug-bench` and no mirror"))
            else:
                res = fetch_hug_bench(dest, man, split=split, scenes=scenes, assets_revision=hub_revision,
                                      recordings_revision=recordings_revision, progress=progress)
                if mirror_dir is not None:
                    res.note = "; ".join(x for x in (f"the mirror {mirror_dir} has no hug-bench copy, so it "
                                                     f"came from the Hugging Face Hub", res.note) if x)
                results.append(res)
            continue
        if mirror_dir is not None and not (mirror_dir / name).is_dir():
            raise FetchError(f"mirror {mirror_dir} has no {name}/ folder; use a complete mirror or drop --mirror "
                             f"to download {name} from GitHub")
        res = _stage_pinned(name, dest, man, mirror=mirror_dir, link=link, progress=progress)
        res.pinned = len(pinned_files(name))
        if mirror_dir is not None:
            _stage_extra(name, mirror_dir, dest, man, source="mirror", link=link, result=res, progress=progress)
        results.append(res)
    return results


def _fetch_local(dataset: str, dest: Path, local: Path, link: str, progress: bool | None) -> list[FetchResult]:
    """``fetch(local=...)``: stage every file of the selected datasets found in ``local``.

    Raises:
        FetchError: ``local`` is missing or holds none of the selected datasets.
        IntegrityError: a file at a pinned path differs from its pin.
    """
    if not local.is_dir():
        raise FetchError(f"--local folder {local} does not exist")
    names = [n for n in (DATASET_NAMES if dataset == "all" else [dataset]) if (local / n).is_dir()]
    if not names:
        raise FetchError(f"--local folder {local} has no {dataset if dataset != 'all' else 'dataset'} folder; lay it "
                         f"out like the mirror, e.g. {local}/grab/recordings/<name>.pkl and {local}/grab/objects/")
    dest.mkdir(parents=True, exist_ok=True)
    man = Manifest(dest)
    results = []
    for name in names:
        res = FetchResult(name, "local")
        _stage_extra(name, local.resolve(), dest, man, source="local", link=link, result=res, progress=progress)
        results.append(res)
    return results


def _stage_mirror_tree(dataset: str, mirror: Path, dest: Path, man: Manifest, link: str,
                       progress: bool | None) -> FetchResult:
    """Stage a dataset with no pin list (a HUG-Bench mirror copy) file by file.

    Provenance comes from the mirror's own ``<dataset>/MANIFEST.json`` entries when it
    has one (a staged ``data/`` folder can serve as a mirror), else it is recorded as
    ``unknown``.
    """
    result = FetchResult(dataset, "mirror")
    src_root = mirror / dataset
    upstream = {}
    if (mirror / "MANIFEST.json").is_file():
        upstream = Manifest(mirror).for_dataset(dataset)
    for src in progress_bar(progress, iterable=sorted(p for p in src_root.rglob("*") if p.is_file() and
                                              ".cache" not in p.relative_to(src_root).parts),
                    desc=f"{dataset} <- mirror", unit="file"):
        key = src.relative_to(mirror).as_posix()
        digest = sha256_file(src)
        target = dest / key
        expected = upstream.get(key, {}).get("sha256")
        if expected is not None and expected != digest:
            raise IntegrityError(f"mirror file {src} does not match the SHA-256 in {mirror / 'MANIFEST.json'} "
                                 f"({digest[:12]}… vs {expected[:12]}…); nothing was staged for {key}")
        if key in man.files:
            problem = man.check(key, fix=True)
            if problem is None and man.files[key]["sha256"] == digest:
                result.skipped += 1
                continue
            if problem is not None:
                result.repaired.append(problem.describe())
        _place(src, target, link)
        prov = upstream.get(key, {})
        man.add(dataset=dataset, source="mirror", repo=prov.get("repo", "unknown"),
                revision=prov.get("revision", "unknown"), path=key, size=src.stat().st_size, sha256=digest,
                upstream_path=prov.get("upstream_path"), link="symlink" if link == "symlink" else "copy")
        result.staged += 1
        result.bytes += src.stat().st_size
    man.save()
    return result

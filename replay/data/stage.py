"""Staging a dataset's files into ``data/``: pinned files from a mirror or GitHub at fixed commits, held to their size
and SHA-256 and renamed into place when verified; unpinned files recorded with their SHA-256 and origin."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path

from replay import console
from replay.data.confine import is_inside
from replay.data.manifest import Manifest, move_aside
from replay.data.sources import PINNED_DATASETS, PinnedFile, is_hidden, pinned_files
from replay.data.transfer import FetchResult, copy_hashing, fresh_part, network_hint
from replay.errors import FetchError, IntegrityError
from replay.fileio import sha256_file

HTTP_TIMEOUT_S = 60.0
GITHUB_WORKERS = 8
_SAVE_EVERY = 50


def _triage(
    pins: list[PinnedFile], dest: Path, man: Manifest, *, result: FetchResult, origin: str, progress: bool | None
) -> list[PinnedFile]:
    """Split pinned files into good (skipped) and to stage: a staged file failing its pin is moved aside and re-staged;
    an unrecorded one matching its pin is adopted."""
    todo = []
    for pf in console.bar(progress, iterable=pins, desc=f"{pins[0].dataset}: check", unit="file", leave=False):
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
                result.repaired.append(
                    f"{pf.path}: staged copy differs from the pinned SHA-256; moved aside to {moved.name}"
                )
        elif target.exists() or target.is_symlink():
            if target.exists() and sha256_file(target) == pf.sha256:
                _record_pinned(man, pf, origin, link="symlink" if target.is_symlink() else "copy")
                result.skipped += 1
                continue
            moved = move_aside(target)
            result.repaired.append(f"{pf.path}: unrecorded file with the wrong SHA-256 moved aside to {moved.name}")
        todo.append(pf)
    return todo


def _record_pinned(man: Manifest, pf: PinnedFile, origin: str, *, link: str) -> None:
    """Record ``pf`` as staged from ``origin`` (``link``: copy, hardlink or symlink)."""
    src = pf.source
    man.add(
        dataset=pf.dataset,
        source=origin,
        repo=src.repo_url,
        revision=src.commit,
        path=pf.path,
        size=pf.size,
        sha256=pf.sha256,
        upstream_path=src.upstream_path(pf.relpath),
        link=link,
        pinned=True,
    )


def _check_digest(pf: PinnedFile, n: int, digest: str, tmp: Path, where: str) -> None:
    """Raises IntegrityError (and removes ``tmp``) unless ``n`` bytes of SHA-256 ``digest`` are ``pf``'s pin."""
    if digest != pf.sha256 or n != pf.size:
        tmp.unlink(missing_ok=True)
        raise IntegrityError(
            f"{where} does not match the pinned {pf.source.repo}@{pf.source.commit[:7]}:"
            f"{pf.source.upstream_path(pf.relpath)} (size {n} vs {pf.size}, sha256 {digest[:12]}… vs "
            f"{pf.sha256[:12]}…); nothing was staged for {pf.path}"
        )


def mirror_source(pf: PinnedFile, mirror: Path) -> Path:
    """Where ``mirror`` keeps ``pf``: its staging path, else its ``mirror_path``."""
    src = mirror / pf.path
    if not src.is_file() and pf.mirror_path is not None:
        return mirror / pf.mirror_path
    return src


def _stage_from_mirror(
    pf: PinnedFile, mirror: Path, dest: Path, *, link: str, on_bytes: Callable[[int], None]
) -> tuple[int, str]:
    """Stage one pinned file from the mirror; returns (bytes written, link mode)."""
    src = mirror_source(pf, mirror)
    target = dest / pf.path
    tmp = fresh_part(target)
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
    """Open ``url`` for streaming (tests replace urlopen)."""
    req = urllib.request.Request(url, headers={"User-Agent": "grasp-replay-fetch/0.1"})
    return urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S)


def _stage_from_github(pf: PinnedFile, dest: Path, on_bytes: Callable[[int], None]) -> int:
    url = pf.source.raw_url(pf.relpath)
    target = dest / pf.path
    tmp = fresh_part(target)
    try:
        with _http_open(url) as resp:
            n, digest = copy_hashing(resp, tmp, on_bytes)
    except urllib.error.HTTPError as exc:
        tmp.unlink(missing_ok=True)
        if exc.code == 404:
            raise FetchError(
                f"{url} returned 404: {pf.source.upstream_path(pf.relpath)} is not in "
                f"{pf.source.repo} at commit {pf.source.commit}"
            ) from None
        raise FetchError(f"{url} returned HTTP {exc.code} {exc.reason}; try again later or use --mirror DIR") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise FetchError(
            network_hint(
                f"raw.githubusercontent.com for {pf.dataset} ({pf.source.repo}@{pf.source.commit[:7]})", reason
            )
        ) from None
    _check_digest(pf, n, digest, tmp, f"download {url}")
    os.replace(tmp, target)
    return n


def stage_pinned(
    dataset: str, dest: Path, man: Manifest, *, mirror: Path | None, link: str, progress: bool | None
) -> FetchResult:
    """Stage every pinned file of ``dataset`` into ``dest`` from ``mirror`` (None: GitHub). Raises FetchError: the
    mirror lacks files or a download fails; IntegrityError: a file does not match its pin."""
    origin = "mirror" if mirror is not None else "github"
    result = FetchResult(dataset, origin)
    pins = pinned_files(dataset)
    if mirror is not None:
        missing = [pf.path for pf in pins if not mirror_source(pf, mirror).is_file()]
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise FetchError(f"mirror {mirror} lacks {len(missing)} of the {len(pins)} files of {dataset!r}: {shown}")
    todo = _triage(pins, dest, man, result=result, origin=origin, progress=progress)
    if not todo:
        return result
    total = sum(pf.size for pf in todo)
    bar = console.bar(progress, total=total, unit="B", unit_scale=True, desc=f"{dataset} <- {origin}")

    def staged(pf: PinnedFile, n: int, used: str) -> None:
        _record_pinned(man, pf, origin, link=used)
        result.staged += 1
        result.bytes += n
        if result.staged % _SAVE_EVERY == 0:
            man.save()

    try:
        if mirror is not None:
            for pf in todo:
                staged(pf, *_stage_from_mirror(pf, mirror, dest, link=link, on_bytes=bar.update))
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
                        staged(futures[fut], fut.result(), "copy")
    finally:
        bar.close()
        man.save()
    return result


def outside_link(src: Path, folder: Path, follow: bool) -> str | None:
    """The target of a symlink leading ``src`` outside ``folder``, else None; FetchError unless ``follow``."""
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
    """Stage every file of ``root/<dataset>/`` the pin list does not name as unpinned (a file at a pinned path held to
    its pin). Raises IntegrityError: it differs from its pin; FetchError: a symlink leading outside, without
    ``follow_symlinks``."""
    pins = {pf.path: pf for pf in pinned_files(dataset)} if dataset in PINNED_DATASETS else {}
    folder = root / dataset
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and not is_hidden(p.relative_to(folder).as_posix())
        and ".part-" not in p.name
        and ".corrupt-" not in p.name
    )
    for src in console.bar(
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
            todo = _triage([pf], dest, man, result=result, origin=source, progress=progress)
            for p in todo:
                n, used = _stage_from_mirror(p, root, dest, link=link, on_bytes=lambda _n: None)
                _record_pinned(man, p, source, link=used)
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
    """Put ``src`` at ``target`` atomically (written under a partial name, renamed; ``hardlink`` copies here)."""
    tmp = fresh_part(target)
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
    """Stage an unpinned dataset (a HUG-Bench mirror copy) file by file, provenance from the mirror's ``MANIFEST.json``
    else ``unknown``. Raises IntegrityError: a file differs from the manifest's SHA-256; FetchError: as
    :func:`stage_extra`."""
    result = FetchResult(dataset, "mirror")
    src_root = mirror / dataset
    upstream = {}
    if (mirror / "MANIFEST.json").is_file():
        upstream = Manifest(mirror).for_dataset(dataset)
    for src in console.bar(
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

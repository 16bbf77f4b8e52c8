"""HUG-Bench from the Hugging Face Hub: object assets (``kevinywu/hug-bench``) and each scene's ``aria_data.pkl``
(``kevinywu/1m-hugs``), by range reads of an uncompressed scene tar where there is no plain file. ``huggingface_hub``
is called through its module attributes (the tests' boundary)."""

from __future__ import annotations

import os
import re
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from replay import console
from replay.data.confine import safe_relpath
from replay.data.manifest import Manifest
from replay.data.sources import HUG_BENCH_ASSETS, HUG_RECORDINGS, HubRepo
from replay.data.transfer import FetchResult, copy_hashing, fresh_part, network_hint
from replay.errors import FetchError, IntegrityError
from replay.fileio import sha256_file

DATASET = "hug-bench"
RECORDING_NAME = "aria_data.pkl"
#: bytes per range request: walking tar headers, and streaming the selected member
TAR_BLOCK_SIZE = 1 << 16
MEMBER_READ_SIZE = 8 << 20
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.bz2", ".tar.xz", ".zip")
_SHA_RE = re.compile(r"[0-9a-f]{40}")


def _hub_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [OSError, ConnectionError, TimeoutError]
    for mod, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        try:
            errs.append(getattr(__import__(mod), name))
        except (ImportError, AttributeError):
            pass
    return tuple(errs)


def _unreachable(what: str, exc: BaseException) -> FetchError:
    """FetchError for a failed Hub call on ``what``: no offline mirror holds HUG-Bench."""
    return FetchError(
        network_hint(
            f"huggingface.co for {what}",
            exc,
            "HUG-Bench is only on the Hugging Face Hub (the offline mirror does not hold it): run this on a machine "
            "with network access and copy data/hug-bench over",
        )
    )


def _is_archive(path: str) -> bool:
    return path.lower().endswith(_ARCHIVE_SUFFIXES)


def resolve_revision(repo: HubRepo, revision: str | None) -> str:
    """``revision`` or the pinned one, a 40-hex commit; FetchError when there is none, or for a branch or tag."""
    rev = revision or repo.revision
    if rev is None:
        raise FetchError(
            f"{repo.repo_id} has no pinned commit (replay/data/sources.py); give the one to fetch with "
            f"--revision <40-hex commit> (listed at {repo.repo_url}/commits/main)"
        )
    if not _SHA_RE.fullmatch(rev):
        raise FetchError(
            f"revision {rev!r} of {repo.repo_id} is not a commit (a branch or tag moves); give the "
            f"40-hex commit hash (listed at {repo.repo_url}/commits/main)"
        )
    return rev


def _list(repo: HubRepo, sha: str) -> list[str]:
    import huggingface_hub as hfh

    try:
        return list(hfh.list_repo_files(repo.repo_id, repo_type=repo.repo_type, revision=sha))
    except _hub_errors() as exc:
        raise _unreachable(f"{repo.repo_id}@{sha[:7]}", exc) from None


def scenes_in_split(asset_files: list[str], split: str) -> list[str]:
    """Scene names with assets under ``hug_bench/<split>/`` (plain files or ``<scene>.tar``)."""
    prefix = f"hug_bench/{split}/"
    found = set()
    for p in asset_files:
        if not p.startswith(prefix):
            continue
        rest = p[len(prefix) :]
        if "/" in rest:
            found.add(rest.split("/", 1)[0])
        elif _is_archive(rest):
            found.add(re.sub(r"\.(tar(\.\w+)?|tgz|zip)$", "", rest))
    return sorted(found)


def _record_hub(man: Manifest, repo: HubRepo, sha: str, key: str, upstream_path: str, path: Path) -> None:
    man.add(
        dataset=DATASET,
        source="hub",
        repo=repo.repo_url,
        revision=sha,
        path=key,
        size=path.stat().st_size,
        sha256=sha256_file(path),
        upstream_path=upstream_path,
    )


def _good(man: Manifest, key: str, result: FetchResult) -> bool:
    """Whether ``key`` is staged and matches its entry (repairs if not)."""
    if key not in man.files:
        return False
    problem = man.check(key, fix=True)
    if problem is None:
        return True
    result.repaired.append(problem.describe())
    return False


def fetch_assets(
    dest: Path,
    man: Manifest,
    *,
    split: str,
    scenes: list[str] | None,
    sha: str,
    result: FetchResult,
    progress: bool | None,
) -> list[str]:
    """Stage the object assets of the selected scenes; returns the scene list used."""
    import huggingface_hub as hfh

    repo = HUG_BENCH_ASSETS
    files = _list(repo, sha)
    available = scenes_in_split(files, split)
    if not available:
        tops = sorted({p.split("/", 1)[0] for p in files})[:20]
        raise FetchError(
            f"{repo.repo_id}@{sha[:7]} has no assets under hug_bench/{split}/ (top-level entries: "
            f"{', '.join(tops) or 'none'}); the repository layout may have changed"
        )
    chosen = available if not scenes else list(scenes)
    unknown = [s for s in chosen if s not in available]
    if unknown:
        raise FetchError(
            f"unknown HUG-Bench scene(s) {', '.join(unknown)} in split {split!r}; available: {', '.join(available)}"
        )
    root = dest / DATASET
    wanted = {s: [p for p in files if p.startswith(f"hug_bench/{split}/{s}/") and not _is_archive(p)] for s in chosen}
    need = [s for s in chosen if not wanted[s] or not all(_good(man, f"{DATASET}/{p}", result) for p in wanted[s])]
    result.skipped += sum(len(wanted[s]) for s in chosen if s not in need)
    plain = [s for s in need if wanted[s]]
    if plain:
        try:
            hfh.snapshot_download(
                repo_id=repo.repo_id,
                repo_type=repo.repo_type,
                revision=sha,
                allow_patterns=[f"hug_bench/{split}/{s}/**" for s in plain],
                ignore_patterns=[f"*{x}" for x in _ARCHIVE_SUFFIXES],
                local_dir=str(root),
            )
        except _hub_errors() as exc:
            man.save()
            raise _unreachable(f"{repo.repo_id}@{sha[:7]}", exc) from None
        for s in plain:
            for p in wanted[s]:
                local = root / safe_relpath(p, f"{repo.repo_id}@{sha[:7]}", "file")
                if not local.is_file():
                    raise FetchError(f"snapshot_download of {repo.repo_id}@{sha[:7]} did not produce {p}")
                _record_hub(man, repo, sha, f"{DATASET}/{p}", p, local)
                result.staged += 1
                result.bytes += local.stat().st_size
    for s in (s for s in need if not wanted[s]):  # assets packed as <scene>.tar only
        tars = [
            p
            for p in files
            if p.startswith(f"hug_bench/{split}/") and _is_archive(p) and PurePosixPath(p).name.split(".")[0] == s
        ]
        prefix = f"hug_bench/{split}/{s}"

        def place(name: str, s=s, prefix=prefix) -> str:
            parts = PurePosixPath(name).parts
            tail = parts[parts.index(s) + 1 :] if s in parts else parts
            return f"{prefix}/{'/'.join(tail)}"

        for key, n, member in _stream_tar_members(
            repo, sha, tars[0], root, select=lambda m: m.isfile(), place=place, first_only=False, progress=progress
        ):
            _record_hub(man, repo, sha, f"{DATASET}/{key}", f"{tars[0]}:{member}", root / key)
            result.staged += 1
            result.bytes += n
    man.save()
    return chosen


def find_recording(files: list[str], split: str, scene: str) -> tuple[str, str]:
    """``("file", path)`` or ``("tar", path)`` of a scene's ``aria_data.pkl``. Raises FetchError: no match, ambiguous
    across splits, or only a compressed archive."""

    def prefer_split(cands: list[str]) -> list[str]:
        with_split = [c for c in cands if split in PurePosixPath(c).parts]
        return with_split or cands

    direct = prefer_split(
        [
            p
            for p in files
            if p.endswith(f"/{scene}/{RECORDING_NAME}")
            or p.endswith(f"/{scene}/processed/{RECORDING_NAME}")
            or p == f"{scene}/{RECORDING_NAME}"
        ]
    )
    if len(direct) == 1:
        return "file", direct[0]
    if len(direct) > 1:
        raise FetchError(f"several recordings match scene {scene!r} ({', '.join(direct)}); pass the split")
    tars = prefer_split([p for p in files if PurePosixPath(p).name == f"{scene}.tar"])
    if len(tars) == 1:
        return "tar", tars[0]
    if len(tars) > 1:
        raise FetchError(f"several scene tars match {scene!r} ({', '.join(tars)}); pass the split")
    packed = [p for p in files if PurePosixPath(p).name.split(".")[0] == scene and _is_archive(p)]
    if packed:
        raise FetchError(
            f"scene {scene!r} is only available as the compressed archive {packed[0]}; its "
            f"{RECORDING_NAME} cannot be range-read without transferring the whole archive, "
            f"so it was not fetched"
        )
    raise FetchError(
        f"no {RECORDING_NAME} for scene {scene!r} ({split}) in {HUG_RECORDINGS.repo_id}: looked for "
        f"'.../{scene}/{RECORDING_NAME}' and '.../{scene}.tar'"
    )


def _stream_tar_members(
    repo: HubRepo, sha: str, tar_path: str, root: Path, *, select, place, first_only: bool, progress: bool | None
):
    """Yield ``(key, bytes, member name)`` of selected members of a remote uncompressed tar, in small ranges."""
    import huggingface_hub as hfh

    fs = hfh.HfFileSystem()
    remote = f"datasets/{repo.repo_id}/{tar_path}"
    try:
        with fs.open(remote, "rb", revision=sha, block_size=TAR_BLOCK_SIZE) as fobj:
            with tarfile.open(fileobj=fobj, mode="r:") as tf:
                for member in tf:
                    if not select(member):
                        continue
                    where = f"{repo.repo_id}@{sha[:7]}:{tar_path}"
                    safe_relpath(member.name, where, "member")  # confined before anything is written
                    key = safe_relpath(place(member.name), where, "member")
                    target = root / key
                    tmp = fresh_part(target)
                    src = tf.extractfile(member)
                    bar = console.bar(
                        progress,
                        total=member.size,
                        unit="B",
                        unit_scale=True,
                        desc=f"{PurePosixPath(tar_path).name}:{PurePosixPath(member.name).name}",
                    )
                    try:
                        n, _ = copy_hashing(src, tmp, bar.update, chunk=MEMBER_READ_SIZE)
                    finally:
                        bar.close()
                    if n != member.size:
                        tmp.unlink(missing_ok=True)
                        raise IntegrityError(f"{tar_path}:{member.name} ended after {n} of {member.size} bytes")
                    os.replace(tmp, target)
                    yield key, n, member.name
                    if first_only:
                        return
    except tarfile.TarError as exc:
        raise FetchError(f"{repo.repo_id}@{sha[:7]}:{tar_path} is not a readable uncompressed tar ({exc})") from None
    except _hub_errors() as exc:
        raise _unreachable(f"{repo.repo_id}@{sha[:7]}:{tar_path}", exc) from None


def fetch_recordings(
    dest: Path, man: Manifest, *, split: str, scenes: list[str], sha: str, result: FetchResult, progress: bool | None
) -> None:
    """Stage ``scenes/<split>/<scene>/aria_data.pkl`` for every selected scene."""
    import huggingface_hub as hfh

    repo = HUG_RECORDINGS
    root = dest / DATASET
    need = [s for s in scenes if not _good(man, f"{DATASET}/scenes/{split}/{s}/{RECORDING_NAME}", result)]
    result.skipped += len(scenes) - len(need)
    if not need:
        return
    files = _list(repo, sha)
    for s in need:
        kind, path = find_recording(files, split, s)
        key = f"scenes/{split}/{s}/{RECORDING_NAME}"
        target = root / key
        if kind == "file":
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".hfdl-") as tmpdir:
                try:
                    got = hfh.hf_hub_download(
                        repo.repo_id, path, repo_type=repo.repo_type, revision=sha, local_dir=tmpdir
                    )
                except _hub_errors() as exc:
                    man.save()
                    raise _unreachable(f"{repo.repo_id}@{sha[:7]}:{path}", exc) from None
                os.replace(got, target)
            upstream = path
        else:
            member_name = None
            for _key, _n, member_name in _stream_tar_members(  # noqa: B007 - read after the loop
                repo,
                sha,
                path,
                root,
                select=lambda m: m.isfile() and PurePosixPath(m.name).name == RECORDING_NAME,
                place=lambda _name, key=key: key,
                first_only=True,
                progress=progress,
            ):
                pass
            if member_name is None:
                raise FetchError(f"{repo.repo_id}@{sha[:7]}:{path} has no {RECORDING_NAME} member")
            upstream = f"{path}:{member_name}"
        _record_hub(man, repo, sha, f"{DATASET}/{key}", upstream, target)
        result.staged += 1
        result.bytes += target.stat().st_size
        man.save()


def fetch_hug_bench(
    dest: Path,
    man: Manifest,
    *,
    split: str,
    scenes: list[str] | None,
    assets_revision: str | None,
    recordings_revision: str | None,
    progress: bool | None,
) -> FetchResult:
    """Stage HUG-Bench object assets and recordings. Raises FetchError: Hub unreachable (names the repo), unknown
    scene, a revision not a commit, an unrecognised layout; DataError: a member landing outside ``dest``
    (``path_escape``)."""
    result = FetchResult(DATASET, "hub")
    assets_sha = resolve_revision(HUG_BENCH_ASSETS, assets_revision)
    rec_sha = resolve_revision(HUG_RECORDINGS, recordings_revision)
    chosen = fetch_assets(dest, man, split=split, scenes=scenes, sha=assets_sha, result=result, progress=progress)
    fetch_recordings(dest, man, split=split, scenes=chosen, sha=rec_sha, result=result, progress=progress)
    man.save()
    return result

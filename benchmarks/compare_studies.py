"""Compare two studies field by field, ignoring only wall times, timestamps and versions.

    python benchmarks/compare_studies.py A/study.json B/study.json [--tol 0]

Compares ``study.json`` (every key), ``study.csv`` and ``study.recorded.csv`` where present,
and, per rollout listed, its ``study_rollouts/<stem>.json`` and the pose arrays of every
``.npz`` beside it, between two study folders (e.g. the same study run on ``main`` and on a
branch). Numbers compare exactly by default (``--tol`` allows an absolute difference); NaN
equals NaN. Keys that hold wall-clock measurements or software versions are skipped
(:data:`TIMING_KEYS`, :data:`SKIP_KEYS`); absolute paths are compared after the study folder
is replaced by ``<out>``. The ``inputs`` maps (each input file's path, SHA-256 and provenance) are
compared by file name and SHA-256 only: where a study read its files from (``--data data`` after
``make study`` staged them, the mirror, a cache folder under another checkout) is not a result.

Files of different results formats compare in the newer one's layout: each JSON is read through the one
converter of older files (:mod:`replay.results.convert`; a rollout as its record writes it, format 6 nesting a
rollout's parts), so a study of format 5 (``main`` before issue #55) and one of format 6 compare field by field;
a poses npz's ``format_version`` stamp is only checked to be one this checkout reads (the arrays are the same in
every format).

Exit status: 0 identical, 1 any difference (each printed, one line: file and field path), 2 bad
arguments or a file missing on one side.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from the checkout: this checkout's replay
    sys.path.insert(0, str(ROOT))

from replay.results.convert import READABLE_VERSIONS, upgrade_study  # noqa: E402
from replay.results.records import RolloutRecord  # noqa: E402

#: record fields holding wall-clock durations (replay/results/records.py: "wall time of ...") and
#: the rate derived from one (``rtf`` = sim_s / wall_s)
TIMING_KEYS = frozenset({"wall_s", "wall_s_total", "build_s", "kinematics_s", "rtf", "ablation_rerun_s",
                         "refine_wall_s", "study_wall_s", "elapsed_s", "wall_s_this_run",
                         "mean_rollout_pair_s", "median_rtf"})
#: other fields that differ between two runs of the same study without any result changing
SKIP_KEYS = frozenset({"versions", "timestamp", "created", "started", "finished", "date", "host", "hostname"})


def _skipped(key: str) -> bool:
    k = str(key)
    return k in TIMING_KEYS or k in SKIP_KEYS or k.endswith("wall_s") or "wall_time" in k or k.endswith("_at")


def _num_equal(a: float, b: float, tol: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return a == b or abs(a - b) <= tol


def input_files(inputs: dict) -> set[tuple[str, str | None]]:
    """``(file name, SHA-256)`` of each entry of an ``inputs`` map (path -> ``{"sha256": ...}``)."""
    return {(Path(k).name, (v or {}).get("sha256") if isinstance(v, dict) else v) for k, v in inputs.items()}


def diff_values(a, b, where: str, tol: float, norm_a: str = "", norm_b: str = "") -> list[str]:
    """Every difference between two JSON values as ``"<where>: <a> != <b>"`` lines (timing keys skipped;
    ``inputs`` maps by file name and SHA-256, :func:`input_files`)."""
    if where.endswith(".inputs") and isinstance(a, dict) and isinstance(b, dict):
        fa, fb = input_files(a), input_files(b)
        return ([f"{where}: {n} ({h}) only in A" for n, h in sorted(fa - fb, key=str)]
                + [f"{where}: {n} ({h}) only in B" for n, h in sorted(fb - fa, key=str)])
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if _skipped(k):
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'A' if k in a else 'B'}")
                continue
            out += diff_values(a[k], b[k], f"{where}.{k}", tol, norm_a, norm_b)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} != {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff_values(x, y, f"{where}[{i}]", tol, norm_a, norm_b)
        return out
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return [] if _num_equal(float(a), float(b), tol) else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, str) and isinstance(b, str):
        if norm_a and norm_b:
            a, b = a.replace(norm_a, "<out>"), b.replace(norm_b, "<out>")
        return [] if a == b else [f"{where}: {a!r} != {b!r}"]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def diff_csv(pa: Path, pb: Path, tol: float, norm_a: str, norm_b: str) -> list[str]:
    """Row by row, column by column (timing columns skipped); numbers compared as numbers."""
    ra, rb = (list(csv.DictReader(p.open(newline=""))) for p in (pa, pb))
    if len(ra) != len(rb):
        return [f"{pa.name}: {len(ra)} rows != {len(rb)}"]
    out = []
    for i, (x, y) in enumerate(zip(ra, rb)):
        for col in sorted(set(x) | set(y)):
            if _skipped(col):
                continue
            u, v = x.get(col), y.get(col)
            try:
                same = _num_equal(float(u), float(v), tol)
            except (TypeError, ValueError):
                same = (u or "").replace(norm_a, "<out>") == (v or "").replace(norm_b, "<out>")
            if not same:
                out.append(f"{pa.name}[row {i}].{col}: {u!r} != {v!r}")
    return out


def diff_npz(pa: Path, pb: Path, tol: float) -> list[str]:
    """Every array of two ``.npz`` files: same names, shapes, dtypes and values (NaN equal)."""
    with np.load(pa, allow_pickle=False) as za, np.load(pb, allow_pickle=False) as zb:
        if set(za.files) != set(zb.files):
            return [f"{pa.name}: arrays {sorted(za.files)} != {sorted(zb.files)}"]
        out = []
        for k in sorted(za.files):
            x, y = za[k], zb[k]
            if k == "format_version":  # the file's stamp: every readable version holds the same pose arrays
                if not {int(x), int(y)} <= set(READABLE_VERSIONS):
                    out.append(f"{pa.name}:{k}: {int(x)} or {int(y)} is not a version this checkout reads")
                continue
            if x.shape != y.shape or x.dtype != y.dtype:
                out.append(f"{pa.name}:{k}: {x.shape} {x.dtype} != {y.shape} {y.dtype}")
            elif x.dtype.kind in "fc":
                bad = ~((x == y) | (np.isnan(x) & np.isnan(y)) | (np.abs(x - y) <= tol))
                if bad.any():
                    out.append(f"{pa.name}:{k}: {int(bad.sum())} values differ (max {np.nanmax(np.abs(x - y)):.3g})")
            elif not np.array_equal(x, y):
                out.append(f"{pa.name}:{k}: values differ")
        return out


def _study(path: Path) -> dict:
    """A study JSON in this checkout's layout (:func:`replay.results.convert.upgrade_study`; one with no
    ``format_version`` as it is)."""
    doc = json.loads(Path(path).read_text())
    return upgrade_study(doc, path) if "format_version" in doc else doc


def _rollout(path: Path) -> dict:
    """A rollout JSON as this checkout's record writes it (an older format's through the converter; one with no
    ``format_version`` as it is)."""
    doc = json.loads(path.read_text())
    if "format_version" not in doc:
        return doc
    return json.loads(json.dumps(RolloutRecord.from_dict(doc, path).to_dict()))


def compare(study_a: Path, study_b: Path, tol: float = 0.0) -> list[str]:
    """All differences between two studies (module doc); empty when they agree."""
    da, db = (Path(p).parent for p in (study_a, study_b))
    na, nb = str(da.resolve()), str(db.resolve())
    ja, jb = (_study(Path(p)) for p in (study_a, study_b))
    out = diff_values(ja, jb, "study.json", tol, na, nb)
    for name in ("study.csv", "study.recorded.csv"):
        pa, pb = da / name, db / name
        if pa.exists() != pb.exists():
            out.append(f"{name}: only in {'A' if pa.exists() else 'B'}")
        elif pa.exists():
            out += diff_csv(pa, pb, tol, na, nb)
    ra, rb = da / "study_rollouts", db / "study_rollouts"
    files_a = sorted(p.name for p in ra.glob("*")) if ra.is_dir() else []
    files_b = sorted(p.name for p in rb.glob("*")) if rb.is_dir() else []
    if files_a != files_b:
        out.append(f"study_rollouts: files only in A {sorted(set(files_a) - set(files_b))}, "
                   f"only in B {sorted(set(files_b) - set(files_a))}")
    for name in sorted(set(files_a) & set(files_b)):
        if name.endswith(".json"):
            out += diff_values(_rollout(ra / name), _rollout(rb / name), name, tol, na, nb)
        elif name.endswith(".npz"):
            out += diff_npz(ra / name, rb / name, tol)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line (module doc); returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path, help="study.json of run A")
    ap.add_argument("b", type=Path, help="study.json of run B")
    ap.add_argument("--tol", type=float, default=0.0, help="absolute tolerance on numbers (default 0: exact)")
    args = ap.parse_args(argv)
    for p in (args.a, args.b):
        if not p.is_file():
            print(f"compare_studies.py: error: {p}: no such study file", file=sys.stderr)
            return 2
    diffs = compare(args.a, args.b, args.tol)
    for line in diffs:
        print(line)
    n_roll = len(list((args.a.parent / "study_rollouts").glob("*.json")))  # the rollout files compared
    print(f"{len(diffs)} difference(s) over study.json, CSVs and {n_roll} rollouts' JSON and poses "
          f"(ignored: {', '.join(sorted(TIMING_KEYS | SKIP_KEYS))})")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

"""How often one study job's walk climbs back up the layers: ``python benchmarks/job_walk.py --data DIR``.

Runs ``run_study.py --workers 0 --objects mug`` in this process and follows the job (from
``replay.study.job.run_job``) the way a newcomer reads it: each module's first call only, in call order,
as the sequence of stage packages (``replay.<stage>``, layers as ``tests/test_structure.py`` orders them),
consecutive repeats collapsed. A climb is a step from a lower layer to a higher one. Prints the count and
the sequence.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_structure import layer  # noqa: E402  (the layers the structure test enforces)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the data folder or mirror")
    ap.add_argument("--objects", default="mug")
    a = ap.parse_args(argv)
    seen: set = set()
    walk: list[str] = []
    depth = {"in_job": 0}

    def prof(frame, event, arg):
        code = frame.f_code
        mod = frame.f_globals.get("__name__", "")
        if event == "call" and mod == "replay.study.job" and code.co_name == "run_job":
            depth["in_job"] += 1
        if event == "return" and mod == "replay.study.job" and code.co_name == "run_job":
            depth["in_job"] -= 1
        if event != "call" or not depth["in_job"] or not mod.startswith("replay.") or mod in seen:
            return
        seen.add(mod)
        stage = ".".join(mod.split(".")[:2])
        if not walk or walk[-1] != stage:
            walk.append(stage)

    from replay.commands.run_study import main as run_study

    with tempfile.TemporaryDirectory() as tmp:
        argv = ["--dataset", "grab", "--data", a.data, "--objects", a.objects, "--workers", "0", "--quiet"]
        sys.setprofile(prof)
        try:
            run_study([*argv, "--out", str(Path(tmp) / "study.json")])
        finally:
            sys.setprofile(None)
    layers = [layer(s) for s in walk]
    climbs = sum(b > a for a, b in zip(layers, layers[1:]))
    print(f"modules first called: {len(seen)}; stage steps: {len(walk)}; climbs back up: {climbs}")
    print(" -> ".join(s.removeprefix("replay.") for s in walk))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env bash
# The GPU checks of issue 47 (the batch on mujoco-warp), one run on a lent GPU, about 8 minutes:
#   1. the CUDA tests (tests/test_cuda.py, `make test-cuda`'s: a missing device or mirror fails);
#   2. benchmarks/sample_cost.py --device cuda on the 30 GRAB lifts (N = 32 and 128 samples, every
#      sample a world of one mujoco-warp launch), stopped before a recording once --budget-s passes.
# Everything lands under $OUT (default out/gpu_check): nvidia-smi.txt, test_cuda.log, sample_cost_cuda.json,
# sample_cost_cuda.log. Needs the project's Python (PY, default python) and the mirror (REPLAY_MIRROR,
# default ../shared/datasets; on a device machine copy it into the checkout first: ../shared does not travel).
#
#   OUT=$OUT PY=.venv/bin/python REPLAY_MIRROR=shared/datasets bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu_check}
PY=${PY:-python}
export REPLAY_MIRROR=${REPLAY_MIRROR:-../shared/datasets} MUJOCO_GL=egl PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "gpu_check: no nvidia-smi" | tee "$OUT/nvidia-smi.txt"
rc=0
# 1. the CUDA tests: 2 minutes at most
timeout 150 env REPLAY_REQUIRE_DATA=1 REPLAY_REQUIRE_CUDA=1 "$PY" -m pytest -m cuda tests/test_cuda.py -q \
    2>&1 | tee "$OUT/test_cuda.log" || rc=1
# 2. the samples' cost on the GPU, the 30 GRAB lifts: no recording started after 240 s, 330 s at most
LIFTS=$(ls "$REPLAY_MIRROR/grab/recordings" | sed -n 's/\.pkl$//p' | grep '_lift$' | paste -sd, -)
timeout 330 "$PY" benchmarks/sample_cost.py --device cuda --recordings "$LIFTS" --sizes 32,128 --budget-s 240 \
    --json "$OUT/sample_cost_cuda.json" 2>&1 | tee "$OUT/sample_cost_cuda.log" || rc=1
exit $rc

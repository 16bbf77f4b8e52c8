# The README's commands. `make setup` once, then `make study` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATASET ?= grab
# `make study`'s samples per recording and condition (run_study.py --samples: p_lift with its 95 % interval;
# 0 = single rollouts). 32, the issue's minimum; the whole of `make study` on 2 cores with
# the default 2 conditions (as_replayed and the other wrist gravity assumption) and the verdicts below: 230 s
# in all on a 2-core machine running nothing else, the study 187 s of it (benchmarks/make_study_time.py,
# docs/results/make-study.json; docs/study.md's block). More conditions (STUDY_ARGS=--conditions ...) cost a batch
# of samples each: lower SAMPLES then (16: 16/16 lifted -> Wilson 95 % [0.81, 1], 12/16 -> [0.51, 0.90]; a
# class is resolved less often).
SAMPLES ?= 32
# The verdicts side by side (run_study.py --verdicts, replay.study.verdicts): the lift protocol (sampled as
# above) beside the HUG authors' hug-oracle under the project's physics and as authored, each of those two
# one single rollout with its ablation per recording (in the 230 s above). VERDICTS= (empty) leaves them out.
VERDICTS ?= lift,hug-oracle,hug-oracle@authored
# The physics the verdicts are read under: empty = the default judge's (replay/results/judge.py, DEFAULT_JUDGE,
# which run_study.py reads: calibrated); PHYSICS=replay (or authored) for another, a study of its own (OUT_DIR apart).
PHYSICS ?=
STUDY_ARGS ?=
DATA_DIR ?= data
OUT_DIR ?= out
RENDER_DIR ?= renders
# Offline mirror: `REPLAY_MIRROR=../shared/datasets make study DATASET=grab`.
MIRROR_ARG := $(if $(REPLAY_MIRROR),--mirror $(REPLAY_MIRROR),)
# Each dataset's results in their own folder, so studies of different datasets coexist.
STUDY_JSON := $(OUT_DIR)/$(DATASET)/study.json
MONTAGE := $(RENDER_DIR)/$(DATASET)/montage.mp4

# `make study` ends with $(OUT_DIR)/$(DATASET)/report.html and study.csv (fields: docs/results.md), every
# recording with its p_lift per condition at $(SAMPLES) samples.
.PHONY: setup study validate test test-slow test-cuda bench bench-devices bench-warp fetch clean docs docs-check docs-results

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'
	touch $@

# the report page's browser test (tests/test_report.py) loads it in headless Chromium: Debian's `chromium`,
# installed once per venv when it is missing and apt-get may run (as root, or with passwordless sudo); where
# it cannot, setup goes on quietly and `make test` ends naming the skipped tests and this command
$(VENV)/.chromium: $(VENV)/.installed
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  command -v apt-get >/dev/null 2>&1 || exit 0; \
	  if [ "$$(id -u)" = 0 ]; then S=""; elif sudo -n true 2>/dev/null; then S="sudo -n"; else exit 0; fi; \
	  echo "installing Debian's chromium (the report's browser test)"; \
	  { $$S apt-get update -qq && $$S env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	    >/dev/null 2>&1 || echo "chromium could not be installed: the report's browser test will skip"; }
	@touch $@

setup: $(VENV)/.installed $(VENV)/.chromium

fetch: setup
	$(PY) scripts/fetch_data.py --dataset $(DATASET) --dest $(DATA_DIR) $(MIRROR_ARG)
	$(PY) scripts/fetch_data.py --dataset manosim --dest $(DATA_DIR) $(MIRROR_ARG)

# refused recordings (bad input, e.g. GRAB's offhand take) are listed and do not fail the study
# (STUDY_ARGS=--strict makes them exit 1); exit 1 = a recording could not be replayed for another
# reason (listed): the montage and report of the others are still made, then make reports the 1;
# any other failure stops at once
study: fetch
	$(PY) scripts/run_study.py --dataset $(DATASET) --data $(DATA_DIR) --samples $(SAMPLES) --out $(STUDY_JSON) --resume $(if $(PHYSICS),--physics $(PHYSICS),) $(if $(VERDICTS),--verdicts $(VERDICTS),) $(STUDY_ARGS); \
	rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	$(PY) scripts/render_montage.py --study $(STUDY_JSON) --out $(MONTAGE) && \
	$(PY) scripts/report.py --study $(STUDY_JSON) --out $(OUT_DIR)/$(DATASET)/report.html --montage $(MONTAGE) && exit $$rc

# both stages run even when the first reports recordings it could not validate (exit 1, listed;
# e.g. GRAB's offhand take); make then reports the worse status; any other failure stops at once
validate: fetch
	$(PY) scripts/validate_pose_mapping.py --dataset $(DATASET) --data $(DATA_DIR) --out $(OUT_DIR)/$(DATASET)/pose_mapping_validation.json; \
	rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	$(PY) scripts/validate_object_frame.py --dataset $(DATASET) --data $(DATA_DIR) --out $(OUT_DIR)/$(DATASET)/object_frame_validation.json; \
	rc2=$$?; [ $$rc2 -gt $$rc ] && exit $$rc2; exit $$rc

test: setup
	$(PY) -m pytest

# SLOW_ARGS: extra pytest arguments (.ci/run leaves out the README command smoke test)
SLOW_ARGS ?=
test-slow: setup
	$(PY) -m pytest -m slow $(SLOW_ARGS)

# CUDA machines only: the mujoco-warp path. A missing device or missing data is a failure, not a skip
# (the tests read the mirror: REPLAY_MIRROR=<dir> make test-cuda).
test-cuda: setup
	REPLAY_REQUIRE_DATA=1 REPLAY_REQUIRE_CUDA=1 $(PY) -m pytest -m cuda

# The engine against raw MuJoCo on the same model, and the whole study's rollouts/min.
BENCH_OBJECTS ?= cubesmall,mug
BENCH_ARGS ?=
bench: fetch
	$(PY) benchmarks/engine.py --dataset $(DATASET) --data $(DATA_DIR) --objects $(BENCH_OBJECTS) --json $(OUT_DIR)/bench/engine.json $(BENCH_ARGS)

OBJECTS ?= cubesmall,stamp
DEVICES ?= cpu,cuda
bench-devices: fetch
	$(PY) benchmarks/device_compare.py --dataset $(DATASET) --data $(DATA_DIR) --objects $(OBJECTS) --devices $(DEVICES) --json $(OUT_DIR)/$(DATASET)/device_compare.json

# CUDA machines: N worlds of a recording per mujoco-warp launch, rollouts/min per N (benchmarks/engine.py)
WORLDS ?= 1,64,512,1024
bench-warp: fetch
	$(PY) benchmarks/engine.py --dataset $(DATASET) --data $(DATA_DIR) --objects $(OBJECTS) --device cuda --worlds $(WORLDS) --no-study --json $(OUT_DIR)/$(DATASET)/engine_cuda.json

# The figures of README.md and docs/ (docs/figures.md). `make docs` rewrites every generated block
# from the small results files in docs/results/; `make docs-check` fails on a stale one (as
# tests/test_doc_figures.py does); `REPLAY_MIRROR=<dir> make docs-results` reruns the runs those
# files summarize on this tree (GRAB's 30 lifts: the study, the hug-oracle protocol, the bridge, the sampled
# verdict with the corruptions (grab-trust.json: the README's first table, docs/verdict.md's p_lift), the landmark IK
# on zerohand, the fitted hand and myhand (grab-hand-fit.json, grab-hand-shapes.json: docs/hand.md), the
# default test suite, whose tests/test_doc_figures.py sees the blocks already rewritten), rewrites the files
# with this commit and date, then the blocks.
RESULTS := docs/results
FIG_OUT := $(OUT_DIR)/figures
FIG_DATA = $(or $(REPLAY_MIRROR),$(error docs-results reads GRAB's 30 lifts from the mirror: REPLAY_MIRROR=<dir> make docs-results))
docs: setup
	$(PY) scripts/tables.py update README.md docs/*.md

docs-check: setup
	$(PY) scripts/tables.py check README.md docs/*.md

docs-results: setup
	$(PY) scripts/run_study.py --dataset grab --data $(FIG_DATA) --workers 2 --quiet --out $(FIG_OUT)/grab/study.json
	$(PY) scripts/tables.py summarize study $(FIG_OUT)/grab/study.json --out $(RESULTS)/grab-lifts.json \
	    --made-by "python scripts/run_study.py --dataset grab --data \$$REPLAY_MIRROR --workers 2 --out $(FIG_OUT)/grab/study.json"
	$(PY) scripts/run_study.py --dataset grab --data $(FIG_DATA) --protocol hug-oracle --workers 2 --quiet --out $(FIG_OUT)/oracle/study.json
	$(PY) scripts/tables.py summarize study $(FIG_OUT)/oracle/study.json --out $(RESULTS)/grab-oracle.json \
	    --made-by "python scripts/run_study.py --dataset grab --data \$$REPLAY_MIRROR --protocol hug-oracle --workers 2 --out $(FIG_OUT)/oracle/study.json"
	$(PY) scripts/bridge.py --dataset grab --data $(FIG_DATA) --workers 2 --out $(FIG_OUT)/bridge/bridge.json
	$(PY) scripts/tables.py summarize bridge $(FIG_OUT)/bridge/bridge.json --out $(RESULTS)/grab-bridge.json \
	    --made-by "python scripts/bridge.py --dataset grab --data \$$REPLAY_MIRROR --workers 2 --out $(FIG_OUT)/bridge/bridge.json"
	$(PY) scripts/run_study.py --dataset grab --data $(FIG_DATA) --samples 16 --corruptions --workers 2 --quiet --out $(FIG_OUT)/trust/study.json
	$(PY) scripts/tables.py summarize study $(FIG_OUT)/trust/study.json --out $(RESULTS)/grab-trust.json \
	    --made-by "python scripts/run_study.py --dataset grab --data \$$REPLAY_MIRROR --samples 16 --corruptions --workers 2 --out $(FIG_OUT)/trust/study.json"
	$(PY) scripts/validate_pose_mapping.py --dataset grab --window grasp --data $(FIG_DATA) --hand-shape zerohand --out $(FIG_OUT)/hand/zerohand.json
	$(PY) scripts/validate_pose_mapping.py --dataset grab --window grasp --data $(FIG_DATA) --hand-shape fitted --out $(FIG_OUT)/hand/fitted.json
	$(PY) scripts/tables.py summarize pose_mapping $(FIG_OUT)/hand/zerohand.json $(FIG_OUT)/hand/fitted.json --out $(RESULTS)/grab-hand-fit.json \
	    --made-by "python scripts/validate_pose_mapping.py --dataset grab --window grasp --data \$$REPLAY_MIRROR --hand-shape zerohand|fitted --out $(FIG_OUT)/hand/SHAPE.json"
	$(PY) scripts/validate_pose_mapping.py --dataset grab --window grasp --data $(FIG_DATA) --hand-shape myhand --out $(FIG_OUT)/hand/myhand.json
	$(PY) scripts/tables.py summarize pose_mapping $(FIG_OUT)/hand/zerohand.json $(FIG_OUT)/hand/myhand.json --out $(RESULTS)/grab-hand-shapes.json \
	    --made-by "python scripts/validate_pose_mapping.py --dataset grab --window grasp --data \$$REPLAY_MIRROR --hand-shape zerohand|myhand --out $(FIG_OUT)/hand/SHAPE.json"
	$(MAKE) docs
	$(PY) -m pytest -q --junitxml=$(FIG_OUT)/tests.xml; \
	$(PY) scripts/tables.py summarize junit $(FIG_OUT)/tests.xml --out $(RESULTS)/tests.json \
	    --made-by "REPLAY_MIRROR=\$$REPLAY_MIRROR python -m pytest (make test)"
	$(MAKE) docs

clean:
	rm -rf $(OUT_DIR) $(RENDER_DIR)

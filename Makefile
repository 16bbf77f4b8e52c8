# The README's commands. `make setup` once, then `make study` or `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATASET ?= grab
EFFORT ?= 0.4
STUDY_ARGS ?=
DATA_DIR ?= data
OUT_DIR ?= out
RENDER_DIR ?= renders
# Offline mirror: `REPLAY_MIRROR=../shared/datasets make study DATASET=grab`.
MIRROR_ARG := $(if $(REPLAY_MIRROR),--mirror $(REPLAY_MIRROR),)

.PHONY: setup study test test-slow fetch clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

fetch: setup
	$(PY) scripts/fetch_data.py --dataset $(DATASET) --dest $(DATA_DIR) $(MIRROR_ARG)
	$(PY) scripts/fetch_data.py --dataset manosim --dest $(DATA_DIR) $(MIRROR_ARG)

study: fetch
	$(PY) scripts/run_study.py --dataset $(DATASET) --data $(DATA_DIR) --effort $(EFFORT) --out $(OUT_DIR)/study.json --resume $(STUDY_ARGS)
	$(PY) scripts/render_montage.py --study $(OUT_DIR)/study.json --out $(RENDER_DIR)/montage.mp4

test: setup
	$(PY) -m pytest

test-slow: setup
	$(PY) -m pytest -m slow

clean:
	rm -rf $(OUT_DIR) $(RENDER_DIR)

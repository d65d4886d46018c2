# Two commands do all the set-up on a fresh machine:
#   make test       create/update .venv, install pinned dependencies, lint (ruff, import-linter), run the tests on
#                   every core (pytest-xdist) and print the ten slowest
#   make reproduce  the same set-up, then regenerate every table and figure under figures/
#   make lab        the same set-up, then JupyterLab on notebooks/ with the quickstart open (a .py notebook opens as
#                   a notebook on a double-click)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Install from the package registry alone, as a user's machine does: no pip configuration file and no local wheel
# folder of this machine takes part (a CPU-only torch: make test TORCH_INDEX=https://download.pytorch.org/whl/cpu).
export PIP_CONFIG_FILE := /dev/null
export PIP_FIND_LINKS :=
TORCH_INDEX ?=
PIP_INDEX := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))

export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: venv test check-install gpu-check reproduce bench clean notebooks lab

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PIP_INDEX) -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -n auto --durations=10

# A user's install, not a checkout's: a fresh environment, pip install . (its declared dependencies at the pinned
# versions), then the README's commands with that environment's sova, in an empty folder.
INSTALL_VENV ?= .venv-install
check-install:
	rm -rf $(INSTALL_VENV)
	$(PYTHON) -m venv $(INSTALL_VENV)
	$(INSTALL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(INSTALL_VENV)/bin/python -m pip install --quiet $(PIP_INDEX) -c requirements.txt .
	$(INSTALL_VENV)/bin/python tests/install_check.py $(INSTALL_VENV)

# On a GPU machine: tiny random models of every architecture describe and embed on cuda in bfloat16, batched and
# alone, also with --device-map auto, and an out-of-memory must stop the run (docs/gpu.md); offline, a few minutes.
gpu-check: $(STAMP)
	$(PY) -m tests.gpu_check --out gpu-check.json

reproduce: $(STAMP)
	$(PY) -m sova_lib reproduce

# The .py sources are the notebooks; their paired .ipynb (ignored by git) is made or brought in step here.
notebooks: $(STAMP)
	$(VENV)/bin/jupytext --sync notebooks/[0-9][0-9]_*.py

# JupyterLab on notebooks/ with the project's kernel (installed into the venv by the set-up) and this checkout
# first on the kernel's path, the quickstart open; as root (containers) it needs --allow-root. The project's
# JupyterLab settings (notebooks/.jupyterlab-overrides.json: a .py notebook opens as a notebook on a double-click,
# and a saved notebook keeps its widgets' state) go into the venv's JupyterLab, as overrides of its defaults that a
# user's own settings still change. More options: make lab LAB_ARGS=...
LAB_ARGS ?=
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/sova_lib.json
lab: $(STAMP)
	mkdir -p $(dir $(LAB_OVERRIDES)) && cp notebooks/.jupyterlab-overrides.json $(LAB_OVERRIDES)
	PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} $(VENV)/bin/jupyter lab --notebook-dir=notebooks \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks/00_quickstart.py

# The waits a user feels first (warm sova sovabench evaluate against a bare numpy import, the test suite's last wall time,
# the sentence encoder against its fp32 floor), then every other benchmark.
FIRST_BENCH := bench/bench_feedback.py bench/bench_encode.py
bench: $(STAMP)
	for f in $(FIRST_BENCH) $(filter-out $(FIRST_BENCH),$(sort $(wildcard bench/bench_*.py))); do \
		echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf build .pytest_cache

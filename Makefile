# Set-up happens on first use: a virtual environment in .venv with a CPU build
# of torch (when none is installed) and Triton for its CPU interpreter.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.kbench-installed
TORCH_VERSION ?= 2.13.0

# The report's browser tests drive Chromium: `make test` installs it (tests/install-browser.sh) and
# requires it, so that they run or the command stops saying why; KBENCH_REQUIRE_BROWSER=0 skips them.
KBENCH_REQUIRE_BROWSER ?= 1

.PHONY: setup demo test test-fast test-gpu browser clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "torch==$(TORCH_VERSION)"
	$(PY) -m pip install -q -e ".[triton,test,level4,report]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kbench demo

test: $(STAMP) browser
	KBENCH_REQUIRE_BROWSER=$(KBENCH_REQUIRE_BROWSER) $(PY) -m pytest -q

browser:
ifeq ($(KBENCH_REQUIRE_BROWSER),1)
	bash tests/install-browser.sh
endif

# Everything but the slow marker (whole-suite modules, compiled extensions): for iterating.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

# On a GPU machine whose Python already has torch and Triton (no virtual
# environment is made there): the GPU tests only; they fail, not skip, without a GPU.
test-gpu:
	PYTHONPATH=src python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'make test-gpu: no CUDA GPU here')"
	PYTHONPATH=src python3 -m pytest -q -m gpu tests

clean:
	rm -rf $(VENV) .pytest_cache

# Set-up happens on first use: a virtual environment in .venv with a CPU build
# of torch (when none is installed) and Triton for its CPU interpreter.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.kbench-installed
TORCH_VERSION ?= 2.13.0

.PHONY: setup demo test test-gpu clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "torch==$(TORCH_VERSION)"
	$(PY) -m pip install -q -e ".[triton,test,level4]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kbench demo

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache

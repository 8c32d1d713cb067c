# `make demo` and `make test` each create the virtual environment they need.
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat setup.cfg pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-fast env clean tflite-clients

$(STAMP): setup.cfg pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e ".[test]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

env: $(STAMP)

# The main job on the bundled data: vocabulary, pretraining, fine-tuning,
# preset round trip, predictions on raw strings.
demo: $(STAMP)
	$(VENV)/bin/python examples/quickstart.py --output runs/quickstart

# One OpenMP thread per process (PyTorch, OpenBLAS), unless set: the two
# xdist workers and the JAX/PyTorch processes they start already fill two
# cores, and more threads than cores slowed the PyTorch-heavy files (one
# run each, beside a background job: test_backend_parity.py with
# test_without_tensorflow.py 184 s -> 146 s; test_causal_lm_backends.py
# with test_resume_on_every_backend.py 211 s -> 185 s).
TEST_ENV := OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1}

# --dist loadfile keeps each test file on one worker, so a module-scoped
# fixture (often runs in other backends' processes) is built once, not once
# per worker. CI: 2,541 s before it; 2,405 s and 2,614 s with it (the
# second run had one more large test, of 12 s), so CI's pace varies by
# more than the gain: it is kept for the fixtures, not for a measured win.
# loadgroup would be finer, but under pytest 9.2 xdist 3.8 ignores its
# marks (pytest-dev/pytest-xdist#1386). test-fast keeps plain load: its
# fixtures are cheap, and loadfile ran it in 277 s against 261 s.
test: $(STAMP)
	$(TEST_ENV) $(VENV)/bin/python -m pytest tests -q -p no:cacheprovider -n 2 --dist loadfile

# The edit loop: everything but the tests marked large (subprocesses,
# kills, conversions, the wheel). CI runs `make test`.
test-fast: $(STAMP)
	$(TEST_ENV) $(VENV)/bin/python -m pytest tests -q -p no:cacheprovider -n 2 -m "not large"

# The pip-only client venvs (MediaPipe; ai-edge-litert + sentencepiece)
# that benchmarks/tflite_clients.py and its tests run exported .tflite
# files in; cached under ~/.cache/keras_albert/tflite_clients (or
# $KERAS_ALBERT_CLIENT_ENVS). The tests build them on first use too.
tflite-clients:
	$(PYTHON) benchmarks/client_environments.py

clean:
	rm -rf $(VENV) runs/quickstart build dist *.egg-info

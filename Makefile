# Two commands for a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: install run test test-slow bench screenshots chromium postgres clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: the CPU build on disk, never a CUDA download.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: install
	$(VENV)/bin/labeler app --port $(PORT)  # local: 127.0.0.1 only, no sign-in (team mode: README)

chromium:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium)

# The tests start their own throwaway PostgreSQL server from these binaries (tests/pg_support.py).
postgres:
	@compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null || (apt-get update -qq && apt-get install -y -qq postgresql)

# Two passes, and the target fails if either did: the tests that need no browser on $(TEST_WORKERS)
# workers (pytest-xdist; a file's tests stay on one worker, so its session fixtures are built once),
# then the browser tests one at a time (under parallel load they get flaky). `-m` replaces pyproject's.
TEST_WORKERS ?= 2
test: install chromium postgres
	@status=0; \
	$(PY) -m pytest -m 'not slow and not browser' -n $(TEST_WORKERS) --dist loadfile || status=$$?; \
	$(PY) -m pytest -m 'browser and not slow' || status=$$?; \
	exit $$status

test-slow: install
	$(PY) -m pytest -m slow

screenshots: install chromium
	UPDATE_README_SCREENSHOTS=1 $(PY) -m pytest -m browser -k readme_screenshots tests/browser/test_browser_journey.py

bench: install
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .labeler .pytest_cache test-artifacts

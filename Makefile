# The two commands: `make run` (site + worker on the embedded default) and `make test` (the whole suite).
# Both create and use a virtual environment in .venv.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The CPU build of torch; on a GPU host install the matching CUDA build of torch instead (README).
TORCH_VERSION ?= 2.13.0
# The Triton the H200 workers run (its CPU interpreter is the cpu-interpreter chip here).
TRITON_VERSION ?= 3.6.0
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install install-test worker migrate lint browser clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==$(TORCH_VERSION) triton==$(TRITON_VERSION)
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(PIP) install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

migrate: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py createcachetable
	$(PY) manage.py load_catalog
	@# Bytecode the sandbox's user can read, made before any process with the site's 077 umask writes it.
	$(PY) -m compileall -q evaluation

# Serve the site on http://$(HOST):$(PORT)/ with one evaluation worker; Ctrl-C stops both.
# Hashed, gzip + brotli compressed copies of the static files; redone only when a source file changed.
staticfiles/staticfiles.json: $(VENV)/.installed $(shell find static -type f 2>/dev/null)
	$(PY) manage.py collectstatic --noinput -v0

run: migrate staticfiles/staticfiles.json
	$(PY) manage.py ensure_demo_admin
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) bash scripts/run_site.sh

# A worker for this machine's chip only (for a second host, see the README).
worker: install
	$(PY) manage.py worker

# Debian's Chromium for the browser tests (Playwright drives it; never `playwright install`).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "install Debian's chromium (apt-get install chromium) for the browser tests"; fi; }

test: install-test browser
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf var staticfiles

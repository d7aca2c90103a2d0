# Confidant developer commands. Every target installs what it needs first.
# Python 3.11, 3.12 or 3.13: requirements.lock is one universal lock (environment markers where
# a pin differs by version), so whichever python3 runs installs from the same file.
PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
CHECKOV := $(VENV)/checkov

.PHONY: install test-tools web screenshots run test lint bench lock schema clean

## install: create .venv and install the project with its pinned dependencies (+ the checkov venv)
install: $(VENV)/.installed $(CHECKOV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -c 'import sys; v = sys.version_info[:2]; assert (3, 11) <= v < (3, 14), \
	  f"Confidant supports Python 3.11-3.13, not {sys.version.split()[0]}: set PYTHON=python3.x"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements.lock -e '.[dev]'
	touch $@

# checkov pins what the service does not want, so it gets a venv of its own (tools/checkov.lock).
$(CHECKOV)/.installed: tools/checkov.lock $(VENV)/.installed
	$(PYTHON) -m venv $(CHECKOV)
	$(CHECKOV)/bin/pip install -q --upgrade pip
	$(CHECKOV)/bin/pip install -q -r tools/checkov.lock
	touch $@

## lock: re-resolve requirements.lock and tools/checkov.lock for Python 3.11-3.13 (uv, universal)
lock: $(VENV)/.installed
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	  --no-annotate --no-header -o requirements.lock
	$(BIN)/uv pip compile tools/checkov.in --universal --python-version 3.11 \
	  --no-annotate --no-header -o tools/checkov.lock

## schema: regenerate infra/schema/google-provider.json from the npm CDKTF google bindings
schema: $(VENV)/.installed
	$(BIN)/python -m tools.provider_schema
## test-tools: Debian's chromium (Playwright drives it; never `playwright install`), tmux (a real terminal for the CLI), and Node.js with the `ai` client of the resume test
test-tools:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing for the browser and terminal tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	# The AI SDK client the resumable-stream e2e test drives (its locked `ai` package).
	@[ -f tests/e2e/ai_client/node_modules/ai/package.json ] || \
		(cd tests/e2e/ai_client && npm install --no-audit --no-fund)

## web: rebuild the web chat page (web/ → confidant/web/static, committed) with the locked npm packages
web:
	# `npm install` keeps the locked versions; `npm ci` refuses a lock that (like ours) records
	# only the platform packages the registry here serves.
	cd web && npm install --no-audit --no-fund && npm run build

## screenshots: rerun the browser tests and refresh the screenshots in docs/web
screenshots: install test-tools
	CONFIDANT_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/e2e/test_web_page.py

## run: the local chat server on 127.0.0.1:$${PORT:-8080} (embedded SQLite store, offline model)
run: $(VENV)/.installed
	$(BIN)/confidant-local

## test: lint, then the whole suite; the Firestore and Pub/Sub emulators are started and stopped by the tests
test: install test-tools
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

## lint: ruff
lint: install
	$(BIN)/ruff check .

## bench: per-turn overhead on the Firestore emulator, ours vs ADK's FirestoreSessionService
bench: install
	$(BIN)/python -m bench.turn_overhead

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .data

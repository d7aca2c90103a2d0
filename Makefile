# Confidant developer commands. Every target installs what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: install test-tools web screenshots run test lint bench clean

## install: create .venv and install the project with its pinned dependencies
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements.lock -e '.[dev]'
	touch $@

## test-tools: Debian's chromium (Playwright drives it; never `playwright install`) and tmux (a real terminal for the CLI)
test-tools:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing for the browser and terminal tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

## web: rebuild the web chat page (web/ → confidant/web/static, committed) with the locked npm packages
web:
	# `npm install` keeps the locked versions; `npm ci` refuses a lock that (like ours) records
	# only the platform packages the registry here serves.
	cd web && npm install --no-audit --no-fund && npm run build

## screenshots: rerun the browser tests and refresh the screenshots in docs/web
screenshots: install test-tools
	CONFIDANT_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/e2e/test_web_page.py

## run: the local chat server on 127.0.0.1:$${PORT:-8080} (embedded SQLite store, offline model)
run: install
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

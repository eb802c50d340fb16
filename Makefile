# Two commands on a fresh clone: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint bench clean lock

# Pinned by constraints.txt (the Dockerfile uses it too): a fresh clone gets the versions the
# suite was green with.
$(BIN)/vllm-digest: pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev,postgres]'
	touch $@

# Re-pin after changing dependencies in pyproject.toml: a fresh resolve, then freeze.
lock:
	rm -rf .lock-venv && $(PY) -m venv .lock-venv
	.lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q '.[dev,postgres]'
	{ echo "# Pinned versions for reproducible installs: \`make install\` and deploy/Dockerfile install with"; \
	  echo "# \`-c constraints.txt\`. Refresh: make lock (after changing pyproject.toml)."; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^vllm-digest'; } > constraints.txt
	rm -rf .lock-venv

install: $(BIN)/vllm-digest

# Without Slack credentials this starts the local console on SQLite and the bundled digest.
run: install
	@if [ -n "$$SLACK_BOT_TOKEN" ] || grep -qs '^SLACK_BOT_TOKEN=.' .env; then \
		$(BIN)/vllm-digest serve; \
	else \
		$(BIN)/vllm-digest console; \
	fi

lint: install
	$(BIN)/ruff check chatbot tests bench
	$(BIN)/ruff format --check chatbot tests bench
	$(BIN)/mypy

# Two workers (pytest-xdist): the suite waits on servers and subprocesses more than on the CPU.
test: lint
	$(BIN)/pytest -n 2

# scale.py prints issue 12's table (load + index, RSS, search, answers, HTTP, serve start); the
# others add quality (MRR@3, hit rate) and the SQLite store's cost on follow-ups.
bench: install
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/search.py --cold-runs 3
	$(BIN)/python bench/answers.py
	$(BIN)/python bench/notes.py
	$(BIN)/python bench/followups.py
	$(BIN)/python bench/observability.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

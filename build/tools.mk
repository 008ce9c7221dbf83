# Repository tooling in Python (tools/, and the case setup scripts), kept ruff-clean.
RUFF ?= ruff
PY_SOURCES := tools cases/_lib $(wildcard cases/*/setup) $(wildcard tasks/*/setup tasks/*/verify)

.PHONY: ruff fmt-py
ruff:
	$(RUFF) check $(PY_SOURCES)
	$(RUFF) format --check $(PY_SOURCES)

fmt-py:
	$(RUFF) format $(PY_SOURCES)

# How much of the paired sessions' output comes from failing commands (what
# Claude Code's after-tool hook cannot filter): JSON on stdout.
.PHONY: failing-share
failing-share:
	python3 tools/failing_share.py

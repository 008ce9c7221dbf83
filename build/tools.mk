# Repository tooling in Python, kept ruff-clean.
RUFF ?= ruff
PY_SOURCES := $(wildcard tools/*.py)

.PHONY: ruff fmt-py
ruff:
ifneq ($(PY_SOURCES),)
	$(RUFF) check tools
	$(RUFF) format --check tools
endif

fmt-py:
	$(RUFF) format tools

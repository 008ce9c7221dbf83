# Lens. Build outputs go to out/ only; helper makefiles live in build/*.mk.
#
#   make compare         the compare table on the embedded cases (replay mode)
#   make test            unit, integration and property tests
#   make check           fmt, clippy -D warnings, ruff
#   make build           out/release/<arch>/lens
#
# See README.md for the rest.

.DEFAULT_GOAL := help

include build/rust.mk
include build/harness.mk
include build/tools.mk

.PHONY: help
help:
	@sed -n 's/^#   //p' Makefile

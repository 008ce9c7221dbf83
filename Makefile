# Lens. Build outputs go to out/ only; helper makefiles live in build/*.mk.
#
#   make install         put lens on PATH (cargo install --path lens-cli)
#   make compare         the compare table on the embedded cases (replay mode), to out/
#   make rtk-fixtures    Lens and rtk on rtk's own unit-test inputs, to out/rtk-fixtures.json
#   make test            unit, integration and property tests, then the microVM smoke test
#   make agents          the agent CLIs at pinned versions, in out/agents (for the real-client tests)
#   make results         refresh the committed results/, the README and docs/ from this revision
#   make check           fmt, clippy -D warnings, ruff
#   make build           out/release/<arch>/lens
#   make bench           growth gate, latency report, results/overhead.json
#   make bench-save      rewrite the latency baseline from this machine
#   make bench-big       1 GiB outputs, memory ceiling, big cargo logs vs rtk
#   make fuzz            the pipeline fuzz run (FUZZ_EXECS inputs, checked)
#   make retention       retention sweep (RETENTION_ARGS="--driver claude" spends credits)
#   make agents-sweep    each real agent CLI against the scripted model (raw, level2, hook)
#   make agents-sweep-vm the same for Codex with each cell in a microVM (make image first)
#   make session         paired-session benchmark (SESSION_ARGS="--driver claude" spends credits)
#   make transcripts     what Lens would have shown in real transcripts (TRANSCRIPTS=files)
#   make failing-share   the share of the paired sessions' output that failing commands print
#   make image           the microVM image (out/image, image/manifest.json; needs root)
#   make vm-smoke        boot the microVM kernel, run a command, read the result back
#
# See README.md and docs/ for the rest.

.DEFAULT_GOAL := help

include build/rust.mk
include build/harness.mk
include build/bench.mk
include build/tools.mk
include build/image.mk

.PHONY: help
help:
	@sed -n 's/^#   //p' Makefile

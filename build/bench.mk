# Benchmarks: the growth gate and latency report, then whole-process overhead.
LENS_BENCH := $(CARGO_TARGET_DIR)/release/lens-bench
BENCH_ARGS ?=

.PHONY: bench bench-save bench-criterion bench-big fuzz

$(LENS_BENCH): FORCE
	$(CARGO) build --release --locked -p bench --bin lens-bench --bin spawn-floor

# Gates on growth (16x the input within 20x the time), reports latency against
# results/micro-baseline.json, and writes results/overhead.json.
bench: build $(LENS_BENCH)
	$(LENS_BENCH) gate $(BENCH_ARGS)
	$(LENS_BENCH) overhead --lens $(LENS)

# Rewrites the latency baseline from this machine.
bench-save: $(LENS_BENCH)
	$(LENS_BENCH) gate --save

# Criterion's own statistics per stage and input (slow; not a gate).
bench-criterion:
	$(CARGO) bench --locked -p bench

# Large outputs: 1 GiB of four line lengths through Lens against cat into a file,
# seq 1 10000000, and 20 MB and 200 MB cargo logs through Lens and rtk; peak RSS
# by /usr/bin/time. Writes the "big" section of results/reliability.json. About
# a minute and 2 GiB of RAM file system (or disk, with BIG_ARGS=--on-disk x).
BIG_ARGS ?=
bench-big: build $(LENS_BENCH)
	$(LENS_BENCH) big --lens $(LENS) --out results/reliability.json $(BIG_ARGS)

# The pipeline fuzz run: FUZZ_EXECS generated inputs, checked against the
# invariants, built with overflow checks (profile fuzz). Writes the "fuzz" section
# of results/reliability.json; fails on any panic or violation. Each input has
# its own seed, so FUZZ_JOBS threads run the same inputs as one would.
FUZZ_EXECS ?= 200000
FUZZ_SEED ?= 1
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
fuzz:
	$(CARGO) build --profile fuzz --locked -p bench --bin lens-bench
	$(CARGO_TARGET_DIR)/fuzz/lens-bench fuzz --execs $(FUZZ_EXECS) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) --out results/reliability.json

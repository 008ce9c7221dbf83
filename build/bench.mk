# Benchmarks: the growth gate and latency report, then whole-process overhead.
LENS_BENCH := $(CARGO_TARGET_DIR)/release/lens-bench
BENCH_ARGS ?=

.PHONY: bench bench-save bench-criterion

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

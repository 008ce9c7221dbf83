# The compare table and the harness binaries.
COMPARE := $(CARGO_TARGET_DIR)/release/compare
COMPARE_ARGS ?=

.PHONY: compare compare-record compare-live harness-bin readme-table

harness-bin:
	$(CARGO) build --release --locked -p harness

# The main job: every case in replay mode, no external tools needed.
compare: build harness-bin
	$(COMPARE) --mode replay --lens $(LENS) $(COMPARE_ARGS)

# Refresh the recordings from the real tools (needs ruff, pytest, eslint, tsc, cargo, rtk).
compare-record: build harness-bin
	$(COMPARE) --mode record --lens $(LENS) $(COMPARE_ARGS)

compare-live: build harness-bin
	$(COMPARE) --mode live --lens $(LENS) --out out/compare-live.json $(COMPARE_ARGS)

# Rewrite the README's table from results/compare.json.
readme-table: harness-bin
	python3 tools/readme_table.py --compare $(COMPARE) --results results/compare.json README.md

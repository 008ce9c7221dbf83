# The compare table and the harness binaries.
COMPARE := $(CARGO_TARGET_DIR)/release/compare
COMPARE_ARGS ?=

.PHONY: compare compare-record compare-live compare-vm harness-bin readme-table retention retention-plan retention-vm

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

# Every case live inside one microVM booted from the image (make image first):
# both tools read the same builds. Emulated under TCG here: expect minutes.
compare-vm: harness-bin
	$(COMPARE) --isolation vm $(COMPARE_ARGS)

# Rewrite the README's table from results/compare.json.
readme-table: harness-bin
	python3 tools/readme_table.py --compare $(COMPARE) --harness $(CARGO_TARGET_DIR)/release/harness --results results/compare.json README.md

HARNESS := $(CARGO_TARGET_DIR)/release/harness
RETENTION_ARGS ?= --driver scripted

# The retention plan: every cell and a preflight verdict; spends nothing.
retention-plan: build harness-bin
	$(HARNESS) plan $(RETENTION_ARGS)

# The retention sweep. With a real driver (claude, cursor, codex) this spends API
# credits; the scripted driver is a labelled simulation.
retention: build harness-bin
	$(HARNESS) run --run $(RETENTION_ARGS)

# The acceptance sweep of the microVM isolation: one task, raw and level 2, each
# cell in its own microVM.
retention-vm: build harness-bin
	$(HARNESS) run --run --driver scripted --isolation vm --tasks mid-stream-trap \
	  --variants raw,level2 --out results/retention-vm.json

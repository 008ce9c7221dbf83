# Cargo, pinned to out/ so nothing builds anywhere else.
export CARGO_TARGET_DIR := $(CURDIR)/out/.cargo
ARCH := $(shell uname -m)
PROFILE ?= release
BIN_DIR := out/$(PROFILE)/$(ARCH)
LENS := $(BIN_DIR)/lens
CARGO ?= cargo

.PHONY: build test check fmt fmt-check clippy install install-harness prereqs

build: $(LENS)

$(LENS): FORCE
	$(CARGO) build --release --locked -p lens-cli
	@mkdir -p $(BIN_DIR)
	@cp $(CARGO_TARGET_DIR)/release/lens $(LENS).tmp && mv -f $(LENS).tmp $(LENS)
	@echo "built $(LENS)"

# Puts lens on PATH (cargo's bin directory, ~/.cargo/bin).
install:
	$(CARGO) install --locked --path lens-cli

# Puts harness and compare on PATH too (they run from the repository root).
install-harness:
	$(CARGO) install --locked --path harness

# What the tests need, in one line each, before minutes are spent.
prereqs:
	@for p in git python3 sh; do command -v $$p >/dev/null || { echo "make test: $$p is not installed; install it (see the README's first lines)"; exit 1; }; done

# Everything, then the microVM smoke test (needs qemu-system-x86 and e2fsprogs;
# skipped with a notice without them, unless LENS_REQUIRE_VM is set; .ci/run sets it).
test: prereqs agents-if-possible
	$(CARGO) test --workspace --locked
	$(MAKE) --no-print-directory vm-smoke-if-possible

# The real-client tests need the pinned agent CLIs (make agents, from the npm
# registry); without npm they skip with one line each, unless LENS_REQUIRE_AGENTS
# is set (.ci/run sets it).
.PHONY: agents-if-possible
agents-if-possible:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory agents; \
	else echo "make test: npm is not installed, so the real agent CLI tests are skipped (apt-get install npm)"; fi

check: fmt-check clippy ruff

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

.PHONY: FORCE
FORCE:

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
test: prereqs
	$(CARGO) test --workspace --locked
	$(MAKE) --no-print-directory vm-smoke-if-possible

check: fmt-check clippy ruff

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

.PHONY: FORCE
FORCE:

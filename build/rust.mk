# Cargo, pinned to out/ so nothing builds anywhere else.
export CARGO_TARGET_DIR := $(CURDIR)/out/.cargo
ARCH := $(shell uname -m)
PROFILE ?= release
BIN_DIR := out/$(PROFILE)/$(ARCH)
LENS := $(BIN_DIR)/lens
CARGO ?= cargo

.PHONY: build test check fmt fmt-check clippy

build: $(LENS)

$(LENS): FORCE
	$(CARGO) build --release --locked -p lens-cli
	@mkdir -p $(BIN_DIR)
	@cp $(CARGO_TARGET_DIR)/release/lens $(LENS).tmp && mv -f $(LENS).tmp $(LENS)
	@echo "built $(LENS)"

# Everything, then the microVM smoke test (needs qemu-system-x86; see build/image.mk).
test:
	$(CARGO) test --workspace --locked
	$(MAKE) --no-print-directory vm-smoke

check: fmt-check clippy ruff

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

.PHONY: FORCE
FORCE:

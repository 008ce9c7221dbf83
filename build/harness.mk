# The compare table and the harness binaries.
COMPARE := $(CARGO_TARGET_DIR)/release/compare
COMPARE_ARGS ?=

.PHONY: agents agents-sweep agents-sweep-vm compare compare-record compare-live compare-vm harness-bin readme-table retention retention-plan retention-vm results charts rtk-fixtures session session-plan transcripts

harness-bin:
	$(CARGO) build --release --locked -p harness

# The main job: every case in replay mode, no external tools needed. Writes
# out/compare.json; the committed results/compare.json changes only by `make results`.
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
	$(COMPARE) --isolation vm --save $(COMPARE_ARGS)

# Lens and rtk on rtk's own unit-test inputs and fixtures (read from rtk's crate
# source in cargo's registry; needs rtk on PATH): a table, and out/rtk-fixtures.json.
RTK_FIXTURES_ARGS ?=
rtk-fixtures: build
	python3 tools/rtk_fixtures.py --lens $(LENS) $(RTK_FIXTURES_ARGS)

# Rewrite the generated tables and numbers of the README and docs/ from results/
# (harness/tests/docs.rs checks them against the same files).
readme-table: harness-bin
	python3 tools/readme_table.py --compare $(COMPARE) --harness $(CARGO_TARGET_DIR)/release/harness --results results/compare.json README.md docs/*.md

HARNESS := $(CARGO_TARGET_DIR)/release/harness
RETENTION_ARGS ?= --driver scripted

# The retention plan: every cell and a preflight verdict; spends nothing.
retention-plan: build harness-bin
	$(HARNESS) plan $(RETENTION_ARGS)

# The retention sweep. With a real driver (claude, cursor, codex) this spends API
# credits; the scripted driver is a labelled simulation. Writes out/retention-DRIVER.json.
retention: build harness-bin
	$(HARNESS) run --run $(RETENTION_ARGS)

SESSION_ARGS ?= --driver scripted

# The paired-session plan: every session, its commands and a preflight verdict.
session-plan: build harness-bin
	$(HARNESS) session plan $(SESSION_ARGS)

# The paired-session benchmark (8 pairs per session by default). With a real
# driver this spends API credits. Writes out/session-DRIVER.json.
session: build harness-bin
	$(HARNESS) session run --run $(SESSION_ARGS)

# What Lens would have shown in the committed real transcripts (point
# TRANSCRIPTS at your own: ~/.claude/projects/*/*.jsonl, ~/.codex/sessions/*/*/*/*.jsonl).
TRANSCRIPTS ?= harness/tests/fixtures/transcripts/*.jsonl
transcripts: harness-bin
	$(HARNESS) transcripts $(TRANSCRIPTS)

# Refresh the committed design record from this revision: the compare table, the
# scripted retention sweep and the scripted session benchmark (no credits), then
# the generated sections of the README and docs/.
results: build harness-bin
	$(COMPARE) --mode replay --lens $(LENS) --save
	$(HARNESS) run --run --driver scripted --save
	$(HARNESS) session run --run --driver scripted --save
	$(MAKE) --no-print-directory readme-table charts

# The charts of docs/benchmarks.md (results/*.svg) from the committed JSON; needs matplotlib
# (pip install matplotlib), and says so in one line without it.
charts:
	@python3 -c 'import matplotlib' 2>/dev/null || { echo "make charts: matplotlib is not installed; pip install matplotlib"; exit 1; }
	python3 tools/charts.py --compare results/compare.json --retention results/retention-scripted.json

# The acceptance sweep of the microVM isolation: one task, raw and level 2, each
# cell in its own microVM.
retention-vm: build harness-bin
	$(HARNESS) run --run --driver scripted --isolation vm --tasks mid-stream-trap \
	  --variants raw,level2 --out results/retention-vm.json

# Each real agent CLI (make agents) end to end against the scripted model: one
# task, the raw, level 2 and hook variants, in a directory; then Codex the same
# way with every cell in its own microVM (make image first: the image holds the
# CLIs), its model server on the host behind the credential broker.
AGENT_DRIVERS := claude codex gemini opencode
agents-sweep: build harness-bin agents
	for d in $(AGENT_DRIVERS); do \
	  $(HARNESS) run --run --driver $$d --model scripted --tasks last-line-trap \
	    --variants raw,level2,hook --out results/retention-$$d-scripted-model.json || exit 1; \
	done

agents-sweep-vm: build harness-bin agents
	$(HARNESS) run --run --driver codex --model scripted --isolation vm --tasks last-line-trap \
	  --variants raw,level2,hook --out results/retention-vm-codex-scripted-model.json

# The agent CLIs the real-client tests run (harness/tests/real_cli.rs), at the
# versions harness/agents/package.json and its lockfile pin, installed under
# out/agents; skipped when those versions are already there. Not `npm ci`:
# opencode-ai 1.18.33 declares platform packages the registry does not have
# (opencode-darwin-arm64, opencode-linux-arm64 at that version), so no lockfile
# can list them and `npm ci` refuses the lock as out of sync; `npm install
# --no-save` installs exactly what the lock holds. No install scripts run except
# the two that put the native binary over a stub (claude-code, opencode-ai);
# codex and gemini-cli need none (gemini's optional pty and keychain modules
# would compile here), nor do @kilocode/cli and @factory/cli, whose shims find
# their platform package's binary when no install script linked it.
AGENTS_DIR := out/agents
AGENTS_CHECK = const fs = require("fs"); \
  const want = require("./harness/agents/package.json").dependencies; \
  const bad = []; \
  for (const [name, v] of Object.entries(want)) { \
    let got = "missing"; \
    try { got = JSON.parse(fs.readFileSync("$(AGENTS_DIR)/node_modules/" + name + "/package.json")).version; } catch (e) {} \
    if (got !== v) bad.push(name + " " + got + " (pinned " + v + ")"); \
  } \
  for (const bin of ["claude", "codex", "gemini", "opencode", "kilo", "pi", "droid"]) { \
    let head = ""; \
    try { head = fs.readFileSync("$(AGENTS_DIR)/node_modules/.bin/" + bin).subarray(0, 5).toString(); } catch (e) {} \
    if (head === "" || head === "echo ") bad.push(bin + ": no program (or the install stub) in $(AGENTS_DIR)/node_modules/.bin"); \
  } \
  if (bad.length) { console.error("make agents: " + bad.join("; ")); process.exit(1); }

agents:
	@if node -e '$(AGENTS_CHECK)' 2>/dev/null; then \
	  echo "make agents: $(AGENTS_DIR) holds the pinned versions"; \
	else \
	  rm -rf $(AGENTS_DIR)/node_modules && mkdir -p $(AGENTS_DIR) && \
	  cp harness/agents/package.json harness/agents/package-lock.json $(AGENTS_DIR)/ && \
	  npm install --prefix $(AGENTS_DIR) --no-save --ignore-scripts --no-audit --no-fund && \
	  npm rebuild --prefix $(AGENTS_DIR) @anthropic-ai/claude-code opencode-ai && \
	  node -e '$(AGENTS_CHECK)' && echo "make agents: installed the pinned versions in $(AGENTS_DIR)"; \
	fi

# Mistral Vibe, a PyPI package, in a venv under out/agents/venv at the versions
# harness/agents/vibe-requirements.txt pins (its wheel's own pins, installed
# with --no-deps: see that file for the one that differs). It needs Python 3.12
# or later: VIBE_PYTHON, else the first of python3.13, python3.12, python3 (or
# a pyenv 3.12+ interpreter) that is new enough. Skipped when the venv holds it.
VIBE_VENV := $(AGENTS_DIR)/venv
VIBE_VERSION := 3.0.3
VIBE_PYTHON ?= $(firstword $(foreach p,python3.13 python3.12 python3 $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3),$(shell $(p) -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && echo $(p))))

agents: agents-vibe agents-sdk

# The Claude Agent SDK (harness/tests/agent_sdk.rs), in out/agents/sdk at the
# version harness/agents/sdk pins, without its optional platform package (a
# Claude Code binary of its own; the test starts the pinned one).
SDK_DIR := $(AGENTS_DIR)/sdk
SDK_VERSION := 0.3.333
.PHONY: agents-sdk
agents-sdk:
	@if node -e 'process.exit(require("./$(SDK_DIR)/node_modules/@anthropic-ai/claude-agent-sdk/package.json").version === "$(SDK_VERSION)" ? 0 : 1)' 2>/dev/null; then \
	  echo "make agents: $(SDK_DIR) holds @anthropic-ai/claude-agent-sdk $(SDK_VERSION)"; \
	else \
	  rm -rf $(SDK_DIR) && mkdir -p $(SDK_DIR) && \
	  cp harness/agents/sdk/package.json harness/agents/sdk/package-lock.json $(SDK_DIR)/ && \
	  npm install --prefix $(SDK_DIR) --no-save --omit=optional --ignore-scripts --no-audit --no-fund && \
	  echo "make agents: installed @anthropic-ai/claude-agent-sdk $(SDK_VERSION) in $(SDK_DIR)"; \
	fi

.PHONY: agents-vibe
agents-vibe:
	@if $(VIBE_VENV)/bin/python -c 'import importlib.metadata as m, sys; sys.exit(m.version("mistral-vibe") != "$(VIBE_VERSION)")' 2>/dev/null \
	    && test -x $(VIBE_VENV)/bin/vibe; then \
	  echo "make agents: $(VIBE_VENV) holds mistral-vibe $(VIBE_VERSION)"; \
	elif [ -z "$(VIBE_PYTHON)" ]; then \
	  echo "make agents: no Python 3.12 or later for mistral-vibe $(VIBE_VERSION) (set VIBE_PYTHON); its tests will skip"; \
	else \
	  rm -rf $(VIBE_VENV) && $(VIBE_PYTHON) -m venv $(VIBE_VENV) && \
	  $(VIBE_VENV)/bin/python -m pip install --quiet --no-deps --disable-pip-version-check \
	    -r harness/agents/vibe-requirements.txt && \
	  echo "make agents: installed mistral-vibe $(VIBE_VERSION) in $(VIBE_VENV)"; \
	fi

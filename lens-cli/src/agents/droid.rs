//! Factory Droid: only the awareness block, in `AGENTS.md`.
//!
//! Droid 0.225.2 (read from its binary, a Bun bundle) runs `PostToolUse`
//! hooks after a tool and hands them `tool_name`, `tool_input` and
//! `tool_response`, but of a hook's answer it keeps only `continue`,
//! `stopReason`, `systemMessage`, `decision`, `reason` and, of
//! `hookSpecificOutput`, `permissionDecision`, `permissionDecisionReason`,
//! `additionalContext` and `updatedInput`; it then stores the tool's own
//! result unchanged (`updateToolResult(id, result)`). `additionalContext`
//! is added as a further message beside the output, never in place of it:
//! a view there would cost more than the output alone. It reads `AGENTS.md`
//! (or `CLAUDE.md`) from `~/.factory` and from the project's directories.

/// Why `init` installs no hook for Droid, in one line.
pub const NO_HOOK: &str = "Factory Droid's PostToolUse hook can add a message but cannot replace a tool's output: only the awareness block is installed";

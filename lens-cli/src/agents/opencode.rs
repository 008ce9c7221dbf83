//! OpenCode: a plugin whose `tool.execute.after` handler hands the bash tool's
//! finished result to `lens hook opencode` and, when Lens answers with a view,
//! puts it in place of the output the model reads; and the awareness block in
//! `AGENTS.md`.
//!
//! The plugin runs after OpenCode ran the command as its permission rules
//! allowed it, so every permission decision is OpenCode's own. It imports
//! nothing but Node's `child_process` (a plugin that imports OpenCode's plugin
//! package makes OpenCode install that package at every start). Any error, or
//! no answer, leaves the result as it was.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered};

/// What OpenCode's bash tool shows without cutting (it keeps the rest in a
/// file, named in `metadata.outputPath`).
pub const INLINE_LIMIT: usize = 30_000;

/// The plugin file `init` writes and owns.
pub const PLUGIN: &str = r#"// Installed by `lens init --agent opencode`; `lens init --uninstall` removes it.
// After the bash tool ran (as OpenCode's permission rules allowed), Lens may
// answer with a shorter view of its output, which the model then reads; the
// full output stays retrievable with `lens show`. Any error keeps the output.
import { spawnSync } from "node:child_process";

export const LensPlugin = async () => ({
  "tool.execute.after": async (input, output) => {
    try {
      if (input?.tool !== "bash" || typeof output?.output !== "string") return;
      const meta = output.metadata ?? {};
      const event = {
        command: input.args?.command ?? meta.command ?? "",
        output: output.output,
        exit: typeof meta.exit === "number" ? meta.exit : null,
        outputPath: typeof meta.outputPath === "string" ? meta.outputPath : null,
        cwd: process.cwd(),
      };
      const r = spawnSync("lens", ["hook", "opencode"], {
        input: JSON.stringify(event),
        encoding: "utf8",
        timeout: 10000,
        maxBuffer: 1 << 24,
      });
      if (r.status !== 0 || !r.stdout) return;
      const answer = JSON.parse(r.stdout);
      if (typeof answer.output === "string") output.output = answer.output;
    } catch {}
  },
});
"#;

/// The plugin edit.
pub fn plugin_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::File { contents: PLUGIN },
    }
}

/// The allow rule for `lens show` in an `opencode.json`.
pub fn allow_show_edit(path: PathBuf) -> Edit {
    Edit {
        path,
        change: Change::Member {
            keys: &["permission", "bash"],
            key: "lens show *",
            value: "allow",
        },
    }
}

/// The event the plugin sends.
pub fn read_event(event: &Value) -> Option<Captured> {
    let line = event.get("command")?.as_str()?;
    let output = event.get("output")?.as_str()?;
    Some(Captured {
        line: line.to_string(),
        output: output.as_bytes().to_vec(),
        full: event
            .get("outputPath")
            .and_then(Value::as_str)
            .map(PathBuf::from),
        exit: event.get("exit").and_then(Value::as_i64).map(|c| c as i32),
        cwd: event.get("cwd").and_then(Value::as_str).map(String::from),
        level: None,
        budget: None,
        partial: false,
        inline: None,
    })
}

/// The answer the plugin puts in place of the output.
pub fn answer(view: &Filtered) -> Value {
    json!({ "output": view.text })
}

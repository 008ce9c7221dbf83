//! OpenCode: a plugin whose `tool.execute.before` handler rewrites the bash
//! tool's command through `lens rewrite` (in place, as OpenCode plugins do), and
//! the awareness block in `AGENTS.md`. Any error leaves the command as it was.

use std::path::PathBuf;

use super::{Change, Edit};

/// The plugin file `init` writes and owns.
pub const PLUGIN: &str = r#"// Installed by `lens init --agent opencode`; `lens init --uninstall` removes it.
// Rewrites a bash command into `lens <command>` when Lens has a shape for its
// output; any error leaves the command as it was.
import { execFileSync } from "node:child_process";

export const LensPlugin = async () => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "bash" || typeof output.args?.command !== "string") return;
    try {
      const rewritten = execFileSync("lens", ["rewrite", output.args.command], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        timeout: 2000,
      });
      if (rewritten) output.args.command = rewritten.replace(/\n$/, "");
    } catch {
      // `lens rewrite` exits 1 when it has nothing to improve.
    }
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

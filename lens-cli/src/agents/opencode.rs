//! OpenCode: a plugin whose `tool.execute.after` handler hands the bash tool's
//! finished result to `lens hook opencode` and, when Lens answers with a view,
//! puts it in place of the output the model reads; and the awareness block in
//! `AGENTS.md`.
//!
//! The plugin runs after OpenCode ran the command as its permission rules
//! allowed it, so every permission decision is OpenCode's own. It imports
//! nothing but Node's `child_process`. Any error, or no answer, leaves the
//! result as it was.
//!
//! What OpenCode 1.18.33 does with a config directory (read from its bundle:
//! `Config.loadInstanceState`, `Config.ensureGitignore`, `Npm.install`):
//! it writes a `.gitignore` there if there is none, and starts an npm install
//! of `@opencode-ai/plugin` into it unless `node_modules` exists and
//! `package-lock.json` lists the package; once any plugin is configured, the
//! session waits for those installs before it starts (offline, until npm
//! gives up: about 70 s at every start). So `init` leaves the plugin's
//! directory as a finished install leaves it, where nothing is there yet: that
//! `.gitignore`, a lock file naming the package and a `node_modules` holding
//! only a note of Lens's. OpenCode then installs nothing and makes nothing
//! there, and uninstall takes out exactly what `init` put in. (Should the user
//! add a dependency of their own, OpenCode's install runs again and installs
//! the package with it.) It also puts `"$schema"` at the top of every config
//! file without one, which [`without_schema`] recognises.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{Change, Edit};
use crate::captured::{Captured, Filtered};
use crate::event::Event;

/// What OpenCode's bash tool shows without cutting (it keeps the rest in a
/// file, named in `metadata.outputPath`).
pub const INLINE_LIMIT: usize = 30_000;

/// The plugin `init` writes for an agent that runs OpenCode's plugins (OpenCode
/// and its forks), naming that agent: the file it installs and the hook it runs.
macro_rules! plugin {
    ($agent:literal) => {
        concat!(
            r#"// Installed by `lens init --agent "#,
            $agent,
            r#"`; `lens init --uninstall` removes it.
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
      const r = spawnSync("lens", ["hook", ""#,
            $agent,
            r#""], {
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
"#
        )
    };
}
pub(crate) use plugin;

/// The plugin file `init` writes and owns.
pub const PLUGIN: &str = plugin!("opencode");

/// What OpenCode writes as `.gitignore` in a config directory without one.
pub const GITIGNORE: &str = "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore";

/// A lock file as OpenCode's install check reads it: the root package
/// depends on `@opencode-ai/plugin` (the version OpenCode would ask for).
pub const LOCK: &str = r#"{
  "name": "opencode",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "dependencies": {
        "@opencode-ai/plugin": "1.18.33"
      }
    }
  }
}
"#;

/// The one file in the `node_modules` `init` makes.
pub const NODE_MODULES_NOTE: &str = "Made by `lens init --agent opencode`: with ../package-lock.json it tells OpenCode its plugin directory is installed, so it does not run npm at every start. `lens init --uninstall` removes both.\n";

/// What tells OpenCode and a fork of it that runs the same plugins (Kilo Code
/// CLI) apart, for `init`: the plugin naming the agent, and what the agent's
/// start makes in a config directory.
pub struct Fork {
    /// The plugin file.
    pub plugin: &'static str,
    /// The `.gitignore` it writes in a config directory without one.
    pub gitignore: &'static str,
    /// A lock file its install check reads as a finished install.
    pub lock: &'static str,
    /// The note `init` leaves in `node_modules`.
    pub note: &'static str,
    /// The plugin package it installs in each config directory.
    pub plugin_package: &'static str,
    /// What it puts in place of a config file's opening `{` when the file has
    /// no `$schema`, if it does that.
    pub schema_opening: Option<&'static str>,
    /// Empty files it leaves in a config directory at every start, whatever is
    /// there (Kilo's record of a settings migration).
    pub markers: &'static [&'static str],
}

/// OpenCode 1.18.33.
pub const OPENCODE: Fork = Fork {
    plugin: PLUGIN,
    gitignore: GITIGNORE,
    lock: LOCK,
    note: NODE_MODULES_NOTE,
    plugin_package: "@opencode-ai/plugin",
    // `text.replace(/^\s*\{/, …)` on a config file without `$schema`.
    schema_opening: Some("{\n  \"$schema\": \"https://opencode.ai/config.json\","),
    markers: &[],
};

/// Every edit for an install whose config directory is `dir` and config file
/// `config`: the plugin, what a finished install leaves beside it, the allow
/// rule.
pub fn edits(fork: &Fork, dir: &Path, config: PathBuf) -> Vec<Edit> {
    let placeholder = |rel: &str, contents| Edit {
        path: dir.join(rel),
        change: Change::Placeholder { contents },
    };
    vec![
        Edit {
            path: dir.join("plugin/lens.js"),
            change: Change::File {
                contents: fork.plugin,
            },
        },
        placeholder(".gitignore", fork.gitignore),
        placeholder("package-lock.json", fork.lock),
        placeholder("node_modules/.lens", fork.note),
        allow_show_edit(config),
    ]
}

/// The text before the agent added its `$schema` key, when that is the change.
pub fn without_schema(fork: &Fork, text: &str) -> Option<String> {
    text.strip_prefix(fork.schema_opening?)
        .map(|rest| format!("{{{rest}"))
}

/// What OpenCode's own install of its plugin package left in `dir` (a config
/// directory `init` created, so that install happened because of Lens): its
/// `.gitignore`, and `node_modules`, `package.json`, `package-lock.json` and
/// `bun.lock` when they depend on nothing but `@opencode-ai/plugin`. Empty when
/// `dir` holds anything else: then it is the user's, and stays.
pub fn install_leftovers(fork: &Fork, dir: &Path) -> Vec<PathBuf> {
    let plugin_package = fork.plugin_package;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let read = |name: &str| -> Option<Value> {
        serde_json::from_slice(&std::fs::read(dir.join(name)).ok()?).ok()
    };
    // Only the plugin package among the dependencies of `deps`.
    let only_plugin = |deps: Option<&Value>| {
        deps.and_then(Value::as_object)
            .is_none_or(|m| m.keys().all(|k| k == plugin_package))
    };
    let mut made = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = match name.as_str() {
            ".gitignore" => std::fs::read_to_string(e.path()).is_ok_and(|t| t == fork.gitignore),
            "package.json" => read(&name).is_some_and(|v| {
                v.as_object().is_some_and(|o| {
                    o.keys().all(|k| k == "dependencies") && only_plugin(o.get("dependencies"))
                })
            }),
            "package-lock.json" => read(&name).is_some_and(|v| {
                let packages = v.get("packages").and_then(Value::as_object);
                // The root needs only the plugin package, and every package
                // it installed is under node_modules.
                packages.is_some_and(|p| {
                    only_plugin(p.get("").and_then(|r| r.get("dependencies")))
                        && p.keys()
                            .all(|k| k.is_empty() || k.starts_with("node_modules/"))
                })
            }),
            "node_modules" | "bun.lock" => true,
            m if fork.markers.contains(&m) => e.metadata().is_ok_and(|m| m.len() == 0),
            _ => false,
        };
        if !ours {
            return Vec::new();
        }
        made.push(e.path());
    }
    // `node_modules` is OpenCode's only with a lock file saying what is in it.
    let has = |n: &str| made.iter().any(|p| p.ends_with(n));
    if has("node_modules") && !has("package-lock.json") {
        return Vec::new();
    }
    made.sort();
    made
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
pub fn read_event(e: &Event) -> Option<Captured> {
    let event = &e.value;
    let line = event.get("command")?.as_str()?;
    let output = e.text("/output")?;
    Some(Captured {
        line: line.to_string(),
        output: output.piece().into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_opencode_gave_a_schema_reads_as_written() {
        let written = "{\n  \"permission\": {}\n}\n";
        let opened = written.replacen(
            '{',
            "{\n  \"$schema\": \"https://opencode.ai/config.json\",",
            1,
        );
        assert_eq!(without_schema(&OPENCODE, &opened).as_deref(), Some(written));
        assert_eq!(without_schema(&OPENCODE, written), None);
    }

    #[test]
    fn only_opencode_s_own_install_of_its_plugin_package_is_a_leftover() {
        let dir = std::env::temp_dir().join(format!("lens-opencode-left-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("node_modules/@opencode-ai/plugin")).unwrap();
        let w = |n: &str, t: &str| std::fs::write(dir.join(n), t).unwrap();
        w(".gitignore", GITIGNORE);
        w(
            "package.json",
            r#"{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}"#,
        );
        w(
            "package-lock.json",
            r#"{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}, "node_modules/@opencode-ai/plugin": {}, "node_modules/zod": {}}}"#,
        );
        let names = |v: Vec<PathBuf>| -> Vec<String> {
            v.iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(install_leftovers(&OPENCODE, &dir)),
            [
                ".gitignore",
                "node_modules",
                "package-lock.json",
                "package.json"
            ]
        );
        // A dependency of the user's: the install is theirs.
        w(
            "package.json",
            r#"{"dependencies": {"@opencode-ai/plugin": "1.18.33", "left-pad": "1"}}"#,
        );
        assert!(install_leftovers(&OPENCODE, &dir).is_empty());
        w(
            "package.json",
            r#"{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}"#,
        );
        // A file of the user's beside it.
        w("notes.md", "mine");
        assert!(install_leftovers(&OPENCODE, &dir).is_empty());
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        // node_modules with no lock saying what is in it.
        std::fs::remove_file(dir.join("package-lock.json")).unwrap();
        assert!(install_leftovers(&OPENCODE, &dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// OpenCode 1.18.33's bash tool keeps the last this many lines or bytes of
/// an output (`es(output, maxLines, maxBytes)`, with `Truncate.MAX_LINES` and
/// `Truncate.MAX_BYTES`), saves the whole to a file, names it in
/// `metadata.outputPath`, and opens the result with a line saying so.
const MAX_LINES: usize = 2000;
const MAX_BYTES: usize = 51_200;

/// Bytes OpenCode's model reads of this result without Lens. OpenCode cuts
/// the output before `tool.execute.after` runs, so an event with an
/// `outputPath` holds the cut the model reads; an event over the limits
/// without one is cut here as OpenCode would: its tail up to the limits,
/// after `...output truncated...` and the line naming the file.
pub fn model_would_read(e: &Event, output_len: u64) -> u64 {
    let Some(text) = e.text("/output") else {
        return output_len;
    };
    let has_path = e.value.get("outputPath").and_then(Value::as_str).is_some();
    if has_path || (text.lines() <= MAX_LINES as u64 && text.len() <= MAX_BYTES as u64) {
        return text.len();
    }
    // The tail of a spooled output is in its sketch: a line that reaches into
    // the middle left out is longer than the limit either way.
    let (output, _, _) = text.sketch();
    let mut kept = 0;
    for (i, line) in output.rsplit('\n').take(MAX_LINES).enumerate() {
        let add = line.len() + usize::from(i > 0);
        if kept + add > MAX_BYTES {
            // A single line longer than the limit keeps its last bytes.
            kept = kept.max(MAX_BYTES.min(add));
            break;
        }
        kept += add;
    }
    let notice = "...output truncated...\nFull output saved to: /root/.local/share/opencode/tool-output/tool_0000000000000000000000000\n";
    (kept + notice.len()) as u64
}

#[cfg(test)]
mod would_read_tests {
    use super::*;

    #[test]
    fn the_event_holds_opencodes_cut_or_it_is_cut_here() {
        let cut = json!({"output": "a\nb", "outputPath": "/t/tool_1"});
        assert_eq!(model_would_read(&cut.into(), 400_000), 3);
        // 4,000 lines of 6 bytes: the last 2,000 lines are kept.
        let whole: String = (1..=4000).map(|_| "12345\n").collect();
        let n = model_would_read(&json!({"output": whole.trim_end()}).into(), 24_000);
        assert!(n > 12_000 && n < 12_150, "{n}");
        // 512 lines of 100 bytes fill 51,200.
        let wide = "z".repeat(99) + "\n";
        let n = model_would_read(&json!({"output": wide.repeat(1000)}).into(), 100_000);
        assert!(n > 51_000 && n < 51_350, "{n}");
        assert_eq!(model_would_read(&json!({"output": "ok"}).into(), 9), 2);
    }
}

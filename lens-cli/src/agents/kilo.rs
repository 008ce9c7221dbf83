//! Kilo Code CLI: a fork of OpenCode that runs OpenCode's plugins, so Lens
//! installs for it the plugin it installs for OpenCode ([`super::opencode`]),
//! naming `lens hook kilo`, in Kilo's own directories; the event and the
//! answer are OpenCode's.
//!
//! What Kilo Code CLI 7.7.7 does, read from its binary (a Bun bundle): its bash
//! tool's result passes through `tool.execute.after` with `output` (what the
//! model reads) and `metadata.exit`, `metadata.outputPath` (the whole output,
//! when it cut it to 2,000 lines or 51,200 bytes), as OpenCode's does; for a
//! command that fails too. Plugins load from `{plugin,plugins}/*.{ts,js}` in
//! each config directory (`~/.config/kilo`, a project's `.kilo`); settings
//! are `kilo.json` there and at the project root, read as JSONC; the global
//! `AGENTS.md` is `~/.config/kilo/AGENTS.md`. In each config directory it
//! writes the `.gitignore` below where there is none and starts an install of
//! `@kilocode/plugin` unless `package-lock.json` names it beside a
//! `node_modules` (the check is OpenCode's, and so is what `init` leaves
//! there so that no start waits on npm); in `~/.config/kilo` it also writes
//! an empty `.bash-permission-migrated` at every start. It writes a
//! `$schema` member into every config file it reads that has none.

use super::opencode::{plugin, Fork};

/// Kilo Code CLI 7.7.7.
pub const KILO: Fork = Fork {
    plugin: plugin!("kilo"),
    gitignore: "node_modules\npackage.json\npackage-lock.json\npnpm-lock.yaml\nbun.lock\nyarn.lock\n.gitignore\nagent-manager.json",
    lock: r#"{
  "name": "kilo",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "dependencies": {
        "@kilocode/plugin": "7.7.7"
      }
    }
  }
}
"#,
    note: "Made by `lens init --agent kilo`: with ../package-lock.json it tells Kilo Code its plugin directory is installed, so it does not run npm at every start. `lens init --uninstall` removes both.\n",
    plugin_package: "@kilocode/plugin",
    // Where a config file it reads has no `$schema`, it writes one in as the
    // first member (jsonc-parser's `modify`, two-space indent).
    schema_opening: Some("{\n  \"$schema\": \"https://app.kilo.ai/config.json\","),
    markers: &[".bash-permission-migrated"],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_kilo_s_hook_and_says_who_installed_it() {
        assert!(KILO
            .plugin
            .contains(r#"spawnSync("lens", ["hook", "kilo"]"#));
        assert!(KILO.plugin.contains("lens init --agent kilo`"));
        assert!(!KILO.plugin.contains("opencode"));
        // Everything else is OpenCode's plugin, byte for byte.
        assert_eq!(
            KILO.plugin.replace("kilo", "opencode"),
            super::super::opencode::PLUGIN
        );
    }

    #[test]
    fn a_config_file_kilo_gave_a_schema_reads_as_written() {
        let written = "{\n  \"permission\": {}\n}\n";
        let opened = written.replacen(
            '{',
            "{\n  \"$schema\": \"https://app.kilo.ai/config.json\",",
            1,
        );
        let back = super::super::opencode::without_schema(&KILO, &opened);
        assert_eq!(back.as_deref(), Some(written));
    }

    #[test]
    fn kilo_s_start_marker_is_a_leftover_only_when_empty() {
        let dir = std::env::temp_dir().join(format!("lens-kilo-left-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".gitignore"), KILO.gitignore).unwrap();
        std::fs::write(dir.join(".bash-permission-migrated"), "").unwrap();
        let left = super::super::opencode::install_leftovers(&KILO, &dir);
        assert_eq!(left.len(), 2, "{left:?}");
        std::fs::write(dir.join(".bash-permission-migrated"), "mine").unwrap();
        assert!(super::super::opencode::install_leftovers(&KILO, &dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

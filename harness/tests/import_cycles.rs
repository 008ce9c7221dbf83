//! No file of a crate imports, through any chain, a file that imports it back:
//! `tools/import_cycles.py` reads every crate of the workspace and exits 1 on a
//! circle, naming each edge in it. Without python3 it says so in one line and
//! passes.

use std::path::Path;
use std::process::Command;

#[test]
fn no_crate_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = match Command::new("python3")
        .arg(root.join("tools/import_cycles.py"))
        .arg(&root)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: python3 is not installed ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

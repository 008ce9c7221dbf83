//! The lens binary the end-to-end tests put in front of the harness: the one
//! cargo built beside the test, built first if it is missing.

use std::path::PathBuf;
use std::process::Command;

pub fn lens_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lens = exe.parent().unwrap().parent().unwrap().join("lens");
    if !lens.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        assert!(Command::new(cargo)
            .args(["build", "-p", "lens-cli"])
            .status()
            .unwrap()
            .success());
    }
    lens
}

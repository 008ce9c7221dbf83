//! The world one real-CLI session arm runs in, shared by the real-CLI suites:
//! a temp root holding HOME, a git project whose files are committed and then
//! changed (so `git status` has something to say), and Lens's store, log and
//! config. Removed when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::lens_bin;

pub struct Root {
    pub root: PathBuf,
}

impl Root {
    /// A fresh root named `name` under the temp dir, whose project holds
    /// `files` under `src/` (named by `file`), committed with `fn a() {}` and
    /// then changed to `fn b() {}`.
    pub fn new(name: &str, files: usize, file: impl Fn(usize) -> String) -> Root {
        let root = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let project = root.join("project");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let write_all = |body: &str| {
            for i in 0..files {
                std::fs::write(project.join("src").join(file(i)), body).unwrap();
            }
        };
        write_all("fn a() {}\n");
        git(&project, &["init", "-q", "-b", "main"]);
        git(&project, &["add", "-A"]);
        git(
            &project,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "init",
            ],
        );
        write_all("fn b() {}\n");
        Root { root }
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Lens's store, log and config, inside the root.
    pub fn lens_env(&self) -> Vec<(String, String)> {
        let s = |p: &str| self.root.join(p).display().to_string();
        vec![
            ("LENS_STORE".into(), s("lens/store")),
            ("LENS_LOG_DIR".into(), s("lens/log")),
            ("LENS_CONFIG".into(), s("lens/none.toml")),
        ]
    }

    /// `lens ARGS` in the project with this root's HOME; it must succeed.
    pub fn lens(&self, args: &[&str]) -> std::process::Output {
        let out = Command::new(lens_bin::lens_binary())
            .args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .envs(self.lens_env())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "lens {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub fn git(dir: &Path, args: &[&str]) {
    assert!(Command::new("git")
        .args(args)
        .current_dir(dir)
        // Never the developer's repository through an inherited GIT_DIR.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .status()
        .unwrap()
        .success());
}

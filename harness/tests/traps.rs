//! The trap tasks cannot be won without reading the command's output: the answer
//! differs on every run, and nothing the run leaves on disk holds it.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::tasks::Task;

fn task(name: &str) -> Task {
    Task::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tasks")
            .join(name),
    )
    .unwrap()
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lens-trap-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sh(dir: &Path, line: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn verify(t: &Task, dir: &Path) -> bool {
    Command::new(t.dir.join("verify"))
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// The files directly in `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn sha256_hex(s: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())",
            s,
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn check(name: &str, answer_file: &str) {
    let t = task(name);
    let dir = scratch(name);
    let setup = Command::new(t.dir.join("setup"))
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(setup.success());
    let scripts = files(&dir);
    // Two runs, two answers.
    let first = t
        .find(&sh(&dir, &t.command))
        .expect("the answer is printed");
    let second = t
        .find(&sh(&dir, &t.command))
        .expect("the answer is printed");
    assert_ne!(first, second, "{name}: the answer must differ per run");
    // A run whose output nobody reads leaves nothing to compute the answer from:
    // every file a run adds holds only the answer's SHA-256, for the verifier.
    sh(&dir, &format!("{} > /dev/null", t.command));
    assert!(!verify(&t, &dir), "{name}: verified with no answer written");
    let last = t.find(&sh(&dir, &t.command)).unwrap();
    let digest = sha256_hex(&last);
    for f in files(&dir) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(
            !text.contains(&last),
            "{name}: {} holds the answer",
            f.display()
        );
        assert!(
            scripts.contains(&f) || text.trim() == digest,
            "{name}: the run left {} holding something other than the answer's digest: {:?}",
            f.display(),
            &text[..text.len().min(80)]
        );
    }
    // The previous run's answer no longer verifies; this run's does.
    std::fs::write(dir.join(answer_file), format!("{second}\n")).unwrap();
    assert!(!verify(&t, &dir), "{name}: a stale answer verified");
    std::fs::write(dir.join(answer_file), format!("{last}\n")).unwrap();
    assert!(
        verify(&t, &dir),
        "{name}: the answer from the output did not verify"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn last_line_trap_answer_differs_per_run_and_is_only_in_the_output() {
    check("last-line-trap", "answer.txt");
}

#[test]
fn mid_stream_trap_token_cannot_be_computed_without_the_output() {
    check("mid-stream-trap", "token.txt");
}

//! The store Lens is given: it prunes only what it made, in a store it marked;
//! handles open from anywhere; a run in progress or a large one reads back.
//! Issue 22 items 11 to 13.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use common::{handle_in, Sandbox};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn seq(n: u32) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

fn age_days(path: &std::path::Path, days: u64) {
    let t = SystemTime::now() - Duration::from_secs(days * 86_400);
    std::fs::File::open(path).unwrap().set_modified(t).unwrap();
}

#[test]
fn a_directory_holding_other_data_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let store = sb.store();
    for d in ["20240101", "cafebabe"] {
        std::fs::create_dir_all(store.join(d)).unwrap();
        std::fs::write(store.join(d).join("notes.txt"), b"mine\n").unwrap();
        age_days(&store.join(d), 30);
    }
    let out = sb.run(&["seq", "1", "5000"]);
    assert_eq!(text(&out.stdout), seq(5000));
    let e = text(&out.stderr);
    assert!(
        e.contains("holds files that are not a Lens store's") && e.lines().count() == 1,
        "{e}"
    );
    for d in ["20240101", "cafebabe"] {
        assert_eq!(
            std::fs::read(store.join(d).join("notes.txt")).unwrap(),
            b"mine\n"
        );
    }
    assert!(!store.join(".lens-store").exists());
}

#[test]
fn a_store_made_before_marks_is_adopted_and_only_its_runs_are_pruned() {
    let sb = Sandbox::new();
    let first = sb.run(&["seq", "1", "5000"]);
    let h = handle_in(&first.stdout).unwrap();
    // As an older Lens left it: no mark.
    std::fs::remove_file(sb.store().join(".lens-store")).unwrap();
    let again = sb.run(&["seq", "1", "5001"]);
    assert!(
        handle_in(&again.stdout).is_some(),
        "{}",
        text(&again.stderr)
    );
    assert!(sb.store().join(".lens-store").exists());
    // A handle-named directory of someone else's in a marked store is not a run.
    let foreign = sb.store().join("0000beef");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), b"mine\n").unwrap();
    age_days(&foreign, 30);
    age_days(&sb.store().join(&h), 30);
    let stamp = sb.store().join(".pruned");
    if stamp.exists() {
        age_days(&stamp, 1);
    }
    sb.run(&["seq", "1", "5002"]);
    assert!(!sb.store().join(&h).exists(), "the old run was not pruned");
    assert_eq!(std::fs::read(foreign.join("notes.txt")).unwrap(), b"mine\n");
}

#[test]
fn a_relative_store_is_refused_in_one_line_and_the_output_shown_whole() {
    // `LENS_STORE=rel-store`: a handle printed in one directory would open only
    // from that directory (`lens show` elsewhere finds no run), so Lens takes no
    // run there, says why in one line, and elides nothing.
    let sb = Sandbox::new();
    let a = sb.root.join("a");
    std::fs::create_dir_all(&a).unwrap();
    let out = sb
        .lens()
        .env("LENS_STORE", "rel-store")
        .current_dir(&a)
        .args(["seq", "1", "5000"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), seq(5000));
    assert_eq!(handle_in(&out.stdout), None);
    let said = text(&out.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("LENS_STORE=rel-store is a relative path") && said.contains("absolute path"),
        "{said}"
    );
    assert!(!a.join("rel-store").exists());
    assert!(out.status.success());
}

#[test]
fn a_run_in_progress_is_shown_as_far_as_it_has_got() {
    let sb = Sandbox::new();
    let mut child = sb
        .lens()
        .args(["sh", "-c", "seq 1 3000; seq 1 2 >&2; sleep 3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = sb.store().join(".running");
    let t = Instant::now();
    let h = loop {
        let found = std::fs::read_dir(&running)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned());
        if let Some(h) = found {
            break h;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "no run in progress");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(200));
    let shown = sb.run(&["show", &h]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    assert!(text(&shown.stdout) == seq(3000), "stdout is not seq 1 3000");
    let e = text(&shown.stderr);
    assert!(
        e.starts_with("1\n2\n") && e.contains("still in progress"),
        "{e}"
    );
}

//! `compare` end to end, in replay mode, on two small recorded cases whose table
//! was worked out by hand (see the comments): the real `lens` binary filters, the
//! recorded rtk view stands in for rtk.

mod lens_bin;

use lens_bin::lens_binary;
use std::process::Command;

#[test]
fn replay_renders_the_hand_checked_table() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cases");
    let work = std::env::temp_dir().join(format!("compare-it-{}", std::process::id()));
    let out = work.join("compare.json");
    let res = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(["--mode", "replay", "--no-rtk", "--cases-dir", fixtures])
        .arg("--lens")
        .arg(lens_binary())
        .arg("--work")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "{stderr}");
    let table = String::from_utf8(res.stdout).unwrap();
    // tiny: 13 raw bytes; every Lens level leaves them alone (a view is never larger
    // than raw); rtk's recorded view is "hello\n", 6 bytes, 54% smaller, without
    // the name "world".
    assert!(
        table.contains(
            "| tiny | 13 | 13 (0%) ✓ 1/1 | 13 (0%) ✓ 1/1 | 13 (0%) ✓ 1/1 | 6 (54%) ✓ 0/1 † |"
        ),
        "{table}"
    );
    // flood: 200 `Compiling` lines (5,290 bytes) and `error: linker failed` (21), exit
    // 101. Level 2: one 66-byte marker for the first 199 lines (a single reason is
    // printed without its count), the last progress line (27) and the error: 114
    // bytes. Level 1 drops the last progress line too: a 79-byte marker and the
    // error, 100. Level 0: the 81-byte count line, a 63-byte marker and the error,
    // 165, and the marker's description of the 200 lines level 0 left out
    // (`; all like "Compiling … …"; no error or warning`, 51 bytes): 216.
    assert!(
        table.contains(
            "| flood | 5,311 | 114 (98%) ✓ 1/1 | 100 (98%) ✓ 1/1 | 216 (96%) ✓ 1/1 | not claimed |"
        ),
        "{table}"
    );
    assert!(
        table.contains("Lens level 2 is smaller than rtk on 0 of 1 overlap cases"),
        "{table}"
    );
    // A progress line per case on stderr, and the JSON on disk agrees with the table.
    assert!(
        stderr.contains("[1/2] tiny ... raw 13 B, lens 13 B, rtk 6 B"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[2/2] flood ... raw 5311 B, lens 114 B, rtk not claimed"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(json["mode"], "replay");
    assert_eq!(json["cases"][1]["arms"][1]["measure"]["bytes"], 114);
    assert_eq!(json["cases"][0]["arms"][4]["source"], "recorded");
    assert!(json["command"]
        .as_str()
        .unwrap()
        .starts_with("compare --mode replay"));
    assert!(json["machine"]["cores"].as_u64().unwrap() >= 1);
    let rendered = Command::new(env!("CARGO_BIN_EXE_compare"))
        .arg("--render")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(rendered.stdout).unwrap(), table);
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn replay_without_a_recording_names_the_fix() {
    let root = std::env::temp_dir().join(format!("compare-norec-{}", std::process::id()));
    let case = root.join("cases/empty");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::write(
        case.join("case.toml"),
        "description = \"x\"\ntable = \"overlap\"\ncommand = [\"x\"]\nprograms = [\"x\"]\nneedle = 'x'\nnames = '(x)'\n",
    )
    .unwrap();
    let res = Command::new(env!("CARGO_BIN_EXE_compare"))
        .arg("--cases-dir")
        .arg(root.join("cases"))
        .arg("--lens")
        .arg(lens_binary())
        .arg("--work")
        .arg(root.join("work"))
        .output()
        .unwrap();
    assert!(!res.status.success());
    let e = String::from_utf8_lossy(&res.stderr);
    assert!(
        e.contains("has no recording") && e.contains("make compare-record"),
        "{e}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

//! Stack frames: a JVM stack trace names every frame from the throw to the
//! thread's start, and in a test run most of them are the test runner's,
//! reflection's and the JDK's (`at org.junit.…`, `at java.base/…`, `at
//! jdk.internal.reflect.…`): the same frames under every failure, none of them
//! the reader's code. A run of two or more of those is dropped, with a count in
//! the marker. A trace's first frame (where it was thrown) stays whatever code
//! it is in, and so does every frame in any other code, `Caused by:` and `... 12
//! more`, so the frames a fix starts from are all in the view.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::{Doc, Reason};

/// `at pkg.Class.method(File.java:12)`, with a module (`java.base/`) or a
/// class loader before it, and logback's `~[jar:version]` after.
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+at (\S+)\([^()]*\)(?: ~?\[[^\]]*\])?$").expect("compiles"));

/// Where a frame is not the reader's code: the JDK, and the test runners that
/// call a test (JUnit, TestNG, Surefire, Gradle's test worker).
const RUNTIME: &[&str] = &[
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "org.junit.",
    "junit.",
    "org.testng.",
    "org.apache.maven.surefire.",
    "org.apache.maven.plugin.surefire.",
    "org.gradle.",
    "worker.org.gradle.",
];

/// What a line is to a trace.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// Not a frame.
    No,
    /// A frame in the reader's code (or in code not listed).
    Own,
    /// A frame in the JDK or a test runner.
    Runtime,
}

fn frame(text: &str) -> Frame {
    // Cheap test first: a frame is indented and starts `at `.
    if !text.starts_with([' ', '\t']) || !text.trim_start().starts_with("at ") {
        return Frame::No;
    }
    let Some(c) = FRAME.captures(text) else {
        return Frame::No;
    };
    // `java.base/java.util.ArrayList.forEach`, `app//com.acme.Main.run`.
    let name = c[1].rsplit('/').next().unwrap_or(&c[1]);
    if RUNTIME.iter().any(|p| name.starts_with(p)) {
        Frame::Runtime
    } else {
        Frame::Own
    }
}

/// Drops the runs of runtime frames after each trace's first frame.
pub fn run(doc: &mut Doc) {
    let kinds: Vec<Frame> = doc.lines.iter().map(|l| frame(&l.text)).collect();
    let n = kinds.len();
    let mut i = 0;
    while i < n {
        let first_of_trace =
            kinds[i] != Frame::No && (i == 0 || kinds[i - 1] == Frame::No) || doc.stderr_start == i;
        if kinds[i] != Frame::Runtime || first_of_trace {
            i += 1;
            continue;
        }
        let start = i;
        let stream = doc.lines[i].stream;
        while i < n && kinds[i] == Frame::Runtime && doc.lines[i].stream == stream {
            i += 1;
        }
        if i - start >= 2 {
            for l in &mut doc.lines[start..i] {
                l.drop_for(Reason::Frames);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Fate;

    const TRACE: &str = "\
[ERROR] com.acme.CartTest.totals -- Time elapsed: 0.05 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <5> but was: <4>
\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
\tat org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)
\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)
\tat com.acme.CartTest.totals(CartTest.java:12)
\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)
\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1596)
\tat com.acme.Harness.each(Harness.java:3)
\tat java.base/java.lang.Thread.run(Thread.java:1583)
Caused by: java.lang.IllegalStateException: empty
\tat java.base/java.util.Optional.orElseThrow(Optional.java:377)
\tat java.base/java.util.Optional.get(Optional.java:144)
\t... 12 more
";

    fn fates(out: &str) -> Vec<bool> {
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 1);
        run(&mut doc);
        doc.lines.iter().map(|l| l.fate == Fate::Keep).collect()
    }

    #[test]
    fn runtime_frames_go_and_the_throw_site_and_own_frames_stay() {
        assert_eq!(
            fates(TRACE),
            vec![
                true, true, // the failure and the exception
                true, false, false, // the throw site stays, then JUnit's frames
                true, false, false, // the test's own frame, then reflection's
                true, true, // an own frame; a single runtime frame stays
                true, true, true, true, // Caused by: its throw site, one more, ... 12 more
            ]
        );
    }

    #[test]
    fn what_is_a_frame() {
        for (text, kind) in [
            (
                "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1596)",
                Frame::Runtime,
            ),
            (
                "        at org.junit.Assert.fail(Assert.java:89)",
                Frame::Runtime,
            ),
            (
                "\tat jdk.internal.reflect.DirectMethodHandleAccessor.invoke(Unknown Source)",
                Frame::Runtime,
            ),
            (
                "\tat com.acme.Main.main(Main.java:5) ~[app.jar:1.0]",
                Frame::Own,
            ),
            ("\tat app//com.acme.Main.run(Main.java:9)", Frame::Own),
            ("at java.util.List.of(List.java:1)", Frame::No),
            ("\tat the end of the day (really)", Frame::No),
            (
                "    java.lang.AssertionError: expected:<3> but was:<-1>",
                Frame::No,
            ),
        ] {
            assert!(frame(text) == kind, "{text}");
        }
    }

    #[test]
    fn the_view_announces_the_frames_it_leaves_out() {
        let argv: Vec<String> = vec!["mvn".into(), "test".into()];
        let req = crate::Request {
            argv: &argv,
            stdout: TRACE.as_bytes(),
            stderr: b"",
            exit: 1,
        };
        let opts = crate::Options::new(crate::Level::Two, crate::Handle::parse("1a2b3c4d"));
        let v = crate::view(&req, &opts);
        let view = String::from_utf8_lossy(&v.stdout);
        assert!(
            view.contains("[lens: elided stdout 4-5 (2 lines: frames) handle=1a2b3c4d]\n"),
            "{view}"
        );
        assert!(
            view.contains("\tat com.acme.CartTest.totals(CartTest.java:12)\n"),
            "{view}"
        );
        assert!(!view.contains("ArrayList.forEach"), "{view}");
        assert!(view.contains("Optional.orElseThrow"), "{view}");
    }
}

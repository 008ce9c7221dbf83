//! Progress elision: redraws, spinners and runs of `Compiling x` / `Downloading y`
//! style lines are dropped and reported as a count in the marker.
//!
//! A single progress line is left alone (its marker would cost more than it), and so
//! is the last line of a run that ends the stream, which is often the one that says
//! how the run ended.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::{Class, Doc, Reason, Stream};
use crate::par;
use crate::stages::classify;

static PROGRESS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        // cargo, right-aligned verbs
        r"\s*(?:Compiling|Checking|Downloading|Downloaded|Fetching|Updating|Locking|Adding|Blocking|Fresh|Documenting|Packaging|Verifying|Unpacking|Installing|Resolving|Building|Removing|Updated)\s+\S",
        // pip
        r"|\s*(?:Collecting|Obtaining|Using cached|Requirement already satisfied|Preparing metadata|Getting requirements|Installing build dependencies|Created wheel|Stored in directory|Building wheel)\b",
        // npm, yarn, pnpm
        r"|npm (?:http|timing|sill|verb)\b|(?:idealTree|reify|fetchMetadata|extract|preinstall):",
        r"|Progress: resolved \d+",
        // git transfer
        r"|(?:remote: )?(?:Enumerating|Counting|Compressing|Receiving|Resolving|Writing) (?:objects|deltas):",
        r"|Unpacking objects:|Updating files:",
        // apt, docker
        r"|(?:Get|Hit|Ign):\d+ |Reading package lists|Building dependency tree|Reading state information|Selecting previously unselected|Preparing to unpack|Setting up |Processing triggers",
        r"|[0-9a-f]{12}: (?:Pulling fs layer|Waiting|Downloading|Verifying Checksum|Download complete|Extracting|Pull complete)",
        // BuildKit's steps (a failed step says ERROR and is not progress)
        r"|\s*=> (?:=> )?(?:CACHED )?\[[^\]]+\] ",
        r"|\s*=> (?:=> )?(?:exporting|writing image|naming to|resolving provenance|load build definition|transferring) ",
        // Maven's artifact transfers, Gradle's task and configuration lines (a
        // task that failed says FAILED and is not progress), Android's
        // instrumentation protocol
        r"|\[INFO\] Download(?:ing|ed) from \S+: ",
        r"|> Task :\S+(?: (?:UP-TO-DATE|NO-SOURCE|SKIPPED|FROM-CACHE))?$|> Configure project :?\S*$",
        r"|INSTRUMENTATION_STATUS(?:_CODE)?: ",
        // make recursion noise, and the compiler command lines make echoes
        r"|make(?:\[\d+\])?: (?:Entering|Leaving) directory",
        r"|(?:cc|gcc|g\+\+|c\+\+|clang|clang\+\+|\S+-gcc)\s.*\s-c\s",
        r"|\s*(?:CC|CXX|LD|AR|AS|GEN|CCLD)\s+\S+$",
        // spinners and bare percentage bars
        r"|\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷]\s",
        r"|.*(?:\[[#=>\-. ]{8,}\]|[█▉▊▋▌▍▎▏░▒▓━─]{6,}).*\d{1,3}(?:\.\d+)?\s?%",
        r"|\s*\d{1,3}(?:\.\d+)?%\s*(?:\||$)",
        r")"
    ))
    .expect("progress pattern compiles")
});

/// True when `text` reads as a progress report.
///
/// Most lines are not progress, and compiling the full pattern costs more than a
/// small command's whole run, so a few byte tests decide first whether the pattern
/// could match at all.
pub fn is_progress(text: &str) -> bool {
    might_be_progress(text) && PROGRESS.is_match(text)
}

fn might_be_progress(text: &str) -> bool {
    let t = text.trim_start();
    // Byte loops: on short words they end before a general search has started.
    let first = &t[..t.bytes().position(|b| b == b' ').unwrap_or(t.len())];
    matches!(
        first,
        "Compiling"
            | "Checking"
            | "Downloading"
            | "Downloaded"
            | "Fetching"
            | "Updating"
            | "Locking"
            | "Adding"
            | "Blocking"
            | "Fresh"
            | "Documenting"
            | "Packaging"
            | "Verifying"
            | "Unpacking"
            | "Installing"
            | "Resolving"
            | "Building"
            | "Removing"
            | "Updated"
            | "Collecting"
            | "Obtaining"
            | "Using"
            | "Requirement"
            | "Preparing"
            | "Getting"
            | "Created"
            | "Stored"
            | "npm"
            | "Progress:"
            | "remote:"
            | "Enumerating"
            | "Counting"
            | "Compressing"
            | "Receiving"
            | "Writing"
            | "Reading"
            | "Selecting"
            | "Setting"
            | "Processing"
            | "cc"
            | "gcc"
            | "g++"
            | "c++"
            | "clang"
            | "clang++"
            | "CC"
            | "CXX"
            | "LD"
            | "AR"
            | "AS"
            | "GEN"
            | "CCLD"
    ) || first.starts_with("make")
        || ["Get:", "Hit:", "Ign:"]
            .iter()
            .any(|p| first.starts_with(p))
        || first.ends_with("-gcc")
        || first == "=>"
        || first == ">" && (t.starts_with("> Task :") || t.starts_with("> Configure project"))
        || first == "[INFO]" && t[6..].starts_with(" Download")
        || first.starts_with("INSTRUMENTATION_STATUS")
        || [
            "idealTree",
            "reify",
            "fetchMetadata",
            "extract",
            "preinstall",
        ]
        .iter()
        .any(|p| first.starts_with(p))
        || (first.len() == 13
            && first.ends_with(':')
            && first[..12].bytes().all(|b| b.is_ascii_hexdigit()))
        || t.as_bytes().contains(&b'%')
        || t.as_bytes().first() == Some(&0xe2)
            && t.chars()
                .next()
                .is_some_and(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

/// Marks progress lines and drops the runs of them.
pub fn run(doc: &mut Doc) {
    super::redraw::over_trouble(doc);
    // A line the lexicon calls an error or a warning is never progress, whatever
    // `%` or `Downloading` it holds: a progress run's marker says nothing of trouble.
    let progress = par::map(&doc.lines, |l| {
        l.class != Class::Blank
            && (l.redrawn || (is_progress(&l.text) && classify::trouble(&l.text).is_none()))
    });
    for (line, progress) in doc.lines.iter_mut().zip(progress) {
        if progress {
            line.class = Class::Progress;
        }
    }
    for stream in [Stream::Stdout, Stream::Stderr] {
        let range = doc.range(stream);
        let end = range.end;
        let mut i = range.start;
        while i < end {
            if doc.lines[i].class != Class::Progress {
                i += 1;
                continue;
            }
            let start = i;
            while i < end && doc.lines[i].class == Class::Progress {
                i += 1;
            }
            // A run of one stays; a run that ends the stream keeps its last line.
            let last = if i == end { i - 1 } else { i };
            if last - start >= 2 {
                for line in &mut doc.lines[start..last] {
                    line.drop_for(Reason::Progress);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Fate;

    fn doc<'a>(argv: &'a [String], out: &'a str) -> Doc<'a> {
        Doc::new(argv, out, "", 0)
    }

    #[test]
    fn recognises_common_progress() {
        for l in [
            "   Compiling serde v1.0.200",
            "  Downloaded regex v1.10.0",
            "Collecting pytest==8.0",
            "Receiving objects:  45% (450/1000)",
            "remote: Counting objects: 100% (3/3), done.",
            "Get:1 http://deb stable InRelease [151 kB]",
            "make[1]: Entering directory '/src'",
            "⠋ resolving",
            "[########........] 45%",
            "cc -O2 -Wall -c src/a.c -o build/a.o",
            "  CC      drivers/net/foo.o",
            " 45%|████████████          | 45/100",
            "[INFO] Downloading from central: https://repo.maven.apache.org/maven2/a/b/1/b-1.pom",
            "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/a/b/1/b-1.pom (3 kB at 90 kB/s)",
            "> Task :app:compileDebugKotlin UP-TO-DATE",
            "> Task :core:test",
            "> Configure project :app",
            "INSTRUMENTATION_STATUS: numtests=2",
            "INSTRUMENTATION_STATUS_CODE: 1",
            " => [web 2/4] WORKDIR /app                                         0.1s",
            " => CACHED [api 3/5] COPY package.json ./                          0.0s",
            " => => naming to docker.io/library/shop-web                        0.0s",
        ] {
            assert!(is_progress(l), "{l}");
        }
        for l in [
            "error: could not compile `x`",
            "    Finished dev [unoptimized] target(s)",
            "test foo ... ok",
            "src/a.rs:3: unused",
            "Installing: the answer",
            "  |     ^^^^^^^^ expected `u32`",
            "- a list item",
            "> Task :app:compileDebugKotlin FAILED",
            "[INFO] Building jar: target/app-1.0.jar",
            "[ERROR] Failed to download from central: https://repo.maven.apache.org/x",
            " => ERROR [web 4/4] RUN npm ci                                     3.2s",
            "INSTRUMENTATION_RESULT: stream=",
            "=> a quoted arrow",
        ] {
            assert!(!is_progress(l), "{l}");
        }
    }

    #[test]
    fn an_error_among_progress_is_not_progress() {
        let argv = vec![];
        let out = "Downloading a.tar.gz\nDownloading b.tar.gz: error: connection reset\nDownloading c.tar.gz\nDownloading d.tar.gz\nDownloading e.tar.gz\ndone\n";
        let mut d = doc(&argv, out);
        run(&mut d);
        assert_eq!(d.lines[1].class, Class::Plain);
        assert_eq!(d.lines[1].fate, Fate::Keep);
        assert_eq!(d.lines[2].class, Class::Progress);
        assert_eq!(d.lines[2].fate, Fate::Drop(Reason::Progress));
    }

    #[test]
    fn drops_runs_but_keeps_the_last_line_of_a_stream() {
        let argv = vec![];
        let out = "start\n  Compiling a v1\n  Compiling b v1\n  Compiling c v1\n";
        let mut d = doc(&argv, out);
        run(&mut d);
        let fates: Vec<_> = d.lines.iter().map(|l| l.fate).collect();
        assert_eq!(
            fates,
            vec![
                Fate::Keep,
                Fate::Drop(Reason::Progress),
                Fate::Drop(Reason::Progress),
                Fate::Keep
            ]
        );
    }

    #[test]
    fn a_single_progress_line_stays() {
        let argv = vec![];
        let mut d = doc(&argv, "a\n  Compiling a v1\nb\n");
        run(&mut d);
        assert!(d.lines.iter().all(|l| l.shown()));
    }

    #[test]
    fn redraws_are_progress() {
        let argv = vec![];
        let mut d = doc(
            &argv,
            "x 1%\rx 50%\rx 100%\ny 1%\ry 100%\nz 1%\rz 2%\ndone\n",
        );
        run(&mut d);
        assert_eq!(d.lines[0].fate, Fate::Drop(Reason::Progress));
        assert!(d.lines[3].shown());
    }
}

//! What every result records about where and how it was produced: the command line,
//! the git revision, the machine and the date.

use std::process::Command;

use serde::Serialize;

/// The machine a result was measured on.
#[derive(Serialize, serde::Deserialize, Debug, Clone)]
pub struct Machine {
    /// Logical CPUs.
    pub cores: usize,
    /// Physical memory in GiB, from /proc/meminfo when available.
    pub memory_gib: Option<f64>,
    /// Operating system.
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// CPU model, from /proc/cpuinfo when available.
    pub cpu: Option<String>,
}

/// Reads the machine's description.
pub fn machine() -> Machine {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_gib = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_gib,
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpu,
    }
}

/// The checkout's revision, with `-dirty` when the tree has changes outside
/// `results/`.
pub fn git_revision() -> String {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) => {
            // Results being rewritten do not make the measured code dirty.
            let dirty = run(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)results",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        None => "unknown".into(),
    }
}

/// The command line this process was started with, program name first.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut parts = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let a = if i == 0 {
            std::path::Path::new(a)
                .file_name()
                .map_or(a.clone(), |n| n.to_string_lossy().into_owned())
        } else {
            a.clone()
        };
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
            parts.push(format!("'{}'", a.replace('\'', r"'\''")));
        } else {
            parts.push(a);
        }
    }
    parts.join(" ")
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Formats seconds since the epoch as a UTC timestamp.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// First line of a command's output (stdout, else stderr), or `None` if it cannot run.
pub fn version_of(argv: &[String]) -> Option<String> {
    let out = Command::new(&argv[0]).args(&argv[1..]).output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_798_675_200 + 3_661), "2026-12-31T01:01:01Z");
    }

    #[test]
    fn machine_has_cores() {
        assert!(machine().cores >= 1);
    }
}

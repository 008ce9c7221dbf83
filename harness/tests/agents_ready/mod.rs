//! Whether the real agent CLI tests can run: each CLI installed at its pinned
//! version (`make agents`). When one is not, the test skips with one printed
//! line, or fails under LENS_REQUIRE_AGENTS=1 (CI sets it), so a CI run can
//! never pass by skipping them.

use harness::agent_cli::AgentCli;

/// True when `cli` is installed at its pinned version; else the skip line.
pub fn available(cli: AgentCli) -> bool {
    let line = match cli.installed_version() {
        _ if !cli.installed() => format!(
            "{} {} is not installed at {}; run `make agents`",
            cli.name(),
            cli.version(),
            cli.binary().display()
        ),
        Some(v) if v == cli.version() => return true,
        found => format!(
            "{} is installed at version {} but the tests pin {}; run `make agents`",
            cli.name(),
            found.as_deref().unwrap_or("unknown"),
            cli.version()
        ),
    };
    skip(&line)
}

/// Prints why the test is skipped and returns false, or fails the test under
/// LENS_REQUIRE_AGENTS=1.
pub fn skip(line: &str) -> bool {
    if std::env::var("LENS_REQUIRE_AGENTS").is_ok_and(|v| v == "1") {
        panic!("{line} (LENS_REQUIRE_AGENTS=1)");
    }
    println!("skipped: {line}");
    false
}

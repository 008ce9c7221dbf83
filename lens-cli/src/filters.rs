//! User filters on disk: where they live, which a project's are trusted, and
//! the `lens verify` and `lens trust` subcommands. The format and the engine are
//! `lens_core::filters`.
//!
//! The user's own filters are `filters.toml` beside the config file
//! (`LENS_CONFIG`'s directory, else `~/.config/lens`). A project's are
//! `.lens/filters.toml` at its git root, and apply only once `lens trust` has
//! recorded that file's SHA-256 in `trusted-filters` beside the config, outside
//! the repository: cloning a repository never changes what Lens hides, and a
//! changed file is ignored until it is trusted again. A project's filter is
//! picked before the user's; within a file the first whose `match` covers the
//! command. A file Lens cannot read or parse is one diagnostic line after the
//! command's output, and the built-in shapes apply.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lens_core::filters::{check_invariants, command_line, Filter, FilterSet};

use crate::capture::say_out;
use crate::config::read_config;
use crate::paths;

/// The user's filter file: beside the config file.
pub(crate) fn user_file() -> PathBuf {
    paths::config().with_file_name("filters.toml")
}

/// Where `lens trust` records the project files it trusted, one
/// `<sha256> <path>` line each: beside the config, never in a repository.
pub(crate) fn trust_file() -> PathBuf {
    paths::config().with_file_name("trusted-filters")
}

/// The project's filter file (it may not exist): `.lens/filters.toml` at the
/// git root at or above `cwd`.
pub(crate) fn project_file(cwd: &Path) -> Option<PathBuf> {
    paths::git_root(cwd).map(|r| r.join(".lens").join("filters.toml"))
}

/// The filter that covers `argv`, run in `cwd`: the project's (when trusted),
/// else the user's. Every file that is ignored is one line in `diagnostics`.
pub(crate) fn pick(
    argv: &[String],
    cwd: &Path,
    diagnostics: &mut Vec<String>,
) -> Option<Arc<Filter>> {
    if argv.is_empty() {
        return None;
    }
    let project = project_file(cwd).and_then(|p| load_project(&p, diagnostics));
    let user = load(&user_file(), diagnostics);
    [project, user]
        .into_iter()
        .flatten()
        .find_map(|set| set.pick(argv))
}

/// A draft file given to `lens --as … --filters FILE`: its filter for `argv`,
/// trusted or not, since the user named it. Why none applies is one line.
pub(crate) fn pick_draft(
    file: &Path,
    argv: &[String],
    line: &str,
    diagnostics: &mut Vec<String>,
) -> Option<Arc<Filter>> {
    if !file.exists() {
        diagnostics.push(format!(
            "lens: --filters {}: there is no such file; the built-in shapes are used",
            file.display()
        ));
        return None;
    }
    let set = load(file, diagnostics)?;
    let f = set.pick(argv);
    if f.is_none() {
        let read = command_line(argv);
        let read = if read == line {
            String::new()
        } else {
            format!(" (read as {read:?})")
        };
        diagnostics.push(format!(
            "lens: no filter in {} covers {line:?}{read}; the built-in shapes are used",
            file.display(),
        ));
    }
    f
}

/// A filter file's filters; `None` when there is no file, or (with one line
/// in `diagnostics`) when it cannot be read or parsed.
fn load(path: &Path, diagnostics: &mut Vec<String>) -> Option<FilterSet> {
    let text = match read_config(path) {
        Ok(t) => t?,
        Err(why) => {
            diagnostics.push(ignored(path, &why));
            return None;
        }
    };
    parse(path, &text, diagnostics)
}

fn parse(path: &Path, text: &str, diagnostics: &mut Vec<String>) -> Option<FilterSet> {
    match FilterSet::parse(text) {
        Ok(s) => Some(s),
        Err(e) => {
            diagnostics.push(ignored(path, &e));
            None
        }
    }
}

fn ignored(path: &Path, why: &str) -> String {
    format!(
        "lens: filters {} ignored: {why}; the built-in shapes are used",
        path.display()
    )
}

/// A project's file, when it is trusted as it is now.
fn load_project(path: &Path, diagnostics: &mut Vec<String>) -> Option<FilterSet> {
    let text = match read_config(path) {
        Ok(t) => t?,
        Err(why) => {
            diagnostics.push(ignored(path, &why));
            return None;
        }
    };
    match trusted(path, &text) {
        Trust::Yes => parse(path, &text, diagnostics),
        Trust::No => {
            diagnostics.push(format!(
                "lens: {} is not trusted, so its filters are ignored; read it, then run `lens trust` in that project",
                path.display()
            ));
            None
        }
        Trust::Changed => {
            diagnostics.push(format!(
                "lens: {} changed since `lens trust`, so its filters are ignored; read it, then run `lens trust` again",
                path.display()
            ));
            None
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Trust {
    Yes,
    No,
    Changed,
}

/// The path a trust record names: absolute and without links, so a project is
/// the same project from any directory.
fn key(path: &Path) -> String {
    fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn records() -> Vec<(String, String)> {
    let text = read_config(&trust_file())
        .ok()
        .flatten()
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(h, p)| (h.to_string(), p.to_string()))
        .collect()
}

fn trusted(path: &Path, text: &str) -> Trust {
    let key = key(path);
    let hash = sha256_hex(text.as_bytes());
    let mut known = false;
    for (h, p) in records() {
        if p == key {
            if h == hash {
                return Trust::Yes;
            }
            known = true;
        }
    }
    if known {
        Trust::Changed
    } else {
        Trust::No
    }
}

/// `lens trust`: records the hash of this project's filter file, after
/// checking that it parses. Returns the exit code.
pub(crate) fn trust_cmd() -> i32 {
    let cwd = std::env::current_dir().unwrap_or_default();
    let Some(path) = project_file(&cwd) else {
        crate::capture::say(&format!(
            "lens trust: {} is not in a git repository; a project's filters are .lens/filters.toml at its git root",
            cwd.display()
        ));
        return 1;
    };
    let text = match read_config(&path) {
        Ok(Some(t)) => t,
        Ok(None) => {
            crate::capture::say(&format!(
                "lens trust: there is no {}; write the project's filters there first",
                path.display()
            ));
            return 1;
        }
        Err(why) => {
            crate::capture::say(&format!("lens trust: {}: {why}", path.display()));
            return 1;
        }
    };
    let set = match FilterSet::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            crate::capture::say(&format!(
                "lens trust: {} is not trusted: {e}; fix it and check it with lens verify",
                path.display()
            ));
            return 1;
        }
    };
    let key = key(&path);
    let hash = sha256_hex(text.as_bytes());
    let mut lines: Vec<String> = records()
        .into_iter()
        .filter(|(_, p)| *p != key)
        .map(|(h, p)| format!("{h} {p}"))
        .collect();
    lines.push(format!("{hash} {key}"));
    if let Err(e) = write_records(&lines) {
        crate::capture::say(&format!(
            "lens trust: cannot record the trust in {} ({e})",
            trust_file().display()
        ));
        return 1;
    }
    let names: Vec<&str> = set.filters.iter().map(|f| f.name.as_str()).collect();
    say_out(&format!(
        "lens: trusted {} (sha256 {}; filters: {}); after any change it is ignored until you run lens trust again",
        path.display(),
        &hash[..16],
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    ));
    0
}

fn write_records(lines: &[String]) -> std::io::Result<()> {
    let path = trust_file();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = fs::File::create(&tmp)?;
    for l in lines {
        writeln!(f, "{l}")?;
    }
    f.sync_all()?;
    fs::rename(&tmp, &path)
}

/// Generated outputs each filter's invariants are checked on.
const ROUNDS: usize = 64;

/// `lens verify [FILE...]`: every inline test and the invariant checks of each
/// filter in the files named, else in the user's and this project's files.
/// One line per test, then `N passed, M failed`; exit 1 on any failure.
pub(crate) fn verify_cmd(files: &[String]) -> i32 {
    let files: Vec<PathBuf> = if files.is_empty() {
        let cwd = std::env::current_dir().unwrap_or_default();
        let found: Vec<PathBuf> = [Some(user_file()), project_file(&cwd)]
            .into_iter()
            .flatten()
            .filter(|p| p.exists())
            .collect();
        if found.is_empty() {
            crate::capture::say(&format!(
                "lens verify: no filter file; name one (lens verify FILE) or write {}",
                user_file().display()
            ));
            return 2;
        }
        found
    } else {
        files.iter().map(PathBuf::from).collect()
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let name = file.display();
        let text = match read_config(file) {
            Ok(Some(t)) => t,
            Ok(None) => {
                say_out(&format!("FAIL {name}: there is no such file"));
                failed += 1;
                continue;
            }
            Err(why) => {
                say_out(&format!("FAIL {name}: {why}"));
                failed += 1;
                continue;
            }
        };
        let set = match FilterSet::parse(&text) {
            Ok(s) => s,
            Err(e) => {
                say_out(&format!("FAIL {name}: {e}"));
                failed += 1;
                continue;
            }
        };
        for f in &set.filters {
            for r in f.run_tests() {
                if r.passed() {
                    passed += 1;
                    say_out(&format!("ok   {name}: {} / {}", f.name, r.name));
                } else {
                    failed += 1;
                    say_out(&format!(
                        "FAIL {name}: {} / {}: {}; the view held {}",
                        f.name,
                        r.name,
                        r.problems.join("; "),
                        quoted(&r.view)
                    ));
                }
            }
            match check_invariants(f, ROUNDS) {
                Ok(()) => {
                    passed += 1;
                    say_out(&format!(
                        "ok   {name}: {} / invariants on {ROUNDS} generated outputs",
                        f.name
                    ));
                }
                Err(e) => {
                    failed += 1;
                    say_out(&format!("FAIL {name}: {} / invariants: {e}", f.name));
                }
            }
        }
    }
    say_out(&format!("{passed} passed, {failed} failed"));
    i32::from(failed > 0)
}

/// A view on one line: quoted and escaped, its middle cut past a few hundred bytes.
fn quoted(view: &str) -> String {
    const MAX: usize = 600;
    let q = format!("{view:?}");
    if q.len() <= MAX {
        return q;
    }
    let head: String = q.chars().take(MAX / 2).collect();
    let tail: String = {
        let chars: Vec<char> = q.chars().collect();
        chars[chars.len().saturating_sub(MAX / 2)..]
            .iter()
            .collect()
    };
    format!("{head}…{tail}")
}

/// SHA-256 of `data`, in lowercase hex (FIPS 180-4). Written here rather than
/// taken from a crate: trust needs a hash a file's author cannot make collide,
/// and this is all of it.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_standard_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // Exactly one block of padding past a 64-byte message.
        assert_eq!(
            sha256_hex(&[b'a'; 64]),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"
        );
    }

    #[test]
    fn a_long_view_is_cut_in_its_middle_on_one_line() {
        let v = "line\n".repeat(500);
        let q = quoted(&v);
        assert!(q.len() < 700 && q.contains('…') && !q.contains('\n'), "{q}");
        assert_eq!(quoted("a\nb\n"), "\"a\\nb\\n\"");
    }
}

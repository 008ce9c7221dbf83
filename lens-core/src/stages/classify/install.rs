//! Package installs: pip and npm. Their chatter (`npm verbose`, `npm info`, `npm
//! timing`, pip's `Collecting`/`Downloading`) is progress; `npm warn`/`npm error`,
//! pip's `ERROR:`/`WARNING:` and the closing `Successfully installed`/`added N
//! packages` lines are what the run was for.

use std::sync::LazyLock;

use regex::Regex;

use crate::doc::Class;

static CHATTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^npm (?:verbose|info|timing|sill|http)\b").expect("compiles"));
static DONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Successfully installed |added \d+ packages?|removed \d+ packages?|changed \d+ packages?|up to date)")
        .expect("compiles")
});

/// Install chatter is progress and an install's result a summary; any other line
/// keeps `class`.
pub fn class(class: Class, text: &str) -> Class {
    if class == Class::Blank {
        return class;
    }
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if matches!(first, b'S' | b'a' | b'r' | b'c' | b'u') && DONE.is_match(text) {
        Class::Summary
    } else if class == Class::Plain && text.starts_with("npm ") && CHATTER.is_match(text) {
        Class::Progress
    } else {
        class
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Doc;
    use crate::stages::classify;

    #[test]
    fn npm_and_pip() {
        let out = "npm verbose title npm install\nnpm info run x@1.0.0 postinstall\nnpm warn deprecated a@1\nadded 23 packages in 1s\nSuccessfully installed ruff-0.17.6\nERROR: No matching distribution found for nope\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, out, "", 0);
        classify::run(&mut doc);
        let classes: Vec<Class> = doc.lines.iter().map(|l| l.class).collect();
        assert_eq!(
            classes,
            vec![
                Class::Progress,
                Class::Progress,
                Class::Warning,
                Class::Summary,
                Class::Summary,
                Class::Error
            ]
        );
    }
}

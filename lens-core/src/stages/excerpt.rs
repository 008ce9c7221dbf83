//! Excerpt: once a view holds more than a handful of causes, the source each one
//! quotes goes. It is the one part of a finding the reader already has (it is in
//! the file, at the line the finding names); message, location and help stay.
//! So does the compiler's reference boilerplate under a lint (`= help: for further
//! information visit <url>`, ``= note: `#[warn(x)]` on by default``): the group's
//! line names the lint and its first line the level, which is all they say.

use crate::digest::Body;
use crate::doc::{Class, Doc};

/// Causes a view can show with their source quoted.
pub const HANDFUL: usize = 3;

/// Removes quoted source from the digests' examples when there are many causes.
pub fn run(doc: &mut Doc) {
    let causes: usize = doc
        .digests
        .iter()
        .map(|d| match &d.body {
            Body::Findings(g) => g.len(),
            _ => 0,
        })
        .sum();
    if causes <= HANDFUL {
        return;
    }
    let lines = &doc.lines;
    for d in doc.digests.iter_mut() {
        if let Body::Findings(groups) = &mut d.body {
            for g in groups.iter_mut() {
                g.example
                    .retain(|&i| lines[i].class != Class::Source && !reference(&lines[i].text));
            }
        }
    }
}

/// rustc's and clippy's per-lint reference lines.
fn reference(text: &str) -> bool {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix("= ") else {
        return false;
    };
    rest.starts_with("help: for further information visit ")
        || (rest.starts_with("note: `#[")
            && (rest.ends_with("]` on by default") || rest.contains("]` implied by `#[")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Detail;
    use crate::stages::{cause, classify};

    #[test]
    fn source_goes_only_past_a_handful_of_causes() {
        let mut text = String::new();
        for rule in 0..4 {
            for i in 0..2 {
                text.push_str(&format!(
                    "warning: lint number {rule}\n --> src/a.rs:{}:1\n  |\n1 | let x = {rule};\n  |     ^\n  = help: consider a constant\n  = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#lint_{rule}\n  = note: `#[warn(clippy::lint_{rule})]` on by default\n\n",
                    rule * 10 + i
                ));
            }
        }
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", &text, 0);
        classify::run(&mut doc);
        cause::run(&mut doc);
        run(&mut doc);
        cause::apply(&mut doc, 0);
        let lines = doc.digests[0].lines(&doc, Detail::Full);
        assert!(!lines.iter().any(|l| l.contains(" | ")), "{lines:?}");
        assert!(lines
            .iter()
            .any(|l| l.contains("= help: consider a constant")));
        assert!(
            !lines
                .iter()
                .any(|l| l.contains("further information") || l.contains("on by default")),
            "{lines:?}"
        );
        assert!(
            lines.contains(&"clippy::lint_3 ×2: src/a.rs:30:1, src/a.rs:31:1".to_string()),
            "{lines:?}"
        );
    }
}

//! Python tracebacks, chained ones included: the lines that join two tracebacks
//! ("During handling of the above exception…", "The above exception was the direct
//! cause…") say which exception is the cause, so they are failures too, and a
//! frame's `File "…", line N` is kept with its code line as the failure's context.

use crate::doc::{Class, Doc};

const CHAIN: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// Marks chain lines as failures.
pub fn run(doc: &mut Doc) {
    for l in doc.lines.iter_mut() {
        if l.class == Class::Plain && CHAIN.contains(&l.text.trim()) {
            l.class = Class::Error;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify;

    #[test]
    fn chained_tracebacks_are_failures() {
        let out = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\nKeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 5, in <module>\n    g()\nValueError: bad\n";
        let argv = vec![];
        let mut doc = Doc::new(&argv, "", out, 1);
        classify::run(&mut doc);
        let errors: Vec<&str> = doc
            .lines
            .iter()
            .filter(|l| l.class == Class::Error)
            .map(|l| l.raw)
            .collect();
        assert_eq!(
            errors,
            vec![
                "Traceback (most recent call last):",
                "KeyError: 'x'",
                "During handling of the above exception, another exception occurred:",
                "Traceback (most recent call last):",
                "ValueError: bad"
            ]
        );
    }
}

//! Python tracebacks, chained ones included: the lines that join two tracebacks
//! ("During handling of the above exception…", "The above exception was the direct
//! cause…") say which exception is the cause, so they are failures too, and a
//! frame's `File "…", line N` is kept with its code line as the failure's context.

use crate::doc::Class;

const CHAIN: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// A chain line is a failure; any other line keeps `class`.
pub fn class(class: Class, text: &str) -> Class {
    if class == Class::Plain && CHAIN.contains(&text.trim()) {
        Class::Error
    } else {
        class
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::classify;

    #[test]
    fn chained_tracebacks_are_failures() {
        let out = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\nKeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 5, in <module>\n    g()\nValueError: bad\n";
        use crate::doc::Doc;
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

//! `spawn-floor <command> [args...]`: the least a wrapper like Lens can do. It runs
//! the command with stdout and stderr piped, reads each on its own thread, writes
//! them back unchanged and exits with the command's code: no filter, no store, no
//! log. `lens-bench overhead` times it next to `git status` and `lens git status`,
//! so the cost of being a wrapper at all is measured apart from Lens's own.
use std::io::{Read, Write};
use std::process::{Command, Stdio};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: spawn-floor <command> [args...]");
        std::process::exit(2);
    };
    let mut child = match Command::new(program)
        .args(rest)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spawn-floor: cannot run {program}: {e}");
            std::process::exit(127);
        }
    };
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    };
    let out_pipe: Option<Box<dyn Read + Send>> = child.stdout.take().map(|p| Box::new(p) as _);
    let err_pipe: Option<Box<dyn Read + Send>> = child.stderr.take().map(|p| Box::new(p) as _);
    let out_reader = std::thread::spawn(move || read(out_pipe));
    let err = read(err_pipe);
    let out = out_reader.join().unwrap_or_default();
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
    let _ = std::io::stdout().write_all(&out);
    let _ = std::io::stderr().write_all(&err);
    std::process::exit(code);
}

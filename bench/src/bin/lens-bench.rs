//! `lens-bench`: the growth gate, latency against a baseline, throughput, and
//! whole-process overhead against git and rtk.
//!
//! ```text
//! lens-bench gate [--save] [--gate-latency] [--baseline FILE] [--input NAME]
//! lens-bench overhead [--runs N] [--lens PATH] [--rtk PATH] [--out FILE]
//! lens-bench fuzz [--execs N] [--seed S] [--jobs J] [--input N] [--out FILE]
//! lens-bench big [--lens PATH] [--rtk PATH] [--gib N] [--out FILE]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bench::{growth, inputs, stages};
use harness::env;
use serde::{Deserialize, Serialize};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("gate") => gate(&args[1..]),
        Some("overhead") => overhead(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("big") => big(&args[1..]),
        _ => Err(anyhow::anyhow!(
            "usage: lens-bench gate [--save] [--gate-latency] [--baseline FILE] [--input NAME] | overhead [--runs N] [--lens PATH] [--rtk PATH] [--out FILE] | fuzz [--execs N] [--seed S] [--jobs J] [--input N] [--out FILE] | big [--lens PATH] [--rtk PATH] [--gib N] [--out FILE]"
        )),
    };
    if let Err(e) = result {
        eprintln!("lens-bench: {e:#}");
        std::process::exit(1);
    }
}

fn flag(args: &[String], name: &str) -> bool {
    args.iter().any(|a| a == name)
}

fn value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

#[derive(Serialize, Deserialize)]
struct Baseline {
    command: String,
    git_revision: String,
    date: String,
    machine: env::Machine,
    /// `input/stage` to the minimum microseconds at 1×.
    micros: BTreeMap<String, f64>,
}

/// Latency may grow this much before `--gate-latency` fails.
const LATENCY_SLACK: f64 = 1.25;

fn gate(args: &[String]) -> Result<()> {
    let baseline_path = PathBuf::from(
        value(args, "--baseline").unwrap_or_else(|| "results/micro-baseline.json".into()),
    );
    let baseline: Option<Baseline> = std::fs::read(&baseline_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    // One thread: growth is about how the work grows, and a stage that splits
    // across cores only past a size would hide a superlinear cost at 16x. Latency
    // is then comparable between machines' runs whatever their core count.
    lens_core::par::set_threads(1);
    let mut failures = Vec::new();
    let mut slower = Vec::new();
    let mut micros = BTreeMap::new();
    println!(
        "{:<17} {:<9} {:>10} {:>8}  {:>10}",
        "input", "stage", "1x µs", "16x/1x", "vs base"
    );
    let only = value(args, "--input");
    if only.is_some() && flag(args, "--save") {
        bail!("--save with --input would write a baseline of one input; drop --input");
    }
    let chosen = inputs::growth()?
        .into_iter()
        .filter(|i| only.as_ref().is_none_or(|o| &i.name == o));
    for input in chosen {
        // "1×" is the recording repeated to at least 32 KiB: below that, fixed costs
        // and early exits (a view that needs no marker) measure nothing about growth.
        let base = input.scaled((32usize << 10).div_ceil(input.len().max(1)));
        let scaled: Vec<inputs::Input> = [1, 4, 16].iter().map(|&k| base.scaled(k)).collect();
        for stage in stages::NAMES {
            let mut runners: Vec<Box<dyn FnMut() + '_>> = scaled
                .iter()
                .zip([1, 4, 16])
                .map(|(i, k)| stages::runner(stage, i, k))
                .collect();
            let mut run = |scale: usize| {
                let k = [1, 4, 16].iter().position(|&s| s == scale).unwrap_or(0);
                (runners[k])();
            };
            // A stage fails only when a second, independent measurement agrees: a
            // neighbour's burst on a shared core can stretch one sample set, but a
            // superlinear stage fails both by a wide margin.
            let mut g = growth::measure(7, Duration::from_millis(150), &mut run);
            if !g.passes() {
                let again = growth::measure(7, Duration::from_millis(300), &mut run);
                if again.ratio < g.ratio {
                    g = again;
                }
            }
            let us = g.nanos[0] as f64 / 1000.0;
            let key = format!("{}/{stage}", input.name);
            let change = baseline
                .as_ref()
                .and_then(|b| b.micros.get(&key))
                .map(|b| us / b);
            if let Some(c) = change {
                if c > LATENCY_SLACK {
                    slower.push(format!("{key} {:+.0}%", (c - 1.0) * 100.0));
                }
            }
            println!(
                "{:<17} {:<9} {:>10.1} {:>7.1}x  {:>10}{}",
                input.name,
                stage,
                us,
                g.ratio,
                change.map_or("no base".to_string(), |c| format!(
                    "{:+.0}%",
                    (c - 1.0) * 100.0
                )),
                if g.passes() { "" } else { "  GROWTH FAIL" }
            );
            if !g.passes() {
                failures.push(format!(
                    "{key}: 16x took {:.1}x the 1x time (limit {})",
                    g.ratio,
                    growth::LIMIT
                ));
            }
            micros.insert(key, (us * 10.0).round() / 10.0);
        }
    }
    if flag(args, "--save") {
        let b = Baseline {
            command: env::command_line(),
            git_revision: env::git_revision(),
            date: env::utc_now(),
            machine: env::machine(),
            micros,
        };
        write_json(&baseline_path, &b)?;
        println!("wrote {}", baseline_path.display());
    } else if baseline.is_none() {
        println!(
            "no latency baseline at {}; `make bench-save` records one",
            baseline_path.display()
        );
    }
    if !slower.is_empty() {
        println!(
            "slower than the baseline by more than {:.0}%: {}",
            (LATENCY_SLACK - 1.0) * 100.0,
            slower.join(", ")
        );
        if flag(args, "--gate-latency") {
            bail!("latency gate failed ({} entries)", slower.len());
        }
    }
    if !failures.is_empty() {
        bail!("growth gate failed:\n  {}", failures.join("\n  "));
    }
    println!(
        "growth gate: every stage within {}x at 16x its input",
        growth::LIMIT
    );
    Ok(())
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One command to time, with what it needs around it.
struct Arm {
    name: &'static str,
    argv: Vec<String>,
}

thread_local! {
    /// The file the arms read on stdin (none: /dev/null).
    static STDIN: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

fn run_once(argv: &[String], cwd: &Path, envs: &[(&str, PathBuf)]) -> Result<Duration> {
    let mut cmd = Command::new(&argv[0]);
    let stdin = match STDIN.with(|s| s.borrow().clone()) {
        Some(p) => Stdio::from(std::fs::File::open(&p)?),
        None => Stdio::null(),
    };
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let t = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", argv.join(" ")))?;
    let d = t.elapsed();
    std::hint::black_box(out);
    Ok(d)
}

/// Alternates the arms (A B C A B C …) so drift hits them alike; medians in ms.
fn alternate(
    arms: &[Arm],
    runs: usize,
    cwd: &Path,
    envs: &[(&str, PathBuf)],
) -> Result<BTreeMap<String, f64>> {
    for a in arms {
        run_once(&a.argv, cwd, envs)?; // warm caches
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); arms.len()];
    for _ in 0..runs {
        for (i, a) in arms.iter().enumerate() {
            times[i].push(run_once(&a.argv, cwd, envs)?.as_secs_f64() * 1000.0);
        }
    }
    Ok(arms
        .iter()
        .zip(times)
        .map(|(a, t)| (a.name.to_string(), (median(t) * 1000.0).round() / 1000.0))
        .collect())
}

/// Peak resident set, in KiB, by /usr/bin/time (median of 5).
fn peak_rss(argv: &[String], cwd: &Path, envs: &[(&str, PathBuf)], scratch: &Path) -> Option<f64> {
    let out = scratch.join("rss.txt");
    let mut samples = Vec::new();
    for _ in 0..5 {
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&out)
            .args(argv)
            .current_dir(cwd)
            .stdin(Stdio::null());
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.status().ok()?;
        samples.push(
            std::fs::read_to_string(&out)
                .ok()?
                .trim()
                .lines()
                .last()?
                .parse::<f64>()
                .ok()?,
        );
    }
    Some(median(samples))
}

fn sh(cwd: &Path, script: &str) -> Result<()> {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .status()?
        .success();
    if !ok {
        bail!("setup failed: {script}");
    }
    Ok(())
}

fn find(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn overhead(args: &[String]) -> Result<()> {
    let runs: usize = value(args, "--runs").map_or(Ok(31), |v| v.parse())?;
    let lens = PathBuf::from(
        value(args, "--lens")
            .unwrap_or_else(|| format!("out/release/{}/lens", std::env::consts::ARCH)),
    )
    .canonicalize()
    .context("no lens binary; run `make build` or pass --lens")?;
    let rtk = value(args, "--rtk")
        .map(PathBuf::from)
        .or_else(|| find("rtk"));
    let out_path =
        PathBuf::from(value(args, "--out").unwrap_or_else(|| "results/overhead.json".into()));
    let scratch = PathBuf::from("out/bench").canonicalize().or_else(|_| {
        std::fs::create_dir_all("out/bench")?;
        PathBuf::from("out/bench").canonicalize()
    })?;
    let repo = scratch.join("repo");
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo)?;
    // A repository of a few hundred files with a handful of changes.
    for d in 0..20 {
        for f in 0..15 {
            let p = repo.join(format!("src/mod{d:02}/file{f:02}.rs"));
            std::fs::create_dir_all(p.parent().unwrap_or(&repo))?;
            std::fs::write(
                &p,
                format!("pub fn f{d}_{f}() -> u32 {{ {} }}\n", d * 100 + f),
            )?;
        }
    }
    sh(
        &repo,
        "git init -q -b main && git add -A && git -c user.name=b -c user.email=b@x commit -qm init",
    )?;
    sh(&repo, "echo '// changed' >> src/mod03/file04.rs && echo new > notes.txt && git add notes.txt && echo x >> src/mod07/file01.rs")?;
    let home = scratch.join("home");
    std::fs::create_dir_all(&home)?;
    let envs: Vec<(&str, PathBuf)> = vec![
        ("LENS_STORE", scratch.join("lens-store")),
        ("LENS_LOG_DIR", scratch.join("lens-log")),
        ("LENS_CONFIG", scratch.join("no-config.toml")),
        ("HOME", home.clone()),
    ];
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut git_arms = vec![
        Arm {
            name: "git",
            argv: s(&["git", "status"]),
        },
        Arm {
            name: "lens",
            argv: vec![lens.display().to_string(), "git".into(), "status".into()],
        },
    ];
    // The floor: a wrapper that only spawns, pipes and copies (bench's spawn-floor,
    // built next to this binary). What a wrapper costs at all on this machine.
    let floor = std::env::current_exe()?.with_file_name("spawn-floor");
    if floor.is_file() {
        git_arms.push(Arm {
            name: "floor",
            argv: vec![floor.display().to_string(), "git".into(), "status".into()],
        });
    } else {
        eprintln!(
            "no {}: the floor arm is skipped (make bench builds it)",
            floor.display()
        );
    }
    if let Some(r) = &rtk {
        // A first run under this HOME takes rtk's once-a-day notice out of the timing.
        let _ = run_once(
            &[r.display().to_string(), "git".into(), "status".into()],
            &repo,
            &envs,
        );
        git_arms.push(Arm {
            name: "rtk",
            argv: vec![r.display().to_string(), "git".into(), "status".into()],
        });
    }
    eprintln!("timing git status arms ({runs} runs each, alternating)");
    let git_ms = alternate(&git_arms, runs, &repo, &envs)?;

    // A no-op cargo build: a tiny crate built once, then timed.
    let krate = scratch.join("crate");
    let _ = std::fs::remove_dir_all(&krate);
    std::fs::create_dir_all(krate.join("src"))?;
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"noop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )?;
    std::fs::write(krate.join("src/main.rs"), "fn main() {}\n")?;
    let mut cargo_env = envs.clone();
    cargo_env.retain(|(k, _)| *k != "HOME");
    cargo_env.push(("CARGO_TARGET_DIR", krate.join("target")));
    sh(&krate, "cargo build -q")?;
    let cargo_arms = vec![
        Arm {
            name: "cargo",
            argv: s(&["cargo", "build"]),
        },
        Arm {
            name: "lens",
            argv: vec![lens.display().to_string(), "cargo".into(), "build".into()],
        },
    ];
    eprintln!("timing cargo build arms ({runs} runs each, alternating)");
    let cargo_ms = alternate(&cargo_arms, runs, &krate, &cargo_env)?;

    let ratio = |m: &BTreeMap<String, f64>, a: &str, b: &str| match (m.get(a), m.get(b)) {
        (Some(x), Some(y)) if *y > 0.0 => Some((x / y * 1000.0).round() / 1000.0),
        _ => None,
    };
    // The after-tool hook: a Claude Code PostToolUse event for a git status of
    // 400 KB and one of 5 KB, against a hook that only reads its input and
    // answers nothing (cat into /dev/null).
    let mut hook_ms = BTreeMap::new();
    for (label, files) in [("400kb", 9000usize), ("5kb", 110)] {
        let mut out = String::from("On branch main\nChanges not staged for commit:\n\n");
        for i in 0..files {
            out.push_str(&format!("\tmodified:   src/module_{i:05}/handler.rs\n"));
        }
        let event = serde_json::json!({
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": repo.display().to_string(),
            "tool_input": {"command": "git status"},
            "tool_response": {"stdout": out, "stderr": "", "interrupted": false, "isImage": false},
        });
        let path = scratch.join(format!("hook-event-{label}.json"));
        std::fs::write(&path, serde_json::to_vec(&event)?)?;
        STDIN.with(|s| *s.borrow_mut() = Some(path));
        let arms = vec![
            Arm {
                name: "read_only",
                argv: s(&["sh", "-c", "exec cat >/dev/null"]),
            },
            Arm {
                name: "lens",
                argv: vec![lens.display().to_string(), "hook".into(), "claude".into()],
            },
        ];
        eprintln!("timing the after-tool hook on a {label} event ({runs} runs each, alternating)");
        let ms = alternate(&arms, runs, &repo, &envs)?;
        STDIN.with(|s| *s.borrow_mut() = None);
        hook_ms.insert(
            label.to_string(),
            serde_json::json!({
                "event_bytes": event.to_string().len(),
                "median_ms": ms,
                "lens_minus_read_only_ms": match (ms.get("lens"), ms.get("read_only")) {
                    (Some(l), Some(r)) => Some(((l - r) * 1000.0).round() / 1000.0),
                    _ => None,
                },
                "lens_over_read_only": ratio(&ms, "lens", "read_only"),
            }),
        );
    }

    let mut rss = BTreeMap::new();
    for a in &git_arms {
        if let Some(kb) = peak_rss(&a.argv, &repo, &envs, &scratch) {
            rss.insert(format!("{} git status", a.name), kb);
        }
    }

    eprintln!("timing the level-2 pipeline on a 10 MB log");
    let big = inputs::large_log(10 << 20)?;
    // Large outputs split their per-line work across the cores (lens_core::par):
    // the default, and one thread for comparison, alternated. The best run says
    // what the machine can do; the median, what a neighbour on a shared host
    // leaves of it.
    const ROUNDS: usize = 10;
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (k, threads) in [0, 1].into_iter().enumerate() {
            lens_core::par::set_threads(threads);
            let mut f = stages::runner("pipeline", &big, 1);
            times[k].push(growth::min_time(1, &mut f).as_secs_f64());
        }
    }
    lens_core::par::set_threads(0);
    let rate = |secs: f64| (big.len() as f64 / (1 << 20) as f64 / secs * 10.0).round() / 10.0;
    let best = |t: &[f64]| rate(t.iter().copied().fold(f64::MAX, f64::min));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mut tools = BTreeMap::new();
    tools.insert(
        "lens".to_string(),
        env::version_of(&[lens.display().to_string(), "--version".into()]).unwrap_or_default(),
    );
    tools.insert(
        "git".to_string(),
        env::version_of(&s(&["git", "--version"])).unwrap_or_default(),
    );
    tools.insert(
        "cargo".to_string(),
        env::version_of(&s(&["cargo", "--version"])).unwrap_or_default(),
    );
    if let Some(r) = &rtk {
        tools.insert(
            "rtk".to_string(),
            env::version_of(&[r.display().to_string(), "--version".into()]).unwrap_or_default(),
        );
    }
    let record = serde_json::json!({
        "command": env::command_line(),
        "git_revision": env::git_revision(),
        "date": env::utc_now(),
        "machine": env::machine(),
        "tools": tools,
        "method": format!("{runs} runs per arm, arms alternated (A B C A B C ...), one warm-up run each; medians of wall time around spawn-to-exit with stdout and stderr piped; the floor arm is spawn-floor, a wrapper that only spawns, pipes and copies; peak RSS is the median of 5 runs of /usr/bin/time -f %M"),
        "git_status": {
            "repo": "300 files in 20 directories, 2 modified, 1 staged",
            "median_ms": git_ms,
            "lens_over_git": ratio(&git_ms, "lens", "git"),
            "rtk_over_git": ratio(&git_ms, "rtk", "git"),
            "lens_over_rtk": ratio(&git_ms, "lens", "rtk"),
            "floor_over_git": ratio(&git_ms, "floor", "git"),
            "lens_over_floor": ratio(&git_ms, "lens", "floor"),
        },
        "cargo_build_noop": {
            "median_ms": cargo_ms,
            "lens_over_cargo": ratio(&cargo_ms, "lens", "cargo"),
        },
        "after_tool_hook": hook_ms,
        "peak_rss_kib": rss,
        "throughput": {
            "input": format!("{} bytes: the standard inputs' streams concatenated", big.len()),
            "level2_pipeline_mb_per_s": best(&times[0]),
            "median_mb_per_s": rate(median(times[0].clone())),
            "threads": cores.min(lens_core::par::MAX_THREADS),
            "one_thread_mb_per_s": best(&times[1]),
            "one_thread_median_mb_per_s": rate(median(times[1].clone())),
            "best_of": ROUNDS,
        },
    });
    write_json(&out_path, &record)?;
    println!("{}", serde_json::to_string_pretty(&record)?);
    eprintln!("wrote {}", out_path.display());
    Ok(())
}

/// Writes `value` as the `key` section of the JSON object at `path`, keeping the
/// other sections (the fuzz run and the big-output run share one file).
fn write_section(path: &Path, key: &str, value: serde_json::Value) -> Result<()> {
    let mut all: serde_json::Map<String, serde_json::Value> = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    all.insert(key.to_string(), value);
    write_json(path, &all)
}

/// The fuzz run: `--execs` generated inputs through the whole pipeline, checked.
fn fuzz(args: &[String]) -> Result<()> {
    let execs: u64 = value(args, "--execs").map_or(Ok(200_000), |v| v.parse())?;
    let seed: u64 = value(args, "--seed").map_or(Ok(1), |v| v.parse())?;
    let jobs: u64 = value(args, "--jobs").map_or(Ok(1), |v| v.parse())?;
    let out = PathBuf::from(value(args, "--out").unwrap_or_else(|| "out/reliability.json".into()));
    let corpus = inputs::every_stream()?;
    if let Some(i) = value(args, "--input") {
        // One input again, as the run that found it generated it.
        let i: u64 = i.parse()?;
        return match bench::fuzz::check_one(seed, i, &corpus) {
            None => {
                println!("fuzz: input {i} of seed {seed} passes every check");
                Ok(())
            }
            Some(f) => bail!("{f:?}"),
        };
    }
    // The revision measured is the one checked out when the run starts: a run
    // of 10^7 executions takes an hour, and the tree may move meanwhile.
    let revision = env::git_revision();
    let t = Instant::now();
    let o = bench::fuzz::run(seed, execs, &corpus, jobs);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "fuzz: {} executions in {secs:.1} s, {} panics, {} invariant violations",
        o.executions, o.panics, o.violations
    );
    for f in &o.failures {
        println!("  {f} (rerun it alone: lens-bench fuzz --seed {seed} --input N)");
    }
    write_section(
        &out,
        "fuzz",
        serde_json::json!({
            "command": env::command_line(),
            "git_revision": revision,
            "date": env::utc_now(),
            "machine": env::machine(),
            "seed": seed,
            "threads": jobs,
            "seconds": (secs * 10.0).round() / 10.0,
            "corpus": format!("{} real streams (every compare case's recorded stdout and stderr, and every output in lens-core/tests/fixtures), mutated; and generated lines", corpus.len()),
            "checks": "no panic (built with overflow checks); every shown line is the raw line at its number; every gap is covered by a marker with the run's handle; the view is never larger than the raw output; a stream that is not UTF-8 passes through unchanged; the same for stdout read through a sampler with small caps",
            "outcome": o,
        }),
    )?;
    if o.panics + o.violations > 0 {
        bail!("the fuzz run found {} failures", o.panics + o.violations);
    }
    Ok(())
}

/// The big-output run: a gigabyte of several line lengths through Lens against
/// `cat` into a file, and large cargo logs through Lens and rtk.
fn big(args: &[String]) -> Result<()> {
    use bench::big::{self, Runner};
    let cwd = std::env::current_dir()?;
    let lens = cwd.join(
        value(args, "--lens")
            .unwrap_or_else(|| format!("out/release/{}/lens", std::env::consts::ARCH)),
    );
    if !lens.is_file() {
        bail!("no lens at {}; run make build first", lens.display());
    }
    let rtk = value(args, "--rtk")
        .map(PathBuf::from)
        .or_else(|| find("rtk"));
    let gib: u64 = value(args, "--gib").map_or(Ok(1), |v| v.parse())?;
    let out = PathBuf::from(value(args, "--out").unwrap_or_else(|| "out/reliability.json".into()));
    // On a RAM file system when there is one: disk writeback would otherwise
    // dominate both arms and vary by seconds from one run to the next.
    let shm = Path::new("/dev/shm");
    let scratch = if shm.is_dir() && value(args, "--on-disk").is_none() {
        shm.join(format!("lens-bench-big-{}", std::process::id()))
    } else {
        cwd.join("out/bench-big")
    };
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let shims = scratch.join("shims");
    let path = format!(
        "{}:{}",
        shims.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let runner = Runner {
        scratch: scratch.clone(),
        path,
    };
    let size = gib << 30;
    let input = scratch.join("input");
    let mut rows = Vec::new();
    let shapes: [(&str, Vec<u8>); 4] = [
        ("2-byte lines (yes)", b"y\n".to_vec()),
        ("64-byte lines", [vec![b'x'; 63], vec![b'\n']].concat()),
        ("4 KiB lines", [vec![b'x'; 4095], vec![b'\n']].concat()),
        ("one line, no newline", vec![b'x'; 1 << 20]),
    ];
    // The throughput rows and seq check `lens show` against the input whole: the
    // store keeps every byte. The process rows below measure the default bound.
    runner.store_whole(true)?;
    for (name, line) in shapes {
        println!("big: {name}, {gib} GiB ...");
        big::write_input(&input, &line, size)?;
        let row = big::throughput(&runner, &lens, name, &input, 7)?;
        println!(
            "  median: cat {:.2} s, lens {:.2} s ({:.2}x); best: cat {:.2} s, lens {:.2} s ({:.2}x); lens peak RSS {:.1} MiB, view {} bytes, show identical: {}",
            row.cat_secs, row.lens_secs, row.ratio, row.cat_best_secs, row.lens_best_secs, row.best_ratio, row.lens_rss_mib, row.view_bytes, row.show_identical
        );
        rows.push(row);
    }
    // The captured-output paths on the same gigabyte of 64-byte lines: a
    // saved log through `lens --as`, and a Claude Code hook event whose
    // persisted output is the file (read under the hook's own 5 s limit).
    let mut captured = Vec::new();
    big::write_input(&input, &[vec![b'x'; 63], vec![b'\n']].concat(), size)?;
    for via in [big::Via::As, big::Via::Hook] {
        println!("big: {}, 64-byte lines, {gib} GiB ...", via.name());
        let row = big::throughput_by(&runner, &lens, "64-byte lines", &input, 7, via)?;
        println!(
            "  median: cat {:.2} s, lens {:.2} s ({:.2}x); best: cat {:.2} s, lens {:.2} s ({:.2}x); lens peak RSS {:.1} MiB, answer {} bytes, show identical: {}",
            row.cat_secs, row.lens_secs, row.ratio, row.cat_best_secs, row.lens_best_secs, row.best_ratio, row.lens_rss_mib, row.view_bytes, row.show_identical
        );
        captured.push(row);
    }
    std::fs::remove_file(&input)?;
    // seq: ten million numbers, as the issue measured them.
    println!("big: seq 1 10000000 ...");
    let seq_file = scratch.join("seq.txt");
    let seq_raw = runner.run(
        &["seq".into(), "1".into(), "10000000".into()],
        Some(&seq_file),
    )?;
    let seq_lens = runner.run(
        &[
            lens.display().to_string(),
            "seq".into(),
            "1".into(),
            "10000000".into(),
        ],
        None,
    )?;
    let seq_show = big::handle_in(&seq_lens.stdout)
        .map(|h| big::show_matches(&runner, &lens, &h, &seq_file))
        .transpose()?
        .unwrap_or(false);
    runner.clear_store();
    println!(
        "  seq {:.2} s, lens {:.2} s, lens peak RSS {:.1} MiB",
        seq_raw.secs,
        seq_lens.secs,
        seq_lens.rss_kib as f64 / 1024.0
    );
    // Cargo logs through a shim: 20 MB (600 warnings, one error) and 200 MB.
    let needle = "error: could not compile `ledger` (lib) due to 1 previous error";
    let mut logs = Vec::new();
    for (mb, runs) in [(20usize, 5usize), (200, 2)] {
        println!("big: a {mb} MB cargo log ...");
        let log = scratch.join(format!("cargo-{mb}.log"));
        std::fs::write(&log, inputs::cargo_log(mb << 20, 600).stderr)?;
        big::cargo_shim(&scratch.join("shims"), &log)?;
        let mut arms = vec![(
            "lens",
            vec![lens.display().to_string(), "cargo".into(), "build".into()],
        )];
        if let Some(r) = &rtk {
            arms.push((
                "rtk",
                vec![r.display().to_string(), "cargo".into(), "build".into()],
            ));
        }
        let measured = big::cargo_log(&runner, &arms, runs, needle)?;
        for a in &measured {
            println!(
                "  {}: {:.3} s, peak RSS {:.1} MiB, {} bytes, error kept: {}{}",
                a.arm,
                a.secs,
                a.rss_mib,
                a.view_bytes,
                a.error_kept,
                a.truncation_notice
                    .as_deref()
                    .map(|t| format!(", says {t:?}"))
                    .unwrap_or_default()
            );
        }
        let ratio = match measured.as_slice() {
            [l, r] => Some((l.secs / r.secs * 1000.0).round() / 1000.0),
            _ => None,
        };
        logs.push(serde_json::json!({
            "megabytes": mb,
            "warnings": 600,
            "runs": runs,
            "arms": measured,
            "lens_time_over_rtk": ratio,
        }));
        std::fs::remove_file(&log)?;
    }
    // Lens as a process: a closed reader, the store bound, a kill, and memory
    // on error lines over both streams.
    println!("big: closed reader, store bound, killed run, error lines on both streams ...");
    runner.store_whole(false)?;
    let process = big::process(&runner, &lens, gib << 30)?;
    println!(
        "  closed reader: exit {:?} {:.3} s after the close, {} bytes stored; `lens yes | head -1`: exit {:?} after {:.3} s, {} bytes stored; bound: {} bytes in, {} stored, notice {}; killed run recovered: {} (next run {:.3} s); error lines: {:.1} MiB peak RSS for {} bytes",
        process.closed_reader_exit_code,
        process.closed_reader_exit_secs,
        process.closed_reader_stored_bytes,
        process.head_one_exit_code,
        process.head_one_secs,
        process.head_one_stored_bytes,
        process.bound_input_bytes,
        process.bound_stored_bytes,
        process.bound_notice,
        process.killed_recovered,
        process.killed_next_run_secs,
        process.errors_rss_mib,
        process.errors_bytes
    );
    let peak = rows
        .iter()
        .chain(&captured)
        .map(|r| r.lens_rss_mib)
        .chain(std::iter::once(seq_lens.rss_kib as f64 / 1024.0))
        .fold(0.0, f64::max);
    let rtk_version = rtk
        .as_ref()
        .and_then(|r| env::version_of(&[r.display().to_string(), "--version".into()]));
    write_section(
        &out,
        "big",
        serde_json::json!({
            "command": env::command_line(),
            "git_revision": env::git_revision(),
            "date": env::utc_now(),
            "machine": env::machine(),
            "tools": {
                "lens": env::version_of(&[lens.display().to_string(), "--version".into()]),
                "rtk": rtk_version,
                "cat": env::version_of(&["cat".into(), "--version".into()]),
            },
            "scratch": scratch.display().to_string(),
            "method": "each input written to a file in the scratch directory (a RAM file system when /dev/shm exists, so disk writeback, which varied by seconds between identical runs here, is out of both arms); `cat FILE > COPY` and `lens cat FILE` alternated 7 times, medians and bests of wall time (this VM's system time for the same cat varied from 0.36 to 3.4 s between runs, so both are kept); Lens's store emptied before each run; peak RSS by /usr/bin/time -f %M (the highest of Lens's runs); then `lens show HANDLE` compared byte for byte with the input (for these rows and seq the store keeps a run whole: `[store] max_run_bytes = \"64g\"`). Cargo logs (bench::inputs::cargo_log: Compiling lines, 600 distinct warnings, one error whose last line ends the log) are printed on stderr by a `cargo` shim first on PATH; `lens cargo build` and `rtk cargo build` alternated. The process rows use Lens's defaults (a 256 MiB bound per run): `lens yes` whose reader closes after 200 ms; `lens yes | head -1` from start to Lens's exit; 1 GiB of 64-byte lines through the bound; `timeout -s KILL 2 lens sh -c 'seq 1 1000; sleep 30'`, then the next run; 1 GiB of error lines, half on each stream (run 3 times, the highest peak kept). The `captured` rows put the same gigabyte of 64-byte lines through `lens --as make < FILE` and through `lens hook claude` with a Claude Code PostToolUse event (the first 30,000 bytes inline) whose persistedOutputPath is FILE, each alternated 7 times with `cat FILE > COPY`; the hook runs under its default 5 s limit, past which it answers nothing (show_identical false, answer 0 bytes).",
            "throughput": rows,
            "captured": captured,
            "seq": {
                "argv": "seq 1 10000000",
                "raw_secs": (seq_raw.secs * 1000.0).round() / 1000.0,
                "lens_secs": (seq_lens.secs * 1000.0).round() / 1000.0,
                "lens_rss_mib": (seq_lens.rss_kib as f64 / 102.4).round() / 10.0,
                "show_identical": seq_show,
            },
            "cargo_logs": logs,
            "process": process,
            "lens_peak_rss_mib": peak,
        }),
    )?;
    let _ = std::fs::remove_dir_all(&scratch);
    println!("wrote {}", out.display());
    Ok(())
}

//! Times the first and second level-2 view of one output in a fresh process: the
//! first pays for every pattern it compiles. `coldview FILE [argv...]`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = std::fs::read(&args[0]).expect("read");
    let argv: Vec<String> = args[1..].to_vec();
    let opts = lens_core::Options::new(lens_core::Level::Two, lens_core::Handle::parse("1a2b3c4d"));
    let req = lens_core::Request {
        argv: &argv,
        stdout: &out,
        stderr: b"",
        exit: 0,
    };
    for run in ["cold", "warm"] {
        let t = std::time::Instant::now();
        let v = lens_core::view(&req, &opts);
        eprintln!("{run}: {:?} ({} bytes)", t.elapsed(), v.len());
    }
}

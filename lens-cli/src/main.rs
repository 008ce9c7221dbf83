fn main() {
    std::process::exit(lens_cli::run(std::env::args_os().skip(1).collect()));
}

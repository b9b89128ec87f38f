fn main() {
    std::process::exit(rntuple_cli::run(std::env::args_os()));
}

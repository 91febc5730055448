//! `./run.sh` — see `--help`.
fn main() -> std::process::ExitCode {
    tdbench_scripts::runner::main(std::env::args().skip(1).collect())
}

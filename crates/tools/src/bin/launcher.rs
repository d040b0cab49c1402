//! The launcher on its own (`seri-tools-launcher OPTIONS -- PROGRAM ARGS…`),
//! for this crate's tests; seri runs the same code as `seri __launch`.

fn main() -> std::process::ExitCode {
    seri_tools::sandbox::launcher::main(std::env::args_os().skip(1))
}

//! Running every example of every workspace crate, the way a person trying
//! one crate on its own would: `cargo run --example NAME`, no arguments, so
//! each takes its offline path.
//!
//! Each example runs with `cargo run --locked --example NAME` from the
//! workspace root, without `-p`: that selects the whole workspace, so cargo
//! resolves the same features as `cargo test --workspace` (which has built
//! every example already) and nothing is compiled again. With
//! `-p seri-store`, cargo resolves the features of that package alone
//! (`libc`, `memchr`, `smallvec`, `syn` come out with fewer features) and
//! rebuilds everything above them. So example names must be unique in the
//! workspace; a tidy test checks that.
//!
//! An example's output is shown only when it fails, so the CI log stays one
//! line per example.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::metadata::{cargo_metadata, workspace_examples};

/// Runs every example; the first that fails (or none found) fails the step.
pub(crate) fn run_all(root: &Path) -> Result<(), String> {
    let metadata = cargo_metadata(root, &["--no-deps", "--locked"])?;
    let examples = workspace_examples(&metadata);
    if examples.is_empty() {
        return Err("no workspace crate has an example under examples/".to_owned());
    }
    println!("xtask ci: examples: {} of them, each with cargo run --locked --example NAME", examples.len());
    for example in &examples {
        let started = Instant::now();
        let output = Command::new(super::cargo())
            .args(["run", "--locked", "--quiet", "--example", &example.name])
            .current_dir(root)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("could not run cargo for example {}: {e}", example.name))?;
        let took = started.elapsed().as_secs_f64();
        if !output.status.success() {
            println!("{}", String::from_utf8_lossy(&output.stdout));
            eprintln!("{}", String::from_utf8_lossy(&output.stderr));
            return Err(format!(
                "example `{}` of {} failed ({}); run it with: cargo run -p {} --example {}",
                example.name, example.package, output.status, example.package, example.name
            ));
        }
        println!("xtask ci: example {} ({}): ok in {took:.1} s", example.name, example.package);
    }
    Ok(())
}

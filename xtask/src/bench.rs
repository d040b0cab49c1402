//! `cargo xtask bench`: runs every `[[bench]]` target of the workspace and
//! gathers the figures they print.
//!
//! A benchmark reports each figure on one line of this form, with its
//! baseline measured in the same run on the same machine:
//!
//! ```text
//! bench: <what> | <value> <unit> | baseline <what> <value> <unit> | ratio <x.xx>
//! ```
//!
//! Ratios, not absolute times, are what we compare across machines: a
//! baseline (raw SQLite, plain JSON parsing, bare iteration) moves with the
//! machine, and the ratio says what seri itself costs on top of it.
//!
//! `cargo xtask bench --quick` runs the benchmarks that know it at a
//! smaller size and fewer times (`SERI_BENCH_QUICK=1`): the same figures,
//! noisier, in minutes. The benchmarks never run in `cargo xtask ci`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs the benchmarks; extra arguments go to `cargo bench` (e.g. `-p
/// seri-store`), but `--quick`, which asks for the smaller sizes.
pub(crate) fn run(root: &Path, extra: &[String]) -> Result<(), String> {
    let quick = extra.iter().any(|a| a == "--quick");
    let extra: Vec<String> = extra.iter().filter(|a| *a != "--quick").cloned().collect();
    let mut args = vec!["bench".to_owned()];
    if extra.is_empty() {
        args.push("--workspace".to_owned());
    }
    args.extend(extra.iter().cloned());
    // The PostgreSQL figures need a database: a throw-away cluster, as for
    // the tests. Without one they say they were skipped.
    let cluster = match crate::postgres::Cluster::start() {
        Ok(cluster) => Some(cluster),
        Err(e) => {
            println!("xtask bench: no PostgreSQL cluster, so no PostgreSQL figures: {e}");
            None
        }
    };
    println!("xtask bench: cargo {}", args.join(" "));
    let mut command = Command::new(super::cargo());
    // The search benchmark's baseline is a `sqlite3` shell that reads
    // seri's files; without one it says so and measures in-process.
    match crate::sqlite_shell::ensure() {
        Ok(Some(shell)) => {
            command.env("SERI_BENCH_SQLITE3", &shell);
        }
        Ok(None) => {}
        Err(e) => println!("xtask bench: no sqlite3 shell of 3.43 or later, so the search baseline is in-process: {e}"),
    }
    if quick {
        command.env("SERI_BENCH_QUICK", "1");
    }
    if let Some(cluster) = &cluster {
        command.env("SERI_TEST_POSTGRES_URL", &cluster.url);
    }
    let mut child = command
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run cargo bench: {e}"))?;
    let mut figures = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(figure) = Figure::parse(&line) {
                figures.push(figure);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("cargo bench did not finish: {e}"))?;
    println!();
    println!("{}", table(&figures));
    if !status.success() {
        return Err(format!("cargo bench failed ({status})"));
    }
    if figures.is_empty() {
        return Err("no benchmark printed a `bench:` line".to_owned());
    }
    Ok(())
}

/// One figure as a benchmark printed it.
#[derive(Debug, PartialEq)]
pub(crate) struct Figure {
    what: String,
    value: String,
    baseline: String,
    ratio: String,
}

impl Figure {
    pub(crate) fn parse(line: &str) -> Option<Figure> {
        let rest = line.strip_prefix("bench:")?;
        let parts: Vec<&str> = rest.split('|').map(str::trim).collect();
        let [what, value, baseline, ratio] = parts.as_slice() else { return None };
        Some(Figure {
            what: (*what).to_owned(),
            value: (*value).to_owned(),
            baseline: baseline.strip_prefix("baseline ")?.to_owned(),
            ratio: ratio.strip_prefix("ratio ")?.to_owned(),
        })
    }
}

pub(crate) fn table(figures: &[Figure]) -> String {
    let header = ["benchmark", "figure", "baseline", "ratio"];
    let rows: Vec<[&str; 4]> =
        figures.iter().map(|f| [f.what.as_str(), f.value.as_str(), f.baseline.as_str(), f.ratio.as_str()]).collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 4]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = vec![line(header)];
    out.extend(rows.into_iter().map(line));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_line_and_ignores_others() {
        let f = Figure::parse("bench: append 100k | 1.2 s | baseline raw insert 1.0 s | ratio 1.20").unwrap();
        assert_eq!(f.what, "append 100k");
        assert_eq!(f.baseline, "raw insert 1.0 s");
        assert_eq!(f.ratio, "1.20");
        assert_eq!(Figure::parse("test result: ok"), None);
        assert_eq!(Figure::parse("bench: too | few"), None);
        let t = table(&[f]);
        assert!(t.lines().nth(1).unwrap().starts_with("append 100k"), "{t}");
    }
}

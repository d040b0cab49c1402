//! `seri import` of a large file, run as a real process: its peak memory
//! (the kernel's high-water mark of its resident set, `VmHWM`) stays far
//! below the file's size, because the file is imported as it is read:
//! 200 MB of seri's own older format (about 100,000 lines), and 40 MB of a
//! Claude Code session with branches left behind (a tree, read twice: for
//! its shape, then for its content), each generated straight to disk. The
//! 1 GiB case is `cargo xtask bench` (`crates/cli/benches/import.rs`), as
//! it would make the suite minutes longer.

use std::io::Write as _;
use std::process::Stdio;
use std::time::Duration;

use crate::support::*;

/// How large the generated file is.
const FILE_BYTES: u64 = 200_000_000;

/// The most the import may hold at its peak, the binary's own memory
/// included (a debug build of seri starts at about 20 MB).
const PEAK_BYTES: u64 = 150_000_000;

/// The most importing 40 MB of a Claude Code session may hold at its peak.
const CLAUDE_CODE_PEAK_BYTES: u64 = 64_000_000;

/// The process's peak resident set so far, in bytes, while it runs.
fn peak_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `seri import PATH`: its standard output, and its peak memory.
fn import_peak(env: &Env, path: &std::path::Path) -> (String, u64) {
    let mut child =
        env.seri().args(["import", path_str(path)]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut peak = 0;
    let status = loop {
        // Read while it runs: the high-water mark is the peak so far, so the
        // last reading before it ends is (within a few milliseconds) its peak.
        if let Some(now) = peak_of(child.id()) {
            peak = peak.max(now);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(peak > 0, "the peak was read");
    (stdout, peak)
}

/// Another agent's file is a tree whose branch to import is known only at
/// its end: it is read twice, and neither reading holds its content.
#[test]
fn a_large_claude_code_file_imports_in_memory_below_its_size() {
    let env = Env::new();
    let path = env.dir.path().join("5e551011-0000-4000-8000-00000000beef.jsonl");
    let written = crate::claude_code_file::write(&path, 40_000_000);
    let (stdout, peak) = import_peak(&env, &path);
    assert!(stdout.contains("claude-code: 1 file: 1 session imported"), "{stdout}");
    assert!(stdout.contains("branches as forks"), "{stdout}");
    // Held whole, the session was several times the file (its text parsed,
    // then copied into events, then dated, then written: over 100 MB
    // here); now the binary (about 20 MB) and a few dozen bytes an entry.
    assert!(peak < CLAUDE_CODE_PEAK_BYTES, "importing {written} bytes peaked at {peak} bytes");
}

#[test]
fn a_large_file_imports_in_memory_far_below_its_size() {
    let env = Env::new();
    let path = env.dir.path().join("large.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(file, r#"{{"type":"session","title":"Large","createdAt":"2025-01-01T00:00:00Z"}}"#).unwrap();
    let padding = "lorem ipsum dolor sit amet ".repeat(74);
    let (mut written, mut lines) = (0u64, 0u64);
    while written < FILE_BYTES {
        let role = if lines % 2 == 0 { "user" } else { "assistant" };
        let line =
            format!(r#"{{"role":"{role}","content":"{lines} {padding}","timestamp":{}}}"#, 1_735_689_600_000 + lines);
        writeln!(file, "{line}").unwrap();
        written += line.len() as u64 + 1;
        lines += 1;
    }
    file.flush().unwrap();
    drop(file);

    let (stdout, peak) = import_peak(&env, &path);
    assert!(stdout.contains(&format!("1 session imported, 0 grown ({lines} events)")), "{stdout}");
    assert!(peak < PEAK_BYTES, "importing {written} bytes peaked at {peak} bytes");
}

#[test]
fn an_import_names_each_session_by_the_short_id_a_person_reads() {
    let env = Env::new();
    let file = env.dir.path().join("old.jsonl");
    std::fs::write(
        &file,
        "{\"role\": \"user\", \"content\": \"Hello\"}\n{\"role\": \"assistant\", \"content\": \"Hi.\"}\n",
    )
    .unwrap();
    let run = env.run(&["import", path_str(&file)]);
    run.expect_code(0);
    let id = env.run(&["sessions", "list", "--json"]).json()[0]["id"].as_str().unwrap().to_owned();
    assert!(!run.stdout.contains(&id), "no whole id: {}", run.stdout);
    let named = run.stdout.split("→ ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap_or_default().to_owned();
    assert!(!named.is_empty() && env.run(&["sessions", "list"]).stdout.contains(&named), "{}", run.stdout);
    // The name is one `seri -r` and every other command take back.
    assert_eq!(env.run(&["sessions", "show", &named, "--json"]).json()["id"], id.as_str());
}

//! What a finished tool call looks like on a terminal: one line that says
//! what ran, drawn from the call's typed facts (`seri_core::ToolFacts`),
//! and under it what a person wants to see of the outcome: a command's last
//! lines, a change's diff. Never from the result's text, which is written
//! for the model. Pure: the call's values and a style in, lines out.
//!
//! ```text
//!   ✓ read_file src/parser.rs (212 lines, 6.1 KiB)
//!   ✓ bash $ cargo test (4.2s)
//!       … 38 lines before (/expand 1 shows all)
//!       test result: ok. 12 passed; 0 failed
//!   ✗ bash $ cargo build · exit 101 (0.8s)
//!   ✓ edit src/lib.rs (+2 −1)
//!   ✓ grep "fn main" in src (3 matches in 2 files)
//! ```

use seri_core::{CommandExit, CommandRun, FileChange, FileRead, Listing, SearchRun, ToolFacts};

use crate::render::Style;

/// Lines of a command's output shown under a command that succeeded; one
/// that failed shows all its facts keep (the last ten).
pub(crate) const SHOWN_OUTPUT_LINES: usize = 4;

/// Widest a line's own text is drawn (a command, a pattern, an output line).
const MAX_CHARS: usize = 200;

/// A finished call, as the run loop reported it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished<'a> {
    /// The tool.
    pub name: &'a str,
    /// Whether the call failed or was refused.
    pub is_error: bool,
    /// The result's first line: what is shown for a tool with no facts (and
    /// for a call refused before it ran).
    pub summary: &'a str,
    /// What the call came to.
    pub facts: Option<&'a ToolFacts>,
    /// The number `/expand` shows its whole output by, when the REPL keeps
    /// one (else the hint names `seri thread`).
    pub expand: Option<usize>,
}

/// Whether `call`'s lines leave out some of what it printed: a command
/// whose output had more lines than are shown, or a change whose diff is
/// cut (its facts keep the whole one).
pub(crate) fn cuts_output(call: Finished<'_>) -> bool {
    match call.facts {
        Some(ToolFacts::Change(change)) => !call.is_error && change.whole.is_some(),
        Some(ToolFacts::Command(run)) => {
            let shown = shown_lines(run);
            shown > 0 && run.lines > shown as u64
        }
        _ => false,
    }
}

/// How many of a command's last lines are shown under it.
fn shown_lines(run: &CommandRun) -> usize {
    let tail = run.tail.lines().count();
    if run.exit.succeeded() { tail.min(SHOWN_OUTPUT_LINES) } else { tail }
}

/// `/expand`: the call's line, then all of it: a change's whole diff, or
/// else its whole result as stored (what the model read), each line
/// indented under it and never cut.
pub(crate) fn expanded(style: Style, result: &seri_core::ToolResult) -> Vec<String> {
    let summary = result.content.lines().next().unwrap_or("");
    let call =
        Finished { name: &result.name, is_error: result.is_error, summary, facts: result.facts.as_ref(), expand: None };
    let head = lines(style, call).into_iter().next().unwrap_or_default();
    if let Some(ToolFacts::Change(FileChange { whole: Some(whole), .. })) = &result.facts {
        return std::iter::once(head).chain(style.diff(whole, "      ").lines().map(str::to_owned)).collect();
    }
    std::iter::once(head).chain(result.content.lines().map(|line| format!("      {line}"))).collect()
}

/// The lines drawn for `call`, each without its newline.
pub(crate) fn lines(style: Style, call: Finished<'_>) -> Vec<String> {
    let failed = call.is_error || call.facts.and_then(ToolFacts::command).is_some_and(|run| !run.exit.succeeded());
    let mark = if failed { style.red("✗") } else { "✓".to_owned() };
    let head = match call.facts {
        // A refusal or a failure before the tool acted says why in its text.
        Some(facts) if !call.is_error || matches!(facts, ToolFacts::Command(_)) => what_ran(call.name, facts),
        _ => format!("{}: {}", call.name, summary(call.name, call.summary)),
    };
    let mut out = vec![style.dim(&format!("  {mark} {head}"))];
    match call.facts {
        Some(ToolFacts::Command(run)) => out.extend(output(style, run, call.expand)),
        Some(ToolFacts::Change(change)) if !call.is_error => {
            out.extend(style.diff(&change.diff, "      ").lines().map(str::to_owned));
            // Its own last line says how much is cut; the REPL can show it all.
            if let (Some(_), Some(n)) = (&change.whole, call.expand) {
                out.push(style.dim(&format!("      (/expand {n} shows the whole diff)")));
            }
        }
        _ => {}
    }
    out
}

/// The status row shows the title and description in full (the
/// continuation document's rule); other summaries are cut.
fn summary(name: &str, summary: &str) -> String {
    if name == "status" { summary.to_owned() } else { cut(summary, 100) }
}

/// `read_file src/a.rs (212 lines, 6.1 KiB)`, `bash $ make · exit 2 (1.2s)` …
fn what_ran(name: &str, facts: &ToolFacts) -> String {
    match facts {
        ToolFacts::Read(FileRead { path, lines, bytes, from, to }) => {
            let read = FileRead { path: String::new(), lines: *lines, bytes: *bytes, from: *from, to: *to };
            let size = if read.partial() {
                format!("lines {}–{} of {}", from.unwrap_or(1), to.unwrap_or(*lines), lines)
            } else {
                format!("{}, {}", plural(*lines, "line", "lines"), bytes_text(*bytes))
            };
            format!("{name} {path} ({size})")
        }
        ToolFacts::Command(run) => {
            let mut command = run.command.trim().lines();
            let first = cut(command.next().unwrap_or(""), 120);
            let more = if command.next().is_some() { " …" } else { "" };
            let ended = match run.exit {
                CommandExit::Code { code: 0 } => String::new(),
                CommandExit::Code { code } => format!(" · exit {code}"),
                CommandExit::Signal { signal } => format!(" · killed by signal {signal}"),
                CommandExit::Timeout => format!(" · timed out after {}", seconds(run.timeout)),
                CommandExit::Unknown => " · ended without an exit code".to_owned(),
            };
            format!("{name} $ {first}{more}{ended} ({})", seconds(run.duration))
        }
        ToolFacts::Change(FileChange { path, created, added, removed, .. }) => {
            if *created {
                format!("{name} {path} (new, +{added})")
            } else {
                format!("{name} {path} (+{added} −{removed})")
            }
        }
        ToolFacts::Search(SearchRun { pattern, path, glob, matches, files }) => {
            let glob = glob.as_ref().map(|g| format!(" {g}")).unwrap_or_default();
            let found = match matches {
                0 => "no matches".to_owned(),
                _ => format!("{} in {}", plural(*matches, "match", "matches"), plural(*files, "file", "files")),
            };
            format!("{name} \"{}\" in {path}{glob} ({found})", cut(pattern, 80))
        }
        ToolFacts::List(Listing { path, entries }) => {
            format!("{name} {path} ({})", plural(*entries, "entry", "entries"))
        }
    }
}

/// A command's last lines: a few when it succeeded, all its facts keep
/// when it did not, with how many came before and where to read them all
/// (`/expand N` in the REPL; `seri thread` prints every result in full).
fn output(style: Style, run: &CommandRun, expand: Option<usize>) -> Vec<String> {
    let tail: Vec<&str> = run.tail.lines().collect();
    let shown = &tail[tail.len() - shown_lines(run)..];
    let before = run.lines.saturating_sub(shown.len() as u64);
    let mut out = Vec::new();
    if before > 0 && !shown.is_empty() {
        let all = match expand {
            Some(n) => format!("/expand {n} shows all"),
            None => "`seri thread` shows all".to_owned(),
        };
        out.push(style.dim(&format!("      … {} before ({all})", plural(before, "line", "lines"))));
    }
    out.extend(shown.iter().map(|line| style.dim(&format!("      {}", cut(line, MAX_CHARS)))));
    out
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `1 line`, `212 lines`.
fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}

/// `0.4s`, `12.0s`, `2m 05s`.
fn seconds(ms: u64) -> String {
    if ms < 60_000 { format!("{:.1}s", ms as f64 / 1000.0) } else { format!("{}m {:02}s", ms / 60_000, ms / 1000 % 60) }
}

/// `812 bytes`, `6.1 KiB`, `2.0 MiB`.
fn bytes_text(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        1 => "1 byte".to_owned(),
        b if b < KIB => format!("{b} bytes"),
        b if b < KIB * KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b => format!("{:.1} MiB", b as f64 / (KIB * KIB) as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Style {
        Style::plain()
    }

    fn drawn(name: &str, is_error: bool, summary: &str, facts: Option<ToolFacts>) -> String {
        lines(plain(), Finished { name, is_error, summary, facts: facts.as_ref(), expand: None }).join("\n")
    }

    fn run(command: &str, exit: CommandExit, tail: &str, lines: u64) -> Option<ToolFacts> {
        Some(ToolFacts::Command(CommandRun {
            command: command.into(),
            exit,
            timeout: 120_000,
            duration: 4_200,
            tail: tail.into(),
            lines,
        }))
    }

    #[test]
    fn tool_lines_say_what_ran() {
        let tail: Vec<String> = (31..=40).map(|n| format!("line {n}")).collect();
        let tail = tail.join("\n");
        let all = [
            drawn(
                "read_file",
                false,
                "     1\tfn main() {}",
                Some(ToolFacts::Read(FileRead {
                    path: "src/parser.rs".into(),
                    lines: 212,
                    bytes: 6_250,
                    from: Some(1),
                    to: Some(212),
                })),
            ),
            drawn(
                "read_file",
                false,
                "    40\tx",
                Some(ToolFacts::Read(FileRead {
                    path: "src/parser.rs".into(),
                    lines: 212,
                    bytes: 6_250,
                    from: Some(40),
                    to: Some(79),
                })),
            ),
            drawn("bash", false, "exit code: 0", run("cargo test", CommandExit::Code { code: 0 }, &tail, 40)),
            drawn("bash", false, "exit code: 0", run("true", CommandExit::Code { code: 0 }, "", 0)),
            drawn(
                "bash",
                false,
                "exit code: 101",
                run("cargo build\n--release", CommandExit::Code { code: 101 }, &tail, 12),
            ),
            drawn("bash", true, "the command did not finish", run("sleep 300", CommandExit::Timeout, "started", 1)),
            drawn(
                "edit",
                false,
                "Edited src/lib.rs: replaced 1 occurrence (line 2).",
                Some(ToolFacts::Change(FileChange {
                    path: "src/lib.rs".into(),
                    created: false,
                    diff: "@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2b\n three\n".into(),
                    added: 2,
                    removed: 1,
                    whole: None,
                })),
            ),
            drawn(
                "write_file",
                false,
                "Created notes.md (1 line, 6 bytes).",
                Some(ToolFacts::Change(FileChange {
                    path: "notes.md".into(),
                    created: true,
                    diff: "@@ -0,0 +1,1 @@\n+hello\n".into(),
                    added: 1,
                    removed: 0,
                    whole: None,
                })),
            ),
            drawn(
                "grep",
                false,
                "src/main.rs:1:fn main() {}",
                Some(ToolFacts::Search(SearchRun {
                    pattern: "fn main".into(),
                    path: "src".into(),
                    glob: Some("*.rs".into()),
                    matches: 3,
                    files: 2,
                })),
            ),
            drawn(
                "grep",
                false,
                "(no matches for `zzz` in .)",
                Some(ToolFacts::Search(SearchRun {
                    pattern: "zzz".into(),
                    path: ".".into(),
                    glob: None,
                    matches: 0,
                    files: 0,
                })),
            ),
            drawn("list", false, "src/", Some(ToolFacts::List(Listing { path: ".".into(), entries: 14 }))),
            drawn("read_file", true, "path: `missing.rs` does not exist", None),
            drawn("status", false, "Parser fix — tests pass; the empty-input case was the bug all along", None),
        ];
        insta::assert_snapshot!(all.join("\n"));
    }

    #[test]
    fn a_long_command_and_a_long_output_line_are_cut() {
        let long = "x".repeat(500);
        let text = drawn("bash", false, "", run(&long, CommandExit::Code { code: 0 }, &long, 1));
        for line in text.lines() {
            assert!(line.chars().count() <= 210, "{line}");
        }
    }
}

//! `docs/src/reference/cli.md`: every command and flag of `seri`, walked
//! from clap's own description of the command line (the one `--help`
//! draws), so a flag added in `args.rs` is in the book at the next
//! `cargo test`, and a flag without help text fails it.

use clap::{Arg, Command};

use super::{cell, check_fresh, codes, header};

/// The page, and every command or argument that has no help text.
fn page() -> (String, Vec<String>) {
    let mut root = crate::args::help_command();
    root.build();
    let mut out = header("Command line", "`crates/cli/src/args.rs`");
    out.push_str(
        "Every command and flag of `seri`, as `seri --help` and `seri COMMAND --help` print them. The flags \
         of the first table that shape a run (`--provider`, `--model`, …) are taken by every command, so \
         `seri serve --provider ollama` and `seri sessions show ID --context-window N` work. Every command \
         also takes `-h`/`--help`, and `seri` takes `-V`/`--version`. Exit codes: `0` the task finished, \
         `1` the turn budget ran out or the run failed, `2` a usage error, `130` `seri -p` stopped by \
         Ctrl-C (SIGINT).\n\n",
    );
    let mut missing = Vec::new();
    walk(&root, "seri", &mut out, &mut missing);
    (out, missing)
}

fn walk(command: &Command, path: &str, out: &mut String, missing: &mut Vec<String>) {
    out.push_str(&format!("## `{path}`\n\n"));
    match command.get_long_about().or(command.get_about()) {
        Some(about) => out.push_str(&format!("{}\n\n", about.to_string().trim())),
        None => missing.push(format!("{path}: no about")),
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    out.push_str(&format!("```text\n{usage}\n```\n\n"));
    let arguments: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    if !arguments.is_empty() {
        out.push_str("| argument | value | default | what it does |\n|---|---|---|---|\n");
        for arg in arguments {
            let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
            if help.trim().is_empty() {
                missing.push(format!("{path}: {}", name(arg)));
            }
            out.push_str(&format!("| {} | {} | {} | {} |\n", name(arg), value(arg), default(arg), cell(&help)));
        }
        out.push('\n');
    }
    if let Some(after) = command.get_after_long_help().or(command.get_after_help()) {
        out.push_str(&format!("```text\n{}\n```\n\n", after.to_string().trim()));
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        walk(sub, &format!("{path} {}", sub.get_name()), out, missing);
    }
}

/// `-p`, `--print`, or a positional's `<NAME>`.
fn name(arg: &Arg) -> String {
    if arg.is_positional() {
        let names = arg.get_value_names().map(|n| n.iter().map(|n| n.to_string()).collect::<Vec<_>>());
        return codes(names.unwrap_or_else(|| vec![arg.get_id().to_string().to_uppercase()]));
    }
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    names.extend(arg.get_visible_aliases().unwrap_or_default().into_iter().map(|a| format!("--{a}")));
    codes(names)
}

/// What the argument takes: its value's name, or the values it may be.
fn value(arg: &Arg) -> String {
    if !arg.get_action().takes_values() || arg.is_positional() {
        return String::new();
    }
    let possible: Vec<String> =
        arg.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_owned()).collect();
    if !possible.is_empty() {
        return codes(possible).replace(", ", " \\| ");
    }
    let names: Vec<String> =
        arg.get_value_names().map(|n| n.iter().map(|n| n.to_string()).collect()).unwrap_or_default();
    let value = if names.is_empty() { arg.get_id().to_string().to_uppercase() } else { names.join(" ") };
    let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
    if optional { format!("`[{value}]`") } else { format!("`{value}`") }
}

fn default(arg: &Arg) -> String {
    codes(arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()))
}

#[test]
fn the_command_line_reference_is_fresh_and_every_flag_has_help() {
    let (page, missing) = page();
    assert!(
        missing.is_empty(),
        "commands and arguments without help text (add a `///` line in args.rs):\n{}",
        missing.join("\n")
    );
    check_fresh("cli.md", &page);
}

//! `docs/src/reference/slash-commands.md`: every built-in slash command,
//! from the table `/help`, the `/` menu and the "unknown command" line use.

use crate::slash::SlashCommand;

use super::{cell, check_fresh, header};

fn page() -> String {
    let mut out = header("Slash commands", "`SlashCommand::ALL` in `crates/cli/src/slash.rs`");
    out.push_str(
        "Every built-in command of the REPL, in the order `/help` lists them, with the words `/help` and \
         the `/` menu show. [Using seri](../guide/using-seri.md) says more of each; a markdown file in the \
         project's `.seri/commands/` or `.claude/commands/`, or the profile's `commands/` or `~/.claude/commands/`, adds a command of your own (a built-in \
         name is never taken; a project's runs once `seri mcp trust` trusted the project's files).\n\n| command | what it does |\n|---|---|\n",
    );
    for command in SlashCommand::ALL {
        out.push_str(&format!("| `{}` | {} |\n", cell(&command.usage()), cell(command.description())));
    }
    out
}

#[test]
fn the_slash_command_reference_is_fresh() {
    let page = page();
    for command in SlashCommand::ALL {
        assert!(!command.description().trim().is_empty(), "/{} has no description", command.name());
    }
    check_fresh("slash-commands.md", &page);
}

//! The REPL's slash commands: the dispatch from a typed `/name rest` to
//! its behaviour, one file each under `commands/` (those that act on the
//! REPL's own state; `/search`, `/rewind`, `/trajectory` and the texts of
//! `/help`, `/config`, `/memory` live in their own modules of the CLI).

mod clear;
mod compact;
mod context;
pub(crate) mod cost;
mod expand;
mod export;
mod fork;
mod init;
mod max_turns;
mod mcp;
pub(super) mod model;
mod permissions;
mod resume;
mod sandbox;
mod sessions;
mod status;

use crate::exit::Exit;
use crate::repl::{Flow, Repl};
use crate::slash::SlashCommand;

impl Repl<'_> {
    /// Carries out one typed slash command (`command` without its `/`).
    pub(super) async fn command(&mut self, command: &str) -> Result<Flow, Exit> {
        let (name, rest) = command.split_once(char::is_whitespace).unwrap_or((command, ""));
        let rest = rest.trim();
        let Some(builtin) = SlashCommand::parse(name) else {
            self.custom_command(name, rest).await?;
            return Ok(Flow::Stay);
        };
        match builtin {
            SlashCommand::Exit => return Ok(Flow::Exit),
            SlashCommand::Help => print!("{}", crate::slash::help(&self.custom)),
            SlashCommand::Config => println!("{}", crate::slash::config_text(self.app)?),
            SlashCommand::Memory => print!("{}", crate::slash::memory_text(self.app)?),
            SlashCommand::Export => match self.session {
                Some(id) => match self.export(id, rest) {
                    Ok(path) => println!("Wrote the transcript to {}", path.display()),
                    Err(e) => println!("{}", self.style.red(&e.message())),
                },
                None => println!("No session yet: nothing to export."),
            },
            SlashCommand::Expand => self.expand(rest)?,
            SlashCommand::Clear => self.clear()?,
            SlashCommand::Resume => self.resume(rest),
            SlashCommand::Search => crate::slash_search::Searching {
                app: self.app,
                style: self.style,
                hits: &mut self.search_hits,
                session: &mut self.session,
            }
            .run(rest)?,
            SlashCommand::MaxTurns => self.max_turns(rest),
            SlashCommand::Init => self.init(),
            SlashCommand::Permissions => self.permissions(),
            SlashCommand::Cost => self.cost()?,
            SlashCommand::Model => self.model(rest).await?,
            SlashCommand::Context => self.context()?,
            SlashCommand::Status => self.status()?,
            SlashCommand::Sandbox => self.sandbox(rest)?,
            SlashCommand::Mcp => self.mcp(),
            SlashCommand::Skills => print!("{}", self.app.skills.render()),
            SlashCommand::Agents => print!("{}", self.app.agents.render()),
            SlashCommand::Sessions => self.sessions()?,
            SlashCommand::Compact => self.compact_command(rest).await?,
            SlashCommand::Continue => return self.continue_command(rest).await,
            SlashCommand::Trajectory => {
                for line in crate::trajectory::command(self.app, &self.runtime, rest)? {
                    println!("{line}");
                }
            }
            SlashCommand::Fork => self.fork(rest)?,
            SlashCommand::Rewind => {
                let mut say = |line: &str| println!("{line}");
                let mut ask = |question: &str| crate::repl::ask_line(question);
                let mut io = crate::rewind::Dialogue { say: &mut say, ask: &mut ask, cwd: &self.app.cwd };
                crate::rewind::run(&self.runtime, self.session, rest, &mut io).await?;
            }
        }
        Ok(Flow::Stay)
    }

    /// `/` alone lists the commands; a person's own command is expanded
    /// and sent; any other name is refused with the names known.
    async fn custom_command(&mut self, name: &str, rest: &str) -> Result<(), Exit> {
        if name.is_empty() {
            print!("{}", crate::slash::help(&self.custom));
        } else if let Some(custom) = self.custom.iter().find(|c| c.name == name && !c.source.runs()) {
            println!("{}", self.style.red(&crate::slash::untrusted_command(custom)));
        } else if let Some(custom) = self.custom.iter().find(|c| c.name == name) {
            let prompt = custom.expand(rest);
            self.say(&prompt).await?;
        } else {
            let names: Vec<&str> =
                SlashCommand::ALL.iter().map(|c| c.name()).chain(self.custom.iter().map(|c| c.name.as_str())).collect();
            let known: Vec<String> = names.iter().map(|n| format!("/{n}")).collect();
            let meant = crate::args::meant(name, names.iter().copied())
                .map(|n| format!(" did you mean /{n}?"))
                .unwrap_or_default();
            println!("{}", self.style.red(&format!("unknown command /{name};{meant} known: {}", known.join(" "))));
        }
        Ok(())
    }
}

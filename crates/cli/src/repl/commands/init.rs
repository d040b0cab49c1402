//! `/init`: a starter `AGENTS.md` at the repository's root, written only when asked.

use crate::repl::Repl;

/// What `/init` writes: headings for what an agent needs to know about a
/// project, for the person to fill in.
const STARTER_AGENTS_MD: &str = "\
# Agent instructions

## What this project is
One paragraph: what it does and who uses it.

## How to build and test
- Build: `…`
- Test: `…` (run it before saying a change is done)

## Conventions
- Code style, naming, error handling.
- What never to change without asking.

## Where things are
- `src/…`: …
";

impl Repl<'_> {
    /// `/init`: offers a starter `AGENTS.md` when the repository has none.
    pub(in crate::repl) fn init(&self) {
        let path = crate::prompt_files::repository_root(&self.app.cwd).join("AGENTS.md");
        if path.exists() {
            println!("{} already exists; seri reads it at the start of every session.", path.display());
        } else {
            print!("Write a starter {}? [y/N] ", path.display());
            let _ = std::io::Write::flush(&mut std::io::stdout());
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            if matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
                match std::fs::write(&path, STARTER_AGENTS_MD) {
                    Ok(()) => println!("Wrote {}; fill it in, and new sessions will read it.", path.display()),
                    Err(e) => println!("{}", self.style.red(&format!("cannot write {}: {e}", path.display()))),
                }
            } else {
                println!("Nothing written.");
            }
        }
    }
}

//! Tab completion at the REPL's prompt: slash commands at the start of the
//! line, and `@path` mentions anywhere (paths under the working directory,
//! folders ending in `/`). Pure over the line and a folder listing.

use std::path::{Path, PathBuf};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// The REPL's line-editor helper.
pub(crate) struct SeriHelper {
    /// The slash commands, without their arguments (`/compact`).
    commands: Vec<String>,
    cwd: PathBuf,
}

impl SeriHelper {
    pub(crate) fn new(commands: impl IntoIterator<Item = String>, cwd: &Path) -> Self {
        Self { commands: commands.into_iter().collect(), cwd: cwd.to_owned() }
    }
}

/// Where the word ending at `pos` starts, and the word.
fn word_before(line: &str, pos: usize) -> (usize, &str) {
    let head = &line[..pos];
    let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    (start, &head[start..])
}

/// The completions of the word ending at `pos`: where it starts, and the
/// candidates. `list` reads a folder's entries as `(name, is_folder)`.
pub(crate) fn complete(
    line: &str,
    pos: usize,
    commands: &[String],
    list: impl Fn(&Path) -> Vec<(String, bool)>,
) -> (usize, Vec<String>) {
    let (start, word) = word_before(line, pos);
    if start == 0 && word.starts_with('/') {
        let found = commands.iter().filter(|c| c.starts_with(word)).map(|c| format!("{c} ")).collect();
        return (0, found);
    }
    let Some(path) = word.strip_prefix('@') else { return (start, Vec::new()) };
    let (folder, prefix) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    let mut found: Vec<String> = list(Path::new(folder))
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix) && (prefix.starts_with('.') || !name.starts_with('.')))
        .map(|(name, is_folder)| format!("@{folder}{name}{}", if is_folder { "/" } else { " " }))
        .collect();
    found.sort();
    (start, found)
}

impl Completer for SeriHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let list = |folder: &Path| {
            std::fs::read_dir(self.cwd.join(folder))
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path().is_dir()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (start, found) = complete(line, pos, &self.commands, list);
        let pairs = found
            .into_iter()
            .map(|replacement| Pair { display: replacement.trim_end().to_owned(), replacement })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for SeriHelper {
    type Hint = String;
}
impl Highlighter for SeriHelper {}
impl Validator for SeriHelper {}
impl Helper for SeriHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands() -> Vec<String> {
        ["/compact", "/context", "/continue", "/cost", "/exit"].map(String::from).to_vec()
    }

    fn tree(folder: &Path) -> Vec<(String, bool)> {
        match folder.to_str() {
            Some("") => vec![("src".into(), true), ("notes.md".into(), false), (".env".into(), false)],
            Some("src/") => vec![("main.rs".into(), false), ("mod.rs".into(), false)],
            _ => Vec::new(),
        }
    }

    #[test]
    fn slash_commands_complete_at_the_start_of_the_line_only() {
        assert_eq!(
            complete("/co", 3, &commands(), tree),
            (0, vec!["/compact ".into(), "/context ".into(), "/continue ".into(), "/cost ".into()])
        );
        assert_eq!(complete("/cos", 4, &commands(), tree), (0, vec!["/cost ".into()]));
        assert_eq!(complete("say /co", 7, &commands(), tree).1, Vec::<String>::new());
    }

    #[test]
    fn mentions_complete_paths_folder_by_folder_and_hide_dot_files() {
        assert_eq!(complete("look at @", 9, &commands(), tree), (8, vec!["@notes.md ".into(), "@src/".into()]));
        assert_eq!(
            complete("look at @src/m", 14, &commands(), tree),
            (8, vec!["@src/main.rs ".into(), "@src/mod.rs ".into()])
        );
        assert_eq!(complete("@.e", 3, &commands(), tree), (0, vec!["@.env ".into()]));
        assert_eq!(complete("plain words", 11, &commands(), tree).1, Vec::<String>::new());
    }
}

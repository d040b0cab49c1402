//! Tab completion at the REPL's prompt: slash commands at the start of the
//! line, and `@path` mentions anywhere (paths under the working directory,
//! folders ending in `/`); and the `/` menu, which lists under a slash
//! command being typed every command it could still become, each with its
//! description. Pure over the line and a folder listing.

use std::path::{Path, PathBuf};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::{Hint, Hinter};
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// One line of the `/` menu: a command's name (`/compact`), what follows
/// it (`[focus]`), and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MenuEntry {
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) description: String,
}

/// The REPL's line-editor helper.
pub(crate) struct SeriHelper {
    /// The slash commands, without their arguments (`/compact`).
    commands: Vec<String>,
    /// The same commands for the `/` menu, with their descriptions.
    menu: Vec<MenuEntry>,
    /// Whether the menu is dimmed (a colour terminal without `NO_COLOR`).
    dim: bool,
    cwd: PathBuf,
}

impl SeriHelper {
    pub(crate) fn new(menu: Vec<MenuEntry>, cwd: &Path, dim: bool) -> Self {
        Self { commands: menu.iter().map(|e| e.name.clone()).collect(), menu, dim, cwd: cwd.to_owned() }
    }
}

/// How many commands the menu lists at once; the rest are counted.
pub(crate) const MENU_ROWS: usize = 12;

/// The `/` menu under `line` (the cursor at `pos`): while the line is a
/// slash command's name being typed (it starts with `/`, has no space yet,
/// and the cursor is at its end), each command whose name starts with it,
/// one a line with its arguments and description, cut to `width` columns.
/// `None` otherwise. Beside it, what Right-arrow adds when one command is
/// left: the rest of its name.
pub(crate) fn menu(line: &str, pos: usize, entries: &[MenuEntry], width: usize) -> Option<(String, Option<String>)> {
    if !line.starts_with('/') || pos != line.len() || line.contains(char::is_whitespace) {
        return None;
    }
    let found: Vec<&MenuEntry> = entries.iter().filter(|e| e.name.starts_with(line)).collect();
    if found.is_empty() {
        return Some((format!("\n  no command starts with {line} (/help lists them)"), None));
    }
    let usage = |e: &MenuEntry| {
        if e.arguments.is_empty() { e.name.clone() } else { format!("{} {}", e.name, e.arguments) }
    };
    let column = found.iter().take(MENU_ROWS).map(|e| usage(e).chars().count()).max().unwrap_or(0);
    let mut display = String::new();
    for entry in found.iter().take(MENU_ROWS) {
        let row = format!("  {:<column$}  {}", usage(entry), entry.description);
        display.push('\n');
        // One row a command: a long description is cut at the screen's edge.
        let row = if row.chars().count() >= width {
            let cut: String = row.chars().take(width.saturating_sub(2)).collect();
            format!("{}\u{2026}", cut.trim_end())
        } else {
            row
        };
        display.push_str(&row);
    }
    if found.len() > MENU_ROWS {
        display.push_str(&format!("\n  \u{2026} {} more: keep typing", found.len() - MENU_ROWS));
    }
    let completion = match found.as_slice() {
        [only] if only.name.len() > line.len() => Some(only.name[line.len()..].to_owned()),
        _ => None,
    };
    Some((display, completion))
}

/// The menu as rustyline shows it: below the line, never taken into it
/// but for a single command's rest of name (Right-arrow).
pub(crate) struct Menu {
    display: String,
    completion: Option<String>,
}

impl Hint for Menu {
    fn display(&self) -> &str {
        &self.display
    }

    fn completion(&self) -> Option<&str> {
        self.completion.as_deref()
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
    type Hint = Menu;

    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<Menu> {
        let width = usize::from(console::Term::stdout().size().1).max(20);
        let (display, completion) = menu(line, pos, &self.menu, width)?;
        Some(Menu { display, completion })
    }
}

impl Highlighter for SeriHelper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> std::borrow::Cow<'h, str> {
        if self.dim { format!("\x1b[2m{hint}\x1b[0m").into() } else { hint.into() }
    }
}
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

    fn entries() -> Vec<MenuEntry> {
        [
            ("/compact", "[focus]", "summarise the oldest context"),
            ("/context", "", "what fills the window"),
            ("/review", "", "Review a file for bugs"),
        ]
        .map(|(name, arguments, description)| MenuEntry {
            name: name.into(),
            arguments: arguments.into(),
            description: description.into(),
        })
        .to_vec()
    }

    #[test]
    fn the_menu_lists_what_a_slash_command_could_become_with_descriptions() {
        let (shown, rest) = menu("/", 1, &entries(), 80).unwrap();
        assert_eq!(
            shown,
            "\n  /compact [focus]  summarise the oldest context\n  /context          what fills the window\n  /review           Review a file for bugs"
        );
        assert_eq!(rest, None);
        let (shown, rest) = menu("/r", 2, &entries(), 80).unwrap();
        assert_eq!(shown, "\n  /review  Review a file for bugs");
        assert_eq!(rest.as_deref(), Some("eview"));
        assert_eq!(menu("/x", 2, &entries(), 80).unwrap().0, "\n  no command starts with /x (/help lists them)");
        // Not while arguments are typed, nor mid-line, nor for a message.
        assert_eq!(menu("/compact now", 12, &entries(), 80), None);
        assert_eq!(menu("/co", 1, &entries(), 80), None);
        assert_eq!(menu("hello /", 7, &entries(), 80), None);
        // A row never wraps: it is cut at the screen's edge.
        let (shown, _) = menu("/rev", 4, &entries(), 20).unwrap();
        assert_eq!(shown, "\n  /review  Review\u{2026}");
        let many: Vec<MenuEntry> = (0..MENU_ROWS + 3)
            .map(|n| MenuEntry { name: format!("/c{n}"), arguments: String::new(), description: "d".into() })
            .collect();
        assert!(menu("/c", 2, &many, 80).unwrap().0.ends_with("\u{2026} 3 more: keep typing"));
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

//! Command patterns for `bash`: allow, ask and deny lists of command
//! prefixes and globs, in the shape Claude Code's settings use
//! (`Bash(git *)`, `Bash(npm run test:*)`, `Bash(cargo build)`), matched on
//! the parsed command. Pure: no IO.
//!
//! # What a pattern sees
//!
//! A command is parsed with brush's bash parser (`brush-parser`), and every
//! simple command it would run is a part ([`see`]): in lists (`&&`, `||`,
//! `;`, `&`, newlines), pipelines, subshells, `{ }` groups, the conditions
//! and bodies of `if`/`for`/`while`/`until`/`case`, function bodies,
//! `$(…)`, backticks, `<(…)`/`>(…)`, redirection targets and assignments'
//! values. A part is its words with quotes and escapes undone (`\rm`,
//! `r''m`, `"rm"` are `rm`), redirections left out, and its program named
//! by its last path component (`/bin/rm` and `./rm` are `rm`).
//!
//! What a part runs is a part too (`wrappers`): the command after `env`
//! (its options and `NAME=VALUE`s; `-S STRING` is parsed), `command`
//! (not with `-v`/`-V`), `builtin`, `exec`, `nohup`, `nice`, `time`,
//! `timeout`, `stdbuf`, `setsid`, `ionice`, `chrt`, `taskset`, `chroot`,
//! `sudo`/`doas`, `busybox`, `coproc`, `watch`, `flock`; the command
//! `xargs` runs (without the arguments it reads); `find`'s `-exec`,
//! `-execdir`, `-ok`, `-okdir` commands; and, parsed in turn (at most 16
//! deep), the string of `sh`/`bash`/`zsh`/`dash`/`ksh`/… `-c`, `su -c`,
//! `eval`'s words joined, `trap`'s action, `alias` values, and a here-string
//! or quoted here-document fed to a shell.
//!
//! # What it cannot see
//!
//! Some parts cannot be seen into ([`UnseenKind`]): a program that is a
//! variable, substitution, glob or brace expansion (`$x args`,
//! `$(echo rm) x`, `{r,}m x`); code built at run time (`eval "$x"`,
//! `sh -c "$cmd"`); a script — a program called by a path outside
//! `/bin`, `/usr/bin`, `/sbin`, `/usr/sbin`, `/usr/local/bin`,
//! `/usr/local/sbin` (`./build.sh`, `scripts/x`, `/tmp/x`, `~/bin/x`), a
//! shell or interpreter given a file (`bash x.sh`, `python x.py`), or
//! `source`/`.`; an interpreter's inline code (`python -c`, `perl -e`,
//! `ruby -e`, `node -e`, `php -r`, an awk program calling `system` or a
//! pipe); a shell or interpreter reading its program from a pipe
//! (`curl … | sh`); and a substitution inside `${…}`, `$((…))` or an
//! unquoted here-document. No pattern allows such a part: with any pattern
//! set, the command is asked about, and a run that would answer yes
//! (`--yes`, bypass mode) refuses it when a bash deny rule is set
//! (`gate`). A script is matched as written, and so not unseen,
//! when an allow or ask pattern names its path (`Bash(./gradlew build)`).
//! A seen part called by a path is still matched by its name, so
//! `Bash(rm *)` denies `./rm x`.
//!
//! Beyond the command line nothing is seen: what a program does with its
//! arguments or files (`make`, `cargo test`, `npm run`, `python -m`,
//! `git -c alias…`, `find -delete`), the arguments `xargs` reads, and the
//! value of a variable (`rm $f` is matched as written).
//!
//! # Deciding
//!
//! One part matching a deny pattern denies the command; else an unseen part
//! asks; else one part matching an ask pattern asks; else it runs without
//! asking only when every part (wrappers included: `nohup git status` needs
//! both `nohup git status` and `git status` allowed) matches an allow
//! pattern; otherwise `bash`'s permission decides.
//!
//! A pattern is matched against a whole part: `*` stands for any text
//! (spaces too); `git *` also matches `git` alone; a trailing `:*`
//! (`npm run test:*`) is Claude Code's prefix form: the words before it and
//! anything after a space.

use std::fmt;

mod walk;
mod wrappers;

use super::policy::Permission;

/// One `Bash(…)` pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommandPattern {
    /// As written inside `Bash(…)`; empty for `Bash` alone (every command).
    written: String,
}

impl CommandPattern {
    /// A pattern as written inside `Bash(…)`: `git *`, `npm run test:*`.
    pub fn new(written: impl Into<String>) -> Self {
        Self { written: written.into().trim().to_owned() }
    }

    /// Reads a rule of a settings list: `Bash(git *)`, or `Bash` for every
    /// command. `None` for a rule about another tool.
    pub fn from_rule(rule: &str) -> Option<Self> {
        let rule = rule.trim();
        if rule == "Bash" || rule == "bash" {
            return Some(Self::new(""));
        }
        let inner = rule.strip_prefix("Bash(").or_else(|| rule.strip_prefix("bash("))?.strip_suffix(')')?;
        Some(Self::new(inner))
    }

    /// Whether the pattern names the program `path` as its first word
    /// (`Bash(./gradlew build)` names `./gradlew`).
    pub fn names(&self, path: &str) -> bool {
        let first = self.written.split(' ').next().unwrap_or_default();
        let first = first.strip_suffix(":*").unwrap_or(first);
        first.contains('/') && !first.contains('*') && first == path
    }

    /// Whether `part`, one simple command's words joined by one space,
    /// matches.
    pub fn matches(&self, part: &str) -> bool {
        let pattern = self.written.as_str();
        if pattern.is_empty() || pattern == "*" {
            return true;
        }
        if let Some(prefix) = pattern.strip_suffix(":*") {
            return part == prefix || part.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(' '));
        }
        if let Some(bare) = pattern.strip_suffix(" *")
            && !bare.contains('*')
            && part == bare
        {
            return true;
        }
        glob(pattern.as_bytes(), part.as_bytes())
    }
}

impl fmt::Display for CommandPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.written.is_empty() { f.write_str("Bash") } else { write!(f, "Bash({})", self.written) }
    }
}

/// `*` matches any run of bytes; everything else matches itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// A simple command seri sees, as patterns match it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenPart {
    /// The program's name (the last part of its path) and its arguments,
    /// with quotes undone, joined by one space: what patterns match.
    pub words: String,
    /// The words as written (the program's whole path), joined by one space.
    pub written: String,
    /// For a program called by a path outside the system's folders (a
    /// script), that path: it is also unseen unless a pattern names it.
    pub program: Option<String>,
}

/// Why a part of a command cannot be seen into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnseenKind {
    /// The command does not parse (an unclosed quote, `select`, …).
    Syntax,
    /// No command at all.
    Empty,
    /// The program is a variable, a substitution, a glob or a brace
    /// expansion (`$x args`, `$(echo rm) x`, `{r,}m x`), or a wrapper's
    /// options are.
    DynamicProgram,
    /// Code built at run time: `eval "$x"`, `sh -c "$cmd"`.
    DynamicCode,
    /// A script: a program called by a path outside the system's folders
    /// (`./build.sh`), a shell or interpreter given a file
    /// (`bash x.sh`, `python x.py`), `source`/`.`.
    Script,
    /// An interpreter's inline code: `python -c`, `perl -e`, `node -e`,
    /// `ruby -e`, an awk program that can run commands.
    InlineCode,
    /// A shell or interpreter that runs what it reads from a pipe or a
    /// file (`curl … | sh`).
    ShellInput,
    /// A substitution inside an expansion seri does not evaluate:
    /// `${x:-$(…)}`, `$(( $(…) ))`, a here-document's `$(…)`.
    Expansion,
    /// Commands nested deeper than seri follows.
    TooDeep,
}

impl UnseenKind {
    /// In words, for a denial's or a question's reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            UnseenKind::Syntax => "a command that cannot be parsed",
            UnseenKind::Empty => "no command",
            UnseenKind::DynamicProgram => "a program chosen at run time",
            UnseenKind::DynamicCode => "code built at run time",
            UnseenKind::Script => "a script seri cannot see into",
            UnseenKind::InlineCode => "an interpreter's inline code",
            UnseenKind::ShellInput => "a shell or interpreter running what it reads",
            UnseenKind::Expansion => "a substitution inside an expansion",
            UnseenKind::TooDeep => "commands nested too deep",
        }
    }
}

/// One part of a command seri cannot see into, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// Why it cannot be seen into.
    pub kind: UnseenKind,
    /// The part, as written.
    pub text: String,
}

impl fmt::Display for Unseen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is {}", self.text, self.kind.as_str())
    }
}

/// What seri sees of a command: every simple command it runs, and the
/// parts it cannot see into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sight {
    /// The simple commands, in the order they are written (a wrapper before
    /// the command it runs).
    pub parts: Vec<SeenPart>,
    /// The parts seri cannot see into.
    pub unseen: Vec<Unseen>,
}

impl Sight {
    /// The seen parts' words, as patterns match them.
    pub fn words(&self) -> Vec<&str> {
        self.parts.iter().map(|p| p.words.as_str()).collect()
    }
}

/// Everything `command` runs, as far as seri can see: parsed with a real
/// shell parser, every simple command walked, wrappers seen through.
pub fn see(command: &str) -> Sight {
    let mut walker = walk::Walker::default();
    walker.program(command, 0);
    if walker.sight.parts.is_empty() && walker.sight.unseen.is_empty() {
        walker.unseen(UnseenKind::Empty, command.trim());
    }
    walker.sight
}

/// The `bash` patterns of a run: allow, ask and deny lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandRules {
    /// Commands that run without asking.
    pub allow: Vec<CommandPattern>,
    /// Commands that are asked about even when `bash` is `allow`.
    pub ask: Vec<CommandPattern>,
    /// Commands that never run.
    pub deny: Vec<CommandPattern>,
}

/// What the patterns say of one command, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandDecision {
    /// Allow (every part allowed), ask, or deny.
    pub permission: Permission,
    /// Why, in a sentence: the part and the pattern, or what could not be
    /// seen into.
    pub because: String,
    /// Whether it asks because a part cannot be seen into (no pattern can
    /// allow such a part; under a deny rule a run that answers every
    /// question yes refuses it instead).
    pub unseen: bool,
}

impl CommandDecision {
    fn new(permission: Permission, because: String) -> Self {
        Self { permission, because, unseen: false }
    }
}

impl CommandRules {
    /// Whether no pattern is set.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// What the patterns say of `command`: `None` when none is set, or when
    /// some part matches none and none is denied or asked about (then the
    /// `bash` permission decides).
    ///
    /// One seen part matching a deny pattern denies; else a part seri
    /// cannot see into asks (`unseen`); else one matching an ask pattern
    /// asks; else every part matching an allow pattern allows. A script
    /// called by a path is seen (matched as written) when an allow or ask
    /// pattern names that path (`Bash(./gradlew build)`). A command that
    /// does not parse is also denied when its whole text matches a deny
    /// pattern.
    pub fn decide(&self, command: &str) -> Option<CommandDecision> {
        if self.is_empty() {
            return None;
        }
        let first = |list: &[CommandPattern], part: &str| list.iter().find(|p| p.matches(part)).cloned();
        let sight = see(command);
        for part in &sight.parts {
            if let Some(pattern) = first(&self.deny, &part.words) {
                return Some(CommandDecision::new(Permission::Deny, format!("`{}` matches {pattern}", part.words)));
            }
        }
        if sight.unseen.iter().any(|u| u.kind == UnseenKind::Syntax) {
            let whole = command.split_whitespace().collect::<Vec<_>>().join(" ");
            if let Some(pattern) = first(&self.deny, &whole) {
                return Some(CommandDecision::new(Permission::Deny, format!("the command matches {pattern}")));
            }
        }
        // A script's part: matched as written when a pattern names its path.
        let named = |part: &SeenPart| {
            part.program.as_ref().is_some_and(|program| {
                self.allow.iter().chain(&self.ask).any(|p| p.names(program) && p.matches(&part.written))
            })
        };
        let mut unseen: Vec<String> = sight.unseen.iter().map(ToString::to_string).collect();
        for part in &sight.parts {
            if part.program.is_some() && !named(part) {
                unseen.push(format!("`{}` is {}", part.written, UnseenKind::Script.as_str()));
            }
        }
        if !unseen.is_empty() {
            unseen.dedup();
            return Some(CommandDecision {
                permission: Permission::Ask,
                because: format!("{}, which no pattern can allow", unseen.join("; ")),
                unseen: true,
            });
        }
        let matched = |part: &SeenPart| if named(part) { part.written.clone() } else { part.words.clone() };
        for part in &sight.parts {
            let text = matched(part);
            if let Some(pattern) = first(&self.ask, &text) {
                return Some(CommandDecision::new(Permission::Ask, format!("`{text}` matches {pattern}")));
            }
        }
        let allowed: Option<Vec<CommandPattern>> =
            sight.parts.iter().map(|part| first(&self.allow, &matched(part))).collect();
        allowed.map(|patterns| {
            let mut names: Vec<String> = patterns.iter().map(ToString::to_string).collect();
            names.dedup();
            CommandDecision::new(Permission::Allow, format!("allowed by {}", names.join(", ")))
        })
    }
}

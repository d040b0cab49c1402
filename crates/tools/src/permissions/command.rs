//! Command patterns for `bash`: allow, ask and deny lists of command
//! prefixes and globs, in the shape Claude Code's settings use
//! (`Bash(git *)`, `Bash(npm run test:*)`, `Bash(cargo build)`), matched on
//! the parsed command. Pure: no IO.
//!
//! A command is split into its simple commands at `&&`, `||`, `;`, `|`, `&`,
//! newlines and subshell parentheses, with quotes and escapes undone, and
//! each part is matched on its words joined by one space. Every part must be
//! allowed for the command to be; one denied part denies it. A command whose
//! parts cannot be known for sure (command substitution, here-documents,
//! control flow, an unclosed quote) is asked about whatever the lists say.
//!
//! A pattern is matched against a whole part: `*` stands for any text
//! (spaces too); `git *` also matches `git` alone; a trailing `:*`
//! (`npm run test:*`) is Claude Code's prefix form: the words before it and
//! anything after a space.

use std::fmt;

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

/// Why a command's parts cannot be known for sure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unparsable {
    /// `$(…)`, backticks, `<(…)`, `>(…)`: a command inside a word.
    Substitution,
    /// `<<`: text the command reads, which may itself be run.
    HereDocument,
    /// `if`, `for`, `while`, `case`, a function: commands chosen at run time.
    ControlFlow,
    /// A quote left open.
    UnclosedQuote,
    /// No command at all.
    Empty,
}

impl Unparsable {
    /// In words, for a denial's or a question's reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            Unparsable::Substitution => "command substitution",
            Unparsable::HereDocument => "a here-document",
            Unparsable::ControlFlow => "shell control flow",
            Unparsable::UnclosedQuote => "an unclosed quote",
            Unparsable::Empty => "no command",
        }
    }
}

const CONTROL_WORDS: [&str; 17] = [
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function", "select",
    "[[", "]]", "coproc",
];

/// The simple commands of `command`, each as its words joined by one space,
/// in order; or why they cannot be known for sure.
pub fn simple_commands(command: &str) -> Result<Vec<String>, Unparsable> {
    let mut parts: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    // Whether `word` holds a (possibly empty, quoted) word: `''` is one.
    let mut in_word = false;
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    let end_part = |words: &mut Vec<String>, parts: &mut Vec<String>| -> Result<(), Unparsable> {
        // A group's braces are not commands.
        words.retain(|w| w != "{" && w != "}");
        if let Some(first) = words.first()
            && (CONTROL_WORDS.contains(&first.as_str()) || first.ends_with("()"))
        {
            return Err(Unparsable::ControlFlow);
        }
        if !words.is_empty() {
            parts.push(words.join(" "));
            words.clear();
        }
        Ok(())
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => end_word(&mut word, &mut in_word, &mut words),
            '\\' => match next {
                Some('\n') => i += 1,
                Some(escaped) => {
                    word.push(escaped);
                    in_word = true;
                    i += 1;
                }
                None => {
                    word.push('\\');
                    in_word = true;
                }
            },
            '\'' => {
                let close = chars[i + 1..].iter().position(|&c| c == '\'').ok_or(Unparsable::UnclosedQuote)?;
                word.extend(&chars[i + 1..i + 1 + close]);
                in_word = true;
                i += close + 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(Unparsable::UnclosedQuote),
                        Some('"') => break,
                        Some('`') => return Err(Unparsable::Substitution),
                        Some('$') if chars.get(i + 1) == Some(&'(') => return Err(Unparsable::Substitution),
                        Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars[i + 1]);
                            i += 1;
                        }
                        Some('\\') if chars.get(i + 1) == Some(&'\n') => i += 1,
                        Some(&other) => word.push(other),
                    }
                    i += 1;
                }
            }
            '`' => return Err(Unparsable::Substitution),
            '$' if next == Some('(') => return Err(Unparsable::Substitution),
            '<' | '>' if next == Some('(') => return Err(Unparsable::Substitution),
            '<' if next == Some('<') => return Err(Unparsable::HereDocument),
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            // `2>&1`, `>&2`, `&>file`: a redirection, not a separator.
            '&' if word.ends_with(['<', '>']) || next == Some('>') => {
                word.push(c);
                in_word = true;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut words);
                end_part(&mut words, &mut parts)?;
            }
            other => {
                word.push(other);
                in_word = true;
            }
        }
        i += 1;
    }
    end_word(&mut word, &mut in_word, &mut words);
    end_part(&mut words, &mut parts)?;
    if parts.is_empty() {
        return Err(Unparsable::Empty);
    }
    Ok(parts)
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
    /// parsed.
    pub because: String,
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
    /// One part matching a deny pattern denies; else one matching an ask
    /// pattern asks; else every part matching an allow pattern allows. A
    /// command that cannot be parsed is asked about (denied when its whole
    /// text matches a deny pattern).
    pub fn decide(&self, command: &str) -> Option<CommandDecision> {
        if self.is_empty() {
            return None;
        }
        let first = |list: &[CommandPattern], part: &str| list.iter().find(|p| p.matches(part)).cloned();
        let parts = match simple_commands(command) {
            Ok(parts) => parts,
            Err(why) => {
                let whole = command.split_whitespace().collect::<Vec<_>>().join(" ");
                if let Some(pattern) = first(&self.deny, &whole) {
                    return Some(CommandDecision {
                        permission: Permission::Deny,
                        because: format!("the command matches {pattern}"),
                    });
                }
                return Some(CommandDecision {
                    permission: Permission::Ask,
                    because: format!("the command holds {}, so its parts cannot be matched", why.as_str()),
                });
            }
        };
        for part in &parts {
            if let Some(pattern) = first(&self.deny, part) {
                return Some(CommandDecision {
                    permission: Permission::Deny,
                    because: format!("`{part}` matches {pattern}"),
                });
            }
        }
        for part in &parts {
            if let Some(pattern) = first(&self.ask, part) {
                return Some(CommandDecision {
                    permission: Permission::Ask,
                    because: format!("`{part}` matches {pattern}"),
                });
            }
        }
        let allowed: Option<Vec<CommandPattern>> = parts.iter().map(|part| first(&self.allow, part)).collect();
        allowed.map(|patterns| {
            let mut names: Vec<String> = patterns.iter().map(ToString::to_string).collect();
            names.dedup();
            CommandDecision { permission: Permission::Allow, because: format!("allowed by {}", names.join(", ")) }
        })
    }
}

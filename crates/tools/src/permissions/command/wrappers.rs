//! What a simple command runs: the command itself, by its program's name
//! whatever path it is called by, and whatever it runs in turn — the
//! command after a wrapper (`env`, `sudo`, `xargs`, `find -exec`, …), the
//! code of `sh -c`, `eval`, `trap` and `alias` — or why that cannot be seen
//! (a script, an interpreter's inline code, a program named by a variable).

use super::walk::{Input, MAX_DEPTH, Walker, Word};
use super::{SeenPart, UnseenKind};

/// Folders whose programs are the ones a bare name finds on `PATH`:
/// `/bin/rm` is `rm`. A program called by any other path is a script.
const SYSTEM_DIRS: [&str; 6] = ["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/"];

/// Shells whose `-c` string is code, and whose operand is a script.
const SHELLS: [&str; 9] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish"];

/// The name a program word calls: its last path component.
pub(super) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether a program word names a program by path outside the system's
/// folders (`./build.sh`, `scripts/x`, `/tmp/x`, `~/bin/x`): a file the
/// model may have written, which seri cannot see into.
pub(super) fn is_script_path(program: &str) -> bool {
    program.contains('/')
        && !SYSTEM_DIRS.iter().any(|dir| program.strip_prefix(dir).is_some_and(|rest| !rest.contains('/')))
}

fn joined(words: &[Word]) -> String {
    words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// An option parser's view of a wrapper: which short and long options take
/// a value, so that its operands can be found.
struct Options<'a> {
    /// Short options that take a value (`-u USER`, `-uUSER`).
    short: &'a str,
    /// Long options that take a value as the next word (`--user USER`).
    long: &'a [&'a str],
}

/// The options a wrapper was given, and where its operands start.
struct Parsed {
    /// Short option letters seen, and long option names (without `--`).
    flags: Vec<String>,
    /// The index of the first operand.
    operands: usize,
    /// Whether an option word's value is not known.
    dynamic: bool,
}

impl Parsed {
    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

impl Options<'_> {
    /// Reads options from `args` until the first operand or `--`.
    fn parse(&self, args: &[Word]) -> Parsed {
        let mut parsed = Parsed { flags: Vec::new(), operands: args.len(), dynamic: false };
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            if !arg.known {
                parsed.dynamic = true;
            }
            let text = arg.text.as_str();
            if text == "--" {
                parsed.operands = i + 1;
                return parsed;
            }
            if let Some(long) = text.strip_prefix("--") {
                let (name, inline) = long.split_once('=').map_or((long, false), |(n, _)| (n, true));
                parsed.flags.push(name.to_owned());
                i += if !inline && self.long.contains(&name) { 2 } else { 1 };
                continue;
            }
            let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) else {
                parsed.operands = i;
                return parsed;
            };
            let mut skip = 1;
            for (at, letter) in cluster.char_indices() {
                parsed.flags.push(letter.to_string());
                if self.short.contains(letter) {
                    if at + letter.len_utf8() == cluster.len() {
                        skip = 2;
                    }
                    break;
                }
            }
            i += skip;
        }
        parsed
    }
}

impl Walker {
    /// Sees one simple command, given as its words, and what it runs.
    pub(super) fn run(&mut self, words: &[Word], input: &Input, depth: usize) {
        let Some(program) = words.first() else { return };
        if depth > MAX_DEPTH {
            self.unseen(UnseenKind::TooDeep, joined(words));
            return;
        }
        if !program.known || program.expands {
            self.unseen(UnseenKind::DynamicProgram, joined(words));
            return;
        }
        let name = basename(&program.text).to_owned();
        let args = &words[1..];
        let mut seen: Vec<String> = vec![name.clone()];
        seen.extend(args.iter().map(|w| w.text.clone()));
        let script = is_script_path(&program.text);
        self.sight.parts.push(SeenPart {
            words: seen.join(" "),
            written: joined(words),
            program: script.then(|| program.text.clone()),
        });
        if script {
            return;
        }
        let depth = depth + 1;
        match name.as_str() {
            "env" => self.env(args, input, depth),
            "command" => {
                let parsed = Options { short: "", long: &[] }.parse(args);
                if !parsed.has("v") && !parsed.has("V") {
                    self.after(args, parsed, input, depth);
                }
            }
            "builtin" | "nohup" | "coproc" | "unbuffer" | "caffeinate" => {
                let parsed = Options { short: "", long: &[] }.parse(args);
                self.after(args, parsed, input, depth);
            }
            "exec" => self.after(args, Options { short: "a", long: &[] }.parse(args), input, depth),
            "nice" => self.after(args, Options { short: "n", long: &["adjustment"] }.parse(args), input, depth),
            "time" => self.after(args, Options { short: "fo", long: &["format", "output"] }.parse(args), input, depth),
            "stdbuf" => {
                self.after(
                    args,
                    Options { short: "ioe", long: &["input", "output", "error"] }.parse(args),
                    input,
                    depth,
                );
            }
            "setsid" => self.after(args, Options { short: "", long: &[] }.parse(args), input, depth),
            "ionice" => {
                self.after(args, Options { short: "cnpPu", long: &["class", "classdata"] }.parse(args), input, depth)
            }
            "chrt" | "taskset" | "timeout" | "chroot" => {
                let short = match name.as_str() {
                    "timeout" => "sk",
                    _ => "",
                };
                let mut parsed = Options { short, long: &["signal", "kill-after"] }.parse(args);
                if parsed.has("p") && name != "timeout" {
                    // `taskset -p`, `chrt -p`: about a running process.
                    return;
                }
                // The duration, the mask, the priority, the new root.
                parsed.operands += 1;
                self.after(args, parsed, input, depth);
            }
            "sudo" | "doas" => self.sudo(args, input, depth),
            "xargs" => {
                let parsed = Options {
                    short: "aEILnPsd",
                    long: &[
                        "arg-file",
                        "delimiter",
                        "max-lines",
                        "max-args",
                        "max-procs",
                        "max-chars",
                        "process-slot-var",
                    ],
                }
                .parse(args);
                if parsed.dynamic {
                    self.unseen(UnseenKind::DynamicProgram, joined(words));
                } else if parsed.operands < args.len() {
                    self.run(&args[parsed.operands..], &Input::Unknown, depth);
                }
            }
            "find" => self.find(args, depth),
            "eval" => self.code_of_words(args, depth),
            "trap" => {
                let parsed = Options { short: "", long: &[] }.parse(args);
                let operands = &args[parsed.operands.min(args.len())..];
                if operands.len() >= 2 && operands[0].text != "-" {
                    self.code(&operands[0], depth);
                }
            }
            "alias" => {
                for arg in args {
                    if let Some((_, value)) = arg.text.split_once('=') {
                        if arg.known {
                            self.program(value, depth);
                        } else {
                            self.unseen(UnseenKind::DynamicCode, joined(words));
                        }
                    }
                }
            }
            "watch" => {
                let parsed = Options { short: "ndgq", long: &["interval", "differences"] }.parse(args);
                let rest = &args[parsed.operands.min(args.len())..];
                if parsed.has("x") || parsed.has("exec") {
                    self.run(rest, input, depth);
                } else {
                    self.code_of_words(rest, depth);
                }
            }
            "flock" => {
                let parsed = Options { short: "wE", long: &["timeout", "conflict-exit-code"] }.parse(args);
                let rest = &args[(parsed.operands + 1).min(args.len())..];
                match rest.first().map(|w| w.text.as_str()) {
                    Some("-c" | "--command") => {
                        if let Some(code) = rest.get(1) {
                            self.code(code, depth);
                        }
                    }
                    _ => self.run(rest, input, depth),
                }
            }
            "su" | "runuser" | "script" => {
                let parsed = Options { short: "csgGu", long: &["command", "shell", "group", "user"] }.parse(args);
                if let Some(code) = code_option(args, 'c', "command") {
                    self.code(&code, depth);
                } else if name != "script" && !parsed.dynamic {
                    // `su` with no command starts a shell on its input.
                    self.shell_input(words, input, depth);
                }
            }
            "source" | "." => self.unseen(UnseenKind::Script, joined(words)),
            "busybox" => self.run(args, input, depth),
            "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => self.awk(words, depth),
            other => {
                if SHELLS.contains(&other) {
                    self.shell(words, input, depth);
                } else if let Some(interpreter) = interpreter(other) {
                    self.interpreter(words, interpreter, depth);
                }
            }
        }
    }

    /// Runs the operands after a wrapper's options as a command.
    fn after(&mut self, args: &[Word], parsed: Parsed, input: &Input, depth: usize) {
        if parsed.dynamic {
            self.unseen(UnseenKind::DynamicProgram, joined(args));
            return;
        }
        if let Some(rest) = args.get(parsed.operands..) {
            self.run(rest, input, depth);
        }
    }

    fn env(&mut self, args: &[Word], input: &Input, depth: usize) {
        let parsed = Options { short: "uCS", long: &["unset", "chdir", "split-string"] }.parse(args);
        if parsed.dynamic {
            self.unseen(UnseenKind::DynamicProgram, format!("env {}", joined(args)));
            return;
        }
        // `env -S 'rm -rf x'`: the string is split into the command.
        if let Some(split) = code_option(args, 'S', "split-string") {
            self.code(&split, depth);
            return;
        }
        let mut rest = args.get(parsed.operands..).unwrap_or_default();
        while let Some(first) = rest.first()
            && is_assignment(&first.text)
        {
            rest = &rest[1..];
        }
        self.run(rest, input, depth);
    }

    fn sudo(&mut self, args: &[Word], input: &Input, depth: usize) {
        let parsed = Options {
            short: "ugCDhprtTU",
            long: &[
                "user",
                "group",
                "close-from",
                "chdir",
                "host",
                "prompt",
                "role",
                "type",
                "command-timeout",
                "other-user",
            ],
        }
        .parse(args);
        if parsed.dynamic {
            self.unseen(UnseenKind::DynamicProgram, format!("sudo {}", joined(args)));
            return;
        }
        if ["e", "edit", "l", "list", "v", "validate", "V", "version", "h", "help", "K", "remove-timestamp"]
            .iter()
            .any(|f| parsed.has(f))
        {
            return;
        }
        let mut rest = args.get(parsed.operands..).unwrap_or_default();
        while let Some(first) = rest.first()
            && is_assignment(&first.text)
        {
            rest = &rest[1..];
        }
        let shell = ["s", "shell", "i", "login"].iter().any(|f| parsed.has(f));
        if shell && rest.is_empty() {
            self.unseen(UnseenKind::ShellInput, format!("sudo {}", joined(args)));
        } else if shell {
            self.code_of_words(rest, depth);
        } else {
            self.run(rest, input, depth);
        }
    }

    /// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`, `+`).
    fn find(&mut self, args: &[Word], depth: usize) {
        let mut i = 0;
        while i < args.len() {
            if matches!(args[i].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                    end += 1;
                }
                self.run(&args[start..end], &Input::Unknown, depth);
                i = end;
            }
            i += 1;
        }
    }

    /// A shell: `-c STRING` is code, an operand is a script, and with
    /// neither it runs what it reads.
    fn shell(&mut self, words: &[Word], input: &Input, depth: usize) {
        let args = &words[1..];
        let mut i = 0;
        let mut command_string = false;
        let mut reads_input = false;
        while let Some(arg) = args.get(i) {
            let text = arg.text.as_str();
            if !arg.known {
                self.unseen(UnseenKind::DynamicCode, joined(words));
                return;
            }
            if text == "--" || text == "-" {
                i += 1;
                break;
            }
            if let Some(long) = text.strip_prefix("--") {
                if matches!(long, "version" | "help") {
                    return;
                }
                i += if matches!(long, "rcfile" | "init-file") { 2 } else { 1 };
                continue;
            }
            let Some(cluster) = text.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else { break };
            command_string |= cluster.contains('c');
            reads_input |= cluster.contains('s');
            // `-o pipefail`, `-O extglob`: the option's name follows.
            i += if cluster.ends_with(['o', 'O']) { 2 } else { 1 };
        }
        let operand = args.get(i);
        if command_string {
            match operand {
                Some(code) => self.code(code, depth),
                None => self.unseen(UnseenKind::Syntax, format!("{} (no command string)", joined(words))),
            }
        } else if reads_input || operand.is_none() {
            self.shell_input(words, input, depth);
        } else {
            self.unseen(UnseenKind::Script, joined(words));
        }
    }

    /// A shell that runs the commands it reads as its input.
    fn shell_input(&mut self, words: &[Word], input: &Input, depth: usize) {
        match input {
            Input::Known(text) => self.program(text, depth),
            Input::Unknown | Input::Inherited => self.unseen(UnseenKind::ShellInput, joined(words)),
        }
    }

    /// A string that is run as shell code: parsed when its text is known.
    fn code(&mut self, code: &Word, depth: usize) {
        if code.known {
            self.program(&code.text, depth);
        } else {
            self.unseen(UnseenKind::DynamicCode, code.text.clone());
        }
    }

    /// Words joined by spaces and run as shell code (`eval`, `watch`).
    fn code_of_words(&mut self, words: &[Word], depth: usize) {
        if words.is_empty() {
            return;
        }
        let code = Word { text: joined(words), known: words.iter().all(|w| w.known), expands: false };
        self.code(&code, depth);
    }

    /// awk's program can run commands (`system()`, `print | "sh"`,
    /// `"cmd" | getline`); one that may is unseen, as is a program file.
    fn awk(&mut self, words: &[Word], depth: usize) {
        let _ = depth;
        let args = &words[1..];
        let parsed = Options { short: "fvF", long: &["file", "assign", "field-separator"] }.parse(args);
        if parsed.has("f") || parsed.has("file") {
            self.unseen(UnseenKind::Script, joined(words));
            return;
        }
        match args.get(parsed.operands) {
            Some(program) if !program.known || program.text.contains("system") || program.text.contains('|') => {
                self.unseen(UnseenKind::InlineCode, joined(words));
            }
            _ => {}
        }
    }

    fn interpreter(&mut self, words: &[Word], interpreter: Interpreter, depth: usize) {
        let _ = depth;
        let args = &words[1..];
        for arg in args {
            let text = arg.text.as_str();
            if !arg.known {
                self.unseen(UnseenKind::DynamicCode, joined(words));
                return;
            }
            if let Some(long) = text.strip_prefix("--") {
                let name = long.split_once('=').map_or(long, |(n, _)| n);
                if interpreter.inline_long.contains(&name) {
                    self.unseen(UnseenKind::InlineCode, joined(words));
                    return;
                }
                if matches!(name, "version" | "help") {
                    return;
                }
                continue;
            }
            match text.strip_prefix('-') {
                Some("") => break,
                Some(cluster) => {
                    if let Some(letter) = cluster.chars().find(|c| interpreter.inline.contains(*c)) {
                        let _ = letter;
                        self.unseen(UnseenKind::InlineCode, joined(words));
                        return;
                    }
                    if cluster.starts_with(interpreter.module) && !interpreter.module.is_empty() {
                        // `python -m pytest`: an installed module, run as a
                        // program is.
                        return;
                    }
                    if matches!(cluster, "V" | "v" | "h" | "version" | "help") {
                        return;
                    }
                }
                None => {
                    self.unseen(UnseenKind::Script, joined(words));
                    return;
                }
            }
        }
        // No script and no inline code: the program comes from its input.
        self.unseen(UnseenKind::ShellInput, joined(words));
    }
}

/// What marks an interpreter's inline code and its module runner.
#[derive(Debug, Clone, Copy)]
struct Interpreter {
    /// Short options whose value is code (`python -c`, `perl -e`).
    inline: &'static str,
    /// Long options whose value is code (`node --eval`).
    inline_long: &'static [&'static str],
    /// The short option that runs an installed module (`python -m`).
    module: &'static str,
}

fn interpreter(name: &str) -> Option<Interpreter> {
    let python = name == "python"
        || name.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if python || name == "pypy" || name == "pypy3" {
        return Some(Interpreter { inline: "c", inline_long: &[], module: "m" });
    }
    Some(match name {
        "perl" => Interpreter { inline: "eE", inline_long: &[], module: "" },
        "ruby" | "lua" | "Rscript" | "osascript" => Interpreter { inline: "e", inline_long: &[], module: "" },
        "node" | "nodejs" | "bun" => Interpreter { inline: "ep", inline_long: &["eval", "print"], module: "" },
        "php" => Interpreter { inline: "rR", inline_long: &[], module: "" },
        "tclsh" | "wish" | "expect" => Interpreter { inline: "c", inline_long: &[], module: "" },
        _ => return None,
    })
}

/// The value of `-c CODE`, `-cCODE`, `--command=CODE` or `--command CODE`
/// in `args`.
fn code_option(args: &[Word], short: char, long: &str) -> Option<Word> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        if text == "--" {
            return None;
        }
        let value = |text: &str| Word { text: text.to_owned(), known: arg.known, expands: false };
        if let Some(rest) = text.strip_prefix("--") {
            if rest == long {
                return iter.next().cloned();
            }
            if let Some(inline) = rest.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                return Some(value(inline));
            }
            continue;
        }
        if let Some(cluster) = text.strip_prefix('-')
            && let Some(at) = cluster.find(short)
        {
            let attached = &cluster[at + short.len_utf8()..];
            return if attached.is_empty() { iter.next().cloned() } else { Some(value(attached)) };
        }
    }
    None
}

/// `NAME=VALUE`, as `env` and `sudo` take before the command.
fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

//! Command patterns for `bash` (`Bash(git *)`): how a command is split into
//! its parts, how a pattern matches a part, and what a list decides; the
//! rules every compound command must keep are property-tested.

use proptest::prelude::*;
use seri_tools::Permission;
use seri_tools::permissions::{CommandPattern, CommandRules, UnseenKind, see};

/// The simple commands of `command` as patterns match them, or the first
/// part seri cannot see into.
fn simple_commands(command: &str) -> Result<Vec<String>, UnseenKind> {
    let sight = see(command);
    match sight.unseen.first() {
        Some(unseen) => Err(unseen.kind),
        None => Ok(sight.words().into_iter().map(str::to_owned).collect()),
    }
}

#[track_caller]
fn check_parts(command: &str, expected: Result<&[&str], UnseenKind>) {
    let parts = simple_commands(command);
    let expected = expected.map(|parts| parts.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>());
    assert_eq!(parts, expected, "{command:?}");
}

#[test]
fn a_command_splits_into_its_simple_commands() {
    check_parts("git status", Ok(&["git status"]));
    check_parts("  git   log  --oneline ", Ok(&["git log --oneline"]));
    check_parts(
        "cargo build && cargo test || echo failed; ls | wc -l & wait",
        Ok(&["cargo build", "cargo test", "echo failed", "ls", "wc -l", "wait"]),
    );
    check_parts("(cd sub && make) ; { echo a; echo b; }", Ok(&["cd sub", "make", "echo a", "echo b"]));
    check_parts("echo one\necho two", Ok(&["echo one", "echo two"]));
    check_parts("git commit -m 'a && b; c'", Ok(&["git commit -m a && b; c"]));
    check_parts(r#"echo "x | y" \; z"#, Ok(&["echo x | y ; z"]));
    check_parts("'git' stat\\us", Ok(&["git status"]));
    // Redirections are not the command's words.
    check_parts("cargo test 2>&1 | tail -5", Ok(&["cargo test", "tail -5"]));
    check_parts("make &> log.txt", Ok(&["make"]));
    check_parts("ls # && rm -rf /", Ok(&["ls"]));
    check_parts("echo a \\\n  b", Ok(&["echo a b"]));
    // Commands inside words, control flow and functions are walked, not
    // refused (before the shell parser, each of these only asked).
    check_parts("echo $(rm -rf /)", Ok(&["rm -rf /", "echo $(rm -rf /)"]));
    check_parts("echo `id`", Ok(&["id", "echo `id`"]));
    check_parts(r#"echo "$(id)""#, Ok(&["id", "echo $(id)"]));
    check_parts("diff <(ls a) <(ls b)", Ok(&["ls a", "ls b", "diff <(…) <(…)"]));
    check_parts("cat <<EOF\nhi\nEOF", Ok(&["cat"]));
    check_parts("for f in *; do rm $f; done", Ok(&["rm $f"]));
    check_parts("if true; then ls; fi", Ok(&["true", "ls"]));
    check_parts("f() { rm -rf x; }; f", Ok(&["rm -rf x", "f"]));
    check_parts("case $x in a) rm a;; *) ls;; esac", Ok(&["rm a", "ls"]));
    check_parts("while read l; do echo $l; done < f", Ok(&["read l", "echo $l"]));
    check_parts("echo 'open", Err(UnseenKind::Syntax));
    check_parts(" ; && ", Err(UnseenKind::Syntax));
    check_parts("", Err(UnseenKind::Empty));
    check_parts("$x args", Err(UnseenKind::DynamicProgram));
}

#[track_caller]
fn check_match(pattern: &str, part: &str, expected: bool) {
    let pattern = CommandPattern::from_rule(pattern).unwrap();
    assert_eq!(pattern.matches(part), expected, "{pattern} on {part:?}");
}

#[test]
fn patterns_match_whole_parts_as_claude_codes_do() {
    check_match("Bash(git *)", "git status", true);
    check_match("Bash(git *)", "git", true);
    check_match("Bash(git *)", "gitk", false);
    check_match("Bash(ls *)", "lsof -i", false);
    check_match("Bash(npm run test:*)", "npm run test", true);
    check_match("Bash(npm run test:*)", "npm run test -- --watch", true);
    check_match("Bash(npm run test:*)", "npm run test2", false);
    check_match("Bash(cargo build)", "cargo build", true);
    check_match("Bash(cargo build)", "cargo build --release", false);
    check_match("Bash(git * main)", "git push origin main", true);
    check_match("Bash(git * main)", "git push origin main2", false);
    check_match("Bash(*)", "anything at all", true);
    check_match("Bash", "anything at all", true);
    assert_eq!(CommandPattern::from_rule("Read(src/**)"), None);
    assert_eq!(CommandPattern::from_rule("Bash(git *)").unwrap().to_string(), "Bash(git *)");
}

fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> CommandRules {
    let list = |rules: &[&str]| rules.iter().map(|r| CommandPattern::from_rule(r).unwrap()).collect();
    CommandRules { allow: list(allow), ask: list(ask), deny: list(deny) }
}

#[track_caller]
fn check_decision(rules: &CommandRules, command: &str, expected: Option<(Permission, &str)>) {
    let decided = rules.decide(command).map(|d| (d.permission, d.because));
    assert_eq!(decided.as_ref().map(|(p, b)| (*p, b.as_str())), expected, "{command:?}");
}

#[test]
fn every_part_must_be_allowed_and_one_denied_part_denies() {
    let rules = rules(&["Bash(git *)", "Bash(cargo test:*)"], &["Bash(git push *)"], &["Bash(rm *)"]);
    check_decision(
        &rules,
        "git status && cargo test -p x",
        Some((Permission::Allow, "allowed by Bash(git *), Bash(cargo test:*)")),
    );
    check_decision(&rules, "git status && make", None);
    check_decision(&rules, "git status; rm -rf target", Some((Permission::Deny, "`rm -rf target` matches Bash(rm *)")));
    check_decision(
        &rules,
        "git push origin main",
        Some((Permission::Ask, "`git push origin main` matches Bash(git push *)")),
    );
    // The substitution's command is matched like any other part (before
    // the shell parser, a substitution only asked).
    check_decision(&rules, "git log $(rm -rf /)", Some((Permission::Deny, "`rm -rf /` matches Bash(rm *)")));
    check_decision(&rules, "git log $(date)", None);
    check_decision(
        &rules,
        "git log $(sh ./x.sh)",
        Some((Permission::Ask, "`sh ./x.sh` is a script seri cannot see into, which no pattern can allow")),
    );
    check_decision(&CommandRules::default(), "rm -rf /", None);
}

/// A word that needs no quoting and is no shell keyword.
fn word() -> impl Strategy<Value = String> {
    "[a-z0-9][a-z0-9._/=-]{0,8}".prop_filter("not a keyword", |w| {
        ![
            "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function",
            "select", "coproc",
        ]
        .contains(&w.as_str())
    })
}

/// A simple command: a program named as on `PATH` (no `/`, which would
/// make it a script, and no `=`, which would make it an assignment), then
/// its arguments.
fn part() -> impl Strategy<Value = Vec<String>> {
    // Not a shell, an interpreter or a wrapper either, which are seen into
    // (or asked about) rather than matched as they are written.
    let program = word().prop_filter("a program on PATH", |w| !w.contains(['/', '=']));
    let program = program.prop_filter("an ordinary program", |w| {
        [w.clone(), format!("{w} x")].iter().all(|c| simple_commands(c).is_ok_and(|parts| parts == [c.clone()]))
    });
    (program, prop::collection::vec(word(), 0..4)).prop_map(|(program, mut args)| {
        args.insert(0, program);
        args
    })
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" && ", " || ", "; ", " | ", "\n", " & ", ";"])
}

/// A word quoted in one of the ways the shell undoes.
fn quoted(word: &str, how: u8) -> String {
    match how % 4 {
        0 => word.to_owned(),
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        _ => word.chars().map(|c| format!("\\{c}")).collect(),
    }
}

proptest! {
    /// Joined with any separators and quoted any way, the parts come back
    /// as they were written.
    #[test]
    fn parts_come_back_however_they_are_joined_and_quoted(
        parts in prop::collection::vec(part(), 1..5),
        separators in prop::collection::vec(separator(), 4),
        quoting in prop::collection::vec(any::<u8>(), 20),
    ) {
        let mut command = String::new();
        let mut n = 0;
        for (i, words) in parts.iter().enumerate() {
            if i > 0 {
                command.push_str(separators[i - 1]);
            }
            let shown: Vec<String> = words.iter().map(|w| { n += 1; quoted(w, quoting[n % quoting.len()]) }).collect();
            command.push_str(&shown.join(" "));
        }
        let expected: Vec<String> = parts.iter().map(|w| w.join(" ")).collect();
        prop_assert_eq!(simple_commands(&command), Ok(expected));
    }

    /// A command is allowed only when every one of its parts is: anything
    /// joined to an allowed command that is not itself allowed takes the
    /// allow away, and a denied part denies whatever else it is joined to.
    #[test]
    fn an_allowed_command_joined_to_another_is_allowed_only_if_both_are(
        allowed in part(),
        other in part(),
        separator in separator(),
    ) {
        let rules = rules(&["Bash(git *)"], &[], &["Bash(rm *)"]);
        let git = format!("git {}", allowed.join(" "));
        prop_assert_eq!(rules.decide(&git).map(|d| d.permission), Some(Permission::Allow));
        let joined = format!("{git}{separator}{}", other.join(" "));
        let decided = rules.decide(&joined).map(|d| d.permission);
        if other[0] == "git" {
            prop_assert_eq!(decided, Some(Permission::Allow));
        } else if other[0] == "rm" {
            prop_assert_eq!(decided, Some(Permission::Deny));
        } else if rules.decide(&other.join(" ")).is_none() {
            // An ordinary command (not a shell, interpreter or wrapper,
            // which are asked about on their own): matching no pattern, it
            // takes the allow away.
            prop_assert_eq!(decided, None, "{}", joined);
        }
        let denied = format!("{git}{separator}rm {}", other.join(" "));
        prop_assert_eq!(rules.decide(&denied).map(|d| d.permission), Some(Permission::Deny));
    }

    /// Nothing the shell would run as a second command hides behind an
    /// allowed first one: a substitution anywhere, in quotes or out, is
    /// matched as a command of its own.
    #[test]
    fn a_substitution_anywhere_is_never_allowed(words in part(), at in 0usize..6, quote in any::<bool>()) {
        let (rules, without_deny) = (rules(&["Bash(git *)"], &[], &["Bash(rm *)"]), rules(&["Bash(git *)"], &[], &[]));
        let mut words = words;
        let hidden = if quote { "\"$(rm -rf /)\"".to_owned() } else { "`rm -rf /`".to_owned() };
        words.insert(at.min(words.len()), hidden);
        let command = format!("git {}", words.join(" "));
        prop_assert_eq!(rules.decide(&command).map(|d| d.permission), Some(Permission::Deny));
        prop_assert_eq!(without_deny.decide(&command).map(|d| d.permission), None);
    }
}

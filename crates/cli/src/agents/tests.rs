//! Reading a subagent file: Claude Code's format, and what cannot be used.

use super::*;

#[test]
fn a_claude_code_subagent_is_read_with_what_seri_does_not_use() {
    let text = "---\nname: code-reviewer\ndescription: Reviews code for quality. Use right after writing code.\ntools: Read, Grep, Glob, Bash, WebFetch\nmodel: sonnet\n---\nYou are a senior reviewer.\n\nList issues by priority.\n";
    let found = parse(Path::new("/repo/.claude/agents/code-reviewer.md"), text).unwrap();
    insta::assert_debug_snapshot!(found);
}

#[test]
fn a_file_that_is_not_a_subagent_says_why() {
    let path = Path::new("x.md");
    let problems: Vec<String> = [
        "Just text.",
        "---\ndescription: y\n---\nDo.",
        "---\nname: a b\ndescription: y\n---\nDo.",
        "---\nname: x\n---\nDo.",
        "---\nname: x\ndescription: y\n---\n",
    ]
    .iter()
    .map(|text| parse(path, text).unwrap_err())
    .collect();
    insta::assert_debug_snapshot!(problems);
}
